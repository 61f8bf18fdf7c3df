/**
 * A clock for ages and cooldowns that a wall-clock step cannot turn back: the receipt key set's
 * age and its refresh cooldown are counted on it (`key-set.ts`), so a clock stepped back neither
 * keeps a withdrawn key verifying nor holds a rotated-in key in its cooldown until the clock
 * catches up.
 *
 * It follows the given {@link Clock} except where that clock steps back: there it moves on by the
 * time the runtime's monotonic clock (`performance.now()`) counted since its last reading, and
 * keeps the step's amount as an offset from then on. A step forward moves it forward, which only
 * makes a set older sooner: one more fetch, never a key kept longer. Receipt times are not ages:
 * they stay on the wall clock.
 */
import type { Clock } from '../core/contract/ports.js';

/** Milliseconds on a scale that only moves forward; differences of two readings are ages. */
export type SteadyNow = () => number;

/** A {@link SteadyNow} over `clock`. */
export function steadyClock(clock: Clock): SteadyNow {
  /** The last reading, on this scale and on the monotonic clock. */
  let last: { steady: number; mono: number } | undefined;
  /** What the steps back so far took away, given back. */
  let backSteps = 0;
  return () => {
    const raw = clock.now();
    const mono = performance.now();
    if (last !== undefined && raw + backSteps < last.steady) {
      backSteps = last.steady + Math.max(0, mono - last.mono) - raw;
    }
    last = { steady: raw + backSteps, mono };
    return last.steady;
  };
}
