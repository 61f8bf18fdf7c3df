/**
 * No drift between the validator and the JSON Schema published in `tools/list`: the same samples
 * (a hand-written corpus plus thousands of random mutations of valid arguments) are judged by
 * `parseToolArguments` and by ajv (draft 2020-12, `unicode: true` so `maxLength` counts code points).
 *
 * The rules JSON Schema cannot express are enforced by the server only: nesting depth, the 32 KiB
 * size, and the consistency pass (unique names/IDs, min ≤ max, option labels naming enum IDs,
 * unlabelled enum IDs ≤ 60, prefilled values fitting their schema, the sess_ask Surface size).
 * A sample refused only by one of those is skipped; everything else must agree both ways.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { SessMcpError } from '../../src/core/contract/errors.js';
import { toolInputJsonSchema } from '../../src/core/contract/json-schema.js';
import { TOOL_ARGUMENT_SCHEMAS, TOOL_NAMES, type ToolName } from '../../src/core/contract/schemas.js';
import { TOOL_DEFINITIONS } from '../../src/core/contract/tool-definitions.js';
import {
  checkInteractionSize,
  checkStructure,
  parseToolArguments,
} from '../../src/core/contract/validate.js';
import {
  astral,
  booleanField,
  minimalSurface,
  mutationSite,
  sampleArgs,
  setAt,
  valuePaths,
  viaJson,
} from './fixtures.js';

const ajv = new Ajv2020({ strict: true, allErrors: false, unicode: true, strictRequired: false });
const validators = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, ajv.compile(toolInputJsonSchema(tool))]),
) as Record<ToolName, ReturnType<typeof ajv.compile>>;

type Verdict = 'accepted' | 'refused' | 'server-only';

/** How the server judges `raw`: accepted, refused by an expressible rule, or by a server-only rule. */
function serverVerdict(tool: ToolName, raw: unknown): Verdict {
  try {
    parseToolArguments(tool, raw);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof SessMcpError)) throw error;
  }
  let copy: unknown;
  try {
    copy = checkStructure(raw).copy;
  } catch (error) {
    return (error as SessMcpError).message.includes('unsafe key') ? 'refused' : 'server-only';
  }
  const interaction = (copy as { interaction?: unknown }).interaction;
  if ((tool === 'sess_request' || tool === 'sess_publish') && interaction !== undefined) {
    try {
      checkInteractionSize(interaction, '/interaction');
    } catch {
      return 'server-only';
    }
  }
  const shape = v.safeParse(TOOL_ARGUMENT_SCHEMAS[tool] as v.GenericSchema, copy);
  return shape.success ? 'server-only' : 'refused';
}

function agree(tool: ToolName, raw: unknown): { server: Verdict; schema: boolean } {
  const server = serverVerdict(tool, raw);
  const schema = validators[tool](viaJsonSafe(raw)) === true;
  return { server, schema };
}

