/**
 * The docs speak to the package's readers: `docs/architecture.md` names only files that exist and
 * names every source file under `src/`, every folder under `src/` says what it holds (an `index.ts`
 * or a `README.md`), and no doc or source comment names the project's own process (work items,
 * build rounds) or a specification file the reader does not have.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoFiles as files, repoRoot as root } from '../support/repo-files.js';

/** Words that only make sense inside the project's own process. */
const PROCESS_WORDS: readonly [RegExp, string][] = [
  [/\bissues? #?\d+\b/i, 'a work item number'],
  [/\bfirst build\b/i, 'a build round'],
  [/\bthis round\b/i, 'a build round'],
  [/\.\.\/shared\/|\bseeds\//, 'a path outside the repository'],
  [/\bthe spec\b(?!ification)/i, 'a specification the reader does not have'],
];

const READER_FILES = [
  'README.md',
  ...files('docs', /\.md$/),
  ...files('src', /\.ts$/),
  ...files('examples', /\.(ts|mjs)$/),
  ...files('bench', /\.(ts|mjs)$/),
  ...files('scripts', /\.(mjs|sh)$/),
];

/** The folders under `src/`, `src` itself included. */
function* folders(dir: string): Generator<string> {
  yield dir;
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (entry.isDirectory()) yield* folders(join(dir, entry.name));
  }
}

/** Every path `docs/architecture.md` names in backticks. */
function architecturePaths(): string[] {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  return [...text.matchAll(/`((?:src|test|docs|bench|examples|scripts|api)\/[^`\s]*)`/g)].map((m) => m[1]!);
}

describe('docs for the package readers', () => {
  it('docs/architecture.md names only paths that exist', () => {
    const named = architecturePaths();
    expect(named.length).toBeGreaterThan(10);
    const missing = named.filter((path) => !existsSync(join(root, path.replace(/\{[^}]*\}/, ''))));
    expect(missing).toEqual([]);
  });

  it('docs/architecture.md names every source file under src/', () => {
    const named = new Set(architecturePaths());
    const sources = [...files('src', /\.ts$/)].map((path) => path.split('\\').join('/'));
    expect(sources.length).toBeGreaterThan(10);
    const unnamed = sources.filter((path) => !named.has(path)).sort();
    expect(unnamed, `source files docs/architecture.md does not name: ${unnamed.join(', ')}`).toEqual([]);
  });

  it('every folder under src/ says what it holds: an index.ts or a README.md', () => {
    const silent = [...folders('src')].filter(
      (dir) => !existsSync(join(root, dir, 'index.ts')) && !existsSync(join(root, dir, 'README.md')),
    );
    expect(silent).toEqual([]);
  });

  it('no doc or comment names the project process or a file outside the repository', () => {
    const found: string[] = [];
    for (const file of READER_FILES) {
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const [pattern, what] of PROCESS_WORDS) {
            if (pattern.test(line)) found.push(`${file}:${index + 1}: ${what}`);
          }
        });
    }
    expect(found).toEqual([]);
  });

  it('the check catches each kind of word', () => {
    for (const sample of ['see issue 8', 'from the first build', '../shared/STYLE.md', 'as the spec says']) {
      expect(PROCESS_WORDS.some(([pattern]) => pattern.test(sample))).toBe(true);
    }
    expect(PROCESS_WORDS.some(([pattern]) => pattern.test('the specification of the wire'))).toBe(false);
  });
});
