/**
 * The union-free form of a tool's input schema (`inputSchemas: 'flat'`), derived from the schema
 * `json-schema.ts` generates, for a host that rewrites unions before it validates. It only widens
 * what is accepted; validation never reads either form. Schema parts are compared by their canonical
 * JSON (`codec/canonical-json.ts`).
 */
import { canonicalJson } from '../codec/canonical-json.js';
import type { JsonSchemaObject } from './json-schema.js';

type Schema = Record<string, unknown>;

/** Keywords that only annotate: merging them never changes which values a schema accepts. */
const ANNOTATIONS = new Set(['description', 'examples', 'title', 'default']);

/** The keywords that constrain only values of one JSON type (`integer` shares `number`'s). */
const TYPE_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains'],
  object: [
    'properties',
    'required',
    'additionalProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
  ],
};
const KEYWORD_TYPE = new Map(
  Object.entries(TYPE_KEYWORDS).flatMap(([type, keywords]) => keywords.map((k) => [k, type] as const)),
);
/** Lower bounds widen to the smallest, upper bounds to the largest. */
const LOWER_BOUNDS = new Set([
  'minLength',
  'minimum',
  'exclusiveMinimum',
  'minItems',
  'minContains',
  'minProperties',
]);
const UPPER_BOUNDS = new Set([
  'maxLength',
  'maximum',
  'exclusiveMaximum',
  'maxItems',
  'maxContains',
  'maxProperties',
]);

