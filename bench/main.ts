/**
 * `npm run bench`: runs the benchmarks and prints one table. `--only 1,2,4` runs some of them,
 * `--runs 3` runs them three times (a fresh process each, bench/lib/repeat.ts) and prints each
 * figure's median and spread (bench/lib/summary.ts); `--waits A,B` sets the sizes of measure 3,
 * `--http-waits A,B` those of measure 7 and `--watched A,B` those of measure 9. The flags are read in bench/lib/args.ts, which refuses
 * any other. The goals the `met?` column judges by are in bench/lib/goals.ts.
 *
 * Benchmarks, not tests: nothing here fails the process on a missed goal; the table says `no`.
 */
import os from 'node:os';
import { adapterOverhead, answerLatency } from './lib/adapter.js';
import { type BenchArgs, BenchArgsError, parseBenchArgs, USAGE } from './lib/args.js';
import { coldStartBench } from './lib/cold-start.js';
import { durableCommit } from './lib/durable.js';
import { idleHttpRequests } from './lib/http-waits.js';
import { listBench } from './lib/list.js';
import { postgresStore } from './lib/postgres.js';
import { isRepeatedRun, runRepeatedly, sendRows } from './lib/repeat.js';
import { summarizeRuns } from './lib/summary.js';
import { type Row, renderTable } from './lib/table.js';
import { concurrentWaits } from './lib/waits.js';
import { wakeBench } from './lib/wake.js';

type Measure = (args: BenchArgs) => Promise<Row[]>;
const measures: Record<string, [string, Measure]> = {
  1: ['adapter overhead', () => adapterOverhead()],
  2: ['answer latency', () => answerLatency()],
  3: ['concurrent waits', (args) => concurrentWaits(args.waits)],
  4: ['durable commit', () => durableCommit()],
  5: ['cold start', () => coldStartBench()],
  6: ['postgres store', () => postgresStore()],
  7: ['idle HTTP requests', (args) => idleHttpRequests(args.httpWaits)],
  8: ['sess_list', () => listBench()],
  9: ['wake-up', (args) => wakeBench(args.watched)],
};

/** The command line, or exit 2 with the refusal and the usage. */
function readArgs(): BenchArgs {
  try {
    return parseBenchArgs(process.argv.slice(2), Object.keys(measures));
  } catch (error) {
    if (!(error instanceof BenchArgsError)) throw error;
    process.stderr.write(`sess-mcp bench: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** The selected measures, once, in this process; their rows. */
async function runOnce(args: BenchArgs): Promise<Row[]> {
  const rows: Row[] = [];
  const cpus = os.cpus();
  process.stderr.write(
    `sess-mcp bench: node ${process.version}, ${os.availableParallelism()} cpus (${cpus[0]?.model ?? '?'}), ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load ${loadavg()}\n`,
  );
  for (const [n, [name, run]] of Object.entries(measures)) {
    if (args.only !== undefined && !args.only.includes(n)) continue;
    const t = performance.now();
    process.stderr.write(`${n} ${name}…`);
    try {
      rows.push(...(await run(args)));
      process.stderr.write(` ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
    } catch (error) {
      process.stderr.write(` failed\n`);
      rows.push({ measure: `${n} ${name}`, subject: 'failed', baseline: '', ratio: '', goal: '', met: 'no' });
      process.stderr.write(`${(error as Error).stack ?? error}\n`);
    }
  }
  return rows;
}

const args = readArgs();
if (args.runs > 1) {
  const runs = await runRepeatedly(args);
  process.stdout.write(
    `Median of ${args.runs} runs; each ↳ row gives the spread (min–max) and how many runs met the goal.\n\n` +
      `${renderTable(summarizeRuns(runs))}\n`,
  );
  process.exit(0);
}
const rows = await runOnce(args);
if (isRepeatedRun()) {
  // One run of several: its table goes to stderr and its rows to the parent, which sums them up.
  process.stderr.write(`${renderTable(rows)}\nload after: ${loadavg()}\n`);
  sendRows(rows);
} else {
  process.stdout.write(`${renderTable(rows)}\n`);
  process.stderr.write(`load after: ${loadavg()}\n`);
  process.exit(0);
}
