/**
 * The wait gate: how many upstream long-polls `sess_response` may hold, and which waits share one.
 *
 * - Waits on the same Session at the same (revision, status), by the same credential, share ONE
 *   upstream long-poll. Each waiter keeps its own deadline and abort signal; the shared poll is
 *   aborted when its last waiter leaves.
 * - Across Sessions, at most `maxConcurrentWaits` upstream waits run at once per binding scope and
 *   per gate. A wait over the cap first makes one non-waiting read (an answer that already exists
 *   is released at once), then queues first-in-first-out within its own time. The cap never ends a
 *   wait early and never fails one.
 *
 * This module holds the options and one waiter's own time, signal and re-polls; the shared polls
 * and the cap that admits them are in `wait-polls.ts`.
 *
 * A gate holds no per-request state beyond the waits in progress, so one gate may serve every
 * engine a host builds (the HTTP face builds an engine per request and shares one gate). It
 * decides nothing about answers: it returns what Sess reported, and the engine verifies it.
 */
import { optionNames, readOptions } from '../contract/options.js';
import { SessApiError, type SessionView } from '../contract/ports.js';
import {
  differs,
  emptyGateState,
  type GateState,
  type GateWaitRequest,
  leavePoll,
  openPoll,
  type Poll,
  type Waiter,
} from './wait-polls.js';

/** Options of {@link createWaitGate}. */
export interface WaitGateOptions {
  /**
   * The most upstream waits one binding scope runs at once through this gate (so, per caller
   * and per process: a host with several instances lets one caller hold this many in each).
   * @default 8
   */
  maxConcurrentWaits?: number;
  /**
   * The most upstream waits the whole gate runs at once, over every binding scope. Unset, only
   * the per-scope cap applies.
   * @default unlimited
   */
  maxTotalWaits?: number;
}

export type { GateWaitRequest } from './wait-polls.js';

/** Shares and bounds upstream waits. Build it with {@link createWaitGate}. */
export interface WaitGate {
  /** The cap per binding scope. */
  readonly maxConcurrentWaits: number;
  /** The cap over every scope (`Infinity` when unset). */
  readonly maxTotalWaits: number;
  /**
   * Wait until the Session is no longer at (`revision`, `status`) or the waiter's time runs out.
   * Resolves with the view Sess reported, or `undefined` when the waiter's own deadline came
   * first (a normal timeout: nothing new). Rejects only with what the Sess client threw, or with
   * kind `aborted` when the waiter's signal ended it.
   */
  wait(request: GateWaitRequest): Promise<SessionView | undefined>;
  /** Upstream waits running now: for one binding scope, or for the whole gate. */
  running(scope?: string): number;
  /** Upstream waits queued behind the cap now. */
  queued(): number;
  /** Waiters in the gate now (each shares, runs or queues for one upstream wait). */
  waiting(): number;
}

/** The option names of {@link WaitGateOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<WaitGateOptions>()('maxConcurrentWaits', 'maxTotalWaits');

/** The default of {@link WaitGateOptions.maxConcurrentWaits}. */
export const DEFAULT_MAX_CONCURRENT_WAITS = 8;

/** How often one waiter re-polls after a shared poll ended early with nothing new. */
const MAX_REJOINS = 8;

function aborted(): SessApiError {
  return new SessApiError('aborted', 'The wait was cancelled.');
}

/**
 * Build a wait gate. Engines that share one gate (`createSessEngine({ authority, waitGate })`)
 * share its caps.
 *
 * @throws TypeError naming the option when `maxConcurrentWaits` or `maxTotalWaits` is not a whole
 * number from 1.
 */
export function createWaitGate(options?: WaitGateOptions): WaitGate {
  const read = readOptions('createWaitGate', options, { known: KNOWN_OPTIONS, allowMissing: true });
  const max = read.integer(
    'maxConcurrentWaits',
    options?.maxConcurrentWaits,
    { min: 1, max: 10_000 },
    DEFAULT_MAX_CONCURRENT_WAITS,
  );
  const maxTotal =
    read.optionalInteger('maxTotalWaits', options?.maxTotalWaits, { min: 1, max: 1_000_000 }) ?? Infinity;
  const gate = emptyGateState(max, maxTotal);
  return {
    maxConcurrentWaits: max,
    maxTotalWaits: maxTotal,
    wait: (request) => waitThrough(gate, request),
    running: (scope) => (scope === undefined ? gate.total : (gate.perScope.get(scope) ?? 0)),
    queued: () => gate.queue.length,
    waiting: () => gate.waiters,
  };
}

/** {@link WaitGate.wait}: a read that does not wait goes straight through; any other shares a poll. */
function waitThrough(gate: GateState, request: GateWaitRequest): Promise<SessionView | undefined> {
  const { signal } = request;
  if (signal?.aborted === true) return Promise.reject(aborted());
  if (request.timeoutMs <= 0) {
    // A read that does not wait holds nothing upstream: it needs no slot.
    return request.sess.waitSession(
      request.sessionId,
      { revision: request.revision, status: request.status, timeoutMs: 0 },
      signal === undefined ? {} : { signal },
    );
  }
  const key = JSON.stringify([
    request.origin,
    request.scope,
    request.generation,
    request.sessionId,
    request.revision,
    request.status,
  ]);
  return new Promise((resolve, reject) => waitAsOne(gate, request, key, resolve, reject));
}

/** One waiter: its own deadline and signal, on the shared poll for `key`, re-joining a fresh one when that ends early. */
function waitAsOne(
  gate: GateState,
  request: GateWaitRequest,
  key: string,
  resolve: (view: SessionView | undefined) => void,
  reject: (error: unknown) => void,
): void {
  const { signal } = request;
  let current: Poll | undefined;
  let rejoins = 0;
  let done = false;
  const end = (settle: () => void): void => {
    if (done) return;
    done = true;
    gate.waiters -= 1;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    if (current !== undefined) leavePoll(gate, current, waiter);
    settle();
  };
  const onAbort = (): void => end(() => reject(aborted()));
  const waiter: Waiter = {
    deadline: Date.now() + request.timeoutMs,
    deliver(outcome) {
      current = undefined;
      if ('error' in outcome) return end(() => reject(outcome.error));
      const { view } = outcome;
      if (differs(view, request) || Date.now() >= waiter.deadline || rejoins >= MAX_REJOINS) {
        return end(() => resolve(view));
      }
      // The shared poll was shorter than this waiter's time: keep waiting on a fresh one.
      rejoins += 1;
      join();
    },
  };
  const join = (): void => {
    const shared = gate.polls.get(key);
    if (shared === undefined) {
      current = openPoll(gate, request, key, waiter);
    } else {
      current = shared;
      shared.waiters.add(waiter);
    }
  };
  const timer = setTimeout(() => {
    // The waiter that set a running poll's deadline takes its outcome: Sess answers at that
    // deadline (or the client's own timeout ends it). Every other waiter leaves on its own.
    if (current?.phase === 'running' && current.deadline <= waiter.deadline) return;
    end(() => resolve(undefined));
  }, request.timeoutMs);
  signal?.addEventListener('abort', onAbort, { once: true });
  gate.waiters += 1;
  join();
}
