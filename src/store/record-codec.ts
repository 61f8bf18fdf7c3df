/**
 * The strict codec the durable stores (file, PostgreSQL) use for records: a valibot schema of
 * {@link InteractionRecord} checked on every write (so a bad record is refused before anything is
 * written) and on every read (so an unreadable, inconsistent or unsupported-version record is a
 * non-retryable `STATE_STORE_ERROR`, never a half-trusted object), and the file envelope
 * `{ format, version, record }`. It reads records of format 1 (written by 0.1.0, checked against
 * exactly what 0.1.0 wrote) and of format 2, and writes format 2 only.
 *
 * It deliberately knows no I/O, and checks the shape a store needs to trust, not the engine's
 * rules (which transition is allowed is the engine's business). Surfaces and answers are checked
 * to be objects only; the engine validated them before they were saved. Inside a state, keys the
 * schema does not name are kept, so a newer optional field survives a read. Error messages name
 * paths in the record, never values (a record may hold a Sess link, an answer or a receipt).
 */
import * as v from 'valibot';
import type { SessMcpError } from '../core/contract/errors.js';
import type { VersionedRecord } from '../core/contract/ports.js';
import {
  INTERACTION_EVENT_TYPES,
  type InteractionRecord,
  type InteractionStateKind,
  MAX_RECORD_EVENTS,
  READABLE_RECORD_FORMATS,
  RECORD_FORMAT,
  type RecordFormat,
} from '../core/model/record.js';
import { storeError } from '../core/store-kit/kit.js';

/** The version of the envelope a file-store file holds around its record. */
export const FILE_ENVELOPE_FORMAT = 1;

const text = v.string();
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const anyObject = v.looseObject({});

const stdioBinding = v.strictObject({
  kind: v.literal('stdio'),
  profile: text,
  apiOrigin: text,
  credentialGeneration: text,
});
const httpBindingEntries = {
  kind: v.literal('http'),
  origin: text,
  workspaceId: text,
  principalId: text,
  clientId: text,
  grantId: text,
  grantGeneration: text,
};
/** An HTTP binding as 0.1.0 wrote it: never shared by its principal. */
const httpBinding1 = v.strictObject(httpBindingEntries);
const httpBinding = v.strictObject({ ...httpBindingEntries, share: v.optional(v.literal('principal')) });

const sessionRef = v.looseObject({ sessionId: text, workspaceId: text, humanUrl: text, expiresAt: text });
const verifiedResponse = v.looseObject({
  eventId: text,
  revision: count,
  answer: anyObject,
  submittedAt: text,
  receipt: text,
  keyId: text,
  verifiedAt: text,
});
const confirmedMutation = v.looseObject({
  kind: v.picklist(['publish', 'complete']),
  expectedRevision: count,
  responseEventId: text,
  surfaceDigest: v.optional(text),
});
const createRequest = v.looseObject({
  idempotencyKey: text,
  surface: anyObject,
  expiresIn: v.optional(v.number()),
  respondents: v.optional(anyObject),
});
const publishInput = v.looseObject({
  expectedRevision: count,
  responseEventId: text,
  surface: anyObject,
  idempotencyKey: text,
});
const completeInput = v.looseObject({ expectedRevision: count, responseEventId: text, idempotencyKey: text });

const withdrawInput = v.looseObject({
  expectedRevision: count,
  reason: v.optional(text),
  idempotencyKey: text,
});
const closeAskInput = v.looseObject({ reason: v.optional(text), idempotencyKey: text });
const confirmedWithdrawal = v.looseObject({ expectedRevision: count, reasonDigest: text });

/** The states format 1 (0.1.0) has; format 2 keeps every one of them as it was. */
const format1States = {
  create_intent: v.looseObject({ kind: v.literal('create_intent'), request: createRequest }),
  create_unknown: v.looseObject({ kind: v.literal('create_unknown'), request: createRequest, reason: text }),
  waiting: v.looseObject({
    kind: v.literal('waiting'),
    session: sessionRef,
    revision: count,
    surface: anyObject,
    lastMutation: v.optional(confirmedMutation),
  }),
  answered: v.looseObject({
    kind: v.literal('answered'),
    session: sessionRef,
    revision: count,
    surface: anyObject,
    response: verifiedResponse,
    lastMutation: v.optional(confirmedMutation),
  }),
  publish_pending: v.looseObject({
    kind: v.literal('publish_pending'),
    session: sessionRef,
    revision: count,
    surface: anyObject,
    response: verifiedResponse,
    request: publishInput,
  }),
  complete_pending: v.looseObject({
    kind: v.literal('complete_pending'),
    session: sessionRef,
    revision: count,
    surface: anyObject,
    response: verifiedResponse,
    request: completeInput,
  }),
  completed: v.looseObject({
    kind: v.literal('completed'),
    sessionId: text,
    revision: count,
    lastMutation: confirmedMutation,
  }),
  expired: v.looseObject({ kind: v.literal('expired'), sessionId: text, revision: count }),
  blocked: v.looseObject({
    kind: v.literal('blocked'),
    code: v.picklist(['MUTATION_REJECTED', 'VERIFICATION_FAILED', 'RECOVERY_BLOCKED']),
    reason: text,
    sessionId: v.optional(text),
    revision: v.optional(count),
    previous: text,
  }),
  ask_open: v.looseObject({
    kind: v.literal('ask_open'),
    askId: text,
    workspaceId: text,
    humanUrl: text,
    expiresAt: text,
    surface: anyObject,
    max: count,
  }),
  ask_closed: v.looseObject({
    kind: v.literal('ask_closed'),
    askId: text,
    workspaceId: v.optional(text),
    surface: v.optional(anyObject),
  }),
};

