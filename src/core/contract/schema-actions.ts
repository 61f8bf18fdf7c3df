/**
 * What valibot lacks for the tool contract: custom validation actions (a code-point length limit,
 * unique strings, a cap on `field` components) and {@link noArrays}, which makes an object schema
 * refuse an array as JSON Schema's `type: 'object'` does. Each action maps to one JSON Schema
 * keyword in `json-schema.ts`.
 *
 * Generic building blocks only: no tool, no limit value and no message of the contract lives
 * here (those are `schemas.ts` and `limits.ts`).
 */
import * as v from 'valibot';
import { codePointLength } from './limits.js';

/**
 * The action behind {@link maxCodePoints} and {@link maxFieldComponents}: refuses an input whose
 * `measure` exceeds `limit`, with the measure as the issue's `received`.
 */
function atMost<
  TInput,
  TIssue extends v.BaseIssue<unknown>,
  TAction extends v.BaseValidation<TInput, TInput, TIssue> & { readonly requirement: number },
>(
  name: Pick<TAction, 'type' | 'reference'>,
  limit: number,
  label: string,
  measure: (input: TInput) => number,
): TAction {
  const action = {
    ...name,
    kind: 'validation',
    async: false,
    expects: `<=${limit}`,
    requirement: limit,
    '~run'(dataset: v.OutputDataset<TInput, v.BaseIssue<unknown>>, config: v.Config<v.BaseIssue<unknown>>) {
      if (dataset.typed) {
        const received = measure(dataset.value);
        if (received > limit) v._addIssue(action, label, dataset, config, { received: `${received}` });
      }
      return dataset as v.OutputDataset<TInput, TIssue>;
    },
  } as unknown as TAction;
  return action;
}

/** The issue of {@link maxCodePoints}: `received` is the measured length. */
export interface MaxCodePointsIssue extends v.BaseIssue<string> {
  readonly kind: 'validation';
  readonly type: 'max_code_points';
  readonly requirement: number;
}

/** A string length limit counted in Unicode code points (JSON Schema's `maxLength` semantics). */
export interface MaxCodePointsAction extends v.BaseValidation<string, string, MaxCodePointsIssue> {
  readonly type: 'max_code_points';
  readonly reference: typeof maxCodePoints;
  readonly requirement: number;
}

/** Refuses a string longer than `limit` Unicode code points. Never truncates. */
export function maxCodePoints(limit: number): MaxCodePointsAction {
  return atMost<string, MaxCodePointsIssue, MaxCodePointsAction>(
    { type: 'max_code_points', reference: maxCodePoints },
    limit,
    'length',
    codePointLength,
  );
}

/** The issue of {@link uniqueStrings}; its path names the repeated entry. */
export interface UniqueStringsIssue extends v.BaseIssue<string[]> {
  readonly kind: 'validation';
  readonly type: 'unique_items';
}

/** Refuses an array of strings that repeats an entry (JSON Schema `uniqueItems: true`). */
export interface UniqueStringsAction extends v.BaseValidation<string[], string[], UniqueStringsIssue> {
  readonly type: 'unique_items';
  readonly reference: typeof uniqueStrings;
}

/** Refuses a repeated string; the issue points at the first repeat. */
export function uniqueStrings(): UniqueStringsAction {
  return {
    kind: 'validation',
    type: 'unique_items',
    reference: uniqueStrings,
    async: false,
    expects: 'unique',
    '~run'(dataset, config) {
      if (dataset.typed) {
        const input = dataset.value;
        const seen = new Set<string>();
        for (let index = 0; index < input.length; index++) {
          const item = input[index] as string;
          if (seen.has(item)) {
            v._addIssue(this, 'item', dataset, config, {
              input: item,
              path: [{ type: 'array', origin: 'value', input, key: index, value: item }],
            });
            break;
          }
          seen.add(item);
        }
      }
      return dataset as v.OutputDataset<string[], UniqueStringsIssue>;
    },
  };
}

/** The issue of {@link maxFieldComponents}: `received` is the number of `field` components. */
export interface MaxFieldComponentsIssue extends v.BaseIssue<unknown[]> {
  readonly kind: 'validation';
  readonly type: 'max_field_components';
  readonly requirement: number;
}

/** At most `limit` components of type `field` (JSON Schema `contains` + `maxContains`). */
export interface MaxFieldComponentsAction<TInput extends readonly unknown[]>
  extends v.BaseValidation<TInput, TInput, MaxFieldComponentsIssue> {
  readonly type: 'max_field_components';
  readonly reference: typeof maxFieldComponents;
  readonly requirement: number;
}

/** Refuses more than `limit` `field` components. */
export function maxFieldComponents<TInput extends readonly unknown[]>(
  limit: number,
): MaxFieldComponentsAction<TInput> {
  return atMost<TInput, MaxFieldComponentsIssue, MaxFieldComponentsAction<TInput>>(
    { type: 'max_field_components', reference: maxFieldComponents },
    limit,
    'fields',
    (items) => items.filter((item) => (item as { type?: unknown }).type === 'field').length,
  );
}

/**
 * The same schema, refusing an array where an object is expected. valibot's object, record and
 * variant schemas take any `typeof === 'object'` value, so `[]` would pass as an empty record;
 * JSON Schema's `type: 'object'` refuses it, and so must we. The JSON Schema conversion is unchanged.
 */
export function noArrays<TSchema extends v.GenericSchema>(schema: TSchema): TSchema {
  const run = schema['~run'].bind(schema);
  return {
    ...schema,
    '~run'(dataset: v.UnknownDataset, config: v.Config<v.BaseIssue<unknown>>) {
      if (Array.isArray(dataset.value)) {
        v._addIssue(this as unknown as TSchema & { expects: string }, 'type', dataset, config, {
          expected: 'Object',
        });
        return dataset as unknown as v.OutputDataset<v.InferOutput<TSchema>, v.InferIssue<TSchema>>;
      }
      return run(dataset, config);
    },
  };
}
