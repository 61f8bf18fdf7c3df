/**
 * The HTTP watcher's share of the wait gate it shares with the handler: the long-polls it holds
 * per binding scope, per principal and in all (at most half of each of the gate's caps, and only
 * in a slot free now), and how long each poll waits when more Sessions are due than it has slots.
 *
 * A pass of the watcher counts the Sessions due in each scope, for each principal and in all;
 * a poll then waits the shortest of the waits the shared watch policy gives those counts
 * (`rotationWaitMs`: the whole wait while each Session can have a poll of its own, else shorter
 * in proportion, at least a second), so every Session has its turn about once per wait however
 * many wait. Where a cap leaves the watcher no slot at all (a cap of 1), it only reads.
 *
 * It starts no poll: `watch-run.ts` asks it before each one.
 */
import { rotationWaitMs, watcherSlots } from '../faces/wake/watch-policy.js';
import type { WaitGate } from '../index.js';

/** Counts per binding scope, per principal and in all. */
class Counts {
  readonly perScope = new Map<string, number>();
  readonly perPrincipal = new Map<string, number>();
  total = 0;

  add(scope: string, principal: string, by: 1 | -1): void {
    this.total += by;
    for (const [map, key] of [
      [this.perScope, scope],
      [this.perPrincipal, principal],
    ] as const) {
      const next = (map.get(key) ?? 0) + by;
      if (next <= 0) map.delete(key);
      else map.set(key, next);
    }
  }
}

/** The watcher's slots of one gate, and the Sessions that take turns in them. */
export class WatcherSlots {
  private readonly held = new Counts();
  private due = new Counts();
  private dueBefore = new Counts();

  constructor(private readonly gate: WaitGate) {}

  /** Whether one more long-poll fits: under half of each cap, and a slot of the gate free now. */
  free(scope: string, principal: string): boolean {
    const { gate, held } = this;
    return (
      held.total < watcherSlots(gate.maxTotalWaits) &&
      (held.perScope.get(scope) ?? 0) < watcherSlots(gate.maxConcurrentWaits) &&
      (held.perPrincipal.get(principal) ?? 0) < watcherSlots(gate.maxPrincipalWaits) &&
      gate.running(scope) < gate.maxConcurrentWaits &&
      gate.running() < gate.maxTotalWaits
    );
  }

  take(scope: string, principal: string): void {
    this.held.add(scope, principal, 1);
  }

  release(scope: string, principal: string): void {
    this.held.add(scope, principal, -1);
  }

  /** A Session due for a long-poll was seen in this pass. */
  tally(scope: string, principal: string): void {
    this.due.add(scope, principal, 1);
  }

  /** A pass is over: its counts are the ones the next pass's waits follow. */
  passEnded(): void {
    this.dueBefore = this.due;
    this.due = new Counts();
  }

  /**
   * How long a long-poll of a Session of `scope` waits, at most `maxWaitMs`: shortened in
   * proportion when more Sessions are due than the watcher has slots (the counts of the last pass,
   * or of this one when higher); 0 (a read) where a cap leaves it no slot.
   */
  waitFor(scope: string, principal: string, maxWaitMs: number): number {
    const { gate } = this;
    const count = (key: 'perScope' | 'perPrincipal', of: string) =>
      Math.max(this.due[key].get(of) ?? 0, this.dueBefore[key].get(of) ?? 0);
    const shares: [number, number][] = [
      [count('perScope', scope), watcherSlots(gate.maxConcurrentWaits)],
      [count('perPrincipal', principal), watcherSlots(gate.maxPrincipalWaits)],
      [Math.max(this.due.total, this.dueBefore.total), watcherSlots(gate.maxTotalWaits)],
    ];
    if (shares.some(([, slots]) => slots === 0)) return 0;
    return Math.min(...shares.map(([watched, slots]) => rotationWaitMs(maxWaitMs, watched, slots)));
  }
}
