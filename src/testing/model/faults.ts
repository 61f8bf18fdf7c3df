/**
 * Fault injection for the local Sess runtime: a queue of one-shot (or N-shot) faults per API
 * endpoint that the HTTP layer consults on every call. Tests use it to make Sess fail the way a
 * real network and server can: an error status, a dropped connection before or after the change
 * is committed, a delay, a malformed or self-contradictory body, a tampered receipt.
 *
 * This module only stores and hands out faults; `fault-application.ts` applies them. It holds no
 * secrets.
 */

/** The API endpoints a fault can target. */
export type LocalEndpoint =
  | 'create'
  | 'get'
  | 'wait'
  | 'publish'
  | 'complete'
  | 'withdraw'
  | 'createAsk'
  | 'getAsk'
  | 'closeAsk'
  | 'jwks';

/** Every {@link LocalEndpoint}. */
export const LOCAL_ENDPOINTS: readonly LocalEndpoint[] = [
  'create',
  'get',
  'wait',
  'publish',
  'complete',
  'withdraw',
  'createAsk',
  'getAsk',
  'closeAsk',
  'jwks',
];

/** How a view is made self-contradictory (syntactically valid JSON of the right shape). */
export type ContradictionVariant =
  /** The revision is lowered below an answer it lists ("a lower revision that lists later answers"). */
  | 'response_above_revision'
  /** `active` while an answer at the revision is listed. */
  | 'active_with_answer'
  /** `answered` with no answer at the revision. */
  | 'answered_without_answer'
  /** Two answers at one revision. */
  | 'duplicate_revision'
  /** An Ask whose `answered` count disagrees with its respondents. */
  | 'ask_counts';

/** How every receipt in a response body is tampered with. */
export type ReceiptTamper =
  /** Flip one bit of the signature. */
  | { mode: 'signature' }
  /** Re-sign with a key that is in no key set (an unknown `kid`). */
  | { mode: 'unknown_key' }
  /** Re-sign with a key of another workspace that is in the key set. */
  | { mode: 'other_workspace_key' }
  /**
   * Replace it with a genuine receipt of another answer of the same workspace (an earlier
   * revision of the same Session when there is one): a valid signature over someone else's claims.
   */
  | { mode: 'replay' }
  /** Change one claim and re-sign with the genuine key (a valid signature over wrong claims). */
  | {
      mode: 'claim';
      claim: 'iss' | 'ws' | 'sid' | 'rev' | 'evt' | 'sdg' | 'adg' | 'act' | 'iat';
      value?: unknown;
    };

/** One fault. */
export type LocalFault =
  /** Answer with this status and error body before doing anything (nothing changes). */
  | {
      kind: 'status';
      status: number;
      /** @default derived from the status (`internal`, `unavailable`, `rate_limited`, …) */
      code?: string;
      message?: string;
      field?: string;
      limit?: number;
      length?: number;
      /** Extra response headers, e.g. `retry-after`. */
      headers?: Record<string, string>;
    }
  /** Destroy the connection before doing anything (nothing changes). */
  | { kind: 'transport' }
  /** Wait `ms` real milliseconds, then handle the call normally. */
  | { kind: 'delay'; ms: number }
  /** Handle the call (the change is committed), then destroy the connection without answering. */
  | { kind: 'commit_then_drop' }
  /** Handle the call (the change is committed), then answer with an error status anyway. */
  | { kind: 'commit_then_status'; status: number; code?: string }
  /** Handle the call (committed), then answer with its status and this body (default: truncated JSON). */
  | { kind: 'malformed'; body?: string }
  /** Handle the call (committed), then answer with a self-contradictory view. */
  | { kind: 'contradictory'; variant?: ContradictionVariant }
  /** Handle the call (committed), then answer with every receipt in the body tampered with. */
  | { kind: 'tamper_receipt'; tamper: ReceiptTamper }
  /**
   * Hold the call until `released` settles: at `arrival` before anything happens, at `commit` after
   * the change is committed and before the answer is written. `reached` is called when it is held.
   * Made by {@link LocalFaults.hold}.
   */
  | { kind: 'hold'; at: HoldPoint; reached: () => void; released: Promise<void> };

/** Where {@link LocalFaults.hold} holds a call: before anything happens, or after its commit. */
export type HoldPoint = 'arrival' | 'commit';

/** A held call (`sess.faults.hold`): wait until it is held, then let it go on. */
export interface LocalHold {
  /** Resolves once a call of the endpoint is held. */
  readonly reached: Promise<void>;
  /** Let the held call (and any later one of this hold) go on. */
  release(): void;
}

interface Queued {
  fault: LocalFault;
  remaining: number;
}

/** Options shared by the fault helpers. */
export interface FaultTimes {
  /** How many calls the fault applies to (`Infinity` for all). @default 1 */
  times?: number;
}

/**
 * The fault queue of a runtime (`sess.faults`). Faults of one endpoint apply in the order they
 * were added; each call consumes one application of the first fault in the queue.
 *
 * @example
 * ```ts source="examples/snippets/testing.examples.ts#LocalFaults"
 * sess.faults.fail('create', 503); // next create: 503 unavailable
 * sess.faults.commitThenDrop('publish'); // next publish commits, then the socket closes
 * sess.faults.tamperReceipt('get', { mode: 'signature' }, { times: Number.POSITIVE_INFINITY });
 * ```
 */
