/**
 * The one entry that decides whether tool arguments are valid: {@link parseToolArguments}. It runs
 * four passes, each reporting the first offending value in document order (the order of the
 * arguments' own keys and array items, depth first):
 *
 * 1. structure: unsafe keys (`__proto__`, `constructor`, `prototype`, as own keys anywhere),
 *    nesting deeper than 8 levels, and U+0000 or an unpaired surrogate in any string (every value
 *    and every key, wherever it sits: nothing carrying one is saved or sent);
 * 2. size: an `interaction` over 32 KiB (UTF-8 bytes of its compact JSON);
 * 3. shape and limits: the valibot schema of the tool (`schemas.ts`): closed objects, types,
 *    counts, code-point length limits, field names and action IDs that JavaScript objects reserve;
 * 4. consistency: rules spanning values (unique names and IDs, `min` ≤ `max`, option labels naming
 *    enum IDs, unlabelled enum IDs ≤ 60, a prefilled `value` fitting its schema).
 *
 * Every refusal is a `SessMcpError('INVALID_ARGUMENTS')` with `field` (a JSON pointer into the
 * arguments) and, for a limit, `limit` and `length`. Nothing is truncated or repaired, and no
 * message repeats a value the caller sent.
 *
 * One job: the verdict on tool arguments and the refusal that explains it. The four passes stay
 * in this one module because they share one pointer form, one refusal form and one document order
 * (the first offending value wins across passes). It defines no schema (`schemas.ts`), no limit
 * (`limits.ts`) and no JSON Schema (`json-schema.ts`).
 */
import * as v from 'valibot';
import { askOptionId, buildAskSurface } from '../model/ask-surface.js';
import type { FieldSchema, JsonValue, Surface } from '../model/surface.js';
import { SessMcpError } from './errors.js';
import {
  codePointLength,
  isUnsafeKey,
  jsonByteLength,
  STRUCTURE_LIMITS,
  TEXT_LIMITS,
  TEXT_PROBLEM_MESSAGES,
  TITLE_TOO_LONG_MESSAGE,
  textProblem,
  tooLongMessage,
} from './limits.js';
import {
  type AskArgs,
  type AskField,
  type CompleteArgs,
  type ListArgs,
  type PublishArgs,
  type RequestArgs,
  type ResponseArgs,
  SurfaceSchema,
  TOOL_ARGUMENT_SCHEMAS,
  TOOL_NAMES,
  type ToolArgs,
  type ToolName,
  type WithdrawArgs,
} from './schemas.js';

// ---------------------------------------------------------------------------------------------
// Pointers

/** Escapes one JSON pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapePointerToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The JSON pointer of a path of keys and indexes. */
export function toPointer(path: readonly (string | number)[]): string {
  let pointer = '';
  for (const token of path) pointer += `/${escapePointerToken(token)}`;
  return pointer;
}

function invalid(message: string, field?: string, limit?: number, length?: number): SessMcpError {
  const details: { field?: string; limit?: number; length?: number } = {};
  if (field !== undefined) details.field = field;
  if (limit !== undefined) details.limit = limit;
  if (length !== undefined) details.length = length;
  return new SessMcpError('INVALID_ARGUMENTS', message, details);
}

function lengthError(pointer: string, length: number, limit: number, isTitle = false): SessMcpError {
  return invalid(
    isTitle ? TITLE_TOO_LONG_MESSAGE : tooLongMessage(pointer, length, limit),
    pointer,
    limit,
    length,
  );
}

// ---------------------------------------------------------------------------------------------
// Pass 1: structure

/** Where each value sits in document order: its pre-order index and the last index inside it. */
export type DocumentOrder = Map<string, { start: number; end: number }>;

/** What {@link checkStructure} returns. */
export interface StructureResult {
  /** A copy holding only own enumerable data, so nothing inherited is ever read. */
  copy: unknown;
}

/**
 * Walks `value` depth first over own keys, refusing an unsafe key, a container deeper than
 * {@link STRUCTURE_LIMITS.maxDepth} (`value` itself is level 1), a string or key holding U+0000 or
 * an unpaired surrogate (no store or answer page carries them faithfully), and what JSON cannot carry (a
 * non-finite number, a bigint, a function or a symbol; only a caller in the same process can send
 * those). Returns a copy of the own data.
 */
