/**
 * The wake command of a stdio result: the POSIX shell words that run `sess-mcp wait` for one
 * handle of one profile, each single-quoted, so an agent can start it in the background as it is
 * and be woken when the command exits.
 *
 * It only writes the command down; `wait-command.ts` is what it runs. It puts no key, link or
 * answer in it: the node path, the bin, the state directory, the profile and the handle.
 */

/** The program that runs `sess-mcp`: the node executable and the bin script. */
export type WaitProgram = readonly [node: string, bin: string];

/**
 * `word` in POSIX single quotes: everything inside is literal, and a quote is closed, escaped and
 * reopened (`'\''`). `$(…)`, backticks, spaces and globs stay inert.
 */
export function posixQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * A word a command line can carry: not empty, no NUL (no shell passes one), no line break (an
 * agent's tool call or a terminal can split the command there).
 */
function carriable(word: string): boolean {
  return word !== '' && !/[\0\n\r]/.test(word);
}

/** Where the wake command of each handle waits. */
export interface WakeCommandTarget {
  program: WaitProgram;
  stateDir: string;
  profile: string;
}

/**
 * The wake command of `handle`, or `undefined` when one of its words cannot be carried on one
 * command line (a path with a line break): the result then carries no `wake`.
 */
export function wakeCommandOf(target: WakeCommandTarget, handle: string): string | undefined {
  const words = [
    ...target.program,
    'wait',
    '--state-dir',
    target.stateDir,
    '--profile',
    target.profile,
    handle,
  ];
  return words.every(carriable) ? words.map(posixQuote).join(' ') : undefined;
}
