/**
 * How a Surface's `field` components travel through an HTML form: which control each field
 * schema becomes ({@link fieldKind}), how a posted form turns into an answer
 * ({@link formToAnswer}) and back ({@link answerToForm}, exactly what a browser posts).
 *
 * Form encoding: each field is `v:<name>` (repeated for a multi-choice; a boolean checkbox posts
 * `true` and is absent when unticked), the pressed button is `_action=<action id>`, the hidden
 * `_revision=<n>` says which revision the page showed. This module does not judge an answer
 * (`validate.ts` does) and renders nothing (`render.ts` does).
 */
import type { FieldComponent, FieldSchema, Surface } from '../../core/model/surface.js';

/** The control a field is shown as. */
export type FieldKind =
  | 'text'
  | 'textarea'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'choice'
  | 'multi_choice'
  | 'rating';

/** The form name of a field's control. */
export function formName(field: Pick<FieldComponent, 'name'>): string {
  return `v:${field.name}`;
}

/** Which control a field schema becomes. `multiline` only matters for plain text. */
export function fieldKind(schema: FieldSchema, multiline?: boolean): FieldKind {
  switch (schema.type) {
    case 'array':
      return 'multi_choice';
    case 'boolean':
      return 'boolean';
    case 'number':
      return 'number';
    case 'integer':
      return 'format' in schema && schema.format === 'rating' ? 'rating' : 'integer';
    case 'string':
      if ('enum' in schema && Array.isArray(schema.enum)) return 'choice';
      return multiline ? 'textarea' : 'text';
  }
}

/** Every `field` component of a Surface, in page order. */
export function surfaceFields(surface: Surface): FieldComponent[] {
  return surface.source.components.filter((c): c is FieldComponent => c.type === 'field');
}

/** True when `key` is an own property of `obj` (so `__proto__` and friends never leak in). */
export function hasOwn(obj: object | undefined, key: string): boolean {
  return obj !== undefined && Object.hasOwn(obj, key);
}

// Every digit can belong to one quantifier only (integer part, fraction after a required dot,
// exponent), so matching or refusing any text takes linear time: a form post of tens of
// thousands of digits is refused at once instead of backtracking for seconds.
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Reads a number the way a person typed it. An empty input is `undefined` (no value); text
 * that is not a decimal number is kept as the string so validation can name the problem and the
 * page can show it back.
 */
function parseNumber(raw: string | null): number | string | undefined {
  if (raw === null) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (!DECIMAL.test(text)) return raw;
  const n = Number(text);
  return Number.isFinite(n) ? n : raw;
}

/**
 * Turns a posted form into the action and the raw values of every field. Values are not checked
 * here: a number that does not parse stays a string, an unknown choice stays as posted.
 * Text fields always have a string (empty when left blank); booleans are `true` or `false` (or
 * the posted text when it is neither);
 * multi-choices are arrays; an empty number, choice or rating is left out. The posted body is
 * read as `new URLSearchParams(body)`.
 */
export function formToAnswer(
  surface: Surface,
  form: URLSearchParams,
): { action: string; values: Record<string, unknown> } {
  const entries: [string, unknown][] = [];
  for (const field of surfaceFields(surface)) {
    const key = formName(field);
    switch (fieldKind(field.schema, field.multiline)) {
      case 'text':
      case 'textarea':
        // Browsers post a textarea's line breaks as CRLF; the answer uses LF.
        entries.push([field.name, (form.get(key) ?? '').replace(/\r\n?/g, '\n')]);
        break;
      case 'boolean': {
        // A ticked box posts `true` and an unticked one nothing; anything else stays as posted,
        // so validation refuses it rather than reading it as "no".
        const raw = form.get(key);
        entries.push([field.name, raw === null ? false : raw === 'true' ? true : raw]);
        break;
      }
      case 'multi_choice':
        entries.push([field.name, form.getAll(key)]);
        break;
      case 'choice': {
        const raw = form.get(key);
        if (raw !== null && raw !== '') entries.push([field.name, raw]);
        break;
      }
      case 'number':
      case 'integer':
      case 'rating': {
        const n = parseNumber(form.get(key));
        if (n !== undefined) entries.push([field.name, n]);
        break;
      }
    }
  }
  // fromEntries defines own properties, so a field named `__proto__` stays a plain key.
  return { action: form.get('_action') ?? '', values: Object.fromEntries(entries) };
}

/**
 * What a browser posts for `answer` on the page of `revision`: `_revision`, then every field in
 * page order, then the pressed button. Feeding the result to {@link formToAnswer} gives the
 * answer back. Posting it as a `fetch` body (with `redirect: 'manual'`) answers a page like a
 * browser, without one.
 */
export function answerToForm(
  surface: Surface,
  answer: { action: string; values: Record<string, unknown> },
  revision: number,
): URLSearchParams {
  const form = new URLSearchParams();
  form.append('_revision', String(revision));
  for (const field of surfaceFields(surface)) {
    const key = formName(field);
    const value = hasOwn(answer.values, field.name) ? answer.values[field.name] : undefined;
    switch (fieldKind(field.schema, field.multiline)) {
      case 'text':
      case 'textarea': {
        // A browser always posts a text control, empty or not, with a textarea's breaks as CRLF.
        const text = typeof value === 'string' ? value : value == null ? '' : String(value);
        form.append(key, text.replace(/\r?\n/g, '\r\n'));
        break;
      }
      case 'boolean':
        // A value that is not a boolean is posted as it is, for the page to refuse.
        if (value === true) form.append(key, 'true');
        else if (value !== false && value != null) form.append(key, String(value));
        break;
      case 'multi_choice':
        if (Array.isArray(value)) for (const item of value) form.append(key, String(item));
        break;
      case 'choice':
      case 'rating':
        // An unchecked radio group posts nothing.
        if (value != null && value !== '') form.append(key, String(value));
        break;
      case 'number':
      case 'integer':
        form.append(key, value == null ? '' : String(value));
        break;
    }
  }
  form.append('_action', answer.action);
  return form;
}