export function checkStructure(value: unknown): StructureResult {
  // Pointers are built only for an error: the common, valid case walks without string work.
  const path: (string | number)[] = [];
  const where = () => toPointer(path) || 'The arguments';
  const checkText = (text: string): void => {
    const problem = textProblem(text);
    if (problem !== undefined) {
      throw invalid(`${where()} ${TEXT_PROBLEM_MESSAGES[problem]}. Remove that character.`, toPointer(path));
    }
  };
  const visit = (node: unknown, level: number): unknown => {
    if (typeof node === 'string') {
      checkText(node);
      return node;
    }
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) throw invalid(`${where()} is not a finite number.`, toPointer(path));
      return node;
    }
    if (typeof node === 'bigint' || typeof node === 'function' || typeof node === 'symbol') {
      throw invalid(`${where()} is not a JSON value.`, toPointer(path));
    }
    if (node === null || typeof node !== 'object') return node;
    if (level > STRUCTURE_LIMITS.maxDepth) {
      throw invalid(
        `${where()} nest ${level} levels deep; the limit is ${STRUCTURE_LIMITS.maxDepth}. Send a flatter value.`,
        toPointer(path),
        STRUCTURE_LIMITS.maxDepth,
        level,
      );
    }
    if (Array.isArray(node)) {
      const items: unknown[] = [];
      for (let index = 0; index < node.length; index++) {
        path.push(index);
        items.push(visit(node[index], level + 1));
        path.pop();
      }
      return items;
    }
    const entries: Record<string, unknown> = {};
    for (const key of Object.keys(node)) {
      path.push(key);
      if (isUnsafeKey(key)) {
        const pointer = toPointer(path);
        throw invalid(
          `${pointer} uses an unsafe key; "__proto__", "constructor" and "prototype" are refused as keys anywhere. ` +
            'Rename or remove it.',
          pointer,
        );
      }
      checkText(key);
      entries[key] = visit((node as Record<string, unknown>)[key], level + 1);
      path.pop();
    }
    return entries;
  };
  return { copy: visit(value, 1) };
}

/** The document order of a structurally checked value; built only to choose among several issues. */
export function documentOrder(value: unknown): DocumentOrder {
  const order: DocumentOrder = new Map();
  const visit = (node: unknown, pointer: string): void => {
    const span = { start: order.size, end: order.size };
    order.set(pointer, span);
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) visit(node[index], `${pointer}/${index}`);
    } else if (node !== null && typeof node === 'object') {
      for (const key of Object.keys(node)) {
        visit((node as Record<string, unknown>)[key], `${pointer}/${escapePointerToken(key)}`);
      }
    }
    span.end = order.size - 1;
  };
  visit(value, '');
  return order;
}

// ---------------------------------------------------------------------------------------------
// Pass 2: size

