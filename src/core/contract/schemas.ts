/**
 * The valibot schemas of the tools of `sess-mcp-tools/6`: one closed schema per tool, the
 * Surface schema (whose output is exactly the `Surface` type of `surface.ts`) and the `sess_ask`
 * field schemas. The JSON Schema published in `tools/list` is generated from these same objects
 * (`json-schema.ts`), and the descriptions person-read fields carry live here.
 *
 * These schemas check shape and per-value limits only. Rules that span values (unique names,
 * `min` ≤ `max`, option labels naming enum IDs, a prefilled value fitting its schema), unsafe keys,
 * depth and byte size are checked by `validate.ts`, which is the only entry callers should use.
 * The custom valibot actions are `schema-actions.ts`; the argument types are `tool-args.ts`
 * (re-exported here).
 */
import * as v from 'valibot';
import { LIST_STATES } from '../model/record.js';
import type { FieldSchema, JsonValue, Surface } from '../model/surface.js';
import {
  ARGUMENT_LIMITS,
  isReservedName,
  isUnsafeKey,
  RESERVED_NAME_MESSAGE,
  STRUCTURE_LIMITS,
  TEXT_LIMITS,
} from './limits.js';
import {
  type MaxCodePointsAction,
  type MaxCodePointsIssue,
  type MaxFieldComponentsAction,
  type MaxFieldComponentsIssue,
  maxCodePoints,
  maxFieldComponents,
  noArrays,
  type UniqueStringsAction,
  type UniqueStringsIssue,
  uniqueStrings,
} from './schema-actions.js';
import type { ToolArgs, ToolName } from './tool-args.js';

export type {
  AskArgs,
  AskBooleanField,
  AskChoiceField,
  AskField,
  AskFieldBase,
  AskFieldType,
  AskMultiChoiceField,
  AskNumberField,
  AskOption,
  AskRatingField,
  AskRespondentsArgs,
  AskTextField,
  CompleteArgs,
  ListArgs,
  PublishArgs,
  RequestArgs,
  ResponseArgs,
  ToolArgs,
  ToolName,
  WithdrawArgs,
} from './tool-args.js';
export { TOOL_NAMES } from './tool-args.js';
// The custom actions and the argument types are part of this module's surface, as before.
export type {
  MaxCodePointsAction,
  MaxCodePointsIssue,
  MaxFieldComponentsAction,
  MaxFieldComponentsIssue,
  UniqueStringsAction,
  UniqueStringsIssue,
};
export { maxCodePoints, maxFieldComponents, uniqueStrings };

// ---------------------------------------------------------------------------------------------
// Building blocks

/** A closed object: unknown properties and arrays are refused; its issues name the allowed properties. */
function closed<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  // The message lists the allowed properties; `validate.ts` puts it into the refusal.
  return noArrays(v.strictObject(entries, Object.keys(entries).join(', ')));
}

/** A free-form object with checked keys and values; arrays are refused. */
function record<
  TKey extends v.GenericSchema<string, string | number | symbol>,
  TValue extends v.GenericSchema,
>(key: TKey, value: TValue) {
  return noArrays(v.record(key, value));
}

/** A non-empty string of at most `limit` code points, described for the person-read schema. */
function personText(limit: number, description: string, examples: readonly string[]) {
  return v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    maxCodePoints(limit),
    v.description(description),
    v.examples(examples),
  );
}

/** A possibly empty string of at most `limit` code points. */
function optionalPersonText(limit: number, description: string, examples: readonly string[]) {
  return v.pipe(v.string(), maxCodePoints(limit), v.description(description), v.examples(examples));
}

const NAME_MESSAGE = `may contain only letters, digits, "_", "." and "-" (at most ${ARGUMENT_LIMITS.maxNameLength})`;
const NAME_REGEX = /^[A-Za-z0-9_.-]+$/;

/** Refuses a {@link RESERVED_NAMES} name; `json-schema.ts` publishes it as `not: { enum }`. */
export const RESERVED_NAME_CHECK = v.check((name: string) => !isReservedName(name), RESERVED_NAME_MESSAGE);

/** A machine name: a field `name` or an action `id`. */
function machineName(description: string, examples: readonly string[]) {
  return v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    maxCodePoints(ARGUMENT_LIMITS.maxNameLength),
    v.regex(NAME_REGEX, NAME_MESSAGE),
    RESERVED_NAME_CHECK,
    v.description(description),
    v.examples(examples),
  );
}

