/**
 * docs/embedding.md, the how-to for adding the Sess tools to a server one already runs: it shows
 * one way per MCP SDK major (`registerSessTools` on the 2.x `McpServer`, `createSessToolHandlers`
 * on the 1.x `Server`), each sample type-checks strictly against the built package and the SDK it
 * names, as a user's project would see them, and the README points to it. That the two ways serve
 * the same tools is `test/engine/tool-handlers.test.ts`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsSamples, typeCheckSamples } from '../support/doc-samples.js';
import { repoRoot } from '../support/repo-files.js';

const page = readFileSync(join(repoRoot, 'docs/embedding.md'), 'utf8');
const found = tsSamples(page);

describe('docs/embedding.md', () => {
  it('adds the tools per SDK major: registerSessTools on 2.x, createSessToolHandlers on 1.x', () => {
    const v2 = found.filter((code) => code.includes("from '@modelcontextprotocol/server'"));
    const v1 = found.filter((code) => code.includes("from '@modelcontextprotocol/sdk/"));
    expect(v2.some((code) => code.includes('registerSessTools(server, { engine })'))).toBe(true);
    expect(v1.length).toBeGreaterThanOrEqual(2);
    for (const code of v1) {
      expect(code).toContain('createSessToolHandlers({ engine })');
      expect(code).not.toContain('registerSessTools');
    }
  });

  it('samples type-check against the built package and both SDKs', { timeout: 120_000 }, () => {
    expect(found[0]).toMatch(/^\/\/ sess-engine\.ts\n/);
    expect(typeCheckSamples('embedding-samples', found)).toBe('');
  });

  it('the README points to it', () => {
    expect(readFileSync(join(repoRoot, 'README.md'), 'utf8')).toContain('(docs/embedding.md)');
  });
});
