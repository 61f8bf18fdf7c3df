/**
 * The command line of `npm run bench`: which measures, how many runs, and the sizes of measures 3,
 * 7 and 9. Every flag is checked here, and anything else is refused by name, so a mistyped flag
 * never runs the whole bench with its defaults.
 *
 * Parsing only: it runs nothing, and it does not know what a measure does.
 */

/** What one `npm run bench` was asked for. */
export interface BenchArgs {
  /** The measures to run (`--only 1,2,4`); undefined for all. They run in their numeric order. */
  only: string[] | undefined;
  /** How many times to run each selected measure (`--runs 1`). @default 3 */
  runs: number;
  /** The sizes of measure 3 (`--waits 1000,5000`); undefined for its default. */
  waits: number[] | undefined;
  /** The sizes of measure 7 (`--http-waits 1000`); undefined for its default. */
  httpWaits: number[] | undefined;
  /** The sizes of measure 9 (`--watched 1,1000`); undefined for its default. */
  watched: number[] | undefined;
}

/** A command line the bench refuses; its message says what to change. */
export class BenchArgsError extends Error {
  override name = 'BenchArgsError';
}

/** The flags, each with the text that explains its value. */
const FLAGS = {
  '--only': 'measure numbers separated by commas, e.g. 1,2,4',
  '--runs': 'a whole number of runs, 1 or more, e.g. 3',
  '--waits': 'measure 3 sizes separated by commas, e.g. 1000,5000',
  '--http-waits': 'measure 7 sizes separated by commas, e.g. 1000',
  '--watched': 'measure 9 sizes separated by commas, e.g. 1,1000',
} as const;
type Flag = keyof typeof FLAGS;

/** How to call the bench, for the refusal messages. */
/** How many runs a goal is judged over unless `--runs` says otherwise: every one must meet it. */
export const DEFAULT_RUNS = 3;

export const USAGE = `usage: npm run bench -- [--only 1,2,4] [--runs 3] [--waits 1000,5000] [--http-waits 1000] [--watched 1,1000]`;

function isFlag(name: string): name is Flag {
  return Object.hasOwn(FLAGS, name);
}

/** `value` as a whole number ≥ 1, or the refusal naming `flag`. */
function wholeNumber(flag: Flag, value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new BenchArgsError(`${flag} takes ${FLAGS[flag]}; got "${value}"`);
  return Number(value);
}

/** `value` as a comma-separated list of whole numbers ≥ 1, or the refusal naming `flag`. */
function wholeNumbers(flag: Flag, value: string): number[] {
  const items = value.split(',');
  if (items.some((item) => !/^[1-9]\d*$/.test(item)))
    throw new BenchArgsError(`${flag} takes ${FLAGS[flag]}; got "${value}"`);
  return items.map(Number);
}

/** `value` as a list of the measures in `known`, or the refusal naming the one that is not. */
function measureList(value: string, known: readonly string[]): string[] {
  const items = value.split(',');
  const unknown = items.find((item) => !known.includes(item));
  if (unknown !== undefined)
    throw new BenchArgsError(
      `--only takes ${FLAGS['--only']} (the measures are ${known.join(', ')}); got "${unknown === '' ? value : unknown}"`,
    );
  return [...new Set(items)];
}

/** The flags of `argv` with their values, `--flag value` or `--flag=value`, each at most once. */
function flagValues(argv: readonly string[]): Map<Flag, string> {
  const values = new Map<Flag, string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (!isFlag(name)) {
      const what = arg.startsWith('-') ? `unknown flag ${name}` : `unexpected argument "${arg}"`;
      throw new BenchArgsError(`${what}; the flags are ${Object.keys(FLAGS).join(', ')}`);
    }
    const value = eq > 0 && name !== arg ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (value.startsWith('--') && name === arg))
      throw new BenchArgsError(`${name} needs a value: ${FLAGS[name]}`);
    if (values.has(name)) throw new BenchArgsError(`${name} is given twice`);
    values.set(name, value);
  }
  return values;
}

/**
 * Read the bench's command line (`process.argv.slice(2)`). `measures` are the measure numbers
 * `--only` may name. Throws {@link BenchArgsError} for an unknown flag, a flag without its value,
 * a flag given twice or a value it does not take.
 */
export function parseBenchArgs(argv: readonly string[], measures: readonly string[]): BenchArgs {
  const values = flagValues(argv);
  const only = values.get('--only');
  const runs = values.get('--runs');
  const waits = values.get('--waits');
  const httpWaits = values.get('--http-waits');
  const watched = values.get('--watched');
  return {
    only: only === undefined ? undefined : measureList(only, measures),
    runs: runs === undefined ? DEFAULT_RUNS : wholeNumber('--runs', runs),
    waits: waits === undefined ? undefined : wholeNumbers('--waits', waits),
    httpWaits: httpWaits === undefined ? undefined : wholeNumbers('--http-waits', httpWaits),
    watched: watched === undefined ? undefined : wholeNumbers('--watched', watched),
  };
}

/** The command line that asks for `args` again, for one run (`--runs 1`). */
export function oneRunArgs(args: BenchArgs): string[] {
  return [
    '--runs',
    '1',
    ...(args.only === undefined ? [] : ['--only', args.only.join(',')]),
    ...(args.waits === undefined ? [] : ['--waits', args.waits.join(',')]),
    ...(args.httpWaits === undefined ? [] : ['--http-waits', args.httpWaits.join(',')]),
    ...(args.watched === undefined ? [] : ['--watched', args.watched.join(',')]),
  ];
}
