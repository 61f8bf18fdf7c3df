/**
 * `pg` is an optional peer dependency: only `@sess.si/mcp/store/postgres` may load it. This reads
 * the source import graph of every public entry (so it needs no build) and fails if any entry but
 * the PostgreSQL store reaches `pg`, or if the file store or the root reaches a module of the
 * other store.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot as root } from '../support/repo-files.js';

/** Module specifiers of one source file (static, dynamic and type-only imports). */
function specifiers(source: string): string[] {
  const found = new Set<string>();
  for (const pattern of [
    /\b(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\s+from\s+)?["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  ]) {
    for (const m of source.matchAll(pattern)) found.add(m[1]!);
  }
  return [...found];
}

/** Every source file an entry reaches and every package it names. */
function graph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [join(root, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
      else packages.add(spec);
    }
  }
  return { files: [...files].map((f) => f.slice(root.length + 1)), packages: [...packages] };
}

const entries = [
  'src/index.ts',
  'src/stdio/index.ts',
  'src/http/index.ts',
  'src/testing/index.ts',
  'src/store/file/index.ts',
];

describe('store entry boundaries', () => {
  for (const entry of entries) {
    it(`${entry} never reaches pg or the PostgreSQL store`, () => {
      const { files, packages } = graph(entry);
      expect(packages).not.toContain('pg');
      expect(files).not.toContain('src/store/postgres/index.ts');
    });
  }

  it('the PostgreSQL store loads pg, and the root reaches neither durable store', () => {
    expect(graph('src/store/postgres/index.ts').packages).toContain('pg');
    const rootFiles = graph('src/index.ts').files;
    expect(rootFiles).toContain('src/store/memory/memory-store.ts');
    expect(rootFiles).not.toContain('src/store/file/index.ts');
  });
});
