/**
 * `npm run soak` (`scripts/soak.mjs` bundles and runs this): one soak run, its summary on stderr
 * and its JSON report in `.tmp/soak-report-<duration>s.json`. `--duration 60` (the default) runs
 * the CI schedule, `--duration 600` the 10-minute one. Exits 1 when an invariant failed: an answer
 * or event lost, a duplicate or unaccounted Session, a fault that did not happen.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runSoak } from './run.js';
import { summarize } from './summary.js';
import { verdictOf } from './verdict.js';

const USAGE = 'usage: npm run soak [-- --duration 60|600]';

function durationOf(argv: string[]): number {
  if (argv.length === 0) return 60;
  if (argv.length === 2 && argv[0] === '--duration' && (argv[1] === '60' || argv[1] === '600'))
    return Number(argv[1]);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

const durationS = durationOf(process.argv.slice(2));
const report = await runSoak({ durationS, progress: (line) => process.stderr.write(`soak: ${line}\n`) });
const dir = join(process.env.SESS_SOAK_ROOT ?? process.cwd(), '.tmp');
await mkdir(dir, { recursive: true });
const file = join(dir, `soak-report-${durationS}s.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
process.stderr.write(`${summarize(report)}\n  report: ${file}\n`);
const problems = verdictOf(report);
for (const problem of problems) process.stderr.write(`FAILED: ${problem}\n`);
process.exit(problems.length === 0 ? 0 : 1);