const ID_REGEX = /^[A-Za-z0-9._:-]+$/;
const ID_MESSAGE = `may contain only letters, digits, ".", "_", ":" and "-" (at most ${ARGUMENT_LIMITS.maxIdLength})`;

/** An opaque identifier returned by an earlier call: a handle or a response event ID. */
function opaqueId(description: string) {
  return v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    maxCodePoints(ARGUMENT_LIMITS.maxIdLength),
    v.regex(ID_REGEX, ID_MESSAGE),
    v.description(description),
  );
}

/** A whole number of at least `min` (a JSON Schema `integer`). */
function wholeNumber(min: number, description?: string) {
  const base = v.pipe(v.number(), v.integer(), v.minValue(min));
  return description === undefined ? base : v.pipe(base, v.description(description));
}

/** A whole number from `min` to `max`. */
function boundedWholeNumber(min: number, max: number, description?: string) {
  const base = v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
  return description === undefined ? base : v.pipe(base, v.description(description));
}

/** A key of a free-form object: never `__proto__`, `constructor` or `prototype`. */
const SafeKeySchema = v.pipe(
  v.string(),
  v.check((key) => !isUnsafeKey(key), 'is an unsafe key'),
);

/** Any JSON value; its keys are checked like every other key. Used for a field's `value`. */
export const JsonValueSchema: v.GenericSchema<JsonValue> = v.lazy(() => jsonValueUnion());

let jsonValueCache: v.GenericSchema<JsonValue> | undefined;

// Built once: `v.lazy` calls its getter on every run.
function jsonValueUnion(): v.GenericSchema<JsonValue> {
  jsonValueCache ??= v.union([
    v.string(),
    v.number(),
    v.boolean(),
    v.null(),
    v.array(JsonValueSchema),
    record(SafeKeySchema, JsonValueSchema),
  ]);
  return jsonValueCache;
}

// ---------------------------------------------------------------------------------------------
// Field schema subset

const optionLabelsSchema = v.pipe(
  record(
    v.pipe(v.string(), v.minLength(1, 'must not be empty')),
    personText(
      TEXT_LIMITS.optionLabel,
      `What the person sees for this choice. Short, at most ${TEXT_LIMITS.optionLabel} characters.`,
      ['Tomorrow morning'],
    ),
  ),
  v.description(
    `Labels shown for enum IDs, keyed by ID. Each label at most ${TEXT_LIMITS.optionLabel} characters. ` +
      `An ID without a label is shown as-is and is then held to ${TEXT_LIMITS.unlabelledEnumId} characters. ` +
      'Example: {"am": "Morning", "pm": "Afternoon"}.',
  ),
);

const enumIdsSchema = v.pipe(
  v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  v.minLength(1, 'needs at least one choice'),
  uniqueStrings(),
  v.description('The choice IDs, unique and non-empty; the answer carries the chosen ID(s).'),
);

const nonNegativeWhole = () => wholeNumber(0);

/** `{ type: 'string', minLength?, maxLength? }`: free text (`multiline` on the component). */
export const StringFieldSchemaSchema = closed({
  type: v.literal('string'),
  minLength: v.optional(nonNegativeWhole()),
  maxLength: v.optional(nonNegativeWhole()),
});

/** `{ type: 'string', enum, option_labels? }`: one choice. */
export const ChoiceFieldSchemaSchema = closed({
  type: v.literal('string'),
  enum: enumIdsSchema,
  option_labels: v.optional(optionLabelsSchema),
});

/** `{ type: 'number' | 'integer', minimum?, maximum? }`. */
export const NumberFieldSchemaSchema = closed({
  type: v.picklist(['number', 'integer']),
  minimum: v.optional(v.number()),
  maximum: v.optional(v.number()),
});

/** `{ type: 'boolean' }`. */
export const BooleanFieldSchemaSchema = closed({ type: v.literal('boolean') });

/** `{ type: 'array', items: { type: 'string', enum }, option_labels?, minItems?, maxItems?, uniqueItems? }`. */
export const MultiChoiceFieldSchemaSchema = closed({
  type: v.literal('array'),
  items: closed({ type: v.literal('string'), enum: enumIdsSchema }),
  option_labels: v.optional(optionLabelsSchema),
  minItems: v.optional(nonNegativeWhole()),
  maxItems: v.optional(nonNegativeWhole()),
  uniqueItems: v.optional(v.literal(true)),
});