/** JSON round trip that keeps own "__proto__" keys as JSON.parse would create them. */
function viaJsonSafe(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

function expectAgreement(tool: ToolName, raw: unknown, label: string): Verdict {
  const { server, schema } = agree(tool, raw);
  if (server === 'accepted')
    expect(schema, `${label}: JSON Schema refuses what the server accepts`).toBe(true);
  if (server === 'refused')
    expect(schema, `${label}: JSON Schema accepts what the server refuses`).toBe(false);
  return server;
}

// ---------------------------------------------------------------------------------------------

type Sample = [label: string, tool: ToolName, build: () => unknown, expected: Verdict];

const C = ['interaction', 'source', 'components'];

function withValue(tool: ToolName, path: (string | number)[], value: unknown): () => unknown {
  return () => {
    const args = sampleArgs(tool);
    setAt(args, path, value);
    return args;
  };
}

const CORPUS: Sample[] = [
  ...TOOL_NAMES.map((tool): Sample => [`${tool} sample`, tool, () => sampleArgs(tool), 'accepted']),
  ['title 80', 'sess_request', withValue('sess_request', ['interaction', 'title'], astral(80)), 'accepted'],
  ['title 81', 'sess_request', withValue('sess_request', ['interaction', 'title'], astral(81)), 'refused'],
  ['text 4000', 'sess_request', withValue('sess_request', [...C, 1, 'text'], astral(4000)), 'accepted'],
  ['text 4001', 'sess_request', withValue('sess_request', [...C, 1, 'text'], astral(4001)), 'refused'],
  [
    'record key 41',
    'sess_request',
    withValue('sess_request', [...C, 2, 'fields'], { [astral(41)]: 1 }),
    'refused',
  ],
  [
    'record key 40',
    'sess_request',
    withValue('sess_request', [...C, 2, 'fields'], { [astral(40)]: 1 }),
    'accepted',
  ],
  [
    'record key __proto__',
    'sess_request',
    () => {
      const args = sampleArgs('sess_request');
      setAt(args, [...C, 2, 'fields'], JSON.parse('{"__proto__": "x"}'));
      return args;
    },
    'refused',
  ],
  [
    'record key constructor',
    'sess_request',
    withValue('sess_request', [...C, 2, 'fields'], { constructor: 'x' }),
    'refused',
  ],
  [
    'option label 61',
    'sess_request',
    withValue('sess_request', [...C, 4, 'schema', 'option_labels', 'now'], astral(61)),
    'refused',
  ],
  [
    'unlabelled enum ID 61',
    'sess_request',
    withValue('sess_request', [...C, 4, 'schema', 'enum', 1], astral(61)),
    'server-only',
  ],
  ['question 81', 'sess_ask', withValue('sess_ask', ['question'], astral(81)), 'refused'],
  [
    'ask 13 fields',
    'sess_ask',
    withValue(
      'sess_ask',
      ['fields'],
      Array.from({ length: 13 }, (_, i) => ({ name: `f${i}`, label: 'L', type: 'boolean' })),
    ),
    'refused',
  ],
  ['ask 0 fields', 'sess_ask', withValue('sess_ask', ['fields'], []), 'refused'],
  [
    '25 fields',
    'sess_request',
    () => {
      const interaction = minimalSurface();
      for (let i = 0; i < 25; i++) interaction.source.components.push(booleanField(i));
      return { interaction };
    },
    'refused',
  ],
  [
    '24 fields and headings',
    'sess_request',
    () => {
      const interaction = minimalSurface();
      for (let i = 0; i < 24; i++)
        interaction.source.components.push({ type: 'heading', text: 'H' }, booleanField(i));
      return { interaction };
    },
    'accepted',
  ],
  [
    '6 actions',
    'sess_request',
    withValue(
      'sess_request',
      ['interaction', 'actions'],
      Array.from({ length: 6 }, (_, i) => ({ id: `a${i}`, label: 'Go', intent: 'submit' })),
    ),
    'refused',
  ],
  ['0 actions', 'sess_request', withValue('sess_request', ['interaction', 'actions'], []), 'refused'],
  ['unknown top-level', 'sess_response', withValue('sess_response', ['api_key'], 'x'), 'refused'],
  [
    'unknown in schema',
    'sess_request',
    withValue('sess_request', [...C, 3, 'schema', 'pattern'], 'a'),
    'refused',
  ],
  ['wait_ms 45001', 'sess_response', withValue('sess_response', ['wait_ms'], 45_001), 'refused'],
  ['revision 1.5', 'sess_response', withValue('sess_response', ['revision'], 1.5), 'refused'],
  ['expires_in 29', 'sess_request', withValue('sess_request', ['expires_in'], 29), 'refused'],
  ['rating 11', 'sess_request', withValue('sess_request', [...C, 9, 'schema', 'maximum'], 11), 'refused'],
  [
    'duplicate enum',
    'sess_request',
    withValue('sess_request', [...C, 4, 'schema', 'enum'], ['now', 'now']),
    'refused',
  ],
  [
    'value in value',
    'sess_request',
    withValue('sess_request', [...C, 3, 'value'], { a: { constructor: 1 } }),
    'refused',
  ],
  [
    'depth 9 in value',
    'sess_request',
    withValue('sess_request', [...C, 3, 'value'], [[[['x']]]]),
    'server-only',
  ],
  [
    'duplicate field name',
    'sess_request',
    withValue('sess_request', [...C, 4, 'name'], 'message'),
    'server-only',
  ],
  [
    'min above max',
    'sess_request',
    withValue('sess_request', [...C, 6, 'schema', 'minimum'], 20),
    'server-only',
  ],
  [
    'duplicate action',
    'sess_request',
    withValue('sess_request', ['interaction', 'actions', 1, 'id'], 'approve'),
    'server-only',
  ],
  [
    'both deadlines',
    'sess_ask',
    withValue('sess_ask', ['respondents'], { max: 2, expires_in: 60 }),
    'accepted',
  ],
];

describe('no drift: a hand-written corpus', () => {
  it.each(CORPUS)('%s', (label, tool, build, expected) => {
    const raw = build();
    expect(expectAgreement(tool, raw, label)).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------

const LENGTHS = [
  0, 1, 24, 25, 40, 41, 60, 61, 64, 65, 80, 81, 128, 129, 160, 161, 200, 201, 280, 281, 4000, 4001,
];
const NUMBERS = [-1, 0, 0.5, 1, 1.5, 2, 5, 10, 11, 29, 30, 45_000, 45_001, 1e21];
const KEYS = [
  'extra',
  'type',
  'enum',
  'format',
  'value',
  'min',
  '__proto__',
  'constructor',
  'prototype',
  'a/b',
  '',
];

const mutation = fc.oneof(
  fc.record({
    kind: fc.constant('string' as const),
    length: fc.constantFrom(...LENGTHS),
    emoji: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('number' as const), value: fc.constantFrom(...NUMBERS) }),
  fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }) }),
  fc.record({ kind: fc.constant('delete' as const) }),
  fc.record({
    kind: fc.constant('add' as const),
    key: fc.constantFrom(...KEYS),
    value: fc.jsonValue({ maxDepth: 2 }),
  }),
  fc.record({ kind: fc.constant('duplicate' as const) }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(raw: unknown, path: (string | number)[], change: Mutation): unknown {
  const { copy, parent, last, target } = mutationSite(raw, path);
  switch (change.kind) {
    case 'string':
      parent[last] = change.emoji ? astral(change.length) : 'x'.repeat(change.length);
      break;
    case 'number':
      parent[last] = change.value;
      break;
    case 'json':
      parent[last] = change.value;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
      break;
    case 'add':
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
        Object.defineProperty(target, change.key, {
          value: change.value,
          enumerable: true,
          configurable: true,
          writable: true,
        });
      } else if (Array.isArray(target)) target.push(change.value);
      break;
    case 'duplicate':
      if (Array.isArray(target) && target.length > 0) target.push(viaJson(target[0]));
      break;
  }
  return copy.root;
}

describe('no drift: random mutations of valid arguments', () => {
  for (const tool of TOOL_NAMES) {
    it(`${tool}: the validator and the JSON Schema agree`, () => {
      const base = sampleArgs(tool);
      const allPaths = valuePaths(base).slice(1);
      const seen: Record<Verdict, number> = { accepted: 0, refused: 0, 'server-only': 0 };
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.nat(allPaths.length - 1), mutation), { minLength: 1, maxLength: 3 }),
          (changes) => {
            let raw: unknown = base;
            for (const [index, change] of changes) {
              const candidates = valuePaths(raw).slice(1);
              if (candidates.length === 0) break;
              raw = mutate(raw, candidates[index % candidates.length]!, change);
            }
            seen[expectAgreement(tool, raw, JSON.stringify(changes).slice(0, 200))]++;
          },
        ),
        { numRuns: 250, seed: 20_261_130 },
      );
      expect(seen.accepted).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
    });
  }
});

