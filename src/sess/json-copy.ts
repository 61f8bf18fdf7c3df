/**
 * Valibot schemas for JSON whose object keys come from a person or an agent (answer values, JSON
 * values, record fields, option labels): they decode into null-prototype copies that keep every
 * own key, `__proto__`, `constructor` and `prototype` included, which a plain object would turn
 * into a prototype change and valibot's `record` silently drops. So what a receipt digests is
 * exactly what was sent, and nothing reaches `Object.prototype`.
 *
 * It knows no wire member (`wire.ts` uses these schemas) and does no I/O.
 */
import * as v from 'valibot';
import type { JsonValue } from '../core/model/surface.js';

/** How deep a decoded JSON value may nest (deeper is refused, not a stack overflow). */
const MAX_JSON_DEPTH = 256;

/** What the copying functions return for a value that is not JSON. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of a JSON value (found at nesting `depth`) whose objects have a null prototype and every
 * own key, or {@link NOT_JSON}.
 */
export function copyJson(value: unknown, depth: number): JsonValue | typeof NOT_JSON {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : NOT_JSON;
    case 'object': {
      if (value === null) return null;
      if (depth >= MAX_JSON_DEPTH) return NOT_JSON;
      if (Array.isArray(value)) {
        const items: JsonValue[] = [];
        for (const item of value) {
          const copied = copyJson(item, depth + 1);
          if (copied === NOT_JSON) return NOT_JSON;
          items.push(copied);
        }
        return items;
      }
      if (!isPlainObject(value)) return NOT_JSON;
      const copied = copyMap(value, (member) => copyJson(member, depth + 1));
      return copied;
    }
    default:
      return NOT_JSON;
  }
}

/**
 * A null-prototype copy of a plain object with every own key (`__proto__` included, which a
 * plain object or valibot's `record` would lose), each value through `member`; {@link NOT_JSON}
 * when any member is.
 */
function copyMap<T>(
  value: Record<string, unknown>,
  member: (value: unknown) => T | typeof NOT_JSON,
): Record<string, T> | typeof NOT_JSON {
  const out = Object.create(null) as Record<string, T>;
  for (const key of Object.keys(value)) {
    const copied = member(value[key]);
    if (copied === NOT_JSON) return NOT_JSON;
    out[key] = copied;
  }
  return out;
}

/** A schema that reads with `read` (a copy, or {@link NOT_JSON}) and reports `message` when it fails. */
function copying<T>(
  read: (value: unknown) => T | typeof NOT_JSON,
  message: string,
): v.GenericSchema<unknown, T> {
  return v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const copied = read(dataset.value);
      if (copied === NOT_JSON) {
        addIssue({ message });
        return NEVER;
      }
      return copied;
    }),
  ) as unknown as v.GenericSchema<unknown, T>;
}

/**
 * A null-prototype copy of a plain object whose every member `member` accepts (all keys kept), or
 * {@link NOT_JSON}: what {@link keyedMap} decodes.
 */
export function copyKeyedMap<T>(
  value: unknown,
  member: (value: unknown) => T | typeof NOT_JSON,
): Record<string, T> | typeof NOT_JSON {
  return isPlainObject(value) ? copyMap(value, member) : NOT_JSON;
}

/** A map from any string key (all kept, null prototype) to values `member` accepts. */
export function keyedMap<T>(member: (value: unknown) => T | typeof NOT_JSON, message: string) {
  return copying((value) => copyKeyedMap(value, member), message);
}

/** Any JSON value; its objects decode with a null prototype and every key. */
export const JsonValueSchema: v.GenericSchema<unknown, JsonValue> = copying(
  (value) => copyJson(value, 0),
  'not a JSON value',
);

export const isString = (value: unknown) => (typeof value === 'string' ? value : NOT_JSON);
export const isScalar = (value: unknown) =>
  typeof value === 'string' ||
  typeof value === 'boolean' ||
  value === null ||
  (typeof value === 'number' && Number.isFinite(value))
    ? (value as string | number | boolean | null)
    : NOT_JSON;
