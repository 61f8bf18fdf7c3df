/**
 * Judges a person's answer against the Surface's field schemas, the way the answer page does
 * before it accepts a submit: required fields, lengths in Unicode code points, number bounds,
 * whole numbers, choices from the enum, how many options of a multi-choice, rating range, and
 * the pressed button. Every problem gets a short, specific sentence written for the person, keyed
 * by field name (`_action` for the button).
 *
 * Two readings of `required` worth knowing: a boolean always has an answer (unticked is `false`),
 * so `required` never refuses one; an optional multi-choice left empty is no answer, so its
 * `minItems` does not apply.
 *
 * It does not parse forms (`fields.ts`) and does not check the Surface itself: the tool contract
 * already did that before the Session was created.
 */
import type {
  Answer,
  FieldComponent,
  JsonValue,
  MultiChoiceFieldSchema,
  NumberFieldSchema,
  RatingFieldSchema,
  StringFieldSchema,
  Surface,
} from '../../core/model/surface.js';
import { codePoints } from '../model/text.js';
import { fieldKind, hasOwn, surfaceFields } from './fields.js';

/** The result of {@link validateAnswer}: the clean answer, or a message per field. */
export type AnswerCheck = { ok: true; answer: Answer } | { ok: false; errors: Record<string, string> };

/** The error key for the pressed button (no field can be named like this and reach the page). */
export const ACTION_ERROR_KEY = '_action';

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function optionLabel(schema: { option_labels?: Record<string, string> }, id: string): string {
  return hasOwn(schema.option_labels, id) ? schema.option_labels![id]! : id;
}

function checkString(field: FieldComponent, schema: StringFieldSchema, value: unknown): string | undefined {
  if (typeof value !== 'string') return 'Enter some text here.';
  const length = codePoints(value);
  if (length === 0 && field.required) return 'This is required. Please fill it in.';
  if (schema.minLength !== undefined && length < schema.minLength) {
    return `Use at least ${plural(schema.minLength, 'character', 'characters')} (you have ${length}).`;
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    return `Use at most ${plural(schema.maxLength, 'character', 'characters')} (you have ${length}).`;
  }
  return undefined;
}

function checkNumber(schema: NumberFieldSchema, value: unknown, whole: boolean): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return whole ? 'Enter a whole number, like 12.' : 'Enter a number, like 12 or 3.5.';
  }
  if (whole && !Number.isInteger(value)) return 'Enter a whole number, without decimals.';
  if (schema.minimum !== undefined && value < schema.minimum) {
    return schema.maximum !== undefined
      ? `Enter a number from ${schema.minimum} to ${schema.maximum}.`
      : `Enter a number of at least ${schema.minimum}.`;
  }
  if (schema.maximum !== undefined && value > schema.maximum) {
    return schema.minimum !== undefined
      ? `Enter a number from ${schema.minimum} to ${schema.maximum}.`
      : `Enter a number of at most ${schema.maximum}.`;
  }
  return undefined;
}

function checkRating(schema: RatingFieldSchema, value: unknown): string | undefined {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < schema.minimum ||
    value > schema.maximum
  ) {
    return `Choose a rating from ${schema.minimum} to ${schema.maximum}.`;
  }
  return undefined;
}

function checkChoice(schema: { enum: string[] }, value: unknown): string | undefined {
  if (typeof value !== 'string' || !schema.enum.includes(value)) return 'Choose one of the options shown.';
  return undefined;
}

function checkMulti(
  field: FieldComponent,
  schema: MultiChoiceFieldSchema,
  value: unknown,
): string | undefined {
  if (!Array.isArray(value)) return 'Choose from the options shown.';
  const allowed = schema.items.enum;
  const unknown = value.find((v) => typeof v !== 'string' || !allowed.includes(v));
  if (unknown !== undefined) return 'Choose only from the options shown.';
  if (new Set(value).size !== value.length) {
    const dup = value.find((v, i) => value.indexOf(v) !== i) as string;
    return `Choose each option only once ("${optionLabel(schema, dup)}" is chosen twice).`;
  }
  if (field.required && value.length === 0) return 'This is required. Choose at least one option.';
  // An optional multi-choice left empty is no answer, so its bounds do not apply.
  if (value.length === 0 && !field.required) return undefined;
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    return `Choose at least ${plural(schema.minItems, 'option', 'options')} (you chose ${value.length}).`;
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    return `Choose at most ${plural(schema.maxItems, 'option', 'options')} (you chose ${value.length}).`;
  }
  return undefined;
}

/** The message for a required field the person left empty. */
function missingMessage(field: FieldComponent): string {
  switch (fieldKind(field.schema, field.multiline)) {
    case 'choice':
      return 'This is required. Choose one of the options.';
    case 'rating':
      return 'This is required. Choose a rating.';
    default:
      return 'This is required. Please fill it in.';
  }
}

/**
 * Checks an answer against the Surface: the action must be one of its buttons and every field's
 * value must fit its schema. Values of fields the Surface does not have are refused by name.
 * On success the answer holds only the Surface's fields, in page order. A refused answer is drawn
 * again as the form with `values: input.values` and `errors: check.errors`, status 422.
 */
export function validateAnswer(
  surface: Surface,
  input: { action: string; values: Record<string, unknown> },
): AnswerCheck {
  const errors: [string, string][] = [];
  const values: [string, JsonValue][] = [];
  const fields = surfaceFields(surface);
  const known = new Set(fields.map((f) => f.name));

  for (const field of fields) {
    const present = hasOwn(input.values, field.name) && input.values[field.name] !== undefined;
    const value = present ? input.values[field.name] : undefined;
    const kind = fieldKind(field.schema, field.multiline);
    if (!present || value === null) {
      if (field.required) errors.push([field.name, missingMessage(field)]);
      else if (kind === 'text' || kind === 'textarea') {
        // A text control always posts a string; nothing posted means an empty one.
        const problem = checkString(field, field.schema as StringFieldSchema, '');
        if (problem) errors.push([field.name, problem]);
      }
      continue;
    }
    let problem: string | undefined;
    switch (kind) {
      case 'text':
      case 'textarea':
        problem = checkString(field, field.schema as StringFieldSchema, value);
        break;
      case 'number':
      case 'integer':
        problem = checkNumber(field.schema as NumberFieldSchema, value, kind === 'integer');
        break;
      case 'rating':
        problem = checkRating(field.schema as RatingFieldSchema, value);
        break;
      case 'boolean':
        if (typeof value !== 'boolean') problem = 'Tick the box for yes, or leave it empty for no.';
        break;
      case 'choice':
        problem = checkChoice(field.schema as { enum: string[] }, value);
        break;
      case 'multi_choice':
        problem = checkMulti(field, field.schema as MultiChoiceFieldSchema, value);
        break;
    }
    if (problem) errors.push([field.name, problem]);
    else values.push([field.name, value as JsonValue]);
  }

  for (const name of Object.keys(input.values)) {
    if (!known.has(name)) errors.push([name, 'This form has no such field.']);
  }
  if (!surface.actions.some((a) => a.id === input.action)) {
    errors.push([
      ACTION_ERROR_KEY,
      input.action === ''
        ? 'Choose one of the buttons at the end of the form.'
        : 'That button is not part of this form. Choose one of the buttons at the end of the form.',
    ]);
  }

  if (errors.length > 0) return { ok: false, errors: Object.fromEntries(errors) };
  return { ok: true, answer: { action: input.action, values: Object.fromEntries(values) } };
}