/** `{ type: 'integer', format: 'rating', minimum, maximum }` within 0..10. */
export const RatingFieldSchemaSchema = closed({
  type: v.literal('integer'),
  format: v.literal('rating'),
  minimum: boundedWholeNumber(ARGUMENT_LIMITS.minRating, ARGUMENT_LIMITS.maxRating),
  maximum: boundedWholeNumber(ARGUMENT_LIMITS.minRating, ARGUMENT_LIMITS.maxRating),
});

const FIELD_SCHEMA_OPTIONS = [
  StringFieldSchemaSchema,
  ChoiceFieldSchemaSchema,
  NumberFieldSchemaSchema,
  BooleanFieldSchemaSchema,
  MultiChoiceFieldSchemaSchema,
  RatingFieldSchemaSchema,
] as const;

type FieldSchemaOption = (typeof FIELD_SCHEMA_OPTIONS)[number];

/** The issue of {@link FieldSchemaSchema} when `schema.type` names no supported kind. */
export interface FieldSchemaTypeIssue extends v.BaseIssue<unknown> {
  readonly kind: 'schema';
  readonly type: 'field_schema';
}

/**
 * A field's `schema`: picks exactly one of the supported kinds from `type` (and the presence of
 * `enum` / `format`), so an error names the offending property rather than a failed union. In
 * JSON Schema it is the `anyOf` of its `options`.
 */
export interface FieldSchemaDispatch
  extends v.BaseSchema<
    v.InferInput<FieldSchemaOption>,
    v.InferOutput<FieldSchemaOption>,
    v.InferIssue<FieldSchemaOption> | FieldSchemaTypeIssue
  > {
  readonly type: 'field_schema';
  readonly reference: () => FieldSchemaDispatch;
  readonly options: typeof FIELD_SCHEMA_OPTIONS;
}

function hasOwn(object: object, key: string): boolean {
  return Object.hasOwn(object, key);
}

function selectFieldSchema(input: Record<string, unknown>): FieldSchemaOption | undefined {
  switch (input.type) {
    case 'string':
      return hasOwn(input, 'enum') ? ChoiceFieldSchemaSchema : StringFieldSchemaSchema;
    case 'number':
      return NumberFieldSchemaSchema;
    case 'integer':
      return hasOwn(input, 'format') ? RatingFieldSchemaSchema : NumberFieldSchemaSchema;
    case 'boolean':
      return BooleanFieldSchemaSchema;
    case 'array':
      return MultiChoiceFieldSchemaSchema;
    default:
      return undefined;
  }
}

function fieldSchemaDispatch(): FieldSchemaDispatch {
  return v._standardSchema<FieldSchemaDispatch>({
    kind: 'schema',
    type: 'field_schema',
    reference: fieldSchemaDispatch,
    expects: 'Object',
    async: false,
    options: FIELD_SCHEMA_OPTIONS,
    '~run'(dataset, config) {
      const input = dataset.value;
      if (input === null || typeof input !== 'object' || Array.isArray(input)) {
        v._addIssue(this, 'type', dataset, config);
        return dataset as unknown as v.OutputDataset<FieldSchema, FieldSchemaTypeIssue>;
      }
      const record = input as Record<string, unknown>;
      const option = selectFieldSchema(record);
      if (option === undefined) {
        v._addIssue(this, 'type', dataset, config, {
          input: record.type,
          expected: '"string" | "number" | "integer" | "boolean" | "array"',
          path: [{ type: 'object', origin: 'value', input: record, key: 'type', value: record.type }],
        });
        return dataset as unknown as v.OutputDataset<FieldSchema, FieldSchemaTypeIssue>;
      }
      return option['~run'](dataset, config) as v.OutputDataset<FieldSchema, FieldSchemaTypeIssue>;
    },
  });
}

