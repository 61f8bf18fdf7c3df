#!/usr/bin/env node
/**
 * Keep JSDoc examples equal to compiled code. A JSDoc fence that names a source,
 *
 *   * ```ts source="examples/snippets/engine.examples.ts#createSessEngine"
 *   * …
 *   * ```
 *
 * gets its body replaced by the lines of that region (`//#region createSessEngine` …
 * `//#endregion`) of the snippet file, dedented. The snippet files are type-checked with the rest of
 * the repository, so an example that stops compiling fails the type check, and one that drifts from
 * its JSDoc fails `--check`.
 *
 *   node scripts/sync-snippets.mjs          # rewrite the JSDoc fences
 *   node scripts/sync-snippets.mjs --check  # exit 1 and name every fence that differs
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const check = process.argv.includes('--check');

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

const regionCache = new Map();
function region(source) {
  const [file, name] = source.split('#');
  if (!file || !name) throw new Error(`source="${source}" must be <file>#<region>`);
  if (!regionCache.has(file)) regionCache.set(file, readFileSync(join(root, file), 'utf8').split('\n'));
  const lines = regionCache.get(file);
  const start = lines.findIndex((line) => line.trim() === `//#region ${name}`);
  if (start < 0) throw new Error(`${file} has no region "${name}"`);
  const end = lines.findIndex((line, i) => i > start && line.trim() === '//#endregion');
  if (end < 0) throw new Error(`${file}: region "${name}" has no //#endregion`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length));
  return body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0));
}

const FENCE = /^(\s*)\* ```ts source="([^"]+)"\s*$/;
let drift = 0;
let fences = 0;
for (const path of sourceFiles(join(root, 'src'))) {
  const lines = readFileSync(path, 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const match = FENCE.exec(lines[i]);
    out.push(lines[i]);
    if (!match) continue;
    fences++;
    const [, pad, source] = match;
    let close = i + 1;
    while (close < lines.length && lines[close].trim() !== '* ```') close++;
    if (close === lines.length) throw new Error(`${relative(root, path)}:${i + 1}: fence never closes`);
    const wanted = region(source).map((l) => (l === '' ? `${pad}*` : `${pad}* ${l}`));
    const current = lines.slice(i + 1, close);
    if (wanted.join('\n') !== current.join('\n')) {
      drift++;
      console.error(`${relative(root, path)}:${i + 1}: the example differs from ${source}`);
    }
    out.push(...wanted);
    i = close - 1;
  }
  if (!check) writeFileSync(path, out.join('\n'));
}
if (check && drift > 0) {
  console.error(`${drift} JSDoc example(s) differ: run node scripts/sync-snippets.mjs`);
  process.exit(1);
}
console.log(`${fences} JSDoc example(s) ${check ? 'checked' : 'written'}`);
