/**
 * The `inputSchemas` option: `'exact'` (the default) lists every tool's input schema exactly as
 * generated, byte for byte; `'flat'` lists the same schemas without any `anyOf`/`oneOf`
 * (`flattenUnions`), for a host that rewrites unions before it validates. One rule
 * (`INPUT_SCHEMAS_RULE`) gives the same verdict through `registerSessTools`,
 * `createSessToolHandlers`, the HTTP handler and `SESS_MCP_INPUT_SCHEMAS`.
 *
 * A flat schema only widens: every argument the server accepts validates against it (ajv, draft
 * 2020-12, as `json-schema.test.ts` judges the exact schemas), and the server's validation is the
 * same with either form, so what only the flat schema lets through is refused with
 * INVALID_ARGUMENTS and its exact path.
 *
 * Real parts: a real `McpServer` with the SDK client in memory, the HTTP handler in a real
 * `node:http` server, and the built `sess-mcp` bin as a child process.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessMcpError } from '../../src/core/contract/errors.js';
import { flattenUnions } from '../../src/core/contract/flat-schema.js';
import { toolInputJsonSchema } from '../../src/core/contract/json-schema.js';
import { INPUT_SCHEMAS_RULE } from '../../src/core/contract/rules.js';
import { TOOL_NAMES, type ToolName } from '../../src/core/contract/schemas.js';
import {
  INPUT_SCHEMA_DIALECT,
  listToolDefinitions,
  TOOL_DEFINITIONS,
  toolDefinitionsFor,
  toolDefinitionsOf,
} from '../../src/core/contract/tool-definitions.js';
import { parseToolArguments } from '../../src/core/contract/validate.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { registerSessTools } from '../../src/core/engine/register.js';
import { createSessToolHandlers } from '../../src/core/engine/tool-handlers.js';
import { createSessMcpHttpHandler } from '../../src/http/index.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { startHttpHarness } from '../http/harness.js';
import { connectModern, MINIMAL_HTTP_OPTIONS } from '../http/helpers.js';
import { useInMemoryMcp } from '../support/in-memory-mcp.js';
import { useStdioStack } from '../support/stdio-stack.js';
import {
  mutationSite,
  sampleArgs,
  sampleAsk,
  sampleSurface,
  setAt,
  valuePaths,
  viaJson,
} from './fixtures.js';

// A flat schema lists types (`["string", "number", …]`): ajv's strict mode wants that said.
const ajv = new Ajv2020({
  strict: true,
  allowUnionTypes: true,
  allErrors: false,
  strictRequired: false,
});
const flat = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, flattenUnions(toolInputJsonSchema(tool))]),
) as Record<ToolName, ReturnType<typeof flattenUnions>>;
const flatValidators = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, ajv.compile(flat[tool])]),
) as Record<ToolName, ReturnType<typeof ajv.compile>>;
const exactValidators = Object.fromEntries(
  TOOL_NAMES.map((tool) => [tool, ajv.compile(toolInputJsonSchema(tool))]),
) as Record<ToolName, ReturnType<typeof ajv.compile>>;

const BAD_VALUES: unknown[] = ['Flat', 'FLAT', 'strict', '', ' flat', 'flat ', 1, true, null, ['flat']];
const RULE_MESSAGE = 'must be "exact" or "flat".';
const ENV_MESSAGE = 'SESS_MCP_INPUT_SCHEMAS must be exact or flat, or unset for exact.';
const linux = { platform: 'linux', homedir: () => '/home/me' };

/** The schema at `keys` inside `root`. */
function at(root: unknown, ...keys: string[]): Record<string, unknown> {
  let node = root as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  return node;
}

function accepts(tool: ToolName, raw: unknown): boolean {
  try {
    parseToolArguments(tool, raw);
    return true;
  } catch (error) {
    if (error instanceof SessMcpError) return false;
    throw error;
  }
}

const mcp = useInMemoryMcp();

/**
 * The listed schemas as JSON text, tool by tool. A client's parse of `tools/list` may move
 * `$schema` (the 2026-era client puts it first): it is put back last, every other byte as listed.
 */