/** Format 2: the withdraw states, and a closed Ask may say it was withdrawn. */
const format2States = {
  ...format1States,
  withdraw_pending: v.looseObject({
    kind: v.literal('withdraw_pending'),
    session: sessionRef,
    revision: count,
    surface: anyObject,
    request: withdrawInput,
    lastMutation: v.optional(confirmedMutation),
  }),
  withdrawn: v.looseObject({
    kind: v.literal('withdrawn'),
    sessionId: text,
    revision: count,
    withdrawal: confirmedWithdrawal,
  }),
  ask_close_pending: v.looseObject({
    kind: v.literal('ask_close_pending'),
    askId: text,
    workspaceId: text,
    humanUrl: text,
    expiresAt: text,
    surface: anyObject,
    max: count,
    request: closeAskInput,
  }),
  ask_closed: v.looseObject({
    kind: v.literal('ask_closed'),
    askId: text,
    workspaceId: v.optional(text),
    surface: v.optional(anyObject),
    withdrawal: v.optional(confirmedWithdrawal),
  }),
} satisfies { [K in InteractionStateKind]: v.GenericSchema };

const binding1 = v.variant('kind', [stdioBinding, httpBinding1]);
const binding = v.variant('kind', [stdioBinding, httpBinding]);

/**
 * The schema of a state in `states`, picked by the state's `kind` in one look-up rather than by
 * trying each kind in turn (as `v.variant` does); a value without a kind of `states` is checked by
 * the variant, so what it is refused for reads the same.
 */
function stateSchema(states: Readonly<Record<string, v.GenericSchema>>): v.GenericSchema {
  const variant = v.variant('kind', Object.values(states) as v.VariantOptions<'kind'>);
  return v.lazy((input) => {
    const kind = isObject(input) ? input.kind : undefined;
    return typeof kind === 'string' && Object.hasOwn(states, kind) ? states[kind]! : variant;
  });
}

/** A record 0.1.0 wrote: no title, no expiry, none of the withdraw states. */
const format1Record = v.strictObject({
  format: v.literal(1),
  handle: text,
  binding: binding1,
  createdAt: text,
  updatedAt: text,
  state: stateSchema(format1States),
});

/** One event of a record (`events.ts`): a reference only. */
const recordEvent = v.strictObject({
  type: v.picklist(INTERACTION_EVENT_TYPES),
  revision: count,
  sequence: count,
  occurredAt: text,
});

/** A record of {@link RECORD_FORMAT}, the only format this version writes. */
const format2Record = v.strictObject({
  format: v.literal(RECORD_FORMAT),
  handle: text,
  binding,
  createdAt: text,
  updatedAt: text,
  title: v.optional(text),
  expiresAt: v.optional(text),
  state: stateSchema(format2States),
  events: v.optional(v.pipe(v.array(recordEvent), v.maxLength(MAX_RECORD_EVENTS))),
});

/** The schema of each format this version reads. */
const RECORD_SCHEMAS: { readonly [F in RecordFormat]: typeof format1Record | typeof format2Record } = {
  1: format1Record,
  2: format2Record,
};

const envelopeSchema = v.strictObject({
  format: v.literal(FILE_ENVELOPE_FORMAT),
  version: v.pipe(v.number(), v.integer(), v.minValue(1)),
  record: v.unknown(),
});

