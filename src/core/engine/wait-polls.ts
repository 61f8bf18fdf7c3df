/**
 * The shared upstream polls of a wait gate and the cap that admits them: opening a poll (at once,
 * or after one non-waiting read and a place in the queue), starting it in a free slot, handing
 * its outcome to every waiter, and ending it when its last waiter leaves.
 *
 * It does not know one waiter's deadline, signal or re-polls (`wait-gate.ts` does), and it reads
 * no options: the caps arrive in the {@link GateState} the gate built.
 */
import type { SessApi, SessionStatus, SessionView } from '../contract/ports.js';

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

/** What a shared poll hands each of its waiters. */
export type Outcome = { view: SessionView } | { error: unknown };

/** One waiter of a shared poll. */
export interface Waiter {
  deliver(outcome: Outcome): void;
  deadline: number;
}

/** One upstream wait, shared by every waiter on the same key. */
export interface Poll {
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

/** One gate's caps and the waits in progress through it. */
export interface GateState {
  /** The cap per binding scope. */
  readonly max: number;
  /** The cap over every scope. */
  readonly maxTotal: number;
  /** The open polls by key. */
  readonly polls: Map<string, Poll>;
  /** Polls waiting for a slot, first in first out. */
  readonly queue: Poll[];
  /** Running polls per binding scope. */
  readonly perScope: Map<string, number>;
  /** Running polls over every scope. */
  total: number;
  /** Waiters in the gate. */
  waiters: number;
}

/** A gate with no waits yet. */
export function emptyGateState(max: number, maxTotal: number): GateState {
  return { max, maxTotal, polls: new Map(), queue: [], perScope: new Map(), total: 0, waiters: 0 };
}

/** Whether Sess reports the Session somewhere other than where the waiter knows it. */
export function differs(view: SessionView, request: GateWaitRequest): boolean {
  return view.revision !== request.revision || view.status !== request.status;
}

function count(gate: GateState, scope: string, delta: number): void {
  gate.total += delta;
  const next = (gate.perScope.get(scope) ?? 0) + delta;
  if (next === 0) gate.perScope.delete(scope);
  else gate.perScope.set(scope, next);
}

function hasRoom(gate: GateState, scope: string): boolean {
  return gate.total < gate.maxTotal && (gate.perScope.get(scope) ?? 0) < gate.max;
}

function finish(gate: GateState, poll: Poll, outcome: Outcome): void {
  if (gate.polls.get(poll.key) === poll) gate.polls.delete(poll.key);
  poll.release();
  const served = [...poll.waiters];
  poll.waiters.clear();
  for (const waiter of served) waiter.deliver(outcome);
}

function start(gate: GateState, poll: Poll): void {
  poll.phase = 'running';
  count(gate, poll.scope, 1);
  let released = false;
  poll.release = () => {
    if (released) return;
    released = true;
    count(gate, poll.scope, -1);
    pump(gate);
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
      (view) => finish(gate, poll, { view }),
      (error) => finish(gate, poll, { error }),
    );
}

function pump(gate: GateState): void {
  const { queue } = gate;
  for (let index = 0; index < queue.length && gate.total < gate.maxTotal; ) {
    const poll = queue[index] as Poll;
    if (hasRoom(gate, poll.scope)) {
      queue.splice(index, 1);
      start(gate, poll);
    } else {
      index += 1;
    }
  }
}

function enqueue(gate: GateState, poll: Poll): void {
  poll.phase = 'queued';
  gate.queue.push(poll);
  pump(gate);
}

/** Take `waiter` off `poll`; the last waiter to leave ends the poll and frees its slot. */
export function leavePoll(gate: GateState, poll: Poll, waiter: Waiter): void {
  if (!poll.waiters.delete(waiter) || poll.waiters.size > 0) return;
  // The last waiter left: nobody needs this poll any more.
  if (gate.polls.get(poll.key) === poll) gate.polls.delete(poll.key);
  const queuedAt = gate.queue.indexOf(poll);
  if (queuedAt >= 0) gate.queue.splice(queuedAt, 1);
  poll.controller.abort();
  poll.release();
}

/** A new poll for `key` with `first` as its first waiter: started at once, or read and queued. */
export function openPoll(gate: GateState, request: GateWaitRequest, key: string, first: Waiter): Poll {
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
  gate.polls.set(key, poll);
  const behindOthers = gate.queue.some((queued) => queued.scope === request.scope);
  if (hasRoom(gate, request.scope) && !behindOthers) {
    start(gate, poll);
    return poll;
  }
  // Over the cap: one non-waiting read first, so an answer that already exists is not held back.
  request.sess.getSession(request.sessionId, { signal: poll.controller.signal }).then(
    (view) => {
      if (poll.waiters.size === 0) return;
      if (differs(view, request)) finish(gate, poll, { view });
      else enqueue(gate, poll);
    },
    () => {
      // A failed read only loses the shortcut; the queued wait reports what Sess says.
      if (poll.waiters.size > 0) enqueue(gate, poll);
    },
  );
  return poll;
}
