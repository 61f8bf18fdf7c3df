/**
 * Hostile values in tool arguments, as tables: every string position of every tool's sample
 * arguments (values and free-form keys) × { U+0000, a lone high surrogate, a lone low surrogate,
 * an astral character }, and every field `name` / action `id` position × the names JavaScript
 * objects reserve. Refusals are `INVALID_ARGUMENTS` at the exact JSON pointer, naming the problem.
 */
import { describe, expect, it } from 'vitest';
import { RESERVED_NAMES } from '../../src/core/contract/limits.js';
import { TOOL_NAMES, type ToolName } from '../../src/core/contract/schemas.js';
import { parseToolArguments, toPointer } from '../../src/core/contract/validate.js';
import {
  EMOJI,
  freeKeyPaths,
  refusal,
  renameKeyAt,
  sampleArgs,
  setAt,
  stringPaths,
  type ValuePath,
} from './fixtures.js';

const get = (root: unknown, path: ValuePath): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);

const HOSTILE = [
  ['U+0000', (s: string) => `${s}\u0000`, 'must not contain U+0000'],
  ['a lone high surrogate', (s: string) => `\uD83D${s}`, 'must not contain an unpaired surrogate'],
  [
    'a lone low surrogate',
    (s: string) => `${s.slice(0, 1)}\uDE00${s.slice(1)}`,
    'must not contain an unpaired surrogate',
  ],
] as const;

/** Every (tool, string path) of the samples. */
const STRING_CELLS: [ToolName, ValuePath][] = TOOL_NAMES.flatMap((tool) =>
  stringPaths(sampleArgs(tool)).map((path): [ToolName, ValuePath] => [tool, path]),
);
const KEY_CELLS: [ToolName, ValuePath][] = TOOL_NAMES.flatMap((tool) =>
  freeKeyPaths(sampleArgs(tool)).map((path): [ToolName, ValuePath] => [tool, path]),
);

describe('U+0000 and unpaired surrogates in any string', () => {
  it('the table covers every tool and many positions', () => {
    for (const tool of TOOL_NAMES) expect(STRING_CELLS.some(([t]) => t === tool)).toBe(true);
    expect(STRING_CELLS.length).toBeGreaterThan(40);
    expect(KEY_CELLS.length).toBeGreaterThan(0);
  });

  for (const [label, spoil, words] of HOSTILE) {
    it.each(STRING_CELLS.map(([tool, path]) => [tool, toPointer(path), path] as const))(
      `${label}: %s %s is refused at its pointer`,
      (tool, pointer, path) => {
        const args = sampleArgs(tool);
        setAt(args, path, spoil(get(args, path) as string));
        const error = refusal(tool, args);
        expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS', field: pointer });
        expect(error.message).toBe(`${pointer} ${words}. Remove that character.`);
      },
    );

    it.each(KEY_CELLS.map(([tool, path]) => [tool, toPointer(path), path] as const))(
      `${label} in a key: %s %s is refused at the key`,
      (tool, _pointer, path) => {
        const args = sampleArgs(tool);
        const spoiled = spoil(String(path[path.length - 1]));
        renameKeyAt(args, path, spoiled);
        const error = refusal(tool, args);
        expect(error).toMatchObject({
          code: 'INVALID_ARGUMENTS',
          field: toPointer([...path.slice(0, -1), spoiled]),
        });
        expect(error.message).toContain(words);
      },
    );
  }

  it.each(STRING_CELLS.map(([tool, path]) => [tool, toPointer(path), path] as const))(
    'an astral character (a correct pair) is no text problem: %s %s',
    (tool, _pointer, path) => {
      const args = sampleArgs(tool);
      setAt(args, path, `${get(args, path) as string}${EMOJI}`);
      try {
        parseToolArguments(tool, args);
      } catch (error) {
        // Names, IDs and choices have their own alphabet; what matters is no text-problem verdict.
        expect((error as Error).message).not.toMatch(/U\+0000|unpaired surrogate/);
      }
    },
  );

  it('person text takes astral characters', () => {
    const args = sampleArgs('sess_request') as { interaction: { title: string } };
    args.interaction.title = `Ship it ${EMOJI}?`;
    expect(() => parseToolArguments('sess_request', args)).not.toThrow();
  });
});

/** Where a field `name` or action `id` sits in each tool's sample. */
function namePositions(tool: ToolName): ValuePath[] {
  const args = sampleArgs(tool);
  if (tool === 'sess_ask') {
    return (args.fields as unknown[]).map((_, index) => ['fields', index, 'name']);
  }
  if (tool !== 'sess_request' && tool !== 'sess_publish') return [];
  const surface = args.interaction as {
    source: { components: { type: string }[] };
    actions: unknown[];
  };
  const fields = surface.source.components.flatMap((component, index) =>
    component.type === 'field' ? [['interaction', 'source', 'components', index, 'name']] : [],
  );
  const actions = surface.actions.map((_, index) => ['interaction', 'actions', index, 'id']);
  return [...fields, ...actions] as ValuePath[];
}

const NAME_CELLS = TOOL_NAMES.flatMap((tool) =>
  namePositions(tool).flatMap((path) =>
    RESERVED_NAMES.map((name) => [tool, toPointer(path), name, path] as const),
  ),
);

describe('names JavaScript objects reserve', () => {
  it('covers field names and action ids of sess_request, sess_publish and sess_ask', () => {
    for (const tool of ['sess_request', 'sess_publish', 'sess_ask'] as const) {
      expect(NAME_CELLS.some(([t]) => t === tool)).toBe(true);
    }
    expect(RESERVED_NAMES).toEqual(
      expect.arrayContaining(['__proto__', 'constructor', 'prototype', 'toString']),
    );
    for (const name of Object.getOwnPropertyNames(Object.prototype)) expect(RESERVED_NAMES).toContain(name);
  });

  it.each(NAME_CELLS)('%s %s = %j is INVALID_ARGUMENTS at the name', (tool, pointer, name, path) => {
    const args = sampleArgs(tool);
    setAt(args, path, name);
    const error = refusal(tool, args);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS', field: pointer });
    expect(error.message).toMatch(/reserve/);
  });

  it.each(['proto', 'constructors', 'to_string', 'Prototype'])('a near name %j stays usable', (name) => {
    const args = sampleArgs('sess_ask') as { fields: { name: string }[] };
    args.fields[0]!.name = name;
    expect(() => parseToolArguments('sess_ask', args)).not.toThrow();
  });
});
