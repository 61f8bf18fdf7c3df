/**
 * The built root entry and the schemas entry (`dist/index.*` and `dist/schemas.*`, with every
 * chunk they load) must import neither `@modelcontextprotocol/*` nor any `node:` module, so the
 * core runs on edge runtimes. `npm test` builds first (`pretest`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot as root } from '../support/repo-files.js';

/** Every module specifier a built file imports or requires. */
function specifiers(source: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /\bimport\s+(?:[^'"`;]*?\s+from\s+)?["']([^"']+)["']/g,
    /\bexport\s+[^'"`;]*?\s+from\s+["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) found.add(m[1]!);
  return [...found];
}

/** The transitive closure of relative imports from an entry, with every bare specifier seen. */
function graph(entry: string): { files: string[]; external: string[] } {
  const files: string[] = [];
  const external = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.includes(file)) continue;
    files.push(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec));
      else external.add(spec);
    }
  }
  return { files, external: [...external].sort() };
}

const forbidden = (spec: string) =>
  spec.startsWith('node:') ||
  spec.startsWith('@modelcontextprotocol/') ||
  /^(fs|path|os|crypto|http|https|net|child_process|stream|url|util|events|buffer)(\/|$)/.test(spec);

describe('built core entries', () => {
  for (const entry of ['dist/index.js', 'dist/index.cjs', 'dist/schemas.js', 'dist/schemas.cjs']) {
    it(`${entry} imports no node: module and no MCP SDK`, () => {
      const file = join(root, entry);
      expect(existsSync(file), `${entry} is missing: run npm run build`).toBe(true);
      const { files, external } = graph(file);
      expect(files.length).toBeGreaterThan(0);
      expect(external.filter(forbidden)).toEqual([]);
      // The detector itself must see imports: the core depends on valibot.
      expect(external).toContain('valibot');
    });
  }
});