/** The supported field `schema` subset (see `docs/tools.md`). */
export const FieldSchemaSchema = v.pipe(
  fieldSchemaDispatch(),
  v.description(
    'The answer type, a small JSON Schema subset: {"type":"string","minLength"?,"maxLength"?} (text; ' +
      'set "multiline" on the field for several lines), {"type":"number"|"integer","minimum"?,"maximum"?}, ' +
      '{"type":"boolean"}, {"type":"string","enum":[ids],"option_labels"?:{id:label}} (one choice), ' +
      '{"type":"array","items":{"type":"string","enum":[ids]},"option_labels"?,"minItems"?,"maxItems"?,"uniqueItems"?:true} ' +
      '(several choices), {"type":"integer","format":"rating","minimum":1,"maximum":5} (a rating within 0..10).',
  ),
);

// ---------------------------------------------------------------------------------------------
// Surface

/** A `heading` component. */
export const HeadingComponentSchema = closed({
  type: v.literal('heading'),
  text: personText(
    TEXT_LIMITS.heading,
    `A short section heading, at most ${TEXT_LIMITS.heading} characters.`,
    ['What changed'],
  ),
});

/** A `text` component. */
export const TextComponentSchema = closed({
  type: v.literal('text'),
  text: personText(
    TEXT_LIMITS.text,
    `Plain paragraphs the person reads before answering; line breaks are kept, no Markdown. ` +
      `Summarise rather than paste raw output. At most ${TEXT_LIMITS.text} characters.`,
    ['The build passed. Two files change; the greeting now uses the first name.'],
  ),
});

const RecordValueSchema = v.union([
  v.pipe(v.string(), maxCodePoints(TEXT_LIMITS.recordValue)),
  v.number(),
  v.boolean(),
  v.null(),
]);

/** A `record` component: a caption and a key/value list. */
export const RecordComponentSchema = closed({
  type: v.literal('record'),
  label: v.optional(
    optionalPersonText(
      TEXT_LIMITS.recordCaption,
      `A caption of a few words above the list, at most ${TEXT_LIMITS.recordCaption} characters.`,
      ['What changed'],
    ),
  ),
  fields: v.pipe(
    record(
      v.pipe(v.string(), v.minLength(1, 'must not be empty'), maxCodePoints(TEXT_LIMITS.recordKey)),
      RecordValueSchema,
    ),
    v.description(
      `Key/value lines shown as written. Keys at most ${TEXT_LIMITS.recordKey} characters, string values ` +
        `at most ${TEXT_LIMITS.recordValue}; values may also be numbers, true/false or null. ` +
        'Example: {"src/greeting.js": "Greeting now uses the first name"}.',
    ),
  ),
});

/** A `field` component: an input the person fills in. */
export const FieldComponentSchema = closed({
  type: v.literal('field'),
  name: machineName(
    'The key of this value in the answer. Unique within the Surface; letters, digits, "_", "." and "-".',
    ['message'],
  ),
  label: personText(
    TEXT_LIMITS.fieldLabel,
    `What the person is asked for, short, at most ${TEXT_LIMITS.fieldLabel} characters.`,
    ['Commit message'],
  ),
  description: v.optional(
    optionalPersonText(
      TEXT_LIMITS.help,
      `One hint under the label, at most ${TEXT_LIMITS.help} characters.`,
      ['Edit the message if you like; the first line is the summary.'],
    ),
  ),
  multiline: v.optional(
    v.pipe(
      v.boolean(),
      v.description('Text fields only: true shows a multi-line box; line breaks are kept.'),
    ),
  ),
  required: v.optional(
    v.pipe(v.boolean(), v.description('true: the person must fill this in before submitting.')),
  ),
  schema: FieldSchemaSchema,
  value: v.optional(
    v.pipe(
      JsonValueSchema,
      v.description("A prefilled value the person can change. It must fit the field's schema."),
    ),
  ),
});

/** One component of a Surface. */
export const SurfaceComponentSchema = noArrays(
  v.variant('type', [
    HeadingComponentSchema,
    TextComponentSchema,
    RecordComponentSchema,
    FieldComponentSchema,
  ]),
);

/** A button at the bottom of the page. */
export const SurfaceActionSchema = closed({
  id: machineName('The ID the answer carries as `action`. Unique within the Surface.', ['approve']),
  label: personText(
    TEXT_LIMITS.buttonLabel,
    `The button text: a verb, 1–3 words, at most ${TEXT_LIMITS.buttonLabel} characters.`,
    ['Approve and commit'],
  ),
  intent: v.pipe(
    v.picklist(['submit', 'approve', 'reject']),
    v.description('What the button means: "submit" (send the answers), "approve" or "reject".'),
  ),
});

