/**
 * Prose that states how many tools there are cannot go stale: every "<number> tools" or
 * "<number> Sess tools" in README.md, docs/*.md, the output of `sess-mcp --help` and the JSDoc of
 * src/ (module headers included) must say as many tools as the tool list has. A statement about
 * `sess-mcp-tools/5` (it names the set, or `/5`) may instead count that set's tools.
 *
 * The counts are derived from the exported lists (`TOOL_NAMES`, and `toolsOf` for the `/5` set),
 * never written here.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolsOf } from '../../src/core/contract/rules.js';
import { TOOL_NAMES } from '../../src/index.js';
import { repoFiles as files, repoRoot as root } from '../support/repo-files.js';

const bin = join(root, 'dist/bin/sess-mcp.js');

const NUMBER_WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
] as const;

/** A count of tools: a number word or digits right before "tools" or "Sess tools". */
const TOOL_COUNT = new RegExp(`\\b(${NUMBER_WORDS.join('|')}|[0-9]+)\\s+(?:Sess\\s+)?tools\\b`, 'gi');

/** Names the `sess-mcp-tools/5` set: its full name, or `/5` in code quotes. */
const ABOUT_V5 = /sess-mcp-tools\/5|`\/5`/;

const ALL = TOOL_NAMES.length;
const V5 = toolsOf('sess-mcp-tools/5').length;

function countOf(word: string): number {
  const index = (NUMBER_WORDS as readonly string[]).indexOf(word.toLowerCase());
  return index >= 0 ? index : Number(word);
}

/**
 * Split prose into statements: table cells, list items and sentences, so that a mention of
 * `sess-mcp-tools/5` only excuses the statement it is in.
 */
function statements(text: string): string[] {
  return text.split(/\n[ \t]*\n/).flatMap((paragraph) => {
    const lines = paragraph.split('\n').map((line) => line.trim());
    if (lines.every((line) => line.startsWith('|'))) return lines.flatMap((line) => line.split('|'));
    const items: string[] = [];
    for (const line of lines) {
      if (items.length === 0 || /^([-*]|[0-9]+\.)\s/.test(line)) items.push(line);
      else items[items.length - 1] += ` ${line}`;
    }
    return items.flatMap((item) => item.split(/(?<=[.!?])\**\s+/));
  });
}

/** Every tool count in `text` that disagrees with the tool list, as `<where>: <statement>`. */
function wrongCounts(where: string, text: string): string[] {
  const found: string[] = [];
  for (const statement of statements(text)) {
    const allowed = ABOUT_V5.test(statement) ? [ALL, V5] : [ALL];
    for (const match of statement.matchAll(TOOL_COUNT)) {
      if (!allowed.includes(countOf(match[1]!))) found.push(`${where}: ${statement.trim()}`);
    }
  }
  return found;
}

/** The JSDoc blocks of a source file, without their comment markers. */
function jsdocOf(source: string): string {
  return [...source.matchAll(/\/\*\*([\s\S]*?)\*\//g)]
    .map((block) =>
      block[1]!
        .split('\n')
        .map((line) => line.replace(/^\s*\*\s?/, ''))
        .join('\n'),
    )
    .join('\n\n');
}

describe('tool counts in prose', () => {
  it('README.md and docs/*.md count the tools the list has', () => {
    const docs = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    expect(docs.length).toBeGreaterThan(3);
    const found = docs.flatMap((file) => wrongCounts(file, readFileSync(join(root, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the JSDoc of src/, module headers included, counts the tools the list has', () => {
    const sources = [...files('src', /\.ts$/)];
    expect(sources.length).toBeGreaterThan(50);
    const found = sources.flatMap((file) =>
      wrongCounts(file, jsdocOf(readFileSync(join(root, file), 'utf8'))),
    );
    expect(found).toEqual([]);
  });

  it.skipIf(!existsSync(bin))('`sess-mcp --help` counts the tools the list has', () => {
    const help = execFileSync(process.execPath, [bin, '--help'], { encoding: 'utf8', env: {} });
    expect(help).toContain('sess-mcp records list');
    expect(wrongCounts('sess-mcp --help', help)).toEqual([]);
  });

  it('the check catches a stale count and lets a statement about sess-mcp-tools/5 count its own set', () => {
    const stale = ALL === 5 ? 'six' : 'five';
    expect(wrongCounts('sample', `Serve the ${stale} Sess tools over stdio.`)).toHaveLength(1);
    expect(wrongCounts('sample', `It lists ${ALL + 1} tools.`)).toHaveLength(1);
    expect(wrongCounts('sample', `Serve the ${NUMBER_WORDS[ALL]} Sess tools.`)).toEqual([]);
    expect(wrongCounts('sample', `Serve the ${ALL} tools.`)).toEqual([]);
    expect(wrongCounts('sample', `\`sess-mcp-tools/5\` lists only its ${NUMBER_WORDS[V5]} tools.`)).toEqual(
      [],
    );
    expect(wrongCounts('sample', `Only the ${NUMBER_WORDS[V5]} tools of \`/5\`, on request.`)).toEqual([]);
    // The mention of /5 excuses only its own sentence, table cell or list item.
    expect(
      wrongCounts('sample', `Use \`sess-mcp-tools/5\` for old clients. Serve the ${NUMBER_WORDS[V5]} tools.`),
    ).toHaveLength(ALL === V5 ? 0 : 1);
    expect(
      wrongCounts('sample', `| \`sess-mcp-tools/5\` | the set |\n| all | the ${NUMBER_WORDS[V5]} tools |`),
    ).toHaveLength(ALL === V5 ? 0 : 1);
  });
});
