/**
 * The wait gate: how many upstream long-polls `sess_response` may hold, which waits share one,
 * and who gets a slot when they are all taken.
 *
 * - Waits on the same Session at the same (revision, status), by the same credential, share ONE
 *   upstream long-poll. Each waiter keeps its own deadline and abort signal; the shared poll is
 *   aborted when its last waiter leaves.
 * - Across Sessions, at most `maxConcurrentWaits` upstream waits run at once per binding scope,
 *   `maxPrincipalWaits` per principal (over all of one person's clients and grants) and
 *   `maxTotalWaits` through the whole gate. A wait over a cap first makes one non-waiting read (an
 *   answer that already exists is released at once), then queues within its own time.
 * - The slots are shared fairly between principals (`wait-fairness.ts`): with the gate full, a
 *   caller that holds none takes over the slot of one that holds the most within
 *   `FAIR_SLICE_MS`. The holder's upstream wait ends and starts again later; its waiters keep
 *   waiting, each until its own deadline.
 * - At most `maxQueuedWaits` waits of one principal queue at once: a wait past it is one
 *   non-waiting read and ends at once with the state as it stands (the engine answers `waiting`,
 *   or the answer that is already there). No cap fails a wait.
 *
 * This module holds the options and one waiter's own time, signal and re-polls; the shared polls
 * and the caps that admit them are in `wait-polls.ts`.
 *
 * A gate holds no per-request state beyond the waits in progress, so one gate may serve every
 * engine a host builds (the HTTP face builds an engine per request and shares one gate). It
 * decides nothing about answers: it returns what Sess reported, and the engine verifies it.
 */
import { optionNames, readOptions } from '../contract/options.js';
import { SessApiError, type SessionView } from '../contract/ports.js';
import { WAIT_CAP_RANGES, type WaitCap } from '../contract/rules.js';
import {
  differs,
  emptyGateState,
  type GateState,
  type GateWaitRequest,
  gateNow,
  joinPoll,
  leavePoll,
  openPoll,
  type Poll,
  queuedWaitersOf,
  type Waiter,
  wouldQueue,
} from './wait-polls.js';

/** Options of {@link createWaitGate}. */
export interface WaitGateOptions {
  /**
   * The most upstream waits one binding scope (a principal through one client and grant) runs at
   * once through this gate (so, per process: a host with several instances lets one caller hold
   * this many in each).
   * @default 8
   */
  maxConcurrentWaits?: number;
  /**
   * The most upstream waits one principal runs at once through this gate, over all its binding
   * scopes, so that registering more clients does not multiply {@link maxConcurrentWaits}.
   * @default 16
   */
  maxPrincipalWaits?: number;
  /**
   * The most upstream waits the whole gate runs at once, over every principal. With every slot
   * taken, a caller that holds none takes over the slot of the one holding the most within
   * 500 ms (`FAIR_SLICE_MS`); that holder's upstream wait starts again later and its waiters keep
   * waiting until their own deadlines.
   * @default 256
   */
  maxTotalWaits?: number;
  /**
   * The most waits one principal may have queued behind the caps at once. A wait past it reads
   * the Session once and ends at once with the state as it stands (`sess_response` answers
   * `waiting` with its usual guidance, or the answer already given), never an error; waits
   * already queued are not ended.
   * @default 64
   */
  maxQueuedWaits?: number;
}

export type { GateWaitRequest } from './wait-polls.js';

/** Shares and bounds upstream waits. Build it with {@link createWaitGate}. */
export interface WaitGate {
  /** The cap per binding scope. */
  readonly maxConcurrentWaits: number;
  /** The cap per principal. */
  readonly maxPrincipalWaits: number;
  /** The cap over the whole gate. */
  readonly maxTotalWaits: number;
  /** The bound of one principal's queued waits. */
  readonly maxQueuedWaits: number;
  /**
   * Wait until the Session is no longer at (`revision`, `status`) or the waiter's time runs out.
   * Resolves with the view Sess reported, or `undefined` when the waiter's own deadline came
   * first (a normal timeout: nothing new). A wait past its principal's queue bound is one
   * non-waiting read, as `timeoutMs: 0` is. Rejects only
   * with what the Sess client threw, or with kind `aborted` when the waiter's signal ended it.
   */
  wait(request: GateWaitRequest): Promise<SessionView | undefined>;
  /** Upstream waits running now: for one binding scope, or for the whole gate. */
  running(scope?: string): number;
  /** Upstream waits queued behind the caps now. */
  queued(): number;
  /** Waiters in the gate now (each shares, runs or queues for one upstream wait). */
  waiting(): number;
  /** Upstream waits ended so far to give their slot to another principal (each started again). */
  yields(): number;
}

