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
 * A gate holds no per-request state beyond the waits in progress, so one gate may serve every
 * engine a host builds (the HTTP face builds an engine per request and shares one gate). It
 * decides nothing about answers: it returns what Sess reported, and the engine verifies it.
 */
import { readOptions } from '../contract/options.js';
import { type SessApi, SessApiError, type SessionStatus, type SessionView } from '../contract/ports.js';

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

/** One wait, as the engine asks the gate for it. */
export interface GateWaitRequest {
  /** The Sess client bound to the caller's credential. */
  sess: SessApi;
  /** The Sess origin the credential belongs to. */
  origin: string;
  /** The caller's binding scope (`bindingScope`): the cap counts per scope. */
  scope: string;
  /** The caller's credential generation (`bindingGeneration`). */
  generation: string;
  sessionId: string;
  /** What the caller already knows: the wait ends when the Session is no longer there. */
  revision: number;
  status: SessionStatus;
  /** This waiter's own time, in milliseconds. */
  timeoutMs: number;
  /** This waiter's own cancellation: it rejects with a {@link SessApiError} of kind `aborted`. */
  signal?: AbortSignal;
}

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

/** The default of {@link WaitGateOptions.maxConcurrentWaits}. */
export const DEFAULT_MAX_CONCURRENT_WAITS = 8;

/** How often one waiter re-polls after a shared poll ended early with nothing new. */
const MAX_REJOINS = 8;

type Outcome = { view: SessionView } | { error: unknown };

interface Waiter {
  deliver(outcome: Outcome): void;
  deadline: number;
}

interface Poll {
  key: string;
  scope: string;
  request: GateWaitRequest;
  waiters: Set<Waiter>;
  phase: 'reading' | 'queued' | 'running';
  /** When a running poll's upstream wait ends (its longest waiter's deadline). */
  deadline: number;
  controller: AbortController;
  /** Frees the slot of a running poll; a no-op otherwise and after the first call. */
  release: () => void;
}

function aborted(): SessApiError {
  return new SessApiError('aborted', 'The wait was cancelled.');
}

function differs(view: SessionView, request: GateWaitRequest): boolean {
  return view.revision !== request.revision || view.status !== request.status;
}

/**
 * Build a wait gate. Engines that share one gate (`createSessEngine({ authority, waitGate })`)
 * share its caps.
 *
 * @throws TypeError naming the option when `maxConcurrentWaits` or `maxTotalWaits` is not a whole
 * number from 1.
 */
export function createWaitGate(options?: WaitGateOptions): WaitGate {
  const read = readOptions('createWaitGate', options, true);
  const max = read.integer(
    'maxConcurrentWaits',
    options?.maxConcurrentWaits,
    { min: 1, max: 10_000 },
    DEFAULT_MAX_CONCURRENT_WAITS,
  );
  const maxTotal =
    read.optionalInteger('maxTotalWaits', options?.maxTotalWaits, { min: 1, max: 1_000_000 }) ?? Infinity;
  const polls = new Map<string, Poll>();
  const queue: Poll[] = [];
  const perScope = new Map<string, number>();
  let total = 0;
  let waiters = 0;

  const count = (scope: string, delta: number): void => {
    total += delta;
    const next = (perScope.get(scope) ?? 0) + delta;
    if (next === 0) perScope.delete(scope);
    else perScope.set(scope, next);
  };
  const hasRoom = (scope: string): boolean => total < maxTotal && (perScope.get(scope) ?? 0) < max;

  const finish = (poll: Poll, outcome: Outcome): void => {
    if (polls.get(poll.key) === poll) polls.delete(poll.key);
    poll.release();
    const served = [...poll.waiters];
    poll.waiters.clear();
    for (const waiter of served) waiter.deliver(outcome);
  };

  const start = (poll: Poll): void => {
    poll.phase = 'running';
    count(poll.scope, 1);
    let released = false;
    poll.release = () => {
      if (released) return;
      released = true;
      count(poll.scope, -1);
      pump();
    };
    // The shared poll lasts as long as its longest waiter; shorter ones leave on their own deadline.
    let deadline = 0;
    for (const waiter of poll.waiters) deadline = Math.max(deadline, waiter.deadline);
    poll.deadline = deadline;
    const { sess, sessionId, revision, status } = poll.request;
    sess
      .waitSession(
        sessionId,
        { revision, status, timeoutMs: Math.max(0, deadline - Date.now()) },
        { signal: poll.controller.signal },
      )
      .then(
        (view) => finish(poll, { view }),
        (error) => finish(poll, { error }),
      );
  };

  function pump(): void {
    for (let index = 0; index < queue.length && total < maxTotal; ) {
      const poll = queue[index] as Poll;
      if (hasRoom(poll.scope)) {
        queue.splice(index, 1);
        start(poll);
      } else {
        index += 1;
      }
    }
  }

  const leave = (poll: Poll, waiter: Waiter): void => {
    if (!poll.waiters.delete(waiter) || poll.waiters.size > 0) return;
    // The last waiter left: nobody needs this poll any more.
    if (polls.get(poll.key) === poll) polls.delete(poll.key);
    const queuedAt = queue.indexOf(poll);
    if (queuedAt >= 0) queue.splice(queuedAt, 1);
    poll.controller.abort();
    poll.release();
  };

  /** A new poll for `key` with `first` as its first waiter: started at once, or read and queued. */
  const open = (request: GateWaitRequest, key: string, first: Waiter): Poll => {
    const poll: Poll = {
      key,
      scope: request.scope,
      request,
      waiters: new Set([first]),
      phase: 'reading',
      deadline: 0,
      controller: new AbortController(),
      release: () => {},
    };
    polls.set(key, poll);
    const behindOthers = queue.some((queued) => queued.scope === request.scope);
    if (hasRoom(request.scope) && !behindOthers) {
      start(poll);
      return poll;
    }
    // Over the cap: one non-waiting read first, so an answer that already exists is not held back.
    request.sess.getSession(request.sessionId, { signal: poll.controller.signal }).then(
      (view) => {
        if (poll.waiters.size === 0) return;
        if (differs(view, request)) finish(poll, { view });
        else enqueue(poll);
      },
      () => {
        // A failed read only loses the shortcut; the queued wait reports what Sess says.
        if (poll.waiters.size > 0) enqueue(poll);
      },
    );
    return poll;
  };

  const enqueue = (poll: Poll): void => {
    poll.phase = 'queued';
    queue.push(poll);
    pump();
  };

  const wait = (request: GateWaitRequest): Promise<SessionView | undefined> => {
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
    return new Promise((resolve, reject) => {
      let current: Poll | undefined;
      let rejoins = 0;
      let done = false;
      const end = (settle: () => void): void => {
        if (done) return;
        done = true;
        waiters -= 1;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (current !== undefined) leave(current, waiter);
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
        const shared = polls.get(key);
        if (shared === undefined) {
          current = open(request, key, waiter);
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
      waiters += 1;
      join();
    });
  };

  return {
    maxConcurrentWaits: max,
    maxTotalWaits: maxTotal,
    wait,
    running: (scope) => (scope === undefined ? total : (perScope.get(scope) ?? 0)),
    queued: () => queue.length,
    waiting: () => waiters,
  };
}
