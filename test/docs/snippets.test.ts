/**
 * JSDoc examples cannot drift from compiled code: every `@example` in `src/` is a fence that names a
 * region of a snippet file in `examples/snippets/` (type-checked with the repository), the fence's
 * body equals that region (`node scripts/sync-snippets.mjs --check`), and no snippet file lives
 * anywhere else.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoFiles, repoRoot as root } from '../support/repo-files.js';

const SNIPPETS = 'examples/snippets';
const SKIP = new Set(['node_modules', 'dist', '.git', 'coverage']);

/** The repository's files below `dir` named by `pattern`, outside installed and built folders. */
const files = (dir: string, pattern: RegExp) => repoFiles(dir, pattern, SKIP);

const SOURCE_FENCE = /^\s*\* ```ts source="([^"#]+)#([^"]+)"\s*$/;

/** `file:line` of every `@example` whose next non-blank JSDoc line is not a `source=` fence. */
function handWritten(file: string, text: string): string[] {
  const lines = text.split('\n');
  const bad: string[] = [];
  lines.forEach((line, i) => {
    if (!/^\s*\*\s*@example\b/.test(line)) return;
    let next = i + 1;
    while (next < lines.length && lines[next]!.trim() === '*') next++;
    if (!SOURCE_FENCE.test(lines[next] ?? '')) bad.push(`${file}:${i + 1}`);
  });
  return bad;
}

/** Every `source=` fence of `src/` as `[file, region]`. */
function fences(): [string, string][] {
  const found: [string, string][] = [];
  for (const file of files('src', /\.ts$/)) {
    for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
      const m = SOURCE_FENCE.exec(line);
      if (m) found.push([m[1]!, m[2]!]);
    }
  }
  return found;
}

function runSync(cwd: string, ...args: string[]) {
  return spawnSync(process.execPath, [join(cwd, 'scripts/sync-snippets.mjs'), ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('JSDoc snippets', () => {
  it('every JSDoc example equals its snippet region (sync-snippets --check exits 0)', () => {
    const run = runSync(root, '--check');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^\d+ JSDoc example\(s\) checked/);
  });

  it('every @example in src/ is a source= fence, none is written by hand', () => {
    const bad: string[] = [];
    let examples = 0;
    for (const file of files('src', /\.ts$/)) {
      const text = readFileSync(join(root, file), 'utf8');
      examples += text.match(/^\s*\*\s*@example\b/gm)?.length ?? 0;
      bad.push(...handWritten(file, text));
    }
    expect(bad).toEqual([]);
    expect(examples).toBeGreaterThanOrEqual(20);
    expect(fences().length).toBe(examples);
  });

  it('every fence names a region of a snippet file in examples/snippets/, and every region is used', () => {
    const used = new Set(fences().map(([file, region]) => `${file}#${region}`));
    for (const key of used) expect(key.startsWith(`${SNIPPETS}/`), key).toBe(true);
    const regions: string[] = [];
    for (const file of files(SNIPPETS, /\.examples\.ts$/)) {
      for (const m of readFileSync(join(root, file), 'utf8').matchAll(/^\s*\/\/#region (\S+)\s*$/gm)) {
        regions.push(`${file}#${m[1]}`);
      }
    }
    expect(regions.filter((r) => !used.has(r))).toEqual([]);
    expect([...used].filter((r) => !regions.includes(r))).toEqual([]);
  });

  it('no *.examples.ts lives outside examples/snippets/', () => {
    const all = [...files('.', /\.examples\.ts$/)].map((f) => relative('.', f));
    expect(all.filter((f) => !f.startsWith(`${SNIPPETS}/`))).toEqual([]);
    expect(all.length).toBeGreaterThan(0);
  });
});

describe('the checks can fail', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('a hand-written example and one after a blank JSDoc line are both found', () => {
    const text = [
      '/**',
      ' * @example',
      ' * ```ts',
      ' * run();',
      ' * ```',
      ' */',
      '/**',
      ' * @example',
      ' *',
      ' * ```ts source="examples/snippets/core.examples.ts#createSessEngine"',
      ' * ```',
      ' */',
    ].join('\n');
    expect(handWritten('x.ts', text)).toEqual(['x.ts:2']);
  });

  it('--check exits 1 and names the fence when a JSDoc example differs from its region', () => {
    dir = mkdtempSync(join(tmpdir(), 'sess-snippets-'));
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'src'));
    mkdirSync(join(dir, SNIPPETS), { recursive: true });
    cpSync(join(root, 'scripts/sync-snippets.mjs'), join(dir, 'scripts/sync-snippets.mjs'));
    writeFileSync(
      join(dir, SNIPPETS, 'a.examples.ts'),
      'export function f(): void {\n  //#region one\n  console.log(1);\n  //#endregion\n}\n',
    );
    const doc = (body: string) =>
      `/**\n * @example\n * \`\`\`ts source="${SNIPPETS}/a.examples.ts#one"\n * ${body}\n * \`\`\`\n */\nexport {};\n`;
    writeFileSync(join(dir, 'src/a.ts'), doc('console.log(2);'));

    const drifted = runSync(dir, '--check');
    expect(drifted.status).toBe(1);
    expect(drifted.stderr).toContain(`src/a.ts:3: the example differs from ${SNIPPETS}/a.examples.ts#one`);

    expect(runSync(dir).status).toBe(0);
    expect(readFileSync(join(dir, 'src/a.ts'), 'utf8')).toBe(doc('console.log(1);'));
    expect(runSync(dir, '--check').status).toBe(0);
  });
});
