#!/usr/bin/env node
// Builds dist/ with tsup (`npm run build`). With `--if-changed` (the pretest step of `npm test`)
// it builds only when dist/ was not built by this script from the sources as they are now: it
// keeps a SHA-256 of the build's inputs (src/, the tsup and TypeScript configs, package.json and
// the lockfile) beside the npm cache of node_modules, and builds again when any of them changed,
// when a file the package exports or runs as a bin is missing, or when there is no record.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const INPUTS = ['src', 'tsup.config.ts', 'tsconfig.json', 'package.json', 'package-lock.json'];
const RECORD = join(root, 'node_modules', '.cache', 'sess-mcp-build', 'inputs.sha256');

const args = process.argv.slice(2);
for (const arg of args) {
  if (arg !== '--if-changed') {
    console.error(`scripts/build.mjs: unknown argument ${arg} (the only one is --if-changed)`);
    process.exit(2);
  }
}

/** Every file below the directory `path`, sorted, as paths relative to the root. */
function files(path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

function inputsDigest() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    const full = join(root, input);
    if (!existsSync(full)) continue;
    const list = input.includes('.') ? [input] : files(input);
    for (const file of list) {
      hash.update(`${file}\0`);
      hash.update(readFileSync(join(root, file)));
      hash.update('\0');
    }
  }
  return hash.digest('hex');
}

/** The files of dist/ that package.json names (exports and bins). */
function builtFiles() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const named = new Set(Object.values(pkg.bin ?? {}));
  const walk = (value) => {
    if (typeof value === 'string') named.add(value);
    else if (value !== null && typeof value === 'object')
      for (const inner of Object.values(value)) walk(inner);
  };
  walk(pkg.exports);
  return [...named].filter((file) => file.startsWith('./dist/'));
}

const digest = inputsDigest();
if (args.includes('--if-changed')) {
  const recorded = existsSync(RECORD) ? readFileSync(RECORD, 'utf8').trim() : undefined;
  const missing = builtFiles().filter((file) => !existsSync(join(root, file)));
  if (recorded === digest && missing.length === 0) {
    console.log('dist/ was built from the sources as they are now: not built again');
    process.exit(0);
  }
}
rmSync(RECORD, { force: true });
const tsup = join(root, 'node_modules', '.bin', 'tsup');
const run = spawnSync(tsup, [], { cwd: root, stdio: 'inherit' });
if (run.status !== 0) process.exit(run.status ?? 1);
mkdirSync(dirname(RECORD), { recursive: true });
writeFileSync(RECORD, `${digest}\n`);
