/**
 * The shared upstream polls of a wait gate and the caps that admit them: opening a poll (at once,
 * or after one non-waiting read and a place in the queue), starting it in a free slot, ending its
 * upstream wait to give the slot to a caller with fewer (and starting it again later), handing
 * its outcome to every waiter, and ending it when its last waiter leaves.
 *
 * It does not know one waiter's deadline, signal or re-polls (`wait-gate.ts` does), nor which
 * queued poll goes next or which running one yields (`wait-fairness.ts` decides); it reads no
 * options: the caps arrive in the {@link GateState} the gate built.
 */
import type { SessApi, SessionStatus, SessionView } from '../contract/ports.js';
import { nextToStart, nextYield } from './wait-fairness.js';

/** One wait, as the engine asks the gate for it. */
export interface GateWaitRequest {
  /** The Sess client bound to the caller's credential. */
  sess: SessApi;
  /** The Sess origin the credential belongs to. */
  origin: string;
  /** The caller's binding scope (`bindingScope`): the cap counts per scope. */
  scope: string;
  /**
   * Who the caller is across clients and grants (`bindingPrincipal`): the per-principal cap and
   * the queue bound count per principal, and the slots are shared fairly between principals.
   * @default scope (each scope its own principal)
   */
  principal?: string;
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

/**
 * The gate's time, in milliseconds: the runtime's monotonic clock, so a wall-clock step moves no
 * waiter's deadline and no slot's turn. Deadlines, starts and queue times are all on it.
 */
export function gateNow(): number {
  return performance.now();
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
  principal: string;
  request: GateWaitRequest;
  waiters: Set<Waiter>;
  /** `reading` and `queued` are over a cap (their waiters count as queued); `running` holds a slot. */
  phase: 'reading' | 'queued' | 'running';
  /** When a running poll's upstream wait ends (its longest waiter's deadline). */
  deadline: number;
  /** When it last started running; `undefined` while it never ran. */
  startedAt: number | undefined;
  /** When it last entered the queue. */
  queuedAt: number;
  /** The poll's life: ends its read, and its upstream wait, when the last waiter leaves. */
  controller: AbortController;
  /** The upstream wait of the current run; ended alone when the poll yields its slot. */
  run: AbortController | undefined;
}

/** One gate's caps and the waits in progress through it. */
export interface GateState {
  /** The cap per binding scope. */
  readonly max: number;
  /** The cap per principal. */
  readonly maxPrincipal: number;
  /** The cap over every scope. */
  readonly maxTotal: number;
  /** The most waiters one principal may have queued; past it a new wait ends at once. */
  readonly maxQueued: number;
  /** The open polls by key. */
  readonly polls: Map<string, Poll>;
  /** Polls waiting for a slot, in the order they entered. */
  readonly queue: Poll[];
  /** Polls holding a slot. */
  readonly running: Set<Poll>;
  /** Running polls per binding scope. */
  readonly perScope: Map<string, number>;
  /** Running polls per principal. */
  readonly perPrincipal: Map<string, number>;
  /** Waiters of polls over a cap (reading or queued), per principal. */
  readonly queuedWaiters: Map<string, number>;
  /** Running polls over every scope. */
  total: number;
  /** Waiters in the gate. */
  waiters: number;
  /** Upstream waits ended to give their slot to another caller, since the gate was built. */
  yields: number;
  /** The timer that looks at the queue again when a slot may be taken over. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** A gate with no waits yet. */
export function emptyGateState(caps: {
  max: number;
  maxPrincipal: number;
  maxTotal: number;
  maxQueued: number;
}): GateState {
  return {
    ...caps,
    polls: new Map(),
    queue: [],
    running: new Set(),
    perScope: new Map(),
    perPrincipal: new Map(),
    queuedWaiters: new Map(),
    total: 0,
    waiters: 0,
    yields: 0,
    timer: undefined,
  };
}

/** Whether Sess reports the Session somewhere other than where the waiter knows it. */
export function differs(view: SessionView, request: GateWaitRequest): boolean {
  return view.revision !== request.revision || view.status !== request.status;
}

function add(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}

/** Waiters of `principal` over a cap now. */
export function queuedWaitersOf(gate: GateState, principal: string): number {
  return gate.queuedWaiters.get(principal) ?? 0;
}

/** Whether `poll`'s own caps (its scope's, its principal's) leave it room. */
export function ownRoom(gate: GateState, poll: { scope: string; principal: string }): boolean {
  return (
    (gate.perScope.get(poll.scope) ?? 0) < gate.max &&
    (gate.perPrincipal.get(poll.principal) ?? 0) < gate.maxPrincipal
  );
}

function hasRoom(gate: GateState, poll: { scope: string; principal: string }): boolean {
  return gate.total < gate.maxTotal && ownRoom(gate, poll);
}

/** Whether a new poll for `request` would wait over a cap (so its waiter would be queued). */
export function wouldQueue(gate: GateState, scope: string, principal: string): boolean {
  return !hasRoom(gate, { scope, principal }) || gate.queue.some((queued) => queued.scope === scope);
}

/** Take `poll` out of the slot it holds, without looking at the queue. */
function vacate(gate: GateState, poll: Poll): void {
  if (!gate.running.delete(poll)) return;
  gate.total -= 1;
  add(gate.perScope, poll.scope, -1);
  add(gate.perPrincipal, poll.principal, -1);
}

function finish(gate: GateState, poll: Poll, outcome: Outcome): void {
  if (gate.polls.get(poll.key) === poll) gate.polls.delete(poll.key);
  if (poll.phase !== 'running') add(gate.queuedWaiters, poll.principal, -poll.waiters.size);
  poll.run = undefined;
  const served = [...poll.waiters];
  poll.waiters.clear();
  // The freed slot goes to the queue before a served waiter can wait again.
  if (gate.running.has(poll)) {
    vacate(gate, poll);
    pump(gate);
  }
  for (const waiter of served) waiter.deliver(outcome);
}

function start(gate: GateState, poll: Poll, now: number): void {
  if (poll.phase !== 'running') add(gate.queuedWaiters, poll.principal, -poll.waiters.size);
  poll.phase = 'running';
  poll.startedAt = now;
  gate.running.add(poll);
  gate.total += 1;
  add(gate.perScope, poll.scope, 1);
  add(gate.perPrincipal, poll.principal, 1);
  // The shared poll lasts as long as its longest waiter; shorter ones leave on their own deadline.
  let deadline = 0;
  for (const waiter of poll.waiters) deadline = Math.max(deadline, waiter.deadline);
  poll.deadline = deadline;
  const run = new AbortController();
  poll.run = run;
  const { sess, sessionId, revision, status } = poll.request;
  sess
    .waitSession(
      sessionId,
      // Whole milliseconds, as the wire takes them; never past the longest waiter's own time.
      { revision, status, timeoutMs: Math.ceil(Math.max(0, deadline - now)) },
      { signal: run.signal },
    )
    .then(
      (view) => {
        if (poll.run === run) finish(gate, poll, { view });
      },
      (error) => {
        // A run ended to give up its slot reports nothing: the poll waits for its next run.
        if (poll.run === run) finish(gate, poll, { error });
      },
    );
}

/**
 * End `poll`'s upstream wait and queue it again: its waiters keep waiting, each until its own
 * deadline, and it starts again in a later slot (reading the Session afresh, so an answer given
 * meanwhile is returned at once).
 */
function yieldSlot(gate: GateState, poll: Poll, now: number): void {
  const run = poll.run;
  poll.run = undefined;
  run?.abort();
  vacate(gate, poll);
  poll.phase = 'queued';
  poll.queuedAt = now;
  add(gate.queuedWaiters, poll.principal, poll.waiters.size);
  gate.queue.push(poll);
  gate.yields += 1;
}

/**
 * Start what the caps allow, fairest first; then, while the total cap is what holds a caller
 * back, let it take over the slot of a caller with more (`wait-fairness.ts`), or set the timer
 * for when one may.
 */
function pump(gate: GateState): void {
  const now = gateNow();
  for (;;) {
    const next = nextToStart(gate, (poll) => hasRoom(gate, poll));
    if (next === undefined) break;
    gate.queue.splice(gate.queue.indexOf(next), 1);
    start(gate, next, now);
  }
  if (gate.timer !== undefined) clearTimeout(gate.timer);
  gate.timer = undefined;
  for (;;) {
    const decision = nextYield(gate, now, (poll) => ownRoom(gate, poll));
    if (decision.kind === 'none') return;
    if (decision.kind === 'later') {
      gate.timer = setTimeout(
        () => {
          gate.timer = undefined;
          pump(gate);
        },
        Math.max(1, decision.at - now),
      );
      return;
    }
    yieldSlot(gate, decision.holder, now);
    gate.queue.splice(gate.queue.indexOf(decision.newcomer), 1);
    start(gate, decision.newcomer, now);
  }
}

function enqueue(gate: GateState, poll: Poll): void {
  poll.phase = 'queued';
  poll.queuedAt = gateNow();
  gate.queue.push(poll);
  pump(gate);
}

/** Add `waiter` to `poll` (counted as queued while the poll is over a cap). */
export function joinPoll(gate: GateState, poll: Poll, waiter: Waiter): void {
  poll.waiters.add(waiter);
  if (poll.phase !== 'running') add(gate.queuedWaiters, poll.principal, 1);
}

/** Take `waiter` off `poll`; the last waiter to leave ends the poll and frees its slot. */
export function leavePoll(gate: GateState, poll: Poll, waiter: Waiter): void {
  if (!poll.waiters.delete(waiter)) return;
  if (poll.phase !== 'running') add(gate.queuedWaiters, poll.principal, -1);
  if (poll.waiters.size > 0) return;
  // The last waiter left: nobody needs this poll any more.
  if (gate.polls.get(poll.key) === poll) gate.polls.delete(poll.key);
  const queuedAt = gate.queue.indexOf(poll);
  if (queuedAt >= 0) gate.queue.splice(queuedAt, 1);
  poll.controller.abort();
  poll.run?.abort();
  poll.run = undefined;
  if (gate.running.has(poll)) {
    vacate(gate, poll);
    pump(gate);
  } else if (gate.queue.length === 0 && gate.timer !== undefined) {
    clearTimeout(gate.timer);
    gate.timer = undefined;
  }
}

/** A new poll for `key` with `first` as its first waiter: started at once, or read and queued. */
export function openPoll(gate: GateState, request: GateWaitRequest, key: string, first: Waiter): Poll {
  const poll: Poll = {
    key,
    scope: request.scope,
    principal: request.principal ?? request.scope,
    request,
    waiters: new Set(),
    phase: 'reading',
    deadline: 0,
    startedAt: undefined,
    queuedAt: 0,
    controller: new AbortController(),
    run: undefined,
  };
  gate.polls.set(key, poll);
  const queue = wouldQueue(gate, poll.scope, poll.principal);
  joinPoll(gate, poll, first);
  if (!queue) {
    start(gate, poll, gateNow());
    return poll;
  }
  // Over a cap: one non-waiting read first, so an answer that already exists is not held back.
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
