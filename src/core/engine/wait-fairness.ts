/**
 * Who gets the wait gate's slots: which queued poll starts next when a slot is free, and, when
 * the total cap is what keeps a caller waiting, which running poll yields its slot to it.
 *
 * - A free slot goes to the queued poll whose principal runs the fewest upstream waits (then whose
 *   scope runs the fewest, then the one queued first), among those its own caps allow.
 * - With every slot taken, a queued poll of a principal that runs none takes over the slot of a
 *   principal that runs at least one; a principal that runs some takes one over only from a
 *   principal that runs at least two more, so the shares even out and then hold still. The slot
 *   taken is one of the principal that runs the most (then the scope that runs the most, then the
 *   oldest run).
 * - Neither side turns over faster than {@link FAIR_SLICE_MS}: a running poll yields only after it
 *   ran that long (and not when its own wait ends within that time anyway), and a poll that
 *   yielded may take a slot over only after it was queued that long. So the upstream wait of a
 *   principal running none starts within that time of its place in the queue (while fewer such
 *   principals wait than there are slots), and callers that share the slots evenly turn over at
 *   most once per that time.
 *
 * It only decides: starting, ending and queueing polls is `wait-polls.ts`'s.
 */

/** What the decisions read of one poll (`wait-polls.ts`'s `Poll` is one). */
export interface FairPoll {
  readonly scope: string;
  readonly principal: string;
  /** When it last started running; `undefined` while it never ran. */
  readonly startedAt: number | undefined;
  /** When it last entered the queue. */
  readonly queuedAt: number;
  /** When a running poll's upstream wait ends. */
  readonly deadline: number;
}

/** What the decisions read of the gate (`wait-polls.ts`'s `GateState` is one). */
export interface FairGate<P extends FairPoll> {
  readonly maxTotal: number;
  readonly queue: readonly P[];
  readonly running: ReadonlySet<P>;
  readonly perScope: ReadonlyMap<string, number>;
  readonly perPrincipal: ReadonlyMap<string, number>;
  readonly total: number;
}

/**
 * How long a running poll keeps its slot before it may yield it, and a poll that yielded stays
 * queued before it may take one back: the longest a newcomer waits for a slot held by others.
 */
export const FAIR_SLICE_MS = 500;

/** What {@link nextYield} decided. */
export type YieldDecision<P> =
  | { kind: 'none' }
  /** Nothing now; look again at `at` (the gate's time). */
  | { kind: 'later'; at: number }
  /** `holder` yields its slot and `newcomer` takes it. */
  | { kind: 'now'; holder: P; newcomer: P };

const runningOf = (counts: ReadonlyMap<string, number>, key: string): number => counts.get(key) ?? 0;

/** The queued poll to start in a free slot, among those `room` allows; `undefined` when none. */
export function nextToStart<P extends FairPoll>(
  gate: FairGate<P>,
  room: (poll: P) => boolean,
): P | undefined {
  if (gate.total >= gate.maxTotal) return undefined;
  let best: P | undefined;
  let bestRank: [number, number] = [Infinity, Infinity];
  for (const poll of gate.queue) {
    if (!room(poll)) continue;
    const rank: [number, number] = [
      runningOf(gate.perPrincipal, poll.principal),
      runningOf(gate.perScope, poll.scope),
    ];
    if (rank[0] < bestRank[0] || (rank[0] === bestRank[0] && rank[1] < bestRank[1])) {
      best = poll;
      bestRank = rank;
    }
  }
  return best;
}

/** Whether a principal running `newcomer` waits may take a slot from one running `holder`. */
function mayTakeOver(newcomer: number, holder: number): boolean {
  return newcomer === 0 ? holder >= 1 : holder >= newcomer + 2;
}

/** When a queued poll may take a slot over: at once if it never ran, a slice after it yielded. */
function newcomerFrom(poll: FairPoll): number {
  return poll.startedAt === undefined ? poll.queuedAt : poll.queuedAt + FAIR_SLICE_MS;
}

/** The holder of most slots whose run may yield now, and the earliest time another's may. */
function bestHolder<P extends FairPoll>(
  gate: FairGate<P>,
  now: number,
): { holder: P | undefined; later: number[] } {
  let holder: P | undefined;
  const later: number[] = [];
  for (const poll of gate.running) {
    // A poll whose own wait ends within a slice frees its slot on its own: leave it be (its
    // waiters with the latest deadline rely on its answer).
    if (poll.deadline - now <= FAIR_SLICE_MS) continue;
    const from = (poll.startedAt ?? now) + FAIR_SLICE_MS;
    if (from > now) {
      later.push(from);
      continue;
    }
    if (holder === undefined || holderBefore(gate, poll, holder)) holder = poll;
  }
  return { holder, later };
}

/** Whether `a` should yield before `b`: more slots for its principal, then its scope, then older. */
function holderBefore<P extends FairPoll>(gate: FairGate<P>, a: P, b: P): boolean {
  const byPrincipal = runningOf(gate.perPrincipal, a.principal) - runningOf(gate.perPrincipal, b.principal);
  if (byPrincipal !== 0) return byPrincipal > 0;
  const byScope = runningOf(gate.perScope, a.scope) - runningOf(gate.perScope, b.scope);
  if (byScope !== 0) return byScope > 0;
  return (a.startedAt ?? 0) < (b.startedAt ?? 0);
}

/**
 * With every slot of the total cap taken, whether a queued poll (one `ownRoom` allows) takes over
 * a running one's slot now, later, or not at all.
 */
export function nextYield<P extends FairPoll>(
  gate: FairGate<P>,
  now: number,
  ownRoom: (poll: P) => boolean,
): YieldDecision<P> {
  if (gate.total < gate.maxTotal || gate.queue.length === 0) return { kind: 'none' };
  // The most deserving queued poll that may take a slot over now, and when others may.
  let newcomer: P | undefined;
  let fewest = Infinity;
  let fewestLater = Infinity;
  let newcomerLater = Infinity;
  for (const poll of gate.queue) {
    if (!ownRoom(poll)) continue;
    const running = runningOf(gate.perPrincipal, poll.principal);
    const from = newcomerFrom(poll);
    if (from > now) {
      if (running < fewestLater || (running === fewestLater && from < newcomerLater)) {
        fewestLater = running;
        newcomerLater = from;
      }
      continue;
    }
    if (running < fewest) {
      newcomer = poll;
      fewest = running;
    }
  }
  const { holder, later } = bestHolder(gate, now);
  const most = holder === undefined ? 0 : runningOf(gate.perPrincipal, holder.principal);
  if (newcomer !== undefined && holder !== undefined && mayTakeOver(fewest, most)) {
    return { kind: 'now', holder, newcomer };
  }
  // Look again when a holder's slice ends (if someone queued now could take its slot) or when a
  // queued poll's wait to take one over ends (if the holder now could give it one).
  let at = Infinity;
  const anyHolder = Math.max(0, ...[...gate.running].map((p) => runningOf(gate.perPrincipal, p.principal)));
  if (newcomer !== undefined && mayTakeOver(fewest, anyHolder)) at = Math.min(at, ...later);
  if (newcomerLater < Infinity && mayTakeOver(fewestLater, anyHolder)) at = Math.min(at, newcomerLater);
  return at < Infinity ? { kind: 'later', at } : { kind: 'none' };
}