describe('the published schema', () => {
  it.each(TOOL_NAMES)('%s: tools/list carries exactly the generated schema', (tool) => {
    expect(TOOL_DEFINITIONS[tool].inputSchema).toEqual(toolInputJsonSchema(tool));
    expect(TOOL_DEFINITIONS[tool].inputSchema.type).toBe('object');
    expect(TOOL_DEFINITIONS[tool].inputSchema.additionalProperties).toBe(false);
    expect(TOOL_DEFINITIONS[tool].inputSchema).not.toHaveProperty('$schema');
  });

  it.each(TOOL_NAMES)('%s: self-contained, without $ref or $defs', (tool) => {
    const text = JSON.stringify(toolInputJsonSchema(tool));
    expect(text).not.toContain('"$ref"');
    expect(text).not.toContain('"$defs"');
  });

  it('counts lengths in code points, as ajv does with unicode', () => {
    const args = viaJson(sampleArgs('sess_request'));
    setAt(args, ['interaction', 'title'], astral(80));
    expect(validators.sess_request(args)).toBe(true);
    setAt(args, ['interaction', 'title'], astral(81));
    expect(validators.sess_request(args)).toBe(false);
  });

  it('guards every open object against unsafe keys', () => {
    const text = JSON.stringify(toolInputJsonSchema('sess_request'));
    const open = text.match(/"propertyNames"/g)?.length ?? 0;
    expect(open).toBeGreaterThanOrEqual(3);
  });
});