/** Refuses an interaction whose compact JSON is over 32 KiB of UTF-8. */
export function checkInteractionSize(interaction: unknown, pointer: string | undefined): void {
  const bytes = jsonByteLength(interaction);
  if (bytes > STRUCTURE_LIMITS.maxInteractionBytes) {
    const what = pointer === undefined ? 'The form built from these arguments' : pointer;
    throw invalid(
      `${what} is ${bytes} bytes as JSON; the limit is ${STRUCTURE_LIMITS.maxInteractionBytes} (32 KiB). ` +
        'Shorten texts or send fewer components.',
      pointer,
      STRUCTURE_LIMITS.maxInteractionBytes,
      bytes,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Pass 3: shape (valibot issues → one error)

type AnyIssue = v.BaseIssue<unknown> & { requirement?: unknown; issues?: AnyIssue[] };

function issueKeys(issue: AnyIssue): (string | number)[] {
  return (issue.path ?? []).map((item) => item.key as string | number);
}

/** Picks the most specific sub-issue of a failed union so the error names a real property. */
function resolveIssue(
  issue: AnyIssue,
  keys: (string | number)[],
): { issue: AnyIssue; keys: (string | number)[] } {
  if (issue.type === 'union' && issue.issues !== undefined && issue.issues.length > 0) {
    const nested = issue.issues.find((sub) => (sub.path?.length ?? 0) > 0) ?? issue.issues[0]!;
    if ((nested.path?.length ?? 0) > 0 || nested.type !== 'union') {
      if (issue.input !== null && typeof issue.input === 'object' && (nested.path?.length ?? 0) > 0) {
        return resolveIssue(nested, [...keys, ...issueKeys(nested)]);
      }
    }
  }
  return { issue, keys };
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  strict_object: 'an object',
  object: 'an object',
  record: 'an object',
  null: 'null',
};

function listExpected(expected: string | null): string {
  return (expected ?? '').replace(/[()]/g, '').split(' | ').join(', ');
}

function pluralNoun(keys: readonly (string | number)[]): string {
  const last = keys[keys.length - 1];
  if (last === 'actions') return 'actions';
  if (last === 'fields') return 'fields';
  if (last === 'options') return 'options';
  if (last === 'components') return 'components';
  return 'items';
}

function issueToError(raw: AnyIssue, rawKeys: (string | number)[]): SessMcpError {
  const { issue, keys } = resolveIssue(raw, rawKeys);
  const pointer = toPointer(keys);
  const where = pointer === '' ? 'The arguments' : pointer;
  const requirement = typeof issue.requirement === 'number' ? issue.requirement : undefined;
  switch (issue.type) {
    case 'max_code_points': {
      const limit = requirement!;
      const length = Number(issue.received);
      return lengthError(pointer, length, limit, pointer === '/interaction/title' || pointer === '/question');
    }
    case 'max_field_components':
      return invalid(
        `${where} has ${issue.received} field components; the limit is ${requirement}. Ask for fewer values.`,
        pointer,
        requirement,
        Number(issue.received),
      );
    case 'max_length':
      if (Array.isArray(issue.input)) {
        return invalid(
          `${where} has ${issue.input.length} ${pluralNoun(keys)}; the limit is ${requirement}.`,
          pointer,
          requirement,
          issue.input.length,
        );
      }
      return invalid(`${where} is too long; the limit is ${requirement}.`, pointer, requirement);
    case 'min_length':
      if (Array.isArray(issue.input)) {
        return invalid(`${where} ${issue.message}.`, pointer, requirement, issue.input.length);
      }
      return invalid(`${where} ${issue.message}.`, pointer);
    case 'unique_items':
      return invalid(`${where} repeats an earlier entry; entries must be unique.`, pointer);
    case 'regex':
    case 'check':
      return invalid(`${where} ${issue.message}.`, pointer);
    case 'safe_integer':
    case 'integer':
      return invalid(`${where} must be a whole number.`, pointer);
    case 'min_value':
      return invalid(`${where} must be at least ${requirement}.`, pointer, requirement);
    case 'max_value':
      return invalid(`${where} must be at most ${requirement}.`, pointer, requirement);
    case 'literal':
      return invalid(`${where} must be ${issue.expected}.`, pointer);
    case 'picklist':
    case 'variant':
    case 'field_schema':
      if (issue.expected === 'Object') return invalid(`${where} must be an object.`, pointer);
      return invalid(`${where} must be one of ${listExpected(issue.expected)}.`, pointer);
    case 'strict_object':
      if ((issue.path?.[issue.path.length - 1] as { origin?: string } | undefined)?.origin === 'key') {
        if (issue.expected === 'never') {
          return invalid(
            `${where} is not a property this tool accepts here. Remove it; allowed here: ${issue.message}.`,
            pointer,
          );
        }
        return invalid(`${where} is required.`, pointer);
      }
      return invalid(`${where} must be an object.`, pointer);
    case 'union':
      return invalid(
        `${where} has the wrong type; expected one of ${listExpected(issue.expected)}.`,
        pointer,
      );
    default: {
      const word = TYPE_WORDS[issue.type];
      if (word !== undefined) return invalid(`${where} must be ${word}.`, pointer);
      return invalid(`${where} is not valid.`, pointer);
    }
  }
}

/**
 * The document position of an issue: a present value sits at its pre-order index; a missing one
 * right after the last value inside its nearest present ancestor.
 */
function positionOf(order: DocumentOrder, keys: readonly (string | number)[]): number {
  for (let end = keys.length; end >= 0; end--) {
    const span = order.get(toPointer(keys.slice(0, end)));
    if (span !== undefined) return end === keys.length ? span.start : span.end + 0.5;
  }
  return 0;
}

/** Runs `schema` on `input`; on failure throws the error of the first issue in document order. */
function parseShape<T>(
  schema: v.GenericSchema<unknown, T>,
  input: unknown,
  base: readonly (string | number)[] = [],
): T {
  const result = v.safeParse(schema, input, { abortEarly: false, abortPipeEarly: true });
  if (result.success) return result.output;
  const issues = result.issues as unknown as AnyIssue[];
  const order = issues.length > 1 ? documentOrder(input) : undefined;
  let best: { issue: AnyIssue; keys: (string | number)[]; position: number } | undefined;
  for (const issue of issues) {
    const own = issueKeys(issue);
    const position = order === undefined ? 0 : positionOf(order, resolveIssue(issue, own).keys);
    if (best === undefined || position < best.position) best = { issue, keys: [...base, ...own], position };
  }
  throw issueToError(best!.issue, best!.keys);
}

// ---------------------------------------------------------------------------------------------
// Pass 4: consistency

function describeCount(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * Why `value` does not fit `schema`, or `undefined` when it does. The reason never repeats the
 * value itself.
 */
export function fieldValueProblem(schema: FieldSchema, value: JsonValue): string | undefined {
  switch (schema.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be a string';
      if ('enum' in schema) return schema.enum.includes(value) ? undefined : 'must be one of the enum IDs';
      const length = codePointLength(value);
      if (schema.minLength !== undefined && length < schema.minLength) {
        return `is ${describeCount(length, 'character')}; the schema needs at least ${schema.minLength}`;
      }
      if (schema.maxLength !== undefined && length > schema.maxLength) {
        return `is ${describeCount(length, 'character')}; the schema allows at most ${schema.maxLength}`;
      }
      return undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (schema.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (schema.minimum !== undefined && value < schema.minimum) return `must be at least ${schema.minimum}`;
      if (schema.maximum !== undefined && value > schema.maximum) return `must be at most ${schema.maximum}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'array': {
      if (!Array.isArray(value)) return 'must be an array of enum IDs';
      const seen = new Set<string>();
      for (const item of value) {
        if (typeof item !== 'string' || !schema.items.enum.includes(item)) return 'must hold only enum IDs';
        if (seen.has(item)) return 'repeats a choice';
        seen.add(item);
      }
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        return `has ${describeCount(value.length, 'choice')}; the schema needs at least ${schema.minItems}`;
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        return `has ${describeCount(value.length, 'choice')}; the schema allows at most ${schema.maxItems}`;
      }
      return undefined;
    }
  }
}

function checkBounds(
  min: number | undefined,
  max: number | undefined,
  maxPointer: string,
  minName: string,
): void {
  if (min !== undefined && max !== undefined && min > max) {
    throw invalid(`${maxPointer} is less than ${minName}; it must be at least ${min}.`, maxPointer);
  }
}

function checkChoices(
  ids: readonly string[],
  labels: Record<string, string> | undefined,
  enumPointer: string,
  labelsPointer: string,
): void {
  for (let index = 0; index < ids.length; index++) {
    const id = ids[index]!;
    if (labels !== undefined && Object.hasOwn(labels, id)) continue;
    const length = codePointLength(id);
    if (length > TEXT_LIMITS.unlabelledEnumId) {
      throw lengthError(`${enumPointer}/${index}`, length, TEXT_LIMITS.unlabelledEnumId);
    }
  }
  if (labels !== undefined) {
    for (const key of Object.keys(labels)) {
      if (!ids.includes(key)) {
        const pointer = `${labelsPointer}/${escapePointerToken(key)}`;
        throw invalid(
          `${pointer} labels no enum ID; every option_labels key must be one of the enum IDs.`,
          pointer,
        );
      }
    }
  }
}

/** Checks one field `schema` for internal consistency. */
function checkFieldSchema(schema: FieldSchema, pointer: string): void {
  switch (schema.type) {
    case 'string':
      if ('enum' in schema)
        checkChoices(schema.enum, schema.option_labels, `${pointer}/enum`, `${pointer}/option_labels`);
      else checkBounds(schema.minLength, schema.maxLength, `${pointer}/maxLength`, 'minLength');
      return;
    case 'number':
    case 'integer':
      checkBounds(schema.minimum, schema.maximum, `${pointer}/maximum`, 'minimum');
      return;
    case 'boolean':
      return;
    case 'array': {
      const ids = schema.items.enum;
      checkChoices(ids, schema.option_labels, `${pointer}/items/enum`, `${pointer}/option_labels`);
      checkBounds(schema.minItems, schema.maxItems, `${pointer}/maxItems`, 'minItems');
      if (schema.minItems !== undefined && schema.minItems > ids.length) {
        throw invalid(
          `${pointer}/minItems asks for more choices than there are (${ids.length}).`,
          `${pointer}/minItems`,
        );
      }
      return;
    }
  }
}

/**
 * Checks the rules of a shape-valid Surface that span values: unique field names and action IDs,
 * consistent field schemas, `multiline` only on text, prefilled values that fit. `pointer` is
 * where the Surface sits in the arguments (e.g. `/interaction`).
 */
export function checkSurfaceRules(surface: Surface, pointer: string): void {
  const names = new Set<string>();
  const components = surface.source.components;
  for (let index = 0; index < components.length; index++) {
    const component = components[index]!;
    if (component.type !== 'field') continue;
    const at = `${pointer}/source/components/${index}`;
    if (names.has(component.name)) {
      throw invalid(
        `${at}/name repeats the name of an earlier field; field names must be unique.`,
        `${at}/name`,
      );
    }
    names.add(component.name);
    const schema = component.schema;
    if (component.multiline !== undefined && !(schema.type === 'string' && !('enum' in schema))) {
      throw invalid(
        `${at}/multiline applies only to text fields ({"type":"string"} without enum).`,
        `${at}/multiline`,
      );
    }
    checkFieldSchema(schema, `${at}/schema`);
    if (component.value !== undefined) {
      const problem = fieldValueProblem(schema, component.value);
      if (problem !== undefined) throw invalid(`${at}/value ${problem}.`, `${at}/value`);
    }
  }
  const ids = new Set<string>();
  for (let index = 0; index < surface.actions.length; index++) {
    const action = surface.actions[index]!;
    if (ids.has(action.id)) {
      const at = `${pointer}/actions/${index}/id`;
      throw invalid(`${at} repeats the ID of an earlier action; action IDs must be unique.`, at);
    }
    ids.add(action.id);
  }
}

function askValueProblem(field: AskField): string | undefined {
  if (field.value === undefined) return undefined;
  switch (field.type) {
    case 'text': {
      const length = codePointLength(field.value);
      if (field.min !== undefined && length < field.min)
        return `is ${describeCount(length, 'character')}; min is ${field.min}`;
      if (field.max !== undefined && length > field.max)
        return `is ${describeCount(length, 'character')}; max is ${field.max}`;
      return undefined;
    }
    case 'number':
    case 'integer':
    case 'rating': {
      const value = field.value;
      if ((field.type === 'integer' || field.type === 'rating') && !Number.isInteger(value)) {
        return 'must be a whole number';
      }
      const min = field.type === 'rating' ? (field.min ?? 1) : field.min;
      const max = field.type === 'rating' ? (field.max ?? 5) : field.max;
      if (min !== undefined && value < min) return `must be at least ${min}`;
      if (max !== undefined && value > max) return `must be at most ${max}`;
      return undefined;
    }
    case 'boolean':
      return undefined;
    case 'choice':
      return field.options.some((option) => askOptionId(option) === field.value)
        ? undefined
        : 'must be the ID of one of the options';
    case 'multi_choice': {
      const ids = field.options.map(askOptionId);
      const seen = new Set<string>();
      for (const item of field.value) {
        if (!ids.includes(item)) return 'must hold only IDs of the options';
        if (seen.has(item)) return 'repeats a choice';
        seen.add(item);
      }
      if (field.min !== undefined && field.value.length < field.min)
        return `has fewer than min (${field.min}) choices`;
      if (field.max !== undefined && field.value.length > field.max)
        return `has more than max (${field.max}) choices`;
      return undefined;
    }
  }
}

/** Checks the rules of shape-valid `sess_ask` arguments that span values. */
export function checkAskRules(args: AskArgs): void {
  const names = new Set<string>();
  for (let index = 0; index < args.fields.length; index++) {
    const field = args.fields[index]!;
    const at = `/fields/${index}`;
    if (names.has(field.name)) {
      throw invalid(
        `${at}/name repeats the name of an earlier field; field names must be unique.`,
        `${at}/name`,
      );
    }
    names.add(field.name);
    if (field.type === 'choice' || field.type === 'multi_choice') {
      const ids = new Set<string>();
      for (let option = 0; option < field.options.length; option++) {
        const id = askOptionId(field.options[option]!);
        if (ids.has(id)) {
          const pointer =
            typeof field.options[option] === 'string'
              ? `${at}/options/${option}`
              : `${at}/options/${option}/id`;
          throw invalid(`${pointer} repeats an earlier option; option IDs must be unique.`, pointer);
        }
        ids.add(id);
      }
    }
    if (field.type !== 'boolean' && field.type !== 'choice') {
      const min = field.type === 'rating' ? (field.min ?? 1) : field.min;
      const max = field.type === 'rating' ? (field.max ?? 5) : field.max;
      if (min !== undefined && max !== undefined && min > max) {
        const pointer = field.max !== undefined ? `${at}/max` : `${at}/min`;
        throw invalid(`${pointer} makes min greater than max (${min} > ${max}).`, pointer);
      }
      if (field.type === 'integer') {
        if (field.min !== undefined && !Number.isInteger(field.min))
          throw invalid(`${at}/min must be a whole number.`, `${at}/min`);
        if (field.max !== undefined && !Number.isInteger(field.max))
          throw invalid(`${at}/max must be a whole number.`, `${at}/max`);
      }
      if (field.type === 'multi_choice' && field.min !== undefined && field.min > field.options.length) {
        throw invalid(
          `${at}/min asks for more choices than there are options (${field.options.length}).`,
          `${at}/min`,
        );
      }
    }
    const problem = askValueProblem(field);
    if (problem !== undefined) throw invalid(`${at}/value ${problem}.`, `${at}/value`);
  }
  if (args.expires_in !== undefined && args.respondents?.expires_in !== undefined) {
    throw invalid(
      '/respondents/expires_in replaces the top-level expires_in for an Ask; send only one of them.',
      '/respondents/expires_in',
    );
  }
}

/** The `sess_list` arguments that only apply to a listing, never to inspecting one `handle`. */
const LISTING_ONLY: ReadonlySet<string> = new Set(['state', 'limit', 'cursor']);

/**
 * Checks that `sess_list` with `handle` (inspect one interaction) carries no listing argument:
 * the first of `state`, `limit` and `cursor` in document order is refused. `raw` is the
 * structurally checked copy, whose keys keep the caller's order.
 */
function checkListRules(args: ListArgs, raw: unknown): void {
  if (args.handle === undefined) return;
  const given = raw as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!LISTING_ONLY.has(key) || given[key] === undefined) continue;
    throw invalid(
      `/${key} applies only to a listing; inspecting one handle takes the handle alone. Remove ${key} or handle.`,
      `/${key}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Entry

const SURFACE_TOOLS: ReadonlySet<ToolName> = new Set(['sess_request', 'sess_publish']);

/**
 * Maps `sess_ask` arguments to an ordinary Surface (question as title, `details` as text, one
 * field per ask field, one submit action labelled `submit_label` or "Send") and checks it by the
 * same rules as `sess_request`, including the 32 KiB size.
 *
 * @throws SessMcpError `INVALID_ARGUMENTS` when the built Surface breaks a rule.
 */
export function askToSurface(args: AskArgs): Surface {
  const surface = buildAskSurface(args);
  checkInteractionSize(surface, undefined);
  const checked = parseShape(SurfaceSchema, surface, ['interaction']);
  checkSurfaceRules(checked, '/interaction');
  return checked;
}

/**
 * One validated tool call: the tool, its typed arguments and, for `sess_ask`, the Surface built
 * from them (built and checked once, during validation). Switching on `tool` narrows `args`.
 */
export type ValidatedCall =
  | { tool: 'sess_request'; args: RequestArgs }
  | { tool: 'sess_response'; args: ResponseArgs }
  | { tool: 'sess_publish'; args: PublishArgs }
  | { tool: 'sess_complete'; args: CompleteArgs }
  | { tool: 'sess_ask'; args: AskArgs; surface: Surface }
  | { tool: 'sess_list'; args: ListArgs }
  | { tool: 'sess_withdraw'; args: WithdrawArgs };

/** Passes 1 and 2: the structurally checked copy of the arguments, with the interaction's size checked. */
function checkedCopy(tool: ToolName, raw: unknown): unknown {
  const input = raw === undefined ? {} : raw;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalid('The arguments must be a JSON object.', '');
  }
  const { copy } = checkStructure(input);
  if (SURFACE_TOOLS.has(tool)) {
    const interaction = (copy as { interaction?: unknown }).interaction;
    if (interaction !== undefined) checkInteractionSize(interaction, '/interaction');
  }
  return copy;
}

/**
 * Validates raw tool arguments against the contract of `tool`, as {@link parseToolArguments}
 * does, and returns them with their tool, so a caller's `switch (call.tool)` narrows the
 * arguments without a cast. For `sess_ask` the Surface the arguments map to comes along.
 *
 * @throws SessMcpError `INVALID_ARGUMENTS`, as {@link parseToolArguments}.
 */
export function validateToolCall(tool: ToolName, raw: unknown): ValidatedCall {
  if (!TOOL_NAMES.includes(tool)) throw invalid(`Unknown tool ${String(tool)}.`);
  const copy = checkedCopy(tool, raw);
  const schemas = TOOL_ARGUMENT_SCHEMAS;
  switch (tool) {
    case 'sess_request': {
      const args: RequestArgs = parseShape(schemas.sess_request, copy);
      checkSurfaceRules(args.interaction, '/interaction');
      return { tool, args };
    }
    case 'sess_publish': {
      const args: PublishArgs = parseShape(schemas.sess_publish, copy);
      checkSurfaceRules(args.interaction, '/interaction');
      return { tool, args };
    }
    case 'sess_ask': {
      const args: AskArgs = parseShape(schemas.sess_ask, copy);
      checkAskRules(args);
      return { tool, args, surface: askToSurface(args) };
    }
    case 'sess_list': {
      const args: ListArgs = parseShape(schemas.sess_list, copy);
      checkListRules(args, copy);
      return { tool, args };
    }
    case 'sess_response':
      return { tool, args: parseShape(schemas.sess_response, copy) };
    case 'sess_complete':
      return { tool, args: parseShape(schemas.sess_complete, copy) };
    case 'sess_withdraw':
      return { tool, args: parseShape(schemas.sess_withdraw, copy) };
  }
}

/**
 * Validates raw tool arguments against the contract of `tool`. Returns a fresh, typed copy; the
 * input is never modified. `undefined` counts as `{}`.
 *
 * @throws SessMcpError `INVALID_ARGUMENTS` with `field` (JSON pointer), and `limit` / `length`
 * where a limit was exceeded. Never truncates.
 *
 * @example
 * ```ts source="examples/snippets/core.examples.ts#parseToolArguments"
 * const args = parseToolArguments('sess_response', { handle: 'h_1', revision: 1 });
 * ```
 */
export function parseToolArguments<T extends ToolName>(tool: T, raw: unknown): ToolArgs[T] {
  // The union's arguments are those of `tool`; TypeScript cannot relate the two through a generic.
  return validateToolCall(tool, raw).args as ToolArgs[T];
}