async function listedSchemas(client: { listTools(): Promise<{ tools: unknown[] }> }): Promise<string[]> {
  const { tools } = await client.listTools();
  return (tools as Array<{ inputSchema: Record<string, unknown> }>).map(({ inputSchema }) => {
    const { $schema, ...rest } = inputSchema;
    return JSON.stringify($schema === undefined ? rest : { ...rest, $schema });
  });
}

/** The schemas as generated (`TOOL_DEFINITIONS`), and as a `/6` server lists them: dialect last. */
const GENERATED_TEXT = TOOL_NAMES.map((tool) => JSON.stringify(toolInputJsonSchema(tool)));
const stated = (schema: object) => JSON.stringify({ ...schema, $schema: INPUT_SCHEMA_DIALECT });
const EXACT_TEXT = TOOL_NAMES.map((tool) => stated(toolInputJsonSchema(tool)));
const FLAT_TEXT = TOOL_NAMES.map((tool) => stated(flat[tool]));

describe('the rule (INPUT_SCHEMAS_RULE) through every entry', () => {
  it('takes exactly "exact" and "flat"', () => {
    expect(INPUT_SCHEMAS_RULE.text).toBe('"exact" or "flat"');
    for (const value of ['exact', 'flat']) expect(INPUT_SCHEMAS_RULE.test(value)).toBe(true);
    for (const value of BAD_VALUES) expect(INPUT_SCHEMAS_RULE.test(value), String(value)).toBe(false);
  });

  it.each(BAD_VALUES)(
    'registerSessTools refuses inputSchemas: %j with the option TypeError',
    async (value) => {
      const { engine } = await mcp.harness();
      const server = new McpServer({ name: 'x', version: '0' }, { capabilities: { tools: {} } });
      expect(() => registerSessTools(server, { engine, inputSchemas: value as never })).toThrow(
        new TypeError(`registerSessTools: option "inputSchemas" ${RULE_MESSAGE}`),
      );
    },
  );

  it.each(BAD_VALUES)(
    'createSessToolHandlers refuses inputSchemas: %j with the option TypeError',
    (value) => {
      const engine = createSessEngine({ authority: { resolve: async () => ({}) as never } });
      expect(() => createSessToolHandlers({ engine, inputSchemas: value as never })).toThrow(
        new TypeError(`createSessToolHandlers: option "inputSchemas" ${RULE_MESSAGE}`),
      );
    },
  );

  it.each(BAD_VALUES)(
    'createSessMcpHttpHandler refuses inputSchemas: %j with the option TypeError',
    (value) => {
      expect(() =>
        createSessMcpHttpHandler({ ...MINIMAL_HTTP_OPTIONS, inputSchemas: value as never }),
      ).toThrow(new TypeError(`createSessMcpHttpHandler: option "inputSchemas" ${RULE_MESSAGE}`));
    },
  );

  it.each(BAD_VALUES.filter((v): v is string => typeof v === 'string' && v !== ''))(
    'SESS_MCP_INPUT_SCHEMAS=%j is NOT_CONFIGURED naming the variable and the rule, never the value',
    (value) => {
      let caught: unknown;
      try {
        readStdioConfig({ HOME: '/h', SESS_MCP_INPUT_SCHEMAS: value }, linux);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SessMcpError);
      expect((caught as SessMcpError).code).toBe('NOT_CONFIGURED');
      expect((caught as SessMcpError).message).toBe(ENV_MESSAGE);
    },
  );

  it('SESS_MCP_INPUT_SCHEMAS reads exact and flat; unset and empty mean exact', () => {
    const read = (value?: string) =>
      readStdioConfig(
        { HOME: '/h', ...(value === undefined ? {} : { SESS_MCP_INPUT_SCHEMAS: value }) },
        linux,
      ).inputSchemas;
    expect(read('exact')).toBe('exact');
    expect(read('flat')).toBe('flat');
    expect(read()).toBeUndefined();
    expect(read('')).toBeUndefined();
  });
});