/** Where the first problem is, as a path of keys (`state.session.expiresAt`): never a value. */
function issueWhere(issues: readonly v.BaseIssue<unknown>[]): string {
  const path = issues[0] === undefined ? undefined : v.getDotPath(issues[0]);
  return path === null || path === undefined || path === '' ? 'the record' : path;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Check a record before it is written and return its JSON text (what `undefined` properties
 * drop to is what is checked). Only {@link RECORD_FORMAT} is written: the stores hand over a
 * record read at format 1 as format 2 (`recordToWrite` in `core/store-kit/kit.ts`). Throws a non-retryable
 * `STATE_STORE_ERROR` (reason `invalid_record`): nothing is written.
 */
export function encodeRecord(record: InteractionRecord): string {
  return encodeRecordWithCopy(record).json;
}

/**
 * {@link encodeRecord}, and the checked record its JSON text decodes to: a new object the caller
 * owns, equal to what reading that text back gives (the check makes it, so no extra parse does).
 */
export function encodeRecordWithCopy(record: InteractionRecord): { json: string; copy: InteractionRecord } {
  let json: string;
  try {
    json = JSON.stringify(record);
  } catch (cause) {
    throw storeError('The record to store cannot be written as JSON.', false, 'invalid_record', cause);
  }
  const result = v.safeParse(format2Record, JSON.parse(json));
  if (!result.success) {
    throw storeError(
      `The record to store is not a valid record (at ${issueWhere(result.issues)}); nothing was written.`,
      false,
      'invalid_record',
    );
  }
  return { json, copy: result.output as InteractionRecord };
}

/** True for a record format this version reads ({@link READABLE_RECORD_FORMATS}). */
export function isReadableFormat(format: unknown): format is RecordFormat {
  return READABLE_RECORD_FORMATS.includes(format as RecordFormat);
}

/** The message of a record of a format this version does not read. */
export function unsupportedFormatError(): SessMcpError {
  return storeError(
    `A stored record has an unsupported format; this version reads formats ${READABLE_RECORD_FORMATS.join(' and ')}. The owner must review it.`,
    false,
    'unsupported_version',
  );
}

/**
 * Decode a stored record (already parsed from JSON) that was saved under `handle`, of format 1
 * (as 0.1.0 wrote it: no `title` or `expiresAt`, no withdraw state) or 2, and return it as it is
 * (a format 1 record keeps `format: 1`). A record of another format is `unsupported_version`;
 * anything malformed, or a record whose own handle is not `handle`, is `corrupt`. Both are
 * non-retryable `STATE_STORE_ERROR`.
 */
export function decodeRecord(value: unknown, handle: string): InteractionRecord {
  if (!isObject(value)) {
    throw storeError(
      'A stored record is unreadable (at the record: not an object). The owner must review it.',
      false,
      'corrupt',
    );
  }
  if (!('format' in value)) {
    throw storeError(
      'A stored record is unreadable (at format). The owner must review it.',
      false,
      'corrupt',
    );
  }
  if (!isReadableFormat(value.format)) throw unsupportedFormatError();
  const result = v.safeParse(RECORD_SCHEMAS[value.format], value);
  if (!result.success) {
    throw storeError(
      `A stored record is unreadable (at ${issueWhere(result.issues)}). The owner must review it.`,
      false,
      'corrupt',
    );
  }
  if (result.output.handle !== handle) {
    throw storeError(
      'A stored record names another handle than the one it is stored under.',
      false,
      'corrupt',
    );
  }
  return result.output as InteractionRecord;
}

/** The text of a file-store file: the envelope around one record at `version`. */
export function encodeEnvelope(version: number, recordJson: string): string {
  return `{"format":${FILE_ENVELOPE_FORMAT},"version":${version},"record":${recordJson}}\n`;
}

/**
 * Decode the text of a file-store file saved under `handle`. Throws a non-retryable
 * `STATE_STORE_ERROR`: `unsupported_version` for another envelope or record format, `corrupt`
 * for anything else that is not exactly an envelope around a valid record.
 */
export function decodeEnvelope(textContent: string, handle: string): VersionedRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(textContent);
  } catch {
    throw storeError('A stored record is not valid JSON. The owner must review it.', false, 'corrupt');
  }
  if (!isObject(parsed)) {
    throw storeError(
      'A stored record file is not a JSON object. The owner must review it.',
      false,
      'corrupt',
    );
  }
  if ('format' in parsed && parsed.format !== FILE_ENVELOPE_FORMAT) {
    throw storeError(
      `A stored record file has an unsupported format; this version reads format ${FILE_ENVELOPE_FORMAT}. The owner must review it.`,
      false,
      'unsupported_version',
    );
  }
  const envelope = v.safeParse(envelopeSchema, parsed);
  if (!envelope.success) {
    throw storeError(
      `A stored record file is not a valid envelope (at ${issueWhere(envelope.issues)}). The owner must review it.`,
      false,
      'corrupt',
    );
  }
  return { version: envelope.output.version, record: decodeRecord(envelope.output.record, handle) };
}