/**
 * The interactive Surface an agent sends as `interaction`; its output is exactly `Surface`. Typed
 * by that output, so a consumer's compiler never expands valibot's types of the whole Surface.
 */
export const SurfaceSchema: v.GenericSchema<unknown, Surface> = v.pipe(
  closed({
    mode: v.literal('interactive'),
    title: personText(
      TEXT_LIMITS.title,
      `The question or task at the top of the page, about 40 characters, at most ${TEXT_LIMITS.title}.`,
      ['Approve this commit?'],
    ),
    description: v.optional(
      optionalPersonText(
        TEXT_LIMITS.description,
        `One or two sentences under the title, at most ${TEXT_LIMITS.description} characters.`,
        ['I will commit with the message you approve.'],
      ),
    ),
    source: closed({
      kind: v.literal('sess_surface'),
      components: v.pipe(
        v.array(SurfaceComponentSchema),
        maxFieldComponents(STRUCTURE_LIMITS.maxFields),
        v.description(
          `The page content in order: "heading", "text", "record" and "field" components; at most ` +
            `${STRUCTURE_LIMITS.maxFields} fields.`,
        ),
      ),
    }),
    actions: v.pipe(
      v.array(SurfaceActionSchema),
      v.minLength(STRUCTURE_LIMITS.minActions, 'needs at least one action'),
      v.maxLength(STRUCTURE_LIMITS.maxActions),
      v.description(`The buttons, 1 to ${STRUCTURE_LIMITS.maxActions}, with unique IDs.`),
    ),
  }),
  v.description(
    'The Sess interactive Surface the person sees on their phone. At most 32 KiB as JSON; keep every ' +
      'text short (see each property).',
  ),
);

// ---------------------------------------------------------------------------------------------
// Tools

const expiresIn = () =>
  wholeNumber(
    ARGUMENT_LIMITS.minExpiresIn,
    `Advanced: how long the link stays open, in whole seconds from creation, at least ${ARGUMENT_LIMITS.minExpiresIn}. ` +
      'Sess checks the ceiling of your plan. Leave it out for the default.',
  );

const handle = () => opaqueId('The `handle` returned by sess_request or sess_ask, exactly as returned.');

/** `sess_request` arguments. */
export const RequestArgsSchema = closed({
  interaction: SurfaceSchema,
  expires_in: v.optional(expiresIn()),
});

/** `sess_response` arguments. */
export const ResponseArgsSchema = closed({
  handle: handle(),
  revision: wholeNumber(
    ARGUMENT_LIMITS.minRevision,
    'The `interaction.revision` of the latest result for this handle.',
  ),
  wait_ms: v.optional(
    boundedWholeNumber(
      0,
      ARGUMENT_LIMITS.maxWaitMs,
      `How long to wait for an answer, 0–${ARGUMENT_LIMITS.maxWaitMs} ms (default and ceiling ${ARGUMENT_LIMITS.maxWaitMs}). 0 reads once.`,
    ),
  ),
});

/** `sess_publish` arguments. */
export const PublishArgsSchema = closed({
  handle: handle(),
  expected_revision: wholeNumber(
    ARGUMENT_LIMITS.minRevision,
    'The revision of the answered result (`interaction.revision`).',
  ),
  response_event_id: opaqueId('The `interaction.response.eventId` of the answer you are following up.'),
  interaction: SurfaceSchema,
});

/** `sess_complete` arguments. */
export const CompleteArgsSchema = closed({
  handle: handle(),
  expected_revision: wholeNumber(
    ARGUMENT_LIMITS.minRevision,
    'The revision of the answered result (`interaction.revision`).',
  ),
  response_event_id: opaqueId('The `interaction.response.eventId` of the answer you acted on.'),
});

// -- sess_ask

const askOptionLabel = (description: string) =>
  personText(TEXT_LIMITS.optionLabel, description, ['Tomorrow morning']);

/** One option of a `choice` / `multi_choice` ask field: a label, or `{ id, label }`. */
export const AskOptionSchema = v.union([
  askOptionLabel(
    `A choice; the text is both what the person sees and what the answer carries. At most ${TEXT_LIMITS.optionLabel} characters.`,
  ),
  closed({
    id: v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.description('What the answer carries for this choice; may be long.'),
    ),
    label: askOptionLabel(`What the person sees, at most ${TEXT_LIMITS.optionLabel} characters.`),
  }),
]);

