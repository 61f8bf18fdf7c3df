/**
 * The one option-checking helper every factory uses, so every bad option fails at construction
 * with a `TypeError` of the same form: `<factory>: option "<name>" <rule>.`
 *
 * It checks shapes and ranges, fills defaults and refuses options under a name a factory
 * renamed. It knows no particular option: the rules for values that several entries accept (wait
 * ceiling, workspace ids, profile names) live in `rules.ts`, and each factory names its own
 * options.
 */
import type { ValueRule } from './rules.js';

/** Reads one factory's option bag; every failure names the factory and the option. */
export interface OptionReader {
  /** The factory name used in messages, e.g. `createSessEngine`. */
  readonly factory: string;
  /** Throw the factory's `TypeError` for `option`, saying the `rule` it breaks. */
  fail(option: string, rule: string): never;
  /** A whole number in `[min, max]`; `fallback` when absent (required when no fallback). */
  integer(option: string, value: unknown, range: { min: number; max: number }, fallback?: number): number;
  /** Like {@link OptionReader.integer}, but `undefined` stays `undefined`. */
  optionalInteger(option: string, value: unknown, range: { min: number; max: number }): number | undefined;
  /** A non-empty string; `undefined` when absent. */
  optionalString(option: string, value: unknown): string | undefined;
  /** A string that satisfies `rule`; `undefined` when absent. */
  optionalRule(option: string, value: unknown, rule: ValueRule<string>): string | undefined;
  /** A boolean; `fallback` when absent. */
  boolean(option: string, value: unknown, fallback: boolean): boolean;
  /**
   * Refuse every option the bag still carries under an old name, given as old name → new name:
   * `read.renamed({ requestTimeoutMs: 'requestDeadlineMs' })` fails with
   * `<factory>: option "requestTimeoutMs" was renamed to "requestDeadlineMs".` A key that is
   * present fails even when its value is `undefined`, so a stale name never passes unnoticed.
   */
  renamed(names: Readonly<Record<string, string>>): void;
  /** A function; required unless `optional`. */
  func<F extends (...args: never[]) => unknown>(option: string, value: unknown, optional?: false): F;
  func<F extends (...args: never[]) => unknown>(
    option: string,
    value: unknown,
    optional: true,
  ): F | undefined;
}

/** Largest delay a timer takes in every runtime (2³¹ − 1 ms); above it a timer fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The message of a bad option, in the one form every factory uses. */
export function optionMessage(factory: string, option: string, rule: string): string {
  return `${factory}: option "${option}" ${rule}.`;
}

/**
 * Start checking `options` for `factory`: refuses anything but an object (or `undefined` when
 * `allowMissing`), then returns the reader for its fields: `createSessEngine` reads its wait
 * ceiling with `read.integer('maxWaitMs', options.maxWaitMs, { min: 0, max: 45_000 }, 45_000)`.
 */
export function readOptions(factory: string, options: unknown, allowMissing = false): OptionReader {
  if (!(allowMissing && options === undefined) && (options === null || typeof options !== 'object')) {
    throw new TypeError(`${factory}: options must be an object.`);
  }
  const fail = (option: string, rule: string): never => {
    throw new TypeError(optionMessage(factory, option, rule));
  };
  const integer = (option: string, value: unknown, range: { min: number; max: number }): number => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
      fail(option, `must be a whole number from ${range.min} to ${range.max}`);
    }
    return value as number;
  };
  const reader: OptionReader = {
    factory,
    fail,
    integer(option, value, range, fallback) {
      if (value === undefined) {
        if (fallback === undefined)
          fail(option, `is required: a whole number from ${range.min} to ${range.max}`);
        return fallback as number;
      }
      return integer(option, value, range);
    },
    optionalInteger(option, value, range) {
      return value === undefined ? undefined : integer(option, value, range);
    },
    optionalString(option, value) {
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || value.length === 0) fail(option, 'must be a non-empty string');
      return value as string;
    },
    optionalRule(option, value, rule) {
      if (value === undefined) return undefined;
      if (!rule.test(value)) fail(option, `must be ${rule.text}`);
      return value as string;
    },
    boolean(option, value, fallback) {
      if (value === undefined) return fallback;
      if (typeof value !== 'boolean') fail(option, 'must be a boolean');
      return value as boolean;
    },
    renamed(names) {
      if (options === undefined) return;
      for (const [from, to] of Object.entries(names)) {
        if (Object.hasOwn(options as object, from)) fail(from, `was renamed to "${to}"`);
      }
    },
    func(option: string, value: unknown, optional?: boolean) {
      if (value === undefined && optional === true) return undefined;
      if (typeof value !== 'function')
        fail(option, optional ? 'must be a function' : 'is required and must be a function');
      return value as never;
    },
  } as OptionReader;
  return reader;
}
