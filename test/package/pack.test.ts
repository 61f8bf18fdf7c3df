/**
 * The tarball npm would publish stands on its own: it carries the Apache-2.0 LICENSE, every
 * `docs/*.md` and the examples the README points at, and every relative link in the README and
 * in `docs/*.md` resolves to a file inside it (a link into `src/` or `test/` would be dead on npm).
 *
 * `npm pack --dry-run --json` lists the files without writing a tarball or needing a build.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [pack] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  return new Set(pack!.files.map((f) => f.path));
}

/** Relative link targets in Markdown: `[text](target)`, `[id]: target`, `href="…"` and `src="…"`. */
function relativeLinks(markdown: string): string[] {
  // Code spans and fenced blocks are text, not links.
  const text = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!),
    ...[...text.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/g)].map((m) => m[1]!),
  ];
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#') && !t.startsWith('//'));
}

/** The path inside the package a link in `from` points at, or `undefined` when it leaves the package. */
function resolveLink(from: string, target: string): string | undefined {
  const path = decodeURIComponent(target.replace(/[?#].*$/, ''));
  const resolved = posix.normalize(posix.join(posix.dirname(from), path)).replace(/\/$/, '');
  return resolved.startsWith('..') ? undefined : resolved;
}

const files = packedFiles();
const has = (path: string) =>
  files.has(path) || [...files].some((f) => f.startsWith(`${path === '.' ? '' : `${path}/`}`));
const docs = readdirSync(`${root}docs`)
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

describe('the packed tarball', () => {
  it('carries the Apache-2.0 license, the README, the changelog and every doc', () => {
    expect(files.has('LICENSE')).toBe(true);
    const license = readFileSync(`${root}LICENSE`, 'utf8');
    expect(license).toContain('Apache License');
    expect(license).toContain('Version 2.0, January 2004');
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    expect(JSON.parse(readFileSync(`${root}package.json`, 'utf8')).license).toBe('Apache-2.0');
    for (const path of ['README.md', 'CHANGELOG.md', 'package.json', ...docs])
      expect(files, path).toContain(path);
    expect(docs.length).toBeGreaterThan(3);
  });

  it('ships no sources, tests or demo', () => {
    const stray = [...files].filter((f) => /^(src|test|bench|scripts|examples\/demo|\.ci|\.tmp)\//.test(f));
    expect(stray).toEqual([]);
  });

  it('ships no sourcemaps (they would point into src/, which it does not ship) and no file that names one', () => {
    const maps = [...files].filter((f) => f.endsWith('.map'));
    expect(maps).toEqual([]);
    const built = [...files].filter((f) => f.startsWith('dist/') && /\.(c|m)?js$/.test(f));
    expect(built.length).toBeGreaterThan(0);
    const naming = built.filter((f) => readFileSync(`${root}${f}`, 'utf8').includes('//# sourceMappingURL='));
    expect(naming).toEqual([]);
  });

  it.each(['README.md', ...docs])('every relative link in %s resolves inside the tarball', (from) => {
    const links = relativeLinks(readFileSync(`${root}${from}`, 'utf8'));
    const dead = links.filter((target) => {
      const path = resolveLink(from, target);
      return path === undefined || !has(path);
    });
    expect(dead).toEqual([]);
  });

  it('names no repository file in README.md that the tarball lacks (a `src/…` path is dead on npm)', () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const paths = [...readme.matchAll(/`((?:src|test|examples|docs|scripts|bench)\/[\w./-]+\.\w+)`/g)].map(
      (m) => m[1]!,
    );
    expect(paths.filter((path) => !has(path))).toEqual([]);
  });

  it('finds the links it checks (the README links to LICENSE and docs)', () => {
    const links = relativeLinks(readFileSync(`${root}README.md`, 'utf8'));
    expect(links).toContain('LICENSE');
    expect(links.some((l) => l.startsWith('docs/'))).toBe(true);
    expect(relativeLinks('[a](src/x.ts) `[b](c.md)` [c](https://x.test) [d](#e) <a href="./f.md">')).toEqual([
      'src/x.ts',
      './f.md',
    ]);
    expect(has('src/x.ts')).toBe(false);
  });
});