describe("'exact', the default: the schemas as generated, byte for byte", () => {
  it('the definitions are the published ones, unchanged; /6 lists them with their dialect stated', () => {
    expect(toolDefinitionsOf()).toBe(TOOL_DEFINITIONS);
    expect(toolDefinitionsOf('exact')).toBe(TOOL_DEFINITIONS);
    expect(TOOL_NAMES.map((tool) => JSON.stringify(TOOL_DEFINITIONS[tool].inputSchema))).toEqual(
      GENERATED_TEXT,
    );
    expect(toolDefinitionsFor('sess-mcp-tools/5')).toBe(TOOL_DEFINITIONS);
    expect(listToolDefinitions().map((d) => JSON.stringify(d.inputSchema))).toEqual(EXACT_TEXT);
    expect(listToolDefinitions(undefined, 'exact').map((d) => JSON.stringify(d.inputSchema))).toEqual(
      EXACT_TEXT,
    );
  });

  it('registerSessTools lists the same bytes with no option and with inputSchemas: "exact"', async () => {
    const { engine } = await mcp.harness();
    expect(await listedSchemas(await mcp.connect(engine))).toEqual(EXACT_TEXT);
    expect(await listedSchemas(await mcp.connect(engine, { inputSchemas: 'exact' }))).toEqual(EXACT_TEXT);
    expect(await listedSchemas(await mcp.connect(engine, { inputSchemas: 'flat' }))).toEqual(FLAT_TEXT);
  });

  it('the HTTP handler lists the same bytes by default, and the flat schemas with inputSchemas: "flat"', async () => {
    for (const [extra, expected] of [
      [{}, EXACT_TEXT],
      [{ inputSchemas: 'exact' as const }, EXACT_TEXT],
      [{ inputSchemas: 'flat' as const }, FLAT_TEXT],
    ] as const) {
      const harness = await startHttpHarness(extra);
      mcp.defer(() => harness.close());
      harness.principal('t');
      const client = await connectModern(harness.server.url, { authorization: 'Bearer t' });
      mcp.defer(() => client.close());
      expect(await listedSchemas(client)).toEqual(expected);
    }
  });

  it('a flat schema is a new object: the exact definitions are not changed by building it', () => {
    const before = GENERATED_TEXT.join('\n');
    for (const tool of TOOL_NAMES) flattenUnions(TOOL_DEFINITIONS[tool].inputSchema);
    toolDefinitionsOf('flat');
    expect(TOOL_NAMES.map((tool) => JSON.stringify(TOOL_DEFINITIONS[tool].inputSchema)).join('\n')).toBe(
      before,
    );
  });
});

describe('SESS_MCP_INPUT_SCHEMAS (the sess-mcp process)', () => {
  const stdio = useStdioStack();

  it('lists the flat schemas with flat, the exact ones by default (v1 client)', async () => {
    const flatStack = await stdio.start({ client: 'v1', env: { SESS_MCP_INPUT_SCHEMAS: 'flat' } });
    expect((await flatStack.server.listTools()).map((t) => JSON.stringify(t.inputSchema))).toEqual(FLAT_TEXT);
    const exactStack = await stdio.start({ client: 'v1' });
    expect((await exactStack.server.listTools()).map((t) => JSON.stringify(t.inputSchema))).toEqual(
      EXACT_TEXT,
    );
  });

  it('a bad SESS_MCP_INPUT_SCHEMAS is reported at start and on every call, naming the variable', async () => {
    const stack = await stdio.start({ client: 'v1', env: { SESS_MCP_INPUT_SCHEMAS: 'loose' } });
    const result = await stack.server.callTool('sess_response', { handle: 'sess_h_x', revision: 1 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      error: { code: 'NOT_CONFIGURED', message: ENV_MESSAGE },
    });
    expect(stack.server.stderr()).toContain('"event":"config_invalid"');
    expect(stack.server.stderr()).not.toContain('loose');
  });
});

