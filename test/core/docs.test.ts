/**
 * `docs/tools.md` says exactly what the code does: its title names `TOOLS_CONTRACT_VERSION`, its
 * tool table lists `TOOL_NAMES`, its `next` tables are the sentences of `result.ts`, its error
 * table is `ERROR_TABLE` (code, class, retry rule, guidance, in order), its length table is
 * `TEXT_LIMITS`, and its structure table is `STRUCTURE_LIMITS`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_TABLE } from '../../src/core/contract/errors.js';
import { STRUCTURE_LIMITS, TEXT_LIMITS } from '../../src/core/contract/limits.js';
import * as results from '../../src/core/contract/result.js';
import { TOOL_NAMES } from '../../src/core/contract/tool-args.js';
import { SCHEDULE_RULE, TOOLS_CONTRACT_VERSION } from '../../src/core/contract/tool-definitions.js';

const doc = readFileSync(new URL('../../docs/tools.md', import.meta.url), 'utf8');

/** The rows of the first Markdown table after `heading`, as trimmed cells. */
function tableAfter(heading: string): string[][] {
  const start = doc.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .replace(/\\\|/g, '\u0000')
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.replace(/\u0000/g, '|').trim());
    rows.push(cells);
  }
  return rows.slice(2); // header and separator
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

describe('docs/tools.md', () => {
  it('is the contract of TOOLS_CONTRACT_VERSION and lists every tool of TOOL_NAMES, in order', () => {
    expect(doc.split('\n')[0]).toBe(`# The tools (\`${TOOLS_CONTRACT_VERSION}\`)`);
    expect(tableAfter('## The tools').map((row) => unquote(row[0]!))).toEqual([...TOOL_NAMES]);
  });

  it('the next table is the sentences of result.ts, each with its constant', () => {
    const rows = tableAfter('### `next`: what to do now');
    expect(rows.length).toBe(11);
    for (const [where, sentence, constant] of rows) {
      const value = (results as Record<string, unknown>)[unquote(constant!)];
      expect(sentence, where).toBe(value);
    }
  });

  it('the error next table is ERROR_NEXT, class by class', () => {
    const documented: Record<string, unknown> = {};
    for (const [klass, sentence] of tableAfter('### Error results')) {
      const [name, flag] = klass!.split(', ');
      const key = unquote(name!);
      if (flag === undefined) documented[key] = sentence;
      else {
        const pair = (documented[key] ?? {}) as Record<string, string>;
        pair[flag === '`retryable: true`' ? 'retryable' : 'not'] = sentence!;
        documented[key] = pair;
      }
    }
    expect(documented).toEqual({ ...results.ERROR_NEXT });
  });

  it('the codes with their own next are CODE_NEXT', () => {
    const rows = tableAfter('have their own `next` instead of their class');
    expect(Object.fromEntries(rows.map(([code, sentence]) => [unquote(code!), sentence]))).toEqual({
      ...results.CODE_NEXT,
    });
  });

  it('quotes the scheduling rule word for word', () => {
    expect(doc).toContain(`> ${SCHEDULE_RULE}`);
  });

  it('the error table is ERROR_TABLE: every code, in order, with class, retry rule and guidance', () => {
    const rows = tableAfter('## Errors');
    expect(rows.map((row) => unquote(row[0]!))).toEqual(ERROR_CODES);
    for (const [code, klass, retry, guidance] of rows) {
      const spec = ERROR_TABLE[unquote(code!) as keyof typeof ERROR_TABLE];
      expect(unquote(klass!), code).toBe(spec.class);
      expect(unquote(retry!), code).toBe(spec.retry);
      expect(guidance, code).toBe(spec.guidance);
    }
  });

  it('the length table is TEXT_LIMITS', () => {
    const rows = tableAfter('## Keep it short');
    const documented = Object.fromEntries(rows.map((row) => [unquote(row[3]!), Number(row[2])]));
    expect(documented).toEqual({ ...TEXT_LIMITS });
  });

  it('the structure table is STRUCTURE_LIMITS', () => {
    const rows = tableAfter('## Structure limits');
    const text = rows.map((row) => `${row[0]}: ${row[1]}`).join('\n');
    expect(text).toContain(`Nesting depth: ${STRUCTURE_LIMITS.maxDepth} levels`);
    expect(text).toContain(
      `size: ${STRUCTURE_LIMITS.maxInteractionBytes.toLocaleString('en').replace(',', ' ')} bytes`,
    );
    expect(text).toContain(`field\` components in one Surface: ${STRUCTURE_LIMITS.maxFields}`);
    expect(text).toContain(
      `Actions in one Surface: ${STRUCTURE_LIMITS.minActions} to ${STRUCTURE_LIMITS.maxActions}`,
    );
    expect(text).toContain(`fields: ${STRUCTURE_LIMITS.minAskFields} to ${STRUCTURE_LIMITS.maxAskFields}`);
  });

  it('documents the exact messages', () => {
    expect(doc).toContain('The title can be at most 80 characters. Keep it to a short heading, about 40.');
    expect(doc).toContain(
      '/fields/0/label is 72 characters; the limit is 60. Shorten it to at most 60 characters.',
    );
  });
});
