/**
 * `npm run bench`: runs the benchmarks and prints one table. `--only N[,M]` runs some of them;
 * `--waits A,B` sets the sizes of measure 3 and `--http-waits A,B` those of measure 7. The goals
 * the `met?` column judges by are in bench/lib/goals.ts.
 *
 * Benchmarks, not tests: nothing here fails the process on a missed goal; the table says `no`.
 */
import os from 'node:os';
import { adapterOverhead, answerLatency } from './lib/adapter.js';
import { coldStartBench } from './lib/cold-start.js';
import { durableCommit } from './lib/durable.js';
import { idleHttpRequests } from './lib/http-waits.js';
import { listBench } from './lib/list.js';
import { postgresStore } from './lib/postgres.js';
import { type Row, renderTable } from './lib/table.js';
import { concurrentWaits } from './lib/waits.js';

type Measure = () => Promise<Row[]>;
/** The comma-separated sizes after `flag`, or undefined for the measure's default. */
function sizesOf(flag: string): number[] | undefined {
  const at = process.argv.indexOf(flag);
  return at >= 0 ? (process.argv[at + 1] ?? '').split(',').map(Number) : undefined;
}
const sizes = sizesOf('--waits');
const httpSizes = sizesOf('--http-waits');
const measures: Record<string, [string, Measure]> = {
  1: ['adapter overhead', adapterOverhead],
  2: ['answer latency', answerLatency],
  3: ['concurrent waits', () => concurrentWaits(sizes)],
  4: ['durable commit', durableCommit],
  5: ['cold start', coldStartBench],
  6: ['postgres store', postgresStore],
  7: ['idle HTTP requests', () => idleHttpRequests(httpSizes)],
  8: ['sess_list', listBench],
};

const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : undefined;

const rows: Row[] = [];
const cpus = os.cpus();
process.stderr.write(
  `sess-mcp bench: node ${process.version}, ${os.availableParallelism()} cpus (${cpus[0]?.model ?? '?'}), ` +
    `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
);
for (const [n, [name, run]] of Object.entries(measures)) {
  if (only !== undefined && !only.has(n)) continue;
  const t = performance.now();
  process.stderr.write(`${n} ${name}…`);
  try {
    rows.push(...(await run()));
    process.stderr.write(` ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    process.stderr.write(` failed\n`);
    rows.push({ measure: `${n} ${name}`, subject: 'failed', baseline: '', ratio: '', goal: '', met: 'no' });
    process.stderr.write(`${(error as Error).stack ?? error}\n`);
  }
}
process.stdout.write(`${renderTable(rows)}\n`);
process.stderr.write(
  `load after: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}\n`,
);
process.exit(0);
