/**
 * Every TypeScript sample in README.md is extracted and type-checked against the package's own
 * published types (self-reference through the exports map, so `dist/` from `pretest`'s build), as
 * a user's project would see them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_TABLE } from '../../src/core/contract/errors.js';
import { TOOL_NAMES } from '../../src/core/contract/tool-args.js';
import { TOOLS_CONTRACT_VERSION } from '../../src/core/contract/tool-definitions.js';
import { tsSamples, typeCheckSamples } from '../support/doc-samples.js';
import { repoRoot as root } from '../support/repo-files.js';

describe('README.md', () => {
  const found = tsSamples(readFileSync(join(root, 'README.md'), 'utf8'));

  it('has TypeScript samples for stdio-free embedding, edge, PostgreSQL and testing', () => {
    expect(found.length).toBeGreaterThanOrEqual(4);
    const all = found.join('\n');
    for (const entry of ['@sess.si/mcp/http', '@sess.si/mcp/store/postgres', '@sess.si/mcp/testing']) {
      expect(all).toContain(`from '${entry}'`);
    }
  });

  it('samples type-check against the built package', { timeout: 120_000 }, () => {
    expect(typeCheckSamples('readme-samples', found)).toBe('');
  });

  it('the tool table is the contract of TOOLS_CONTRACT_VERSION: every tool of TOOL_NAMES, in order', () => {
    const text = readFileSync(join(root, 'README.md'), 'utf8');
    const heading = `## Tools (\`${TOOLS_CONTRACT_VERSION}\`)`;
    expect(text).toContain(heading);
    expect(text.slice(0, 400)).toContain(`\`${TOOLS_CONTRACT_VERSION}\``);
    const lines = text.slice(text.indexOf(heading)).split('\n');
    const first = lines.findIndex((line) => line.startsWith('|'));
    const rows = lines.slice(
      first + 2,
      lines.findIndex((line, i) => i > first && !line.startsWith('|')),
    );
    expect(rows.map((row) => /^\| `([a-z_]+)` \|/.exec(row)?.[1])).toEqual([...TOOL_NAMES]);
  });

  it('the error table names every code once, with its class and retry guidance from ERROR_TABLE', () => {
    const text = readFileSync(join(root, 'README.md'), 'utf8');
    const section = text.slice(text.indexOf('### Errors'));
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) =>
        line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    const seen: string[] = [];
    for (const [codes, klass, retry] of rows) {
      for (const code of [...codes!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!)) {
        const spec = ERROR_TABLE[code as keyof typeof ERROR_TABLE];
        expect(spec, code).toBeDefined();
        expect(klass, code).toBe(`\`${spec.class}\``);
        expect(retry, code).toBe(spec.guidance);
        seen.push(code);
      }
    }
    expect([...seen].sort()).toEqual([...ERROR_CODES].sort());
  });
});
