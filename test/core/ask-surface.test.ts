import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessMcpError } from '../../src/core/contract/errors.js';
import { textProblem } from '../../src/core/contract/limits.js';
import type { AskArgs, AskField } from '../../src/core/contract/schemas.js';
import { askToSurface, parseToolArguments, validateToolCall } from '../../src/core/contract/validate.js';
import { sampleAsk } from './fixtures.js';

describe('askToSurface', () => {
  it('maps the sample to an ordinary Surface', () => {
    const surface = askToSurface(parseToolArguments('sess_ask', sampleAsk()));
    expect(surface).toEqual({
      mode: 'interactive',
      title: 'What time works for a call tomorrow?',
      source: {
        kind: 'sess_surface',
        components: [
          { type: 'text', text: 'A 30-minute call.' },
          {
            type: 'field',
            name: 'note',
            label: 'Note',
            description: 'Optional.',
            multiline: true,
            schema: { type: 'string', maxLength: 500 },
          },
          {
            type: 'field',
            name: 'time',
            label: 'Best time',
            required: true,
            schema: { type: 'string', enum: ['Morning', 'pm'], option_labels: { pm: 'Afternoon' } },
            value: 'pm',
          },
          {
            type: 'field',
            name: 'days',
            label: 'Days',
            schema: {
              type: 'array',
              items: { type: 'string', enum: ['Mon', 'Tue'] },
              uniqueItems: true,
              minItems: 1,
              maxItems: 2,
            },
          },
          {
            type: 'field',
            name: 'n',
            label: 'People',
            schema: { type: 'integer', minimum: 1, maximum: 9 },
            value: 2,
          },
          { type: 'field', name: 'budget', label: 'Budget', schema: { type: 'number', minimum: 0 } },
          { type: 'field', name: 'video', label: 'Video?', schema: { type: 'boolean' }, value: true },
          {
            type: 'field',
            name: 'stars',
            label: 'How urgent?',
            schema: { type: 'integer', format: 'rating', minimum: 1, maximum: 10 },
          },
        ],
      },
      actions: [{ id: 'submit', label: 'Send', intent: 'submit' }],
    });
  });

  it('labels the one button "Send" by default, or submit_label', () => {
    const base: AskArgs = { question: 'Go?', fields: [{ name: 'ok', label: 'OK?', type: 'boolean' }] };
    expect(askToSurface(base).actions).toEqual([{ id: 'submit', label: 'Send', intent: 'submit' }]);
    expect(askToSurface({ ...base, submit_label: 'Book it' }).actions[0]!.label).toBe('Book it');
  });

  it('gives a rating 1..5 by default and leaves out empty details', () => {
    const surface = askToSurface({
      question: 'Rate',
      details: '',
      fields: [{ name: 'r', label: 'R', type: 'rating' }],
    });
    expect(surface.source.components).toEqual([
      {
        type: 'field',
        name: 'r',
        label: 'R',
        schema: { type: 'integer', format: 'rating', minimum: 1, maximum: 5 },
      },
    ]);
  });

  it('checks the built Surface by the same rules (refuses what the ask rules would)', () => {
    const bad = {
      question: 'Q',
      fields: [{ name: 'a', label: 'A', type: 'choice', options: ['x', 'x'] }],
    } as AskArgs;
    expect(() => askToSurface(bad)).toThrow(SessMcpError);
  });
});

describe('validateToolCall', () => {
  it('carries the Surface of a sess_ask call, built once during validation', () => {
    const validated = validateToolCall('sess_ask', sampleAsk());
    if (validated.tool !== 'sess_ask') throw new Error('expected a sess_ask call');
    expect(validated.args).toEqual(parseToolArguments('sess_ask', sampleAsk()));
    expect(validated.surface).toEqual(askToSurface(validated.args));
  });

  it('returns the tool with its arguments for every other tool', () => {
    expect(validateToolCall('sess_response', { handle: 'h_1', revision: 2 })).toEqual({
      tool: 'sess_response',
      args: { handle: 'h_1', revision: 2 },
    });
  });
});

// ---------------------------------------------------------------------------------------------

// Any code point, but well-formed: U+0000 and unpaired surrogates are refused in every string.
const wellFormed = (s: string) => textProblem(s) === undefined;
const text = (max: number) => fc.string({ unit: 'binary', minLength: 1, maxLength: max }).filter(wellFormed);
const optionalText = (max: number) =>
  fc.option(fc.string({ unit: 'binary', maxLength: max }).filter(wellFormed), { nil: undefined });

const options = fc.uniqueArray(
  fc.oneof(
    text(60),
    fc.record({ id: fc.string({ minLength: 1, maxLength: 100 }).filter(wellFormed), label: text(60) }),
  ),
  { minLength: 1, maxLength: 8, selector: (option) => (typeof option === 'string' ? option : option.id) },
);

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}

const field = (name: string): fc.Arbitrary<AskField> =>
  fc
    .oneof(
      fc.record({
        type: fc.constant('text' as const),
        multiline: fc.option(fc.boolean(), { nil: undefined }),
        max: fc.option(fc.nat(5000), { nil: undefined }),
      }),
      fc.record({
        type: fc.constantFrom('number' as const, 'integer' as const),
        min: fc.option(fc.integer({ min: -5, max: 0 }), { nil: undefined }),
        max: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      }),
      fc.record({
        type: fc.constant('boolean' as const),
        value: fc.option(fc.boolean(), { nil: undefined }),
      }),
      fc.record({ type: fc.constant('choice' as const), options }),
      fc.record({
        type: fc.constant('multi_choice' as const),
        options,
        min: fc.option(fc.constant(1), { nil: undefined }),
      }),
      fc.record({
        type: fc.constant('rating' as const),
        min: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
        max: fc.option(fc.integer({ min: 5, max: 10 }), { nil: undefined }),
      }),
    )
    .chain((kind) =>
      fc
        .record({
          label: text(60),
          description: optionalText(160),
          required: fc.option(fc.boolean(), { nil: undefined }),
        })
        .map((base) => withoutUndefined({ ...kind, ...base, name }) as AskField),
    );

const askArgs: fc.Arbitrary<AskArgs> = fc.integer({ min: 1, max: 12 }).chain((count) =>
  fc
    .record({
      question: text(80),
      fields: fc.tuple(...Array.from({ length: count }, (_, index) => field(`f${index}`))),
      details: optionalText(400),
      submit_label: fc.option(text(24), { nil: undefined }),
    })
    .map((args) => withoutUndefined(args) as AskArgs),
);

describe('every valid sess_ask call builds a valid sess_request Surface', () => {
  it('holds for generated calls', () => {
    let accepted = 0;
    fc.assert(
      fc.property(askArgs, (raw) => {
        let args: AskArgs;
        try {
          args = parseToolArguments('sess_ask', raw);
        } catch (error) {
          // The only refusal a well-formed call may get is the size of the built Surface.
          expect((error as SessMcpError).limit).toBe(32_768);
          expect((error as SessMcpError).field).toBeUndefined();
          return;
        }
        accepted++;
        const surface = askToSurface(args);
        expect(parseToolArguments('sess_request', { interaction: surface }).interaction).toEqual(surface);
        expect(surface.title).toBe(raw.question);
        expect(surface.source.components.filter((component) => component.type === 'field')).toHaveLength(
          raw.fields.length,
        );
      }),
      { numRuns: 100, seed: 4242 },
    );
    expect(accepted).toBeGreaterThan(50);
  });
});
