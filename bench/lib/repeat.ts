/**
 * `--runs n`: the selected measures run n times, each run a fresh process of the bench's own
 * entry (bench/main.ts, bundled), one after the other, so every run is what a single
 * `npm run bench -- --only …` is: the same warm-up, trials, processes and interleaving of subject
 * and baseline, none of it warmed by the run before.
 *
 * Process plumbing only: a run prints its own table on stderr and hands its rows back over IPC;
 * bench/lib/summary.ts makes one table of them.
 */
import { type BenchArgs, oneRunArgs } from './args.js';
import { forkBench } from './children.js';
import type { Row } from './table.js';

/** The message a run sends its parent before it exits. */
export interface RunRows {
  kind: 'rows';
  rows: Row[];
}

/** Whether this process is one run of several (forked by {@link runRepeatedly}). */
export function isRepeatedRun(): boolean {
  return process.send !== undefined;
}

/** Hand this run's rows to the parent, then exit. */
export function sendRows(rows: Row[]): void {
  const reply: RunRows = { kind: 'rows', rows };
  process.send!(reply, () => process.exit(0));
}

/**
 * One run in a process of its own; its rows, or none if it ended without them. Waits for `close`,
 * not `exit`: Node emits it only once the IPC channel is closed too, so no message is still unread.
 */
async function oneRun(args: BenchArgs): Promise<Row[]> {
  const child = forkBench('main', oneRunArgs(args));
  let rows: Row[] | undefined;
  child.on('message', (m: RunRows) => {
    if (m.kind === 'rows') rows = m.rows;
  });
  const code = await new Promise((resolve) => child.once('close', resolve));
  if (rows === undefined) process.stderr.write(`this run ended (${code}) without its rows\n`);
  return rows ?? [];
}

/** Run the measures `args` selects `args.runs` times, one run after the other; each run's rows. */
export async function runRepeatedly(args: BenchArgs): Promise<Row[][]> {
  const runs: Row[][] = [];
  for (let i = 1; i <= args.runs; i += 1) {
    process.stderr.write(`run ${i} of ${args.runs}\n`);
    runs.push(await oneRun(args));
  }
  return runs;
}
