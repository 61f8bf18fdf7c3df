/**
 * Where `package.json` says the package lives, pinned: no public repository or issue tracker
 * exists yet, so it names none (`repository` and `bugs` would make npm show, and its README
 * renderer follow, an invented address); `homepage` is Sess's guide; `sourceAvailability` says
 * in words that the source is not public and what the tarball holds. Every URL anywhere in
 * `package.json` is one Sess really serves.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as Record<string, unknown>;

/**
 * The URLs the product's specification gives (the guide, the API origin, the hosted MCP
 * endpoint), and the author's site named in `author`.
 */
const KNOWN_URLS = new Set([
  'https://docs.sess.si/add-to-your-agent/',
  'https://api.sess.si',
  'https://mcp.sess.si/mcp',
  'https://sess.si',
]);

/** Every URL-like text in a JSON value, strings and keys alike. */
function urlsIn(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'()<>,]+/gi)].map((m) =>
    m[0].replace(/[.)]+$/, ''),
  );
}

describe('package.json: where the package lives', () => {
  it('names no repository and no bugs URL, since none is public', () => {
    expect(pkg.repository).toBeUndefined();
    expect(pkg.bugs).toBeUndefined();
  });

  it("takes Sess's guide as its homepage", () => {
    expect(pkg.homepage).toBe('https://docs.sess.si/add-to-your-agent/');
  });

  it('says in sourceAvailability that the source is not public, and what the tarball holds', () => {
    const text = pkg.sourceAvailability;
    expect(typeof text).toBe('string');
    expect(text).toMatch(/not public yet/);
    for (const part of ['dist/', 'docs/', 'examples/', 'README.md', 'CHANGELOG.md', 'LICENSE']) {
      expect(text).toContain(part);
    }
    // What it says ships is what `files` ships.
    expect(pkg.files).toEqual(
      expect.arrayContaining([
        'dist',
        'docs',
        'examples/*.ts',
        'examples/edge',
        'README.md',
        'CHANGELOG.md',
        'LICENSE',
      ]),
    );
  });

  it('holds no URL but the known ones', () => {
    const urls = urlsIn(pkg);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.filter((url) => !KNOWN_URLS.has(url))).toEqual([]);
  });

  it('the README says the same, and names no repository either', () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    expect(readme).toMatch(/source repository and issue tracker of this package are not public yet/);
    expect(readme).not.toMatch(/github\.com|gitlab\.com|bitbucket\.org/i);
  });
});
