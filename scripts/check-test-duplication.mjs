#!/usr/bin/env node
// Keeps repetition in test/ down: runs jscpd over test/ with the json reporter into .tmp/jscpd/,
// reads the clone and duplicated-line counts, and exits 1 naming every clone when either is over
// its limit. Part of `npm run lint`. It removes nothing itself: a clone is fixed by moving what
// the files share into test/support/ (or a function of the one file), or by a table of cases.
//
// What is counted: TypeScript only (the YAML and JSON files under test/ are data, such as the
// conformance scenarios and the stored records, and repeat by nature), blocks of at least 6
// lines, and not the import blocks at the top of each file.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

// The baseline, before test/ was first deduplicated: 12 clones, 99 duplicated lines (this command).
// The limits are half of it. Lower them as repetition goes; never raise them to let a clone in.
const MAX_CLONES = 6;
const MAX_DUPLICATED_LINES = 49;

const root = resolve(import.meta.dirname, '..');
const output = join('.tmp', 'jscpd');
const report = join(root, output, 'jscpd-report.json');

// jscpd's patterns are Rust regular expressions, and `^` matches only at the start of the file
// without (?m). One import statement, named or side-effect only; `[^;]` keeps it inside one
// statement. The pattern has no comma: jscpd splits --ignore-pattern at commas.
const IMPORT_STATEMENT = String.raw`(?m)^import\s(?:[^;]*?\sfrom\s*)?['"][^'"]+['"];?`;

const args = [
  '--min-lines',
  '6',
  '--format',
  'typescript',
  '--ignore-pattern',
  IMPORT_STATEMENT,
  '--reporters',
  'json',
  '--output',
  output,
  '--silent',
  'test',
];

rmSync(report, { force: true });
// `npm run` puts the package's node_modules/.bin on PATH.
const run = spawnSync(process.platform === 'win32' ? 'jscpd.cmd' : 'jscpd', args, {
  cwd: root,
  encoding: 'utf8',
});
if (run.error !== undefined || run.status !== 0 || !existsSync(report)) {
  const why = run.error?.code === 'ENOENT' ? 'jscpd is not installed (npm ci installs it)' : 'jscpd failed';
  console.error(`check-test-duplication: ${why}.`);
  if (run.stderr) console.error(run.stderr.trim());
  process.exit(1);
}

const { duplicates, statistics } = JSON.parse(readFileSync(report, 'utf8'));
const { clones, duplicatedLines } = statistics.total;
const over = clones > MAX_CLONES || duplicatedLines > MAX_DUPLICATED_LINES;
const counts = `${clones} clones (at most ${MAX_CLONES}), ${duplicatedLines} duplicated lines (at most ${MAX_DUPLICATED_LINES})`;

if (!over) {
  console.log(`check-test-duplication: test/ has ${counts}.`);
  process.exit(0);
}
const where = (file) => `test/${file.name}:${file.start}-${file.end}`;
console.error(`check-test-duplication: test/ repeats itself too much: ${counts}.`);
for (const clone of duplicates) {
  console.error(`  ${clone.lines} lines: ${where(clone.firstFile)} = ${where(clone.secondFile)}`);
}
console.error(
  'Share what the files have in common through test/support/ (or a function of the one file), or make the cases a table.',
);
process.exit(1);
