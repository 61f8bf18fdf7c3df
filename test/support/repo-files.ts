/**
 * The repository's own files, for the tests that read them (docs, sources, examples, scripts): the
 * repository root, and a walk of one folder that lists files by name.
 *
 * It reads no file and judges none: each test says what it looks for in the files it is given.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root directory (absolute). */
export const repoRoot: string = resolve(import.meta.dirname, '../..');

/**
 * Every file below `dir` (a path relative to {@link repoRoot}) whose name matches `pattern`, as a
 * path relative to the root. An entry whose name is in `skip` is neither listed nor entered.
 *
 * @example
 * ```ts
 * for (const file of repoFiles('src', /\.ts$/)) readFileSync(join(repoRoot, file), 'utf8');
 * ```
 */
export function* repoFiles(
  dir: string,
  pattern: RegExp,
  skip: ReadonlySet<string> = new Set(),
): Generator<string> {
  for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* repoFiles(path, pattern, skip);
    else if (pattern.test(entry.name)) yield path;
  }
}
