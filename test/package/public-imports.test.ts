/**
 * Examples, benchmarks and the stdio and HTTP faces are built on the package's public entries only,
 * so the checked-in API reports (`api/*.api.md`) really are the surface they need. Any relative
 * import from them that leaves its own folder must land on an entry of package.json `exports`.
 *
 * The faces may also use the modules every factory shares by design, which are no API: the one
 * option-checking helper, the one source of value rules (so a face cannot state a rule anew) and the
 * one base64url codec, and the code the two faces share (`src/faces/`).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoFiles, repoRoot as root } from '../support/repo-files.js';

/** The source file of every public entry (package.json `exports` → tsup entries). */
const ENTRY_SOURCES = new Set([
  'src/index.ts',
  'src/schemas/index.ts',
  'src/sess/index.ts',
  'src/http/index.ts',
  'src/stdio/index.ts',
  'src/store/file/index.ts',
  'src/store/postgres/index.ts',
  'src/testing/index.ts',
  'package.json',
]);

/**
 * What only the faces may import besides the public entries: the option helper, the value rules,
 * and the one base64url codec (the webhook signature's base64 is that codec's, not a second one).
 */
const FACE_SHARED = new Set([
  'src/core/contract/options.ts',
  'src/core/contract/rules.ts',
  'src/core/codec/base64url.ts',
]);

/** The modules below `dir`. */
const files = (dir: string) => repoFiles(dir, /\.(ts|mts|mjs)$/);

function relativeImports(file: string): string[] {
  const source = readFileSync(join(root, file), 'utf8');
  const found: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.[^"']+)["']/g)) {
    found.push(m[1]!);
  }
  return found;
}

/** `../src/http/index.js` from `examples/x.ts` → `src/http/index.ts`. */
function target(file: string, spec: string): string {
  return relative(root, resolve(dirname(join(root, file)), spec)).replace(/\.js$/, '.ts');
}

/** Relative imports of `dir` that leave `home` and do not land on a public entry. */
function offenders(dir: string, home: string, shared: ReadonlySet<string> = new Set()): string[] {
  const bad: string[] = [];
  for (const file of files(dir)) {
    for (const spec of relativeImports(file)) {
      const to = target(file, spec);
      if (to.startsWith(`${home}/`) || shared.has(to)) continue;
      if (shared.size > 0 && to.startsWith('src/faces/')) continue;
      if (!ENTRY_SOURCES.has(to)) bad.push(`${file} imports ${spec}`);
    }
  }
  return bad;
}

describe('public entries only', () => {
  it.each([
    ['examples', 'examples'],
    ['bench', 'bench'],
  ])('%s imports only public entries from outside itself', (dir, home) => {
    expect(offenders(dir, home)).toEqual([]);
  });

  it.each([
    ['src/http', 'src/http'],
    ['src/stdio', 'src/stdio'],
    ['src/faces', 'src/faces'],
  ])('the face %s imports only public entries and the shared rules and option helper', (dir, home) => {
    expect(offenders(dir, home, FACE_SHARED)).toEqual([]);
  });

  it('catches an import of an internal module', () => {
    expect(ENTRY_SOURCES.has(target('examples/x.ts', '../src/core/engine/engine.js'))).toBe(false);
    expect(ENTRY_SOURCES.has(target('examples/x.ts', '../src/http/index.js'))).toBe(true);
  });
});