export class LocalFaults {
  readonly #queues = new Map<LocalEndpoint, Queued[]>();

  /** Queue any fault for the next `times` calls of `endpoint`. */
  inject(endpoint: LocalEndpoint, fault: LocalFault, options: FaultTimes = {}): void {
    if (!LOCAL_ENDPOINTS.includes(endpoint))
      throw new TypeError(`faults: unknown endpoint "${String(endpoint)}"`);
    const times = options.times ?? 1;
    if (!(times >= 1)) throw new TypeError('faults: times must be ≥ 1');
    if (
      fault.kind === 'status' &&
      !(Number.isInteger(fault.status) && fault.status >= 400 && fault.status <= 599)
    ) {
      throw new TypeError('faults: status must be an HTTP error status (400–599)');
    }
    if (fault.kind === 'delay' && !(Number.isFinite(fault.ms) && fault.ms >= 0)) {
      throw new TypeError('faults: delay ms must be a finite number ≥ 0');
    }
    const queue = this.#queues.get(endpoint) ?? [];
    queue.push({ fault, remaining: times });
    this.#queues.set(endpoint, queue);
  }

  /** Answer the next call(s) with an error `status` (and an error body), changing nothing. */
  fail(
    endpoint: LocalEndpoint,
    status: number,
    options: FaultTimes & Omit<Extract<LocalFault, { kind: 'status' }>, 'kind' | 'status'> = {},
  ): void {
    const { times, ...rest } = options;
    this.inject(endpoint, { kind: 'status', status, ...rest }, { times });
  }

  /** Destroy the connection of the next call(s) before anything happens (a transport error). */
  drop(endpoint: LocalEndpoint, options: FaultTimes = {}): void {
    this.inject(endpoint, { kind: 'transport' }, options);
  }

  /** Delay the next call(s) by `ms`, then handle them normally. */
  delay(endpoint: LocalEndpoint, ms: number, options: FaultTimes = {}): void {
    this.inject(endpoint, { kind: 'delay', ms }, options);
  }

  /** Commit the next call(s), then destroy the connection without answering (an unknown outcome). */
  commitThenDrop(endpoint: LocalEndpoint, options: FaultTimes = {}): void {
    this.inject(endpoint, { kind: 'commit_then_drop' }, options);
  }

  /** Commit the next call(s), then answer with an error `status` (e.g. 500): the outcome looks failed but is not. */
  commitThenFail(
    endpoint: LocalEndpoint,
    status: number,
    options: FaultTimes & { code?: string } = {},
  ): void {
    const { times, code } = options;
    this.inject(endpoint, { kind: 'commit_then_status', status, code }, { times });
  }

  /** Commit the next call(s), then answer with a malformed body. */
  malformed(endpoint: LocalEndpoint, options: FaultTimes & { body?: string } = {}): void {
    const { times, body } = options;
    this.inject(endpoint, { kind: 'malformed', body }, { times });
  }

  /** Commit the next call(s), then answer with a self-contradictory view. */
  contradictory(
    endpoint: LocalEndpoint,
    options: FaultTimes & { variant?: ContradictionVariant } = {},
  ): void {
    const { times, variant } = options;
    this.inject(endpoint, { kind: 'contradictory', variant }, { times });
  }

  /** Commit the next call(s), then answer with every receipt in the body tampered with. */
  tamperReceipt(endpoint: LocalEndpoint, tamper: ReceiptTamper, options: FaultTimes = {}): void {
    this.inject(endpoint, { kind: 'tamper_receipt', tamper }, options);
  }

  /**
   * Hold the next call(s) of `endpoint` at a fixed point, so a test can order another change
   * around it without sleeping: at `'arrival'` nothing has happened yet (a change made meanwhile
   * comes first), at `'commit'` the call's change is committed and only its answer waits (a change
   * made meanwhile comes after). The held call goes on at `release()`, or when its client goes away.
   * For example, hold a withdraw at `'arrival'`, submit the person's answer while `reached` has
   * resolved, then `release()`: the withdraw meets the answer and is refused.
   */
  hold(endpoint: LocalEndpoint, at: HoldPoint, options: FaultTimes = {}): LocalHold {
    if (at !== 'arrival' && at !== 'commit')
      throw new TypeError('faults: hold at must be "arrival" or "commit"');
    let reached!: () => void;
    let release!: () => void;
    const reachedPromise = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.inject(endpoint, { kind: 'hold', at, reached, released }, options);
    return { reached: reachedPromise, release };
  }

  /** Take the fault for one call of `endpoint`, if any. Used by the runtime's HTTP layer. */
  take(endpoint: LocalEndpoint): LocalFault | undefined {
    const queue = this.#queues.get(endpoint);
    const first = queue?.[0];
    if (queue === undefined || first === undefined) return undefined;
    first.remaining -= 1;
    if (first.remaining <= 0) queue.shift();
    return first.fault;
  }

  /** How many fault applications are still queued (for one endpoint, or all). */
  pending(endpoint?: LocalEndpoint): number {
    let total = 0;
    for (const [name, queue] of this.#queues) {
      if (endpoint !== undefined && name !== endpoint) continue;
      for (const q of queue) total += q.remaining;
    }
    return total;
  }

  /** Remove every queued fault (of one endpoint, or all). */
  clear(endpoint?: LocalEndpoint): void {
    if (endpoint === undefined) this.#queues.clear();
    else this.#queues.delete(endpoint);
  }
}