function unique<T>(values: readonly T[]): T[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const key = canonicalJson(value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The values of a `const`/`enum`, or undefined when the schema has neither. */
function listedValues(schema: Schema): unknown[] | undefined {
  if ('const' in schema) return [schema.const];
  return Array.isArray(schema.enum) ? schema.enum : undefined;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** The JSON types a schema admits, or undefined when it admits every type. */
function typesOf(schema: Schema): string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  return listedValues(schema)?.map(jsonTypeOf);
}

/** `number` covers `integer`; one type is written as a string, several as a list. */
function typeKeyword(types: readonly string[]): string | string[] {
  const list = unique(types).filter((t) => t !== 'integer' || !types.includes('number'));
  return list.length === 1 ? list[0]! : list;
}

/** Which keyword group a type's values are checked by. */
function groupOf(type: string): string {
  return type === 'integer' ? 'number' : type;
}

/**
 * The descriptions of several variants as one: the same text once, else each text after the
 * variants it belongs to (`type "text": …`), so the model still reads which one applies.
 */
function mergedDescription(
  schemas: readonly Schema[],
  labels: readonly (string | undefined)[],
): string | undefined {
  const texts = schemas.map((s) => (typeof s.description === 'string' ? s.description : undefined));
  const distinct = unique(texts.filter((t): t is string => t !== undefined));
  if (distinct.length === 0) return undefined;
  if (distinct.length === 1 && texts.every((t) => t === distinct[0])) return distinct[0];
  if (labels.every((l) => l === undefined)) return distinct.join(' ');
  return distinct
    .map((text) => {
      const owners = unique(labels.filter((l, i) => texts[i] === text && l !== undefined));
      return owners.length === 0 ? text : `${owners.join(', ')}: ${text}`;
    })
    .join(' ');
}

function withAnnotations(
  target: Schema,
  schemas: readonly Schema[],
  labels: readonly (string | undefined)[],
): Schema {
  const description = mergedDescription(schemas, labels);
  if (description !== undefined) target.description = description;
  const examples = unique(schemas.flatMap((s) => (Array.isArray(s.examples) ? s.examples : [])));
  if (examples.length > 0) target.examples = examples;
  for (const keyword of ['title', 'default']) {
    const values = schemas.map((s) => s[keyword]);
    if (values[0] !== undefined && unique(values).length === 1) target[keyword] = values[0];
  }
  return target;
}

/**
 * The property (if any) every variant of a union gives as a `const` or `enum` and requires:
 * `type` for the Surface components, the `sess_ask` fields and the field `schema` kinds. It names
 * each variant in a merged description.
 */
function discriminatorLabels(variants: readonly Schema[]): (string | undefined)[] {
  const first = variants[0]?.properties as Record<string, Schema> | undefined;
  for (const name of Object.keys(first ?? {})) {
    const values = variants.map((variant) => {
      const property = (variant.properties as Record<string, Schema> | undefined)?.[name];
      const required = Array.isArray(variant.required) && variant.required.includes(name);
      return property === undefined || !required ? undefined : listedValues(property);
    });
    if (values.every((v) => v !== undefined)) {
      return values.map((v) => `${name} ${v!.map((x) => JSON.stringify(x)).join(' or ')}`);
    }
  }
  return variants.map(() => undefined);
}

/** The object keywords of several object schemas as one that accepts every object each accepts. */
function mergeObjects(
  objects: readonly Schema[],
  labels: readonly (string | undefined)[],
  out: Schema,
): void {
  const propertiesOf = (s: Schema) => (s.properties ?? {}) as Record<string, Schema>;
  const names = unique(objects.flatMap((s) => Object.keys(propertiesOf(s))));
  const properties: Record<string, Schema> = {};
  for (const name of names) {
    const parts: Schema[] = [];
    const partLabels: (string | undefined)[] = [];
    objects.forEach((s, i) => {
      const own = propertiesOf(s)[name];
      // A variant without the property takes it as one of its additional properties.
      const extra = s.additionalProperties;
      const part = own ?? (extra === false ? undefined : extra === undefined || extra === true ? {} : extra);
      if (part === undefined) return;
      parts.push(part as Schema);
      partLabels.push(labels[i]);
    });
    // The discriminator's own description needs no labels: its values say which variant it is.
    const own = parts.every((p) => listedValues(p) !== undefined);
    properties[name] = mergeSchemas(parts, own ? parts.map(() => undefined) : partLabels);
  }
  if (names.length > 0) out.properties = properties;
  const required = names.filter((name) =>
    objects.every((s) => Array.isArray(s.required) && s.required.includes(name)),
  );
  if (required.length > 0) out.required = required;
  const extra = objects.map((s) => s.additionalProperties);
  if (extra.every((e) => e === false)) out.additionalProperties = false;
  else if (extra.every((e) => e !== undefined && e !== true)) {
    const open = extra.filter((e) => e !== false) as Schema[];
    out.additionalProperties = mergeSchemas(
      open,
      open.map(() => undefined),
    );
  }
  for (const keyword of ['propertyNames', 'minProperties', 'maxProperties']) {
    const values = objects.map((s) => s[keyword]);
    if (values[0] !== undefined && unique(values).length === 1) out[keyword] = values[0];
  }
}

/**
 * One schema, without a union, that accepts every value any of `schemas` accepts (each already
 * union-free): equal schemas stay; `const`s and `enum`s become one `enum`; otherwise the `type`
 * lists are merged, each type keeps the keywords of the variants that admit it (bounds widen to
 * the loosest, objects merge property by property, `items` merge), and a keyword the variants do
 * not share is dropped, which only widens what is accepted.
 */
function mergeSchemas(schemas: readonly Schema[], labels: readonly (string | undefined)[]): Schema {
  if (schemas.length === 1 || unique(schemas).length === 1) return schemas[0]!;
  const out: Schema = {};
  const constraining = (s: Schema) => Object.keys(s).some((k) => !ANNOTATIONS.has(k));
  if (!schemas.every(constraining)) return withAnnotations(out, schemas, labels);
  const listed = schemas.map(listedValues);
  const onlyListed = schemas.every((s) =>
    Object.keys(s).every((k) => k === 'const' || k === 'enum' || k === 'type' || ANNOTATIONS.has(k)),
  );
  const types = schemas.map(typesOf);
  if (types.some((t) => t === undefined)) return withAnnotations(out, schemas, labels);
  const all = (types as string[][]).flat();
  out.type = typeKeyword(all);
  if (listed.every((v) => v !== undefined)) {
    out.enum = unique(listed.flat());
    if (onlyListed) return withAnnotations(out, schemas, labels);
  }
  for (const group of unique(all.map(groupOf))) {
    const admitting = schemas.filter((_, i) => types[i]!.some((t) => groupOf(t) === group));
    const admittingLabels = labels.filter((_, i) => types[i]!.some((t) => groupOf(t) === group));
    if (group === 'object') {
      mergeObjects(admitting, discriminatorLabelsOr(admitting, admittingLabels), out);
      continue;
    }
    for (const keyword of TYPE_KEYWORDS[group] ?? []) {
      const values = admitting.map((s) => s[keyword]);
      if (values.some((v) => v === undefined)) continue;
      if (unique(values).length === 1) out[keyword] = values[0];
      else if (keyword === 'items')
        out.items = mergeSchemas(
          values as Schema[],
          values.map(() => undefined),
        );
      else if (LOWER_BOUNDS.has(keyword)) out[keyword] = Math.min(...(values as number[]));
      else if (UPPER_BOUNDS.has(keyword)) out[keyword] = Math.max(...(values as number[]));
    }
  }
  // Any other keyword (`not`, …) applies to every type: kept only when every variant has it alike.
  const others = unique(schemas.flatMap((s) => Object.keys(s))).filter(
    (k) => !ANNOTATIONS.has(k) && !KEYWORD_TYPE.has(k) && !['type', 'const', 'enum'].includes(k),
  );
  for (const keyword of others) {
    const values = schemas.map((s) => s[keyword]);
    if (values[0] !== undefined && unique(values).length === 1) out[keyword] = values[0];
  }
  return withAnnotations(out, schemas, labels);
}

/** The labels of a union of objects: its discriminator's when it has one, else the given ones. */
function discriminatorLabelsOr(
  objects: readonly Schema[],
  given: readonly (string | undefined)[],
): (string | undefined)[] {
  const own = discriminatorLabels(objects);
  return own.every((l) => l === undefined) ? [...given] : own;
}

function flattenNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(flattenNode);
  if (node === null || typeof node !== 'object') return node;
  const schema: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) schema[key] = flattenNode(value);
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (!Array.isArray(union)) return schema;
  const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
  const merged = mergeSchemas(union, discriminatorLabels(union));
  for (const [key, value] of Object.entries(rest)) {
    // A keyword beside the union applies too: the generated schemas only put annotations there.
    if (!ANNOTATIONS.has(key) && key in merged && canonicalJson(merged[key]) !== canonicalJson(value)) {
      throw new Error(`flattenUnions: "${key}" beside a union differs from the merged union.`);
    }
    merged[key] = value;
  }
  return merged;
}

/**
 * `schema` without any `anyOf` or `oneOf`, for a host that rewrites unions before it validates
 * (LangChain.js's `@langchain/mcp-adapters` 1.1 merges the variants of each union, so a later
 * variant's `type` replaces an earlier one's). Each union becomes one schema that accepts every
 * value one of its variants accepts: the properties of object variants are merged (a `const`
 * discriminator such as `type` becomes one `enum` of every variant's value, `required` keeps what
 * every variant requires, `additionalProperties: false` stays only when every variant is closed),
 * other variants merge their `type` lists, and a keyword the variants do not share is dropped.
 * A description that differs between variants is kept per variant, after its discriminator
 * (`type "text": …`).
 *
 * The result accepts more than the exact schema, never less; the server validates every call
 * against the exact rules either way. Returns a new schema; `schema` is not changed.
 */
export function flattenUnions(schema: JsonSchemaObject): JsonSchemaObject {
  return flattenNode(schema) as JsonSchemaObject;
}
