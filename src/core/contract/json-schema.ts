/**
 * The JSON Schema of each tool's input as `tools/list` publishes it, generated from the valibot
 * schemas in `schemas.ts` with `@valibot/to-json-schema` (draft 2020-12), so the published schema
 * and the validator cannot drift.
 *
 * Only what valibot cannot say is added here: code-point `maxLength` for the custom length action,
 * `uniqueItems`, `contains`/`maxContains` for the field cap, the field-schema `anyOf`, the shapes a
 * field `value` can take (string, number, boolean, array of strings; no `$ref`), and a
 * `propertyNames` guard against unsafe keys on every open object (records, free-form values). Depth and the 32 KiB size, and the
 * rules that span values (`validate.ts`, pass 4), are not expressible and are enforced only by
 * `parseToolArguments`.

 * The union-free form some hosts need (`inputSchemas: 'flat'`) is derived from this one in
 * `flat-schema.ts`.
 */
import { type ConversionConfig, type JsonSchema, toJsonSchema } from '@valibot/to-json-schema';
import { RESERVED_NAMES, UNSAFE_KEYS } from './limits.js';
import {
  type FieldSchemaDispatch,
  JsonValueSchema,
  RESERVED_NAME_CHECK,
  TOOL_ARGUMENT_SCHEMAS,
  type ToolName,
} from './schemas.js';

/** A JSON Schema whose root is an object, as MCP's `inputSchema` requires. */
export interface JsonSchemaObject {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [keyword: string]: unknown;
}

const FIELD_COMPONENT_MATCH = {
  type: 'object',
  properties: { type: { const: 'field' } },
  required: ['type'],
};

const VALUE_SHAPES: readonly JsonSchema[] = [
  { type: 'string' },
  { type: 'number' },
  { type: 'boolean' },
  { type: 'array', items: { type: 'string' } },
];

const config: ConversionConfig = {
  target: 'draft-2020-12',
  overrideAction({ valibotAction, jsonSchema }) {
    const action = valibotAction as { type: string; requirement?: unknown };
    switch (action.type) {
      case 'max_code_points':
        // JSON Schema counts `maxLength` in code points, exactly like the custom action.
        return { ...jsonSchema, maxLength: action.requirement as number };
      case 'unique_items':
        return { ...jsonSchema, uniqueItems: true };
      case 'max_field_components':
        return {
          ...jsonSchema,
          contains: FIELD_COMPONENT_MATCH,
          minContains: 0,
          maxContains: action.requirement as number,
        } as JsonSchema;
      case 'check':
        // Two checks exist: reserved machine names, and the unsafe-key check of free-form keys.
        if (valibotAction === RESERVED_NAME_CHECK)
          return { ...jsonSchema, not: { enum: [...RESERVED_NAMES] } };
        return { ...jsonSchema, not: { enum: [...UNSAFE_KEYS] } };
      default:
        return undefined;
    }
  },
  overrideSchema({ valibotSchema, jsonSchema }) {
    if (valibotSchema === JsonValueSchema) {
      // A field `value` is typed as any JSON value, but only these shapes can fit a field schema
      // (pass 4 checks which). Publishing them keeps the schema free of `$ref`, which some hosts
      // do not resolve; anything else is refused by both sides.
      return { anyOf: [...VALUE_SHAPES] };
    }
    if ((valibotSchema as { type: string }).type !== 'field_schema') return undefined;
    const options = (valibotSchema as unknown as FieldSchemaDispatch).options;
    return { ...jsonSchema, anyOf: options.map((option) => stripDialect(toJsonSchema(option, config))) };
  },
};

function stripDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema as JsonSchema & { $schema?: string };
  return rest;
}

/** Adds `propertyNames: { not: { enum: UNSAFE_KEYS } }` to every open object schema, in place. */
function guardKeys(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) guardKeys(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  for (const value of Object.values(schema)) guardKeys(value);
  // A closed object (`additionalProperties: false`) already refuses every key it does not name.
  if (schema.type === 'object' && schema.additionalProperties !== false) {
    const names = schema.propertyNames as Record<string, unknown> | undefined;
    if (names === undefined) schema.propertyNames = { not: { enum: [...UNSAFE_KEYS] } };
    else if (names.not === undefined) names.not = { enum: [...UNSAFE_KEYS] };
  }
}

/**
 * The JSON Schema (draft 2020-12, without `$schema`) of `tool`'s arguments, freshly built.
 * For example, `toolInputJsonSchema('sess_response')` is `{ type: 'object', properties: { handle, … } }`,
 * the `inputSchema` that `TOOL_DEFINITIONS` publishes for that tool.
 */
export function toolInputJsonSchema(tool: ToolName): JsonSchemaObject {
  const schema = stripDialect(
    toJsonSchema(TOOL_ARGUMENT_SCHEMAS[tool], config),
  ) as unknown as JsonSchemaObject;
  // The converter registers a definition for every lazy schema, even one that is overridden; its
  // own body refers to itself, so only references outside `$defs` count.
  if (schema.$defs !== undefined && !JSON.stringify({ ...schema, $defs: undefined }).includes('"$ref"')) {
    delete schema.$defs;
  }
  guardKeys(schema);
  return schema;
}