/** The default of {@link WaitGateOptions.maxConcurrentWaits}. */
export const DEFAULT_MAX_CONCURRENT_WAITS = 8;
/** The default of {@link WaitGateOptions.maxPrincipalWaits}: two clients' worth of one person. */
export const DEFAULT_MAX_PRINCIPAL_WAITS = 16;
/** The default of {@link WaitGateOptions.maxTotalWaits}. */
export const DEFAULT_MAX_TOTAL_WAITS = 256;
/** The default of {@link WaitGateOptions.maxQueuedWaits}. */
export const DEFAULT_MAX_QUEUED_WAITS = 64;

/** The option names of {@link WaitGateOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<WaitGateOptions>()(
  'maxConcurrentWaits',
  'maxPrincipalWaits',
  'maxTotalWaits',
  'maxQueuedWaits',
);

/** How often one waiter re-polls after a shared poll ended early with nothing new. */
const MAX_REJOINS = 8;

function aborted(): SessApiError {
  return new SessApiError('aborted', 'The wait was cancelled.');
}

/**
 * Build a wait gate. Engines that share one gate (`createSessEngine({ authority, waitGate })`)
 * share its caps.
 *
 * @throws TypeError naming the option when a cap is not a whole number in its range, or when the
 * bag has a key that is not one of these options.
 */
export function createWaitGate(options?: WaitGateOptions): WaitGate {
  const read = readOptions('createWaitGate', options, { known: KNOWN_OPTIONS, allowMissing: true });
  const cap = (option: WaitCap, fallback: number): number =>
    read.integer(option, options?.[option], WAIT_CAP_RANGES[option], fallback);
  const gate = emptyGateState({
    max: cap('maxConcurrentWaits', DEFAULT_MAX_CONCURRENT_WAITS),
    maxPrincipal: cap('maxPrincipalWaits', DEFAULT_MAX_PRINCIPAL_WAITS),
    maxTotal: cap('maxTotalWaits', DEFAULT_MAX_TOTAL_WAITS),
    maxQueued: cap('maxQueuedWaits', DEFAULT_MAX_QUEUED_WAITS),
  });
  return {
    maxConcurrentWaits: gate.max,
    maxPrincipalWaits: gate.maxPrincipal,
    maxTotalWaits: gate.maxTotal,
    maxQueuedWaits: gate.maxQueued,
    wait: (request) => waitThrough(gate, request),
    running: (scope) => (scope === undefined ? gate.total : (gate.perScope.get(scope) ?? 0)),
    queued: () => gate.queue.length,
    waiting: () => gate.waiters,
    yields: () => gate.yields,
  };
}

/** {@link WaitGate.wait}: a read that does not wait goes straight through; any other shares a poll. */
function waitThrough(gate: GateState, request: GateWaitRequest): Promise<SessionView | undefined> {
  const { signal } = request;
  if (signal?.aborted === true) return Promise.reject(aborted());
  const key = JSON.stringify([
    request.origin,
    request.scope,
    request.generation,
    request.sessionId,
    request.revision,
    request.status,
  ]);
  // A read that does not wait holds nothing upstream: it needs no slot.
  if (request.timeoutMs <= 0) {
    return request.sess.waitSession(
      request.sessionId,
      { revision: request.revision, status: request.status, timeoutMs: 0 },
      signal === undefined ? {} : { signal },
    );
  }
  // Past its principal's queue bound, a wait is the one read a wait over a cap makes first: the
  // state as it stands, at once, with nothing held or queued.
  if (queueIsFull(gate, request, key)) {
    return request.sess.getSession(request.sessionId, signal === undefined ? {} : { signal });
  }
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
    deadline: gateNow() + request.timeoutMs,
    deliver(outcome) {
      current = undefined;
      if ('error' in outcome) return end(() => reject(outcome.error));
      const { view } = outcome;
      if (differs(view, request) || gateNow() >= waiter.deadline || rejoins >= MAX_REJOINS) {
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
      joinPoll(gate, shared, waiter);
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

/** Whether `request` would queue behind a cap while its principal's queue is already full. */
function queueIsFull(gate: GateState, request: GateWaitRequest, key: string): boolean {
  const principal = request.principal ?? request.scope;
  if (queuedWaitersOf(gate, principal) < gate.maxQueued) return false;
  const shared = gate.polls.get(key);
  return shared === undefined ? wouldQueue(gate, request.scope, principal) : shared.phase !== 'running';
}