describe("'flat': no union anywhere, and every valid argument still fits", () => {
  it.each(TOOL_NAMES)('%s: no anyOf or oneOf anywhere in the flat schema', (tool) => {
    expect(FLAT_TEXT[TOOL_NAMES.indexOf(tool)]).not.toMatch(/"(anyOf|oneOf)"/);
    expect(flat[tool].type).toBe('object');
    expect(flat[tool]).toEqual(toolDefinitionsOf('flat')[tool].inputSchema);
    // Flattening a flat schema changes nothing.
    expect(flattenUnions(flat[tool])).toEqual(flat[tool]);
  });

  it('the exact schemas do have the unions the flat form removes', () => {
    const withUnions = TOOL_NAMES.filter((tool) =>
      /"(anyOf|oneOf)"/.test(EXACT_TEXT[TOOL_NAMES.indexOf(tool)]!),
    );
    expect(withUnions).toEqual(['sess_request', 'sess_publish', 'sess_ask']);
    // The tools without a union are listed unchanged.
    for (const tool of TOOL_NAMES.filter((t) => !withUnions.includes(t))) {
      expect(FLAT_TEXT[TOOL_NAMES.indexOf(tool)]).toBe(EXACT_TEXT[TOOL_NAMES.indexOf(tool)]);
    }
  });

  it('a discriminator lists every variant: every field type, every component type, every field-schema type', () => {
    const field = at(flat.sess_ask, 'properties', 'fields', 'items');
    expect(at(field, 'properties', 'type').enum).toEqual([
      'text',
      'number',
      'integer',
      'boolean',
      'choice',
      'multi_choice',
      'rating',
    ]);
    expect(field.required).toEqual(['name', 'label', 'type']);
    expect(field.additionalProperties).toBe(false);
    const component = at(
      flat.sess_request,
      ...['interaction', 'source', 'components'].flatMap((k) => ['properties', k]),
      'items',
    );
    expect(at(component, 'properties', 'type').enum).toEqual(['heading', 'text', 'record', 'field']);
    expect(component.required).toEqual(['type']);
    expect(component.additionalProperties).toBe(false);
    expect(at(component, 'properties', 'schema', 'properties', 'type').enum).toEqual([
      'string',
      'number',
      'integer',
      'boolean',
      'array',
    ]);
    // The value shapes (string, number, boolean, array of strings) become one type list.
    expect(at(component, 'properties', 'value')).toMatchObject({
      type: ['string', 'number', 'boolean', 'array'],
      items: { type: 'string' },
    });
    // A description that differs between variants is kept, after the variant it belongs to.
    expect(at(field, 'properties', 'min').description).toContain('type "text": Fewest characters.');
  });

  const everyFieldType = (): Record<string, unknown> => sampleArgs('sess_ask');
  it.each(TOOL_NAMES)('%s: the sample arguments validate against both schemas', (tool) => {
    const args = viaJson(sampleArgs(tool));
    expect(accepts(tool, args)).toBe(true);
    expect(exactValidators[tool](args), JSON.stringify(exactValidators[tool].errors)).toBe(true);
    expect(flatValidators[tool](args), JSON.stringify(flatValidators[tool].errors)).toBe(true);
  });

  it('each sess_ask field type and each sess_request component alone validates against the flat schema', () => {
    const samples: Array<[ToolName, unknown]> = [];
    for (const field of sampleAsk().fields)
      samples.push(['sess_ask', { ...everyFieldType(), fields: [field] }]);
    for (const component of sampleSurface().source.components) {
      const interaction = sampleSurface();
      interaction.source.components = [component];
      samples.push(['sess_request', { interaction }]);
      samples.push(['sess_publish', { ...sampleArgs('sess_publish'), interaction }]);
    }
    expect(samples.length).toBe(7 + 10 * 2);
    for (const [tool, args] of samples) {
      const raw = viaJson(args);
      expect(accepts(tool, raw), JSON.stringify(raw)).toBe(true);
      expect(flatValidators[tool](raw), JSON.stringify(flatValidators[tool].errors)).toBe(true);
    }
  });

  it.each(TOOL_NAMES)('%s: every mutation the server accepts validates against the flat schema', (tool) => {
    const base = sampleArgs(tool);
    const allPaths = valuePaths(base).slice(1);
    let accepted = 0;
    let widened = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(allPaths.length - 1), change), { minLength: 1, maxLength: 3 }),
        (changes) => {
          let raw: unknown = viaJson(base);
          for (const [index, c] of changes) {
            const candidates = valuePaths(raw).slice(1);
            if (candidates.length === 0) break;
            raw = mutate(raw, candidates[index % candidates.length]!, c);
          }
          const flatOk = flatValidators[tool](raw) === true;
          if (accepts(tool, raw)) {
            accepted++;
            expect(
              flatOk,
              `${JSON.stringify(raw).slice(0, 300)}: ${JSON.stringify(flatValidators[tool].errors)}`,
            ).toBe(true);
          }
          // The exact schema accepting means the flat one does too: it only widens.
          if (exactValidators[tool](raw) === true) expect(flatOk).toBe(true);
          if (flatOk && exactValidators[tool](raw) !== true) widened++;
        },
      ),
      { numRuns: 300, seed: 20_261_201 },
    );
    expect(accepted).toBeGreaterThan(0);
    if (tool === 'sess_ask' || tool === 'sess_request') expect(widened).toBeGreaterThan(0);
  });
});

