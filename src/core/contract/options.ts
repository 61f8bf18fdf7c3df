/**
 * The one option-checking helper every factory uses, so every bad option fails at construction
 * with a `TypeError` of the same form: `<factory>: option "<name>" <rule>.`
 *
 * It checks shapes and ranges, fills defaults, refuses options under a name a factory renamed and
 * refuses every key the factory does not take (with the nearest option name when one is close), so
 * a misspelt or unsupported option never passes silently. It knows no particular option: the rules
 * for values that several entries accept (wait ceiling, workspace ids, profile names) live in
 * `rules.ts`, and each factory names its own options ({@link optionNames}).
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
   * An object option whose own keys must all be in `known` (`undefined` reads as `{}`): a bag
   * within the bag, such as `startLocalSess`'s `plan`. An unknown key fails naming
   * `<option>.<key>`, in the same form as an unknown option.
   */
  bag(option: string, value: unknown, known: readonly string[]): Record<string, unknown>;
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

/** What {@link readOptions} knows of one factory's bag besides its values. */
export interface OptionBagRules {
  /**
   * Every option name the factory takes ({@link optionNames}): any other own key of the bag is
   * refused, even when its value is `undefined`.
   */
  readonly known: readonly string[];
  /**
   * Options refused under an old name, old name → new name: `{ requestTimeoutMs:
   * 'requestDeadlineMs' }` fails with `<factory>: option "requestTimeoutMs" was renamed to
   * "requestDeadlineMs".` A key that is present fails even when its value is `undefined`.
   */
  readonly renamed?: Readonly<Record<string, string>>;
  /** Whether the bag may be `undefined`. @default false */
  readonly allowMissing?: boolean;
}

/**
 * The option names of the bag type `T`, each written once: the type check fails when a name is
 * not a key of `T` or when a key of `T` is left out, so the list a factory hands
 * {@link readOptions} cannot drift from its options interface.
 * `optionNames<RegisterSessToolsOptions>()('engine', 'tools', 'inputSchemas')` is `registerSessTools`'s.
 */
export function optionNames<T extends object>() {
  return <const K extends readonly (keyof T & string)[]>(
    ...names: K & ([Exclude<keyof T & string, K[number]>] extends [never] ? unknown : never)
  ): readonly string[] => names;
}

/** The longest unknown key a message repeats; a longer one is cut (it is a name, never a value). */
const MAX_SHOWN_KEY = 64;

/** A key as a message shows it: escaped as JSON (no control or bidi character raw), cut short. */
function shownKey(key: string): string {
  const cut = key.length > MAX_SHOWN_KEY ? `${key.slice(0, MAX_SHOWN_KEY)}…` : key;
  return JSON.stringify(cut)
    .slice(1, -1)
    .replace(
      /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

/** Edit distance (insert, delete, replace) of two short names, case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const replace = (previous[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1);
      row.push(Math.min(replace, (previous[j] as number) + 1, (row[j - 1] as number) + 1));
    }
    previous = row;
  }
  return previous[y.length] as number;
}

/** The known name closest to `key`, when one is a near miss (a case slip or up to two edits). */
export function nearestOption(key: string, known: readonly string[]): string | undefined {
  if (key.length > MAX_SHOWN_KEY) return undefined;
  const allowed = key.length < 5 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const name of known) {
    const d = distance(key, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Refuse every own key of `bag` outside `known` (renamed ones first, with their new name).
 * `what` says what a known key is: `an option of createX`, or `a key of "plan"` in a nested bag.
 */
function refuseUnknown(
  fail: (option: string, rule: string) => never,
  bag: object,
  rules: OptionBagRules,
  what: string,
  prefix = '',
): void {
  const renamed = rules.renamed ?? {};
  for (const key of Object.keys(bag)) {
    if (Object.hasOwn(renamed, key)) fail(`${prefix}${key}`, `was renamed to "${renamed[key]}"`);
  }
  for (const key of Object.keys(bag)) {
    if (rules.known.includes(key)) continue;
    const near = nearestOption(key, rules.known);
    fail(
      `${prefix}${shownKey(key)}`,
      `is not ${what}${near === undefined ? '' : ` (did you mean "${near}"?)`}`,
    );
  }
}

/**
 * Start checking `options` for `factory`: refuses anything but an object (or `undefined` when
 * `rules.allowMissing`), any key under a renamed name and any key not in `rules.known`, then
 * returns the reader for its fields: `createSessEngine` reads its wait ceiling with
 * `read.integer('maxWaitMs', options.maxWaitMs, { min: 0, max: 45_000 }, 45_000)`.
 *
 * An unknown key fails as `<factory>: option "<key>" is not an option of <factory>.`, with
 * ` (did you mean "<name>"?)` before the full stop when a known name is a near miss.
 */
export function readOptions(factory: string, options: unknown, rules: OptionBagRules): OptionReader {
  const allowMissing = rules.allowMissing === true;
  if (!(allowMissing && options === undefined) && (options === null || typeof options !== 'object')) {
    throw new TypeError(`${factory}: options must be an object.`);
  }
  const fail = (option: string, rule: string): never => {
    throw new TypeError(optionMessage(factory, option, rule));
  };
  if (options !== undefined) refuseUnknown(fail, options as object, rules, `an option of ${factory}`);
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
    bag(option, value, known) {
      if (value === undefined) return {};
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        fail(option, 'must be an object');
      refuseUnknown(
        fail,
        value as object,
        { known },
        `a key of "${option}" (${known.join(', ')})`,
        `${option}.`,
      );
      return value as Record<string, unknown>;
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
