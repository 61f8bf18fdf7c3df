/**
 * The Health section of docs/operate.md: its TypeScript samples type-check against the built
 * package, the health paths it names are the handler's defaults, the details it
 * shows are the fields a real readiness answer has, and the README points to it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSessMcpHttpHandler } from '../../src/http/index.js';
import { resolveHttpOptions } from '../../src/http/options.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { MINIMAL_HTTP_OPTIONS } from '../http/helpers.js';
import { tsSamples, typeCheckSamples } from '../support/doc-samples.js';
import { repoRoot } from '../support/repo-files.js';

/** The page's Health section, up to the next section (the others are other concerns'). */
const page = (() => {
  const whole = readFileSync(join(repoRoot, 'docs/operate.md'), 'utf8');
  const from = whole.indexOf('\n## Health\n');
  const next = whole.indexOf('\n## ', from + 1);
  return whole.slice(from, next < 0 ? undefined : next);
})();

/** The keys of a JSON value, nested ones as `a.b`, sorted. */
function keysOf(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value)
    .flatMap(([key, inner]) => [`${prefix}${key}`, ...keysOf(inner, `${prefix}${key}.`)])
    .sort();
}

describe('docs/operate.md', () => {
  it('names the handler’s default health paths', () => {
    expect(page.startsWith('\n## Health\n')).toBe(true);
    const { path, livePath } = resolveHttpOptions({
      ...MINIMAL_HTTP_OPTIONS,
      health: { store: createMemoryHandleStore() },
    }).health;
    expect(page).toContain(`\`${path}\` (readiness)`);
    expect(page).toContain(`\`${livePath}\` (liveness)`);
    expect(page).toContain(`uri ${path}`);
    expect(page).toContain(`path: ${livePath}`);
  });

  it('shows the details with the fields a readiness answer has', async () => {
    const shown = JSON.parse(/^```json\n([\s\S]*?)^```$/m.exec(page)![1]!) as unknown;
    const handler = createSessMcpHttpHandler({
      ...MINIMAL_HTTP_OPTIONS,
      health: { store: createMemoryHandleStore(), authorize: () => true },
    });
    const answer = (await (await handler.ready(new Request('http://x/healthz'))).json()) as {
      keySet: unknown;
    };
    await handler.close();
    // The key set of a fresh handler is not loaded yet: its fields are the page's minus the age.
    const keySetFields = ['keySet.ageSeconds', 'keySet.keys'];
    expect(keysOf(answer)).toEqual(keysOf(shown).filter((key) => !keySetFields.includes(key)));
    expect(answer.keySet).toEqual({ state: 'not_loaded' });
  });

  it('samples type-check against the built package', { timeout: 120_000 }, () => {
    const found = tsSamples(page);
    expect(found.length).toBeGreaterThanOrEqual(2);
    expect(typeCheckSamples('operate-samples', found)).toBe('');
  });

  it('the README points to it', () => {
    expect(readFileSync(join(repoRoot, 'README.md'), 'utf8')).toContain('(docs/operate.md#health)');
  });
});
