import { describe, expect, it } from 'vitest';
import { SessMcpError } from '../../src/core/contract/errors.js';
import { jsonByteLength, STRUCTURE_LIMITS, TEXT_LIMITS } from '../../src/core/contract/limits.js';
import { TOOL_NAMES, type ToolName } from '../../src/core/contract/schemas.js';
import { parseToolArguments, toPointer } from '../../src/core/contract/validate.js';
import type { Surface } from '../../src/core/model/surface.js';
import {
  astral,
  booleanField,
  deleteAt,
  limitRefusal,
  minimalSurface,
  pointerRefusal,
  refusal,
  sampleArgs,
  sampleAsk,
  setAt,
  viaJson,
} from './fixtures.js';

type Path = (string | number)[];

const C = ['interaction', 'source', 'components'] as const;

describe('valid arguments', () => {
  it.each(TOOL_NAMES)('%s: accepts the sample and returns an equal, fresh copy', (tool) => {
    const raw = sampleArgs(tool);
    const before = viaJson(raw);
    const parsed = parseToolArguments(tool, raw);
    expect(parsed).toEqual(before);
    expect(parsed).not.toBe(raw);
    expect(raw).toEqual(before);
  });

  it('accepts the minimal Surface and optional properties left out', () => {
    expect(parseToolArguments('sess_request', { interaction: minimalSurface() })).toEqual({
      interaction: minimalSurface(),
    });
    expect(parseToolArguments('sess_response', { handle: 'h', revision: 1 })).toEqual({
      handle: 'h',
      revision: 1,
    });
  });

  it('accepts the sample commit approval from the specification', () => {
    const interaction = {
      mode: 'interactive',
      title: 'Approve this commit?',
      source: {
        kind: 'sess_surface',
        components: [
          {
            type: 'record',
            label: 'What changed (sample)',
            fields: {
              'src/greeting.js': "Greeting now uses the user's first name",
              'test/greeting.test.js': 'One new test for the first-name greeting',
            },
          },
          {
            type: 'field',
            name: 'message',
            label: 'Commit message',
            multiline: true,
            schema: { type: 'string', minLength: 1, maxLength: 2000 },
            value: 'Greet users by first name\n\nAdds a test for the new greeting.',
          },
        ],
      },
      actions: [
        { id: 'approve', label: 'Approve and commit', intent: 'approve' },
        { id: 'stop', label: 'Stop', intent: 'reject' },
      ],
    };
    expect(parseToolArguments('sess_request', { interaction }).interaction).toEqual(interaction);
  });

  it('reads no inherited property and keeps a value out of the prototype chain', () => {
    const raw = Object.create({ expires_in: 5 }) as Record<string, unknown>;
    raw.interaction = minimalSurface();
    expect(parseToolArguments('sess_request', raw)).toEqual({ interaction: minimalSurface() });
  });
});

// ---------------------------------------------------------------------------------------------

interface LengthCase {
  name: string;
  tool: ToolName;
  limit: number;
  /** Where the value goes. */
  path: Path;
  /** The expected pointer when it is not the path (a record key). */
  pointer?: (value: string) => string;
  /** Puts the value in place when a plain set is not enough. */
  put?: (args: Record<string, unknown>, value: string) => void;
  title?: boolean;
}

const LENGTH_CASES: LengthCase[] = [
  { name: 'title', tool: 'sess_request', limit: 80, path: ['interaction', 'title'], title: true },
  { name: 'title (publish)', tool: 'sess_publish', limit: 80, path: ['interaction', 'title'], title: true },
  { name: 'description', tool: 'sess_request', limit: 280, path: ['interaction', 'description'] },
  { name: 'button label', tool: 'sess_request', limit: 24, path: ['interaction', 'actions', 1, 'label'] },
  { name: 'heading', tool: 'sess_request', limit: 60, path: [...C, 0, 'text'] },
  { name: 'text', tool: 'sess_request', limit: 4000, path: [...C, 1, 'text'] },
  { name: 'record caption', tool: 'sess_request', limit: 200, path: [...C, 2, 'label'] },
  { name: 'record value', tool: 'sess_request', limit: 200, path: [...C, 2, 'fields', 'src/greeting.js'] },
  {
    name: 'record key',
    tool: 'sess_request',
    limit: 40,
    path: [...C, 2, 'fields'],
    put: (args, value) => setAt(args, [...C, 2, 'fields'], { a: 1, [value]: 'x' }),
    pointer: (value) => `${toPointer([...C, 2, 'fields'])}/${value}`,
  },
  {
    name: 'record key with "/" and "~" (escaped)',
    tool: 'sess_request',
    limit: 40,
    path: [...C, 2, 'fields'],
    put: (args, value) => setAt(args, [...C, 2, 'fields'], { [`a/~${[...value].slice(3).join('')}`]: 'x' }),
    pointer: (value) => `${toPointer([...C, 2, 'fields'])}/a~1~0${[...value].slice(3).join('')}`,
  },
  { name: 'field label', tool: 'sess_request', limit: 60, path: [...C, 3, 'label'] },
  { name: 'help', tool: 'sess_request', limit: 160, path: [...C, 3, 'description'] },
  {
    name: 'option label',
    tool: 'sess_request',
    limit: 60,
    path: [...C, 4, 'schema', 'option_labels', 'now'],
  },
  {
    name: 'multi-choice option label',
    tool: 'sess_request',
    limit: 60,
    path: [...C, 5, 'schema', 'option_labels', 'a'],
  },
  { name: 'unlabelled enum ID', tool: 'sess_request', limit: 60, path: [...C, 4, 'schema', 'enum', 1] },
  {
    name: 'unlabelled multi-choice enum ID',
    tool: 'sess_request',
    limit: 60,
    path: [...C, 5, 'schema', 'items', 'enum', 2],
  },
  { name: 'question', tool: 'sess_ask', limit: 80, path: ['question'], title: true },
  { name: 'details', tool: 'sess_ask', limit: 4000, path: ['details'] },
  { name: 'submit_label', tool: 'sess_ask', limit: 24, path: ['submit_label'] },
  { name: 'ask field label', tool: 'sess_ask', limit: 60, path: ['fields', 0, 'label'] },
  { name: 'ask help', tool: 'sess_ask', limit: 160, path: ['fields', 0, 'description'] },
  { name: 'ask option (label as ID)', tool: 'sess_ask', limit: 60, path: ['fields', 1, 'options', 0] },
  { name: 'ask option label', tool: 'sess_ask', limit: 60, path: ['fields', 1, 'options', 1, 'label'] },
  { name: 'ask multi-choice option', tool: 'sess_ask', limit: 60, path: ['fields', 2, 'options', 1] },
  { name: 'withdraw reason', tool: 'sess_withdraw', limit: 160, path: ['reason'] },
];

