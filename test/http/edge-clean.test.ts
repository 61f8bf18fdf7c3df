/**
 * `@sess.si/mcp/http` must load on edge runtimes (Workers, Bun, Deno): no module it reaches —
 * following every relative import from `src/http/index.ts` — may import a `node:` module.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const entry = fileURLToPath(new URL('../../src/http/index.ts', import.meta.url));

function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

it('reaches no node: module from src/http/index.ts', () => {
  const seen = new Set<string>();
  const offenders: string[] = [];
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith('node:')) offenders.push(`${file}: ${specifier}`);
      else if (specifier.startsWith('.') && specifier.endsWith('.js')) {
        queue.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      }
    }
  }
  expect(seen.size).toBeGreaterThan(10);
  expect(offenders).toEqual([]);
});