const askOptions = () =>
  v.pipe(
    v.array(AskOptionSchema),
    v.minLength(1, 'needs at least one option'),
    v.description('The choices, as labels ("Morning") or {"id","label"} objects; IDs must be unique.'),
  );

const askBase = {
  name: machineName('The key of this value in the answer; unique. Letters, digits, "_", "." and "-".', [
    'time',
  ]),
  label: personText(
    TEXT_LIMITS.fieldLabel,
    `What the person is asked for, short, at most ${TEXT_LIMITS.fieldLabel} characters.`,
    ['Best time'],
  ),
  description: v.optional(
    optionalPersonText(TEXT_LIMITS.help, `One hint, at most ${TEXT_LIMITS.help} characters.`, [
      'Times are in your time zone.',
    ]),
  ),
  required: v.optional(v.pipe(v.boolean(), v.description('true: the person must answer this field.'))),
};

const askMin = (what: string) => v.optional(v.pipe(v.number(), v.description(what)));

/** The `sess_ask` field kinds, keyed on `type`. */
export const AskFieldSchema = noArrays(
  v.variant('type', [
    closed({
      ...askBase,
      type: v.literal('text'),
      multiline: v.optional(v.pipe(v.boolean(), v.description('true: a multi-line box.'))),
      min: v.optional(v.pipe(nonNegativeWhole(), v.description('Fewest characters.'))),
      max: v.optional(v.pipe(nonNegativeWhole(), v.description('Most characters.'))),
      value: v.optional(v.pipe(v.string(), v.description('Prefilled text.'))),
    }),
    closed({
      ...askBase,
      type: v.pipe(v.picklist(['number', 'integer']), v.description('"integer" allows whole numbers only.')),
      min: askMin('Lowest allowed number.'),
      max: askMin('Highest allowed number.'),
      value: v.optional(v.pipe(v.number(), v.description('Prefilled number.'))),
    }),
    closed({
      ...askBase,
      type: v.literal('boolean'),
      value: v.optional(v.pipe(v.boolean(), v.description('Prefilled yes (true) or no (false).'))),
    }),
    closed({
      ...askBase,
      type: v.literal('choice'),
      options: askOptions(),
      value: v.optional(v.pipe(v.string(), v.description('The preselected option ID.'))),
    }),
    closed({
      ...askBase,
      type: v.literal('multi_choice'),
      options: askOptions(),
      min: v.optional(v.pipe(nonNegativeWhole(), v.description('Fewest choices.'))),
      max: v.optional(v.pipe(nonNegativeWhole(), v.description('Most choices.'))),
      value: v.optional(v.pipe(v.array(v.string()), v.description('Preselected option IDs.'))),
    }),
    closed({
      ...askBase,
      type: v.literal('rating'),
      min: v.optional(
        boundedWholeNumber(
          ARGUMENT_LIMITS.minRating,
          ARGUMENT_LIMITS.maxRating,
          'Lowest rating (default 1).',
        ),
      ),
      max: v.optional(
        boundedWholeNumber(
          ARGUMENT_LIMITS.minRating,
          ARGUMENT_LIMITS.maxRating,
          'Highest rating (default 5).',
        ),
      ),
      value: v.optional(v.pipe(v.number(), v.description('Prefilled rating.'))),
    }),
  ]),
);