describe('length limits in Unicode code points', () => {
  for (const testCase of LENGTH_CASES) {
    const put = (value: string) => {
      const args = sampleArgs(testCase.tool);
      if (testCase.put) testCase.put(args, value);
      else setAt(args, testCase.path, value);
      return args;
    };

    it(`${testCase.name}: ${testCase.limit} astral characters are accepted`, () => {
      const value = astral(testCase.limit);
      expect(value.length).toBe(testCase.limit * 2);
      expect(() => parseToolArguments(testCase.tool, put(value))).not.toThrow();
    });

    it(`${testCase.name}: ${testCase.limit + 1} are refused with pointer, limit and length`, () => {
      const value = astral(testCase.limit + 1);
      const pointer = testCase.pointer ? testCase.pointer(value) : toPointer(testCase.path);
      const length = testCase.limit + 1;
      expect(refusal(testCase.tool, put(value))).toEqual({
        code: 'INVALID_ARGUMENTS',
        message: testCase.title
          ? 'The title can be at most 80 characters. Keep it to a short heading, about 40.'
          : `${pointer} is ${length} characters; the limit is ${testCase.limit}. Shorten it to at most ${testCase.limit} characters.`,
        retryable: false,
        field: pointer,
        limit: testCase.limit,
        length,
      });
    });
  }

  it('gives the exact message of the specification', () => {
    const args = sampleAsk();
    args.fields[0]!.label = 'x'.repeat(72);
    expect(refusal('sess_ask', args)).toEqual(
      limitRefusal(
        '/fields/0/label',
        '/fields/0/label is 72 characters; the limit is 60. Shorten it to at most 60 characters.',
        60,
        72,
      ),
    );
  });

  it('holds a long enum ID with a short label to no limit, and its label to 60', () => {
    const args = sampleArgs('sess_request');
    const id = 'x'.repeat(300);
    setAt(args, [...C, 4, 'schema'], {
      type: 'string',
      enum: [id, 'later'],
      option_labels: { [id]: 'Short' },
    });
    setAt(args, [...C, 4, 'value'], id);
    expect(() => parseToolArguments('sess_request', args)).not.toThrow();
  });

  it('has one case per text limit', () => {
    const covered = new Set(LENGTH_CASES.map((testCase) => testCase.limit));
    for (const limit of Object.values(TEXT_LIMITS)) expect(covered).toContain(limit);
  });

  it('refuses empty person-read text that must say something', () => {
    for (const path of [
      ['interaction', 'title'],
      [...C, 0, 'text'],
      [...C, 1, 'text'],
      [...C, 3, 'label'],
      ['interaction', 'actions', 0, 'label'],
    ]) {
      const args = sampleArgs('sess_request');
      setAt(args, path, '');
      const pointer = toPointer(path);
      expect(refusal('sess_request', args)).toMatchObject({
        field: pointer,
        message: `${pointer} must not be empty.`,
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------

const UNSAFE = ['__proto__', 'constructor', 'prototype'] as const;

/** Adds an own, enumerable `key` to the object at `path`, as JSON.parse does for "__proto__". */
function addOwnKey(args: unknown, path: Path, key: string): void {
  let node = args as Record<string | number, unknown>;
  for (const part of path) node = node[part] as Record<string | number, unknown>;
  Object.defineProperty(node, key, { value: 'x', enumerable: true, configurable: true, writable: true });
}

interface UnsafeCase {
  name: string;
  tool: ToolName;
  /** The object the key is added to. */
  path: Path;
  prepare?: (args: Record<string, unknown>) => void;
}

const UNSAFE_CASES: UnsafeCase[] = [
  ...TOOL_NAMES.map((tool) => ({ name: `top level of ${tool}`, tool, path: [] })),
  { name: 'interaction', tool: 'sess_request', path: ['interaction'] },
  { name: 'a component', tool: 'sess_request', path: [...C, 0] },
  { name: 'a field schema', tool: 'sess_publish', path: [...C, 3, 'schema'] },
  { name: 'a record (key of its fields)', tool: 'sess_request', path: [...C, 2, 'fields'] },
  { name: 'option_labels', tool: 'sess_request', path: [...C, 4, 'schema', 'option_labels'] },
  { name: 'an action', tool: 'sess_request', path: ['interaction', 'actions', 1] },
  {
    name: 'a field value',
    tool: 'sess_request',
    path: [...C, 3, 'value'],
    prepare: (args) => setAt(args, [...C, 3, 'value'], {}),
  },
  {
    name: 'an object nested in a field value',
    tool: 'sess_request',
    path: [...C, 5, 'value', 0, 'deep'],
    prepare: (args) => setAt(args, [...C, 5, 'value'], [{ deep: {} }]),
  },
  { name: 'an ask field', tool: 'sess_ask', path: ['fields', 0] },
  {
    name: 'an ask field value',
    tool: 'sess_ask',
    path: ['fields', 0, 'value'],
    prepare: (args) => setAt(args, ['fields', 0, 'value'], {}),
  },
  { name: 'an ask option', tool: 'sess_ask', path: ['fields', 1, 'options', 1] },
  {
    name: 'respondents',
    tool: 'sess_ask',
    path: ['respondents'],
    prepare: (args) => setAt(args, ['respondents'], { max: 3 }),
  },
];

describe('unsafe keys anywhere', () => {
  for (const testCase of UNSAFE_CASES) {
    for (const key of UNSAFE) {
      it(`${key} in ${testCase.name} is refused, naming the key`, () => {
        const args = sampleArgs(testCase.tool);
        testCase.prepare?.(args);
        addOwnKey(args, testCase.path, key);
        const pointer = `${toPointer(testCase.path)}/${key}`;
        expect(refusal(testCase.tool, args)).toEqual({
          code: 'INVALID_ARGUMENTS',
          message: `${pointer} uses an unsafe key; "__proto__", "constructor" and "prototype" are refused as keys anywhere. Rename or remove it.`,
          retryable: false,
          field: pointer,
        });
      });
    }
  }

  it('finds the own "__proto__" key JSON.parse creates', () => {
    const raw = JSON.parse('{"handle":"h","revision":1,"__proto__":{"polluted":true}}');
    expect(refusal('sess_response', raw).field).toBe('/__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('checks unsafe keys before anything else, even later in the document', () => {
    const raw = JSON.parse('{"handle":5,"revision":"x","extra":1,"constructor":1}');
    expect(refusal('sess_response', raw).field).toBe('/constructor');
  });

  it('accepts the words as values and inside longer keys', () => {
    const args = sampleArgs('sess_request');
    setAt(args, [...C, 2, 'fields'], { constructors: 'prototype', __proto: '__proto__' });
    expect(() => parseToolArguments('sess_request', args)).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------

describe('depth', () => {
  it('accepts 8 levels (the arguments object is level 1; a multi-choice enum is level 8)', () => {
    const args = { interaction: minimalSurface() };
    args.interaction.source.components.push({
      type: 'field',
      name: 'm',
      label: 'M',
      schema: { type: 'array', items: { type: 'string', enum: ['a'] } },
    });
    // args(1) › interaction(2) › source(3) › components(4) › component(5) › schema(6) › items(7) › enum(8)
    expect(() => parseToolArguments('sess_request', args)).not.toThrow();
  });

  it('refuses 9 levels with the pointer of the container at level 9', () => {
    const args = viaJson({ interaction: minimalSurface() }) as Record<string, unknown>;
    setAt(
      args,
      [...C],
      [
        {
          type: 'field',
          name: 'm',
          label: 'M',
          schema: { type: 'array', items: { type: 'string', enum: [['a']] } },
        },
      ],
    );
    const pointer = '/interaction/source/components/0/schema/items/enum/0';
    expect(refusal('sess_request', args)).toEqual(
      limitRefusal(pointer, `${pointer} nest 9 levels deep; the limit is 8. Send a flatter value.`, 8, 9),
    );
  });

  it('counts a free-form value the same way: 8 passes the depth check, 9 does not', () => {
    const eight = sampleArgs('sess_request');
    // value sits at level 6 (inside the component at 5): [[[ ]]] reaches level 8.
    setAt(eight, [...C, 3, 'value'], [[['x']]]);
    expect(refusal('sess_request', eight)).toMatchObject({
      field: '/interaction/source/components/3/value',
      message: '/interaction/source/components/3/value must be a string.',
    });
    const nine = sampleArgs('sess_request');
    setAt(nine, [...C, 3, 'value'], [[[['x']]]]);
    expect(refusal('sess_request', nine)).toMatchObject({
      field: '/interaction/source/components/3/value/0/0/0',
      limit: 8,
      length: 9,
    });
  });

  it('refuses deep nesting in a tool without a Surface, before the unknown property', () => {
    let deep: unknown = {};
    for (let level = 0; level < 8; level++) deep = { d: deep };
    expect(refusal('sess_response', { handle: 'h', revision: 1, x: deep })).toMatchObject({
      limit: 8,
      length: 9,
    });
    expect(refusal('sess_response', { handle: 'h', revision: 1, x: { d: {} } }).field).toBe('/x');
  });

  it('survives a cyclic object (stops at level 9)', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(refusal('sess_response', { handle: 'h', revision: 1, x: cycle }).length).toBe(9);
  });
});

// ---------------------------------------------------------------------------------------------

/** A Surface whose compact JSON is exactly `bytes` UTF-8 bytes; the last text uses 4-byte characters. */
function surfaceOfBytes(bytes: number): Surface {
  const surface = minimalSurface();
  const components = surface.source.components;
  const overhead = () => '{"type":"text","text":""}'.length + (components.length > 0 ? 1 : 0);
  let remaining = bytes - jsonByteLength(surface);
  while (remaining > 4000 + overhead() + 100) {
    remaining -= overhead() + 4000;
    components.push({ type: 'text', text: 'a'.repeat(4000) });
  }
  const room = remaining - overhead();
  const emoji = Math.floor(room / 4);
  components.push({ type: 'text', text: astral(emoji) + 'a'.repeat(room - emoji * 4) });
  expect(jsonByteLength(surface)).toBe(bytes);
  return surface;
}

describe('size of the interaction', () => {
  it('accepts 32 768 bytes', () => {
    const interaction = surfaceOfBytes(32_768);
    expect(() => parseToolArguments('sess_request', { interaction })).not.toThrow();
    expect(() =>
      parseToolArguments('sess_publish', { ...sampleArgs('sess_complete'), interaction }),
    ).not.toThrow();
  });

  it('refuses 32 769 bytes with limit and length in bytes', () => {
    const interaction = surfaceOfBytes(32_769);
    expect(refusal('sess_request', { interaction })).toEqual(
      limitRefusal(
        '/interaction',
        '/interaction is 32769 bytes as JSON; the limit is 32768 (32 KiB). Shorten texts or send fewer components.',
        32_768,
        32_769,
      ),
    );
  });

  it('refuses a sess_ask whose built Surface is over 32 KiB, without a field', () => {
    const args = sampleAsk();
    args.fields = Array.from({ length: 12 }, (_, index) => ({
      name: `f${index}`,
      label: 'Pick',
      type: 'choice' as const,
      options: Array.from({ length: 50 }, (_, option) => `${option} ${'o'.repeat(50)}`),
    }));
    const error = refusal('sess_ask', args);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS', limit: 32_768 });
    expect(error.field).toBeUndefined();
    expect(error.length).toBeGreaterThan(32_768);
  });
});

// ---------------------------------------------------------------------------------------------

const field = booleanField;

describe('counts', () => {
  it('accepts 24 fields among other components and refuses 25', () => {
    const interaction = minimalSurface();
    interaction.source.components.push({ type: 'heading', text: 'Fields' });
    for (let index = 0; index < 24; index++) interaction.source.components.push(field(index));
    expect(() => parseToolArguments('sess_request', { interaction })).not.toThrow();
    interaction.source.components.push(field(24));
    expect(refusal('sess_request', { interaction })).toEqual(
      limitRefusal(
        '/interaction/source/components',
        '/interaction/source/components has 25 field components; the limit is 24. Ask for fewer values.',
        24,
        25,
      ),
    );
  });

  it('accepts 5 actions and refuses 6 or none', () => {
    const interaction = minimalSurface();
    interaction.actions = Array.from({ length: 5 }, (_, index) => ({
      id: `a${index}`,
      label: `Do ${index}`,
      intent: 'submit' as const,
    }));
    expect(() => parseToolArguments('sess_request', { interaction })).not.toThrow();
    interaction.actions.push({ id: 'a5', label: 'Do 5', intent: 'submit' });
    expect(refusal('sess_request', { interaction })).toEqual(
      limitRefusal('/interaction/actions', '/interaction/actions has 6 actions; the limit is 5.', 5, 6),
    );
    interaction.actions = [];
    expect(refusal('sess_request', { interaction })).toMatchObject({
      field: '/interaction/actions',
      message: '/interaction/actions needs at least one action.',
      limit: 1,
      length: 0,
    });
  });

  it('accepts 1 and 12 ask fields and refuses 13 or none', () => {
    const fields = (n: number) =>
      Array.from({ length: n }, (_, index) => ({
        name: `f${index}`,
        label: 'Yes?',
        type: 'boolean' as const,
      }));
    expect(() => parseToolArguments('sess_ask', { question: 'Q?', fields: fields(1) })).not.toThrow();
    expect(() => parseToolArguments('sess_ask', { question: 'Q?', fields: fields(12) })).not.toThrow();
    expect(refusal('sess_ask', { question: 'Q?', fields: fields(13) })).toEqual(
      limitRefusal('/fields', '/fields has 13 fields; the limit is 12.', 12, 13),
    );
    expect(refusal('sess_ask', { question: 'Q?', fields: [] })).toMatchObject({
      field: '/fields',
      limit: 1,
      length: 0,
    });
  });

  it('names the limits it uses', () => {
    expect(STRUCTURE_LIMITS).toMatchObject({ maxFields: 24, maxActions: 5, maxAskFields: 12, maxDepth: 8 });
  });
});

// ---------------------------------------------------------------------------------------------

const UNKNOWN_PROPERTY_LEVELS: Array<[string, ToolName, Path]> = [
  ...TOOL_NAMES.map((tool): [string, ToolName, Path] => [`${tool} arguments`, tool, []]),
  ['interaction', 'sess_request', ['interaction']],
  ['interaction (publish)', 'sess_publish', ['interaction']],
  ['source', 'sess_request', ['interaction', 'source']],
  ['heading', 'sess_request', [...C, 0]],
  ['text', 'sess_request', [...C, 1]],
  ['record', 'sess_request', [...C, 2]],
  ['field', 'sess_request', [...C, 3]],
  ['string schema', 'sess_request', [...C, 3, 'schema']],
  ['choice schema', 'sess_request', [...C, 4, 'schema']],
  ['multi-choice schema', 'sess_request', [...C, 5, 'schema']],
  ['multi-choice items', 'sess_request', [...C, 5, 'schema', 'items']],
  ['integer schema', 'sess_request', [...C, 6, 'schema']],
  ['number schema', 'sess_request', [...C, 7, 'schema']],
  ['boolean schema', 'sess_request', [...C, 8, 'schema']],
  ['rating schema', 'sess_request', [...C, 9, 'schema']],
  ['action', 'sess_request', ['interaction', 'actions', 0]],
  ...[0, 1, 2, 3, 4, 5, 6].map((index): [string, ToolName, Path] => [
    `ask field ${index}`,
    'sess_ask',
    ['fields', index],
  ]),
  ['ask option', 'sess_ask', ['fields', 1, 'options', 1]],
];

describe('closed objects', () => {
  it.each(UNKNOWN_PROPERTY_LEVELS)('%s: an unknown property is refused, pointing at it', (_, tool, path) => {
    const args = sampleArgs(tool);
    setAt(args, [...path, 'extra'], 1);
    const pointer = toPointer([...path, 'extra']);
    expect(refusal(tool, args)).toEqual({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringMatching(
        new RegExp(
          `^${pointer.replace(/[/]/g, '\\/')} is not a property this tool accepts here\\. Remove it; allowed here: [A-Za-z_, ]+\\.$`,
        ),
      ),
      retryable: false,
      field: pointer,
    });
  });

  it('respondents: an unknown property is refused', () => {
    expect(refusal('sess_ask', { ...sampleAsk(), respondents: { max: 2, who: 'x' } }).field).toBe(
      '/respondents/who',
    );
  });

  it.each(TOOL_NAMES)('%s never takes an API origin, key, workspace, Session ID or callback URL', (tool) => {
    for (const key of [
      'api_origin',
      'origin',
      'api_key',
      'key',
      'workspace',
      'workspace_id',
      'session_id',
      'callback_url',
    ]) {
      expect(refusal(tool, { ...sampleArgs(tool), [key]: 'x' }).field).toBe(`/${key}`);
    }
  });

  it('refuses JSON Schema keywords outside the subset', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { type: 'string', pattern: 'a+' },
        '/pattern',
        'is not a property this tool accepts here. Remove it; allowed here: type, minLength, maxLength.',
      ],
      [
        { type: 'string', format: 'email' },
        '/format',
        'is not a property this tool accepts here. Remove it; allowed here: type, minLength, maxLength.',
      ],
      [{ type: 'object' }, '/type', 'must be one of "string", "number", "integer", "boolean", "array".'],
      [{ type: 'null' }, '/type', 'must be one of "string", "number", "integer", "boolean", "array".'],
      [{}, '/type', 'must be one of "string", "number", "integer", "boolean", "array".'],
      [{ type: 'integer', format: 'stars', minimum: 1, maximum: 5 }, '/format', 'must be "rating".'],
      [{ type: 'array', items: { type: 'number' } }, '/items/type', 'must be "string".'],
      [
        { type: 'array', items: { type: 'string', enum: ['a'] }, uniqueItems: false },
        '/uniqueItems',
        'must be true.',
      ],
      [{ type: 'string', enum: [] }, '/enum', 'needs at least one choice.'],
      [{ type: 'string', enum: ['a', 'a'] }, '/enum/1', 'repeats an earlier entry; entries must be unique.'],
      [{ type: 'string', enum: ['a', ''] }, '/enum/1', 'must not be empty.'],
      [{ type: 'integer', format: 'rating', minimum: 0, maximum: 11 }, '/maximum', 'must be at most 10.'],
      [{ type: 'integer', format: 'rating', minimum: -1, maximum: 5 }, '/minimum', 'must be at least 0.'],
      [{ type: 'integer', format: 'rating', minimum: 1 }, '/maximum', 'is required.'],
      [{ type: 'string', maxLength: 1.5 }, '/maxLength', 'must be a whole number.'],
    ];
    for (const [schema, tail, message] of cases) {
      const args = sampleArgs('sess_request');
      setAt(args, [...C, 7, 'schema'], schema);
      const pointer = `/interaction/source/components/7/schema${tail}`;
      expect(refusal('sess_request', args), JSON.stringify(schema)).toMatchObject({
        field: pointer,
        message: `${pointer} ${message}`,
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('types and ranges', () => {
  const cases: Array<[string, ToolName, Path, unknown, string]> = [
    ['expires_in 29', 'sess_request', ['expires_in'], 29, '/expires_in must be at least 30.'],
    ['expires_in 30.5', 'sess_request', ['expires_in'], 30.5, '/expires_in must be a whole number.'],
    ['expires_in "60"', 'sess_request', ['expires_in'], '60', '/expires_in must be a number.'],
    ['wait_ms 45 001', 'sess_response', ['wait_ms'], 45_001, '/wait_ms must be at most 45000.'],
    ['wait_ms -1', 'sess_response', ['wait_ms'], -1, '/wait_ms must be at least 0.'],
    ['wait_ms 1.5', 'sess_response', ['wait_ms'], 1.5, '/wait_ms must be a whole number.'],
    ['revision 0', 'sess_response', ['revision'], 0, '/revision must be at least 1.'],
    [
      'expected_revision 0',
      'sess_complete',
      ['expected_revision'],
      0,
      '/expected_revision must be at least 1.',
    ],
    ['handle empty', 'sess_response', ['handle'], '', '/handle must not be empty.'],
    [
      'handle with a space',
      'sess_response',
      ['handle'],
      'h 1',
      '/handle may contain only letters, digits, ".", "_", ":" and "-" (at most 128).',
    ],
    ['handle a number', 'sess_response', ['handle'], 1, '/handle must be a string.'],
    [
      'handle too long',
      'sess_complete',
      ['handle'],
      'h'.repeat(129),
      '/handle is 129 characters; the limit is 128. Shorten it to at most 128 characters.',
    ],
    [
      'event ID missing',
      'sess_complete',
      ['response_event_id'],
      undefined,
      '/response_event_id is required.',
    ],
    ['mode', 'sess_request', ['interaction', 'mode'], 'static', '/interaction/mode must be "interactive".'],
    [
      'source kind',
      'sess_request',
      ['interaction', 'source', 'kind'],
      'html',
      '/interaction/source/kind must be "sess_surface".',
    ],
    [
      'component type',
      'sess_request',
      [...C, 0, 'type'],
      'image',
      '/interaction/source/components/0/type must be one of "heading", "text", "record", "field".',
    ],
    [
      'component not an object',
      'sess_request',
      [...C, 0],
      'x',
      '/interaction/source/components/0 must be an object.',
    ],
    [
      'intent',
      'sess_request',
      ['interaction', 'actions', 0, 'intent'],
      'delete',
      '/interaction/actions/0/intent must be one of "submit", "approve", "reject".',
    ],
    [
      'action id',
      'sess_request',
      ['interaction', 'actions', 0, 'id'],
      'a b',
      '/interaction/actions/0/id may contain only letters, digits, "_", "." and "-" (at most 64).',
    ],
    [
      'field name',
      'sess_request',
      [...C, 3, 'name'],
      'my name',
      '/interaction/source/components/3/name may contain only letters, digits, "_", "." and "-" (at most 64).',
    ],
    [
      'record value array',
      'sess_request',
      [...C, 2, 'fields', 'lines'],
      [1],
      '/interaction/source/components/2/fields/lines has the wrong type; expected one of string, number, boolean, null.',
    ],
    ['interaction missing', 'sess_request', ['interaction'], undefined, '/interaction is required.'],
    [
      'ask field type',
      'sess_ask',
      ['fields', 0, 'type'],
      'date',
      '/fields/0/type must be one of "text", "number", "integer", "boolean", "choice", "multi_choice", "rating".',
    ],
    [
      'ask respondents max 0',
      'sess_ask',
      ['respondents'],
      { max: 0 },
      '/respondents/max must be at least 1.',
    ],
    [
      'ask respondent_expires_in 10',
      'sess_ask',
      ['respondents'],
      { max: 2, respondent_expires_in: 10 },
      '/respondents/respondent_expires_in must be at least 30.',
    ],
    ['ask rating max 11', 'sess_ask', ['fields', 6, 'max'], 11, '/fields/6/max must be at most 10.'],
    [
      'ask option object without label',
      'sess_ask',
      ['fields', 1, 'options', 1],
      { id: 'x' },
      '/fields/1/options/1/label is required.',
    ],
  ];

  it.each(cases)('%s', (_, tool, path, value, message) => {
    const args = sampleArgs(tool);
    if (value === undefined) deleteAt(args, path);
    else setAt(args, path, value);
    const error = refusal(tool, args);
    expect(error.message).toBe(message);
    expect(message.startsWith(`${error.field} `)).toBe(true);
  });

  it('accepts the edges of each range', () => {
    expect(() =>
      parseToolArguments('sess_request', { ...sampleArgs('sess_request'), expires_in: 30 }),
    ).not.toThrow();
    for (const wait_ms of [0, 45_000]) {
      expect(() => parseToolArguments('sess_response', { handle: 'h', revision: 1, wait_ms })).not.toThrow();
    }
    expect(() =>
      parseToolArguments('sess_ask', {
        ...sampleAsk(),
        respondents: { max: 1, name: true, respondent_expires_in: 30 },
      }),
    ).not.toThrow();
    expect(() =>
      parseToolArguments('sess_ask', {
        question: 'Rate it',
        fields: [{ name: 'r', label: 'R', type: 'rating', min: 0, max: 10 }],
      }),
    ).not.toThrow();
  });

  it('refuses what JSON cannot carry, from an in-process caller', () => {
    const cases: Array<[unknown, string]> = [
      [Number.POSITIVE_INFINITY, 'is not a finite number.'],
      [Number.NaN, 'is not a finite number.'],
      [10n, 'is not a JSON value.'],
      [() => 1, 'is not a JSON value.'],
      [Symbol('s'), 'is not a JSON value.'],
    ];
    for (const [value, message] of cases) {
      const args = sampleArgs('sess_request');
      setAt(args, [...C, 7, 'schema', 'maximum'], value);
      const pointer = '/interaction/source/components/7/schema/maximum';
      expect(refusal('sess_request', args)).toEqual(pointerRefusal(pointer, message));
    }
  });

  it('refuses arguments that are not an object; treats missing arguments as {}', () => {
    for (const raw of [null, [], 'x', 3]) {
      expect(refusal('sess_response', raw)).toMatchObject({
        message: 'The arguments must be a JSON object.',
      });
    }
    expect(refusal('sess_response', undefined)).toMatchObject({
      field: '/handle',
      message: '/handle is required.',
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('consistency', () => {
  const surfaceCases: Array<[string, (args: Record<string, unknown>) => void, string, string]> = [
    [
      'duplicate field name',
      (args) => setAt(args, [...C, 4, 'name'], 'message'),
      '/interaction/source/components/4/name',
      'repeats the name of an earlier field; field names must be unique.',
    ],
    [
      'duplicate action ID',
      (args) => setAt(args, ['interaction', 'actions', 1, 'id'], 'approve'),
      '/interaction/actions/1/id',
      'repeats the ID of an earlier action; action IDs must be unique.',
    ],
    [
      'minLength above maxLength',
      (args) => setAt(args, [...C, 3, 'schema'], { type: 'string', minLength: 5, maxLength: 4 }),
      '/interaction/source/components/3/schema/maxLength',
      'is less than minLength; it must be at least 5.',
    ],
    [
      'minimum above maximum',
      (args) => setAt(args, [...C, 7, 'schema'], { type: 'number', minimum: 2, maximum: 1 }),
      '/interaction/source/components/7/schema/maximum',
      'is less than minimum; it must be at least 2.',
    ],
    [
      'rating minimum above maximum',
      (args) =>
        setAt(args, [...C, 9, 'schema'], { type: 'integer', format: 'rating', minimum: 5, maximum: 1 }),
      '/interaction/source/components/9/schema/maximum',
      'is less than minimum; it must be at least 5.',
    ],
    [
      'minItems above maxItems',
      (args) => setAt(args, [...C, 5, 'schema', 'minItems'], 3),
      '/interaction/source/components/5/schema/maxItems',
      'is less than minItems; it must be at least 3.',
    ],
    [
      'minItems above the number of choices',
      (args) => {
        setAt(args, [...C, 5, 'schema'], {
          type: 'array',
          items: { type: 'string', enum: ['a'] },
          minItems: 2,
        });
        deleteAt(args, [...C, 5, 'value']);
      },
      '/interaction/source/components/5/schema/minItems',
      'asks for more choices than there are (1).',
    ],
    [
      'option label for no enum ID',
      (args) => setAt(args, [...C, 4, 'schema', 'option_labels', 'never'], 'Never'),
      '/interaction/source/components/4/schema/option_labels/never',
      'labels no enum ID; every option_labels key must be one of the enum IDs.',
    ],
    [
      'multiline on a choice',
      (args) => setAt(args, [...C, 4, 'multiline'], true),
      '/interaction/source/components/4/multiline',
      'applies only to text fields ({"type":"string"} without enum).',
    ],
    [
      'text value too long for maxLength',
      (args) => setAt(args, [...C, 3, 'schema', 'maxLength'], 3),
      '/interaction/source/components/3/value',
      'is 25 characters; the schema allows at most 3.',
    ],
    [
      'text value shorter than minLength',
      (args) => setAt(args, [...C, 3, 'value'], ''),
      '/interaction/source/components/3/value',
      'is 0 characters; the schema needs at least 1.',
    ],
    [
      'choice value not an ID',
      (args) => setAt(args, [...C, 4, 'value'], 'soon'),
      '/interaction/source/components/4/value',
      'must be one of the enum IDs.',
    ],
    [
      'choice value a number',
      (args) => setAt(args, [...C, 4, 'value'], 1),
      '/interaction/source/components/4/value',
      'must be a string.',
    ],
    [
      'multi value not IDs',
      (args) => setAt(args, [...C, 5, 'value'], ['z']),
      '/interaction/source/components/5/value',
      'must hold only enum IDs.',
    ],
    [
      'multi value repeats',
      (args) => setAt(args, [...C, 5, 'value'], ['a', 'a']),
      '/interaction/source/components/5/value',
      'repeats a choice.',
    ],
    [
      'multi value over maxItems',
      (args) => setAt(args, [...C, 5, 'value'], ['a', 'b', 'c']),
      '/interaction/source/components/5/value',
      'has 3 choices; the schema allows at most 2.',
    ],
    [
      'integer value 1.5',
      (args) => setAt(args, [...C, 6, 'value'], 1.5),
      '/interaction/source/components/6/value',
      'must be a whole number.',
    ],
    [
      'integer value over maximum',
      (args) => setAt(args, [...C, 6, 'value'], 11),
      '/interaction/source/components/6/value',
      'must be at most 10.',
    ],
    [
      'number value under minimum',
      (args) => setAt(args, [...C, 7, 'value'], 0),
      '/interaction/source/components/7/value',
      'must be at least 0.5.',
    ],
    [
      'boolean value a string',
      (args) => setAt(args, [...C, 8, 'value'], 'yes'),
      '/interaction/source/components/8/value',
      'must be true or false.',
    ],
    [
      'rating value out of range',
      (args) => setAt(args, [...C, 9, 'value'], 6),
      '/interaction/source/components/9/value',
      'must be at most 5.',
    ],
    [
      'value null',
      (args) => setAt(args, [...C, 8, 'value'], null),
      '/interaction/source/components/8/value',
      'must be true or false.',
    ],
  ];

  it.each(surfaceCases)('%s', (_, change, pointer, message) => {
    const args = sampleArgs('sess_request');
    change(args);
    expect(refusal('sess_request', args)).toEqual(pointerRefusal(pointer, message));
  });

  const askCases: Array<[string, (args: Record<string, unknown>) => void, string, string]> = [
    [
      'duplicate name',
      (args) => setAt(args, ['fields', 3, 'name'], 'note'),
      '/fields/3/name',
      'repeats the name of an earlier field; field names must be unique.',
    ],
    [
      'duplicate string option',
      (args) => setAt(args, ['fields', 2, 'options'], ['Mon', 'Mon']),
      '/fields/2/options/1',
      'repeats an earlier option; option IDs must be unique.',
    ],
    [
      'duplicate option ID',
      (args) => setAt(args, ['fields', 1, 'options'], ['pm', { id: 'pm', label: 'Afternoon' }]),
      '/fields/1/options/1/id',
      'repeats an earlier option; option IDs must be unique.',
    ],
    [
      'min above max',
      (args) => setAt(args, ['fields', 3, 'min'], 10),
      '/fields/3/max',
      'makes min greater than max (10 > 9).',
    ],
    [
      'rating min above default max',
      (args) => setAt(args, ['fields', 6], { name: 'r', label: 'R', type: 'rating', min: 7 }),
      '/fields/6/min',
      'makes min greater than max (7 > 5).',
    ],
    [
      'integer min not whole',
      (args) => setAt(args, ['fields', 3, 'min'], 1.5),
      '/fields/3/min',
      'must be a whole number.',
    ],
    [
      'multi min above options',
      (args) => setAt(args, ['fields', 2, 'min'], 3),
      '/fields/2/max',
      'makes min greater than max (3 > 2).',
    ],
    [
      'multi min above option count',
      (args) =>
        setAt(args, ['fields', 2], { name: 'd', label: 'D', type: 'multi_choice', options: ['a'], min: 2 }),
      '/fields/2/min',
      'asks for more choices than there are options (1).',
    ],
    [
      'choice value not an option',
      (args) => setAt(args, ['fields', 1, 'value'], 'Evening'),
      '/fields/1/value',
      'must be the ID of one of the options.',
    ],
    [
      'multi value not options',
      (args) => setAt(args, ['fields', 2, 'value'], ['Sun']),
      '/fields/2/value',
      'must hold only IDs of the options.',
    ],
    [
      'text value over max',
      (args) => setAt(args, ['fields', 0, 'value'], 'x'.repeat(501)),
      '/fields/0/value',
      'is 501 characters; max is 500.',
    ],
    [
      'integer value fractional',
      (args) => setAt(args, ['fields', 3, 'value'], 2.5),
      '/fields/3/value',
      'must be a whole number.',
    ],
    [
      'rating value over max',
      (args) => setAt(args, ['fields', 6, 'value'], 11),
      '/fields/6/value',
      'must be at most 10.',
    ],
    [
      'value of the wrong type',
      (args) => setAt(args, ['fields', 5, 'value'], 'yes'),
      '/fields/5/value',
      'must be true or false.',
    ],
    [
      'two deadlines',
      (args) => {
        setAt(args, ['expires_in'], 600);
        setAt(args, ['respondents'], { max: 2, expires_in: 600 });
      },
      '/respondents/expires_in',
      'replaces the top-level expires_in for an Ask; send only one of them.',
    ],
  ];

  it.each(askCases)('sess_ask: %s', (_, change, pointer, message) => {
    const args = sampleArgs('sess_ask');
    change(args);
    expect(refusal('sess_ask', args)).toEqual(pointerRefusal(pointer, message));
  });
});

// ---------------------------------------------------------------------------------------------

describe('order of checks', () => {
  it('reports the first offending value in document order', () => {
    const long = 'x'.repeat(81);
    const a = viaJson({ interaction: { ...minimalSurface(), title: long } });
    setAt(a, ['interaction', 'actions', 0, 'label'], 'y'.repeat(25));
    expect(refusal('sess_request', a).field).toBe('/interaction/title');

    const surface = minimalSurface();
    const b = {
      interaction: {
        actions: [{ id: 'ok', label: 'y'.repeat(25), intent: 'approve' }],
        mode: surface.mode,
        title: long,
        source: surface.source,
      },
    };
    expect(refusal('sess_request', b).field).toBe('/interaction/actions/0/label');
  });

  it('places a missing property right after the values inside its object', () => {
    const args = sampleArgs('sess_request');
    deleteAt(args, ['interaction', 'title']);
    setAt(args, ['expires_in'], 1);
    expect(refusal('sess_request', args).field).toBe('/interaction/title');
    setAt(args, ['interaction', 'actions', 0, 'label'], 'y'.repeat(25));
    expect(refusal('sess_request', args).field).toBe('/interaction/actions/0/label');
  });

  it('is stable: the same input gives the same error', () => {
    const args = sampleArgs('sess_ask');
    setAt(args, ['fields', 3, 'extra'], 1);
    setAt(args, ['fields', 5, 'label'], 'x'.repeat(70));
    const first = refusal('sess_ask', args);
    for (let run = 0; run < 5; run++) expect(refusal('sess_ask', viaJson(args))).toEqual(first);
    expect(first.field).toBe('/fields/3/extra');
  });

  it('never repeats a sent value in its message', () => {
    const secret = 'secret-value-1234';
    const cases: Array<[ToolName, Record<string, unknown>]> = [];
    let args = sampleArgs('sess_request');
    setAt(args, [...C, 4, 'value'], secret);
    cases.push(['sess_request', args]);
    args = sampleArgs('sess_request');
    setAt(args, [...C, 4, 'schema', 'option_labels', secret], 'x');
    cases.push(['sess_request', args]);
    args = sampleArgs('sess_response');
    setAt(args, ['handle'], `${secret} !`);
    cases.push(['sess_response', args]);
    args = sampleArgs('sess_ask');
    setAt(args, ['fields', 1, 'value'], secret);
    cases.push(['sess_ask', args]);
    for (const [tool, raw] of cases) {
      const error = refusal(tool, raw);
      expect(error.message.includes(secret.slice(0, 10)) && !error.field?.includes(secret)).toBe(false);
    }
  });

  it('throws SessMcpError with the invalid_arguments class', () => {
    try {
      parseToolArguments('sess_response', {});
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(SessMcpError);
      expect((error as SessMcpError).retryable).toBe(false);
    }
  });
});