describe('the server validates the same way: what only the flat schema lets through is refused', () => {
  const cases: Array<[label: string, tool: ToolName, build: () => unknown, field: string]> = [
    [
      'a boolean sess_ask field with options',
      'sess_ask',
      () => {
        const args = sampleArgs('sess_ask');
        setAt(args, ['fields'], [{ name: 'ok', label: 'OK?', type: 'boolean', options: ['a', 'b'] }]);
        return args;
      },
      '/fields/0/options',
    ],
    [
      'a heading component with a field name',
      'sess_request',
      () => {
        const interaction = sampleSurface();
        interaction.source.components = [{ type: 'heading', text: 'H', name: 'x' } as never];
        return { interaction };
      },
      '/interaction/source/components/0/name',
    ],
    [
      'a boolean field schema with minLength',
      'sess_request',
      () => {
        const interaction = sampleSurface();
        setAt(interaction, ['source', 'components', 8, 'schema'], { type: 'boolean', minLength: 1 });
        return { interaction };
      },
      '/interaction/source/components/8/schema/minLength',
    ],
  ];

  it.each(cases)(
    '%s: the flat schema accepts it, the exact one and the server refuse it',
    async (_label, tool, build, field) => {
      const raw = viaJson(build());
      expect(flatValidators[tool](raw), JSON.stringify(flatValidators[tool].errors)).toBe(true);
      expect(exactValidators[tool](raw)).toBe(false);
      const h = await mcp.harness();
      const client = await mcp.connect(h.engine, { inputSchemas: 'flat' });
      const result = await client.callTool({ name: tool, arguments: raw as Record<string, unknown> });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'INVALID_ARGUMENTS', field } });
      expect(h.sess.sessions.list()).toHaveLength(0);
    },
  );
});

// --- mutations (a smaller form of json-schema.test.ts's) ---------------------------------------

const change = fc.oneof(
  fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ kind: fc.constant('delete' as const) }),
  fc.record({
    kind: fc.constant('value' as const),
    value: fc.constantFrom<unknown>(
      'text',
      'number',
      'integer',
      'boolean',
      'choice',
      'multi_choice',
      'rating',
      'heading',
      'record',
      'field',
      'string',
      'array',
      0,
      1,
      5,
      true,
      ['a'],
    ),
  }),
  fc.record({
    kind: fc.constant('add' as const),
    key: fc.constantFrom('options', 'multiline', 'min', 'max', 'value', 'name', 'minLength', 'enum', 'items'),
    value: fc.jsonValue({ maxDepth: 1 }),
  }),
);

type Change = typeof change extends fc.Arbitrary<infer C> ? C : never;

function mutate(raw: unknown, path: (string | number)[], c: Change): unknown {
  const { copy, parent, last, target } = mutationSite(raw, path);
  if (c.kind === 'json' || c.kind === 'value') parent[last] = c.value;
  else if (c.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
    (target as Record<string, unknown>)[c.key] = c.value;
  }
  return copy.root;
}