/** `sess_ask` arguments. */
export const AskArgsSchema = closed({
  question: personText(
    TEXT_LIMITS.title,
    `The question at the top of the page: a question or a task, about 40 characters, at most ${TEXT_LIMITS.title}.`,
    ['What time works for a call tomorrow?'],
  ),
  fields: v.pipe(
    v.array(AskFieldSchema),
    v.minLength(STRUCTURE_LIMITS.minAskFields, 'needs at least one field'),
    v.maxLength(STRUCTURE_LIMITS.maxAskFields),
    v.description(
      `${STRUCTURE_LIMITS.minAskFields} to ${STRUCTURE_LIMITS.maxAskFields} fields with unique names; type is ` +
        'text, number, integer, boolean, choice, multi_choice or rating.',
    ),
  ),
  details: v.optional(
    optionalPersonText(
      TEXT_LIMITS.details,
      `Plain text under the question (context the person needs), at most ${TEXT_LIMITS.details} characters.`,
      ['The call takes 30 minutes.'],
    ),
  ),
  submit_label: v.optional(
    personText(
      TEXT_LIMITS.buttonLabel,
      `The button text, a verb of 1–3 words, at most ${TEXT_LIMITS.buttonLabel} characters. Default "Send".`,
      ['Send'],
    ),
  ),
  expires_in: v.optional(expiresIn()),
  respondents: v.optional(
    v.pipe(
      closed({
        max: wholeNumber(
          ARGUMENT_LIMITS.minRespondents,
          'The most people (browsers) that may answer; the cap is exact.',
        ),
        name: v.optional(v.pipe(v.boolean(), v.description('true: each person gives a name ("Your name").'))),
        expires_in: v.optional(
          wholeNumber(
            ARGUMENT_LIMITS.minExpiresIn,
            `The one deadline of the Ask in whole seconds, at least ${ARGUMENT_LIMITS.minExpiresIn}; use instead of the top-level expires_in.`,
          ),
        ),
        respondent_expires_in: v.optional(
          wholeNumber(
            ARGUMENT_LIMITS.minExpiresIn,
            `How long each person has after starting, in whole seconds, at least ${ARGUMENT_LIMITS.minExpiresIn}.`,
          ),
        ),
      }),
      v.description(
        'Advanced: ask many people through one link (a Sess Ask). Leave it out to ask one person.',
      ),
    ),
  ),
});

// -- sess_list

const CURSOR_REGEX = /^[A-Za-z0-9_-]+$/;

/**
 * `sess_list` arguments. `handle` inspects one interaction and stands alone: `validate.ts` refuses
 * it together with `state`, `limit` or `cursor` (pass 4).
 */
export const ListArgsSchema = closed({
  state: v.optional(
    v.pipe(
      v.picklist(LIST_STATES),
      v.description(
        'Only interactions in this state: "waiting", "answered", "pending" (a publish, complete or ' +
          'withdraw in flight), "needs_owner", "completed", "expired", "withdrawn" or "closed" (an Ask).',
      ),
    ),
  ),
  limit: v.optional(
    boundedWholeNumber(
      1,
      ARGUMENT_LIMITS.maxListLimit,
      `How many interactions one page holds, 1–${ARGUMENT_LIMITS.maxListLimit} (default ${ARGUMENT_LIMITS.defaultListLimit}).`,
    ),
  ),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      maxCodePoints(ARGUMENT_LIMITS.maxCursorLength),
      v.regex(CURSOR_REGEX, 'is not a cursor sess_list returned'),
      v.description(
        'The next_cursor of the previous page, exactly as returned, with the same state. Leave it out for the first page.',
      ),
    ),
  ),
  handle: v.optional(
    opaqueId(
      'Inspect this one interaction (the handle sess_request or sess_ask returned) instead of listing. Send it alone.',
    ),
  ),
});

// -- sess_withdraw

/** `sess_withdraw` arguments. */
export const WithdrawArgsSchema = closed({
  handle: handle(),
  expected_revision: wholeNumber(
    ARGUMENT_LIMITS.minRevision,
    'The current `interaction.revision` of this handle (still without an answer); 1 for an Ask.',
  ),
  reason: v.optional(
    personText(
      TEXT_LIMITS.withdrawReason,
      `Optional: one short sentence the person's page shows with "This question was withdrawn", at most ${TEXT_LIMITS.withdrawReason} characters.`,
      ['Sorted out in chat; no answer needed.'],
    ),
  ),
});

/**
 * The schema of each tool's arguments, by tool name. Typed by each tool's validated arguments
 * (`ToolArgs`), so a consumer's compiler never expands valibot's types of them.
 */
export const TOOL_ARGUMENT_SCHEMAS: { readonly [T in ToolName]: v.GenericSchema<unknown, ToolArgs[T]> } = {
  sess_request: RequestArgsSchema,
  sess_response: ResponseArgsSchema,
  sess_publish: PublishArgsSchema,
  sess_complete: CompleteArgsSchema,
  sess_ask: AskArgsSchema,
  sess_list: ListArgsSchema,
  sess_withdraw: WithdrawArgsSchema,
};
