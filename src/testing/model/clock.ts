/**
 * The controllable clock of the local Sess runtime. Link expiry, lapse, `submitted_at` and receipt
 * `iat` follow it; wait timeouts do not (they are real milliseconds, so a test that moves the
 * clock never ends a long-poll early).
 *
 * It holds no timers itself: the runtime subscribes with {@link LocalClock.onChange} and re-checks
 * its Sessions whenever the clock is moved.
 */
import { optionNames, readOptions } from '../../core/contract/options.js';

/** A clock a test can move. By default it follows real time from where it was last set. */
export interface LocalClock {
  /** Milliseconds since the epoch, as the runtime sees it. */
  now(): number;
  /** Move the clock forward by `ms` (≥ 0); expiries that pass fire at once. */
  advance(ms: number): void;
  /** Set the clock to a point in time; it keeps running from there unless frozen. */
  set(time: Date | number | string): void;
  /** Stop the clock where it is (it moves only by `advance`/`set`). */
  freeze(): void;
  /** Let the clock run with real time again from where it is. */
  unfreeze(): void;
  /** True while frozen. */
  readonly frozen: boolean;
  /** Called after every `advance`/`set`; returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** Options of {@link createLocalClock}. */
export interface LocalClockOptions {
  /** Start time. @default the real time */
  start?: Date | number | string;
  /** Start frozen. @default false */
  frozen?: boolean;
}

function toMs(time: Date | number | string, option: string): number {
  const ms = time instanceof Date ? time.getTime() : typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(ms)) throw new TypeError(`${option}: not a valid time`);
  return ms;
}

/** The option names of {@link LocalClockOptions}; any other key is refused. */
export const LOCAL_CLOCK_OPTIONS = optionNames<LocalClockOptions>()('start', 'frozen');

/** Create a {@link LocalClock}. @throws TypeError naming an option it does not know. */
export function createLocalClock(options: LocalClockOptions = {}): LocalClock {
  readOptions('createLocalClock', options, { known: LOCAL_CLOCK_OPTIONS });
  // now = frozen ? base : base + (Date.now() - realBase)
  let base = options.start === undefined ? Date.now() : toMs(options.start, 'clock.start');
  let realBase = Date.now();
  let frozen = options.frozen ?? false;
  const listeners = new Set<() => void>();
  const now = () => (frozen ? base : base + (Date.now() - realBase));
  const rebase = (to: number) => {
    base = to;
    realBase = Date.now();
    for (const listener of [...listeners]) listener();
  };
  return {
    now,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0)
        throw new TypeError('clock.advance: ms must be a finite number ≥ 0');
      rebase(now() + ms);
    },
    set(time) {
      rebase(toMs(time, 'clock.set'));
    },
    freeze() {
      base = now();
      realBase = Date.now();
      frozen = true;
    },
    unfreeze() {
      base = now();
      realBase = Date.now();
      frozen = false;
    },
    get frozen() {
      return frozen;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
