/**
 * The Sess HTTP wire as data: paths, headers, limits, the valibot schemas (with their TS types)
 * of the request bodies, the error body and the key set described in `docs/sess-api.md`, plus
 * the consistency rules that make a Session or Ask view self-contradictory. Both sides import it:
 * the client (`decode.ts`, `key-set.ts`) reads with it, the local runtime (`src/testing`)
 * validates requests with it. The views and the receipt Sess answers with are defined, types and
 * reader together, in `wire-reader.ts`, and are not written again here.
 *
 * Every map whose keys come from a person or an agent (answer values, JSON objects, record
 * fields, option labels) decodes through `json-copy.ts` into a null-prototype object that keeps
 * every key, `__proto__`, `constructor` and `prototype` included, so what is digested is exactly
 * what was sent.
 *
 * It performs no I/O, imports no `node:` module, maps nothing onto the core's views (`decode.ts`)
 * and does not check Surface lengths (Sess's length rules live in the runtime and in the core's
 * own validators).
 */
import * as v from 'valibot';
import { textProblem } from '../core/contract/limits.js';
import type { SessionStatus } from '../core/contract/ports.js';
import { SESS_ID_RULE, WAIT_CEILING_MS } from '../core/contract/rules.js';
import type { Surface } from '../core/model/surface.js';
import { isScalar, isString, JsonValueSchema, keyedMap } from './json-copy.js';

// ---------------------------------------------------------------------------------------------
// Paths, headers, limits

/** Request and response header names of the wire (lower case, as `Headers` reports them). */
export const HEADERS = {
  authorization: 'authorization',
  workspaceId: 'sess-workspace-id',
  idempotencyKey: 'idempotency-key',
  idempotentReplayed: 'idempotent-replayed',
  ifMatch: 'if-match',
  etag: 'etag',
  retryAfter: 'retry-after',
} as const;

/** The longest `Retry-After` a client honours: an hour (a longer one is read as an hour). */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The wait a `Retry-After` value asks for, in milliseconds (at most {@link MAX_RETRY_AFTER_MS}):
 * a number of seconds, as Sess sends it, or an HTTP date; `undefined` for anything else.
 */
export function retryAfterMsOf(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (!/[a-z]/i.test(text) || Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/** API paths. Ids are path segments and MUST be percent-encoded by a client. */
export const PATHS = {
  sessions: '/v1/sessions',
  session: (id: string) => `/v1/sessions/${encodeURIComponent(id)}`,
  wait: (id: string) => `/v1/sessions/${encodeURIComponent(id)}/wait`,
  revisions: (id: string) => `/v1/sessions/${encodeURIComponent(id)}/revisions`,
  complete: (id: string) => `/v1/sessions/${encodeURIComponent(id)}/complete`,
  withdraw: (id: string) => `/v1/sessions/${encodeURIComponent(id)}/withdraw`,
  asks: '/v1/asks',
  ask: (id: string) => `/v1/asks/${encodeURIComponent(id)}`,
  closeAsk: (id: string) => `/v1/asks/${encodeURIComponent(id)}/close`,
  jwks: '/.well-known/sess/jwks.json',
} as const;

/** The longest a wait (`timeout_ms`) may last, in milliseconds: the one wait ceiling. */
export const MAX_WAIT_MS = WAIT_CEILING_MS;
/** The shortest link lifetime, in seconds. */
export const MIN_EXPIRES_IN = 30;
/** The link lifetime when a create request gives none, in seconds (1 hour). */
export const DEFAULT_EXPIRES_IN = 3_600;
/** Links of at most this lifetime (20 hours, in seconds) may be extended once lapsed. */
export const EXTENDABLE_MAX_LIFETIME = 72_000;
/** How far after a revision opens an extendable link may be extended (24 hours, in seconds). */
export const EXTEND_HORIZON = 86_400;
/** The most bytes a request body may have. */
export const MAX_REQUEST_BYTES = 131_072;
/** The longest `Idempotency-Key`, in characters (printable ASCII, no spaces). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** The longest `reason` of a withdraw or an Ask close, in Unicode code points. */
export const MAX_WITHDRAW_REASON_LENGTH = 160;

/**
 * The six statuses of a Session on the wire (the same words as the core's `SessionStatus`).
 * `withdrawn` came with v1.4; a decoder that knows only the first five refuses a withdrawn view.
 */
export const SESSION_STATUSES = [
  'active',
  'answered',
  'lapsed',
  'completed',
  'expired',
  'withdrawn',
] as const;

/** Statuses a Session never leaves. A wait on one of them returns at once. */
export const FINAL_SESSION_STATUSES: ReadonlySet<SessionStatus> = new Set([
  'completed',
  'expired',
  'withdrawn',
]);

/** Statuses of a Session that count as open against the plan (`maxOpenSessions`). */
export const OPEN_SESSION_STATUSES: ReadonlySet<SessionStatus> = new Set(['active', 'answered', 'lapsed']);

// ---------------------------------------------------------------------------------------------
// Errors

/** Every `error.code` Sess sends, with the HTTP statuses it comes with. */
export const API_ERROR_CODES = {
  invalid_request: [400, 413, 415, 422],
  unauthorized: [401],
  forbidden: [403],
  plan_limit: [403],
  not_found: [404],
  method_not_allowed: [405],
  conflict: [409],
  expired: [410],
  idempotency_mismatch: [422],
  rate_limited: [429],
  internal: [500],
  unavailable: [503],
} as const;

/** An `error.code` of the wire. Clients MUST treat an unknown code by its HTTP status class. */
export type ApiErrorCode = keyof typeof API_ERROR_CODES;

/** The body of every error response. */
export const ErrorBodySchema = v.object({
  error: v.object({
    code: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
    message: v.pipe(v.string(), v.maxLength(2000)),
    /** A JSON pointer into the request body (`/interaction/title`). */
    field: v.optional(v.pipe(v.string(), v.maxLength(1000))),
    limit: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
    length: v.optional(v.pipe(v.number(), v.safeInteger(), v.minValue(0))),
  }),
});
/** The body of every error response. */
export type ErrorBody = v.InferOutput<typeof ErrorBodySchema>;

// ---------------------------------------------------------------------------------------------
// Scalars

const ISO_UTC_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** An opaque id: 1–128 characters of `A–Z a–z 0–9 . _ : -` (`SESS_ID_RULE`). */
export const IdSchema = v.pipe(
  v.string(),
  v.check((s) => SESS_ID_RULE.test(s), 'not an id'),
);

/** Whether `s` is a UTC timestamp, `YYYY-MM-DDTHH:MM:SS(.fff)Z`, that `Date` can read. */
export function isTimestamp(s: string): boolean {
  return ISO_UTC_PATTERN.test(s) && !Number.isNaN(Date.parse(s));
}

/** The longest URL a view may carry, in UTF-16 code units. */
export const MAX_URL_LENGTH = 2048;

/** The last URL {@link isAbsoluteUrl} accepted: a Session's views repeat its link. */
let lastAbsoluteUrl = '';

/** Whether `s` is an absolute `http:` or `https:` URL (any length: its reader bounds it). */
export function isAbsoluteUrl(s: string): boolean {
  if (s === lastAbsoluteUrl && s !== '') return true;
  try {
    const url = new URL(s);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  } catch {
    return false;
  }
  lastAbsoluteUrl = s;
  return true;
}

const PositiveInt = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
const NonNegativeInt = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

// ---------------------------------------------------------------------------------------------
// Surface (request side: closed objects, structure only; Sess checks lengths separately)

const Str = v.string();
const OptionLabels = v.optional(keyedMap(isString, 'not a map of option labels'));

const StringFieldSchemaSchema = v.strictObject({
  type: v.literal('string'),
  minLength: v.optional(NonNegativeInt),
  maxLength: v.optional(NonNegativeInt),
});
const NumberFieldSchemaSchema = v.strictObject({
  type: v.picklist(['number', 'integer']),
  minimum: v.optional(v.pipe(v.number(), v.finite())),
  maximum: v.optional(v.pipe(v.number(), v.finite())),
});
const BooleanFieldSchemaSchema = v.strictObject({ type: v.literal('boolean') });
const ChoiceFieldSchemaSchema = v.strictObject({
  type: v.literal('string'),
  enum: v.pipe(v.array(Str), v.minLength(1)),
  option_labels: OptionLabels,
});
const MultiChoiceFieldSchemaSchema = v.strictObject({
  type: v.literal('array'),
  items: v.strictObject({ type: v.literal('string'), enum: v.pipe(v.array(Str), v.minLength(1)) }),
  option_labels: OptionLabels,
  minItems: v.optional(NonNegativeInt),
  maxItems: v.optional(NonNegativeInt),
  uniqueItems: v.optional(v.literal(true)),
});
const RatingFieldSchemaSchema = v.strictObject({
  type: v.literal('integer'),
  format: v.literal('rating'),
  minimum: v.pipe(v.number(), v.safeInteger()),
  maximum: v.pipe(v.number(), v.safeInteger()),
});

/** The supported field schemas (see `src/core/model/surface.ts`). */
export const FieldSchemaSchema = v.union([
  ChoiceFieldSchemaSchema,
  StringFieldSchemaSchema,
  RatingFieldSchemaSchema,
  NumberFieldSchemaSchema,
  BooleanFieldSchemaSchema,
  MultiChoiceFieldSchemaSchema,
]);

/** One component of a Surface. */
export const SurfaceComponentSchema = v.variant('type', [
  v.strictObject({ type: v.literal('heading'), text: Str }),
  v.strictObject({ type: v.literal('text'), text: Str }),
  v.strictObject({
    type: v.literal('record'),
    label: v.optional(Str),
    fields: keyedMap(isScalar, 'not a map of record fields'),
  }),
  v.strictObject({
    type: v.literal('field'),
    name: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'not a field name')),
    label: Str,
    description: v.optional(Str),
    multiline: v.optional(v.boolean()),
    required: v.optional(v.boolean()),
    schema: FieldSchemaSchema,
    value: v.optional(JsonValueSchema),
  }),
]);

/** The interactive Surface (`interaction`) of a create or publish request. */
export const SurfaceSchema = v.strictObject({
  mode: v.literal('interactive'),
  title: Str,
  description: v.optional(Str),
  source: v.strictObject({
    kind: v.literal('sess_surface'),
    components: v.array(SurfaceComponentSchema),
  }),
  actions: v.pipe(
    v.array(
      v.strictObject({
        id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'not an action id')),
        label: Str,
        intent: v.picklist(['submit', 'approve', 'reject']),
      }),
    ),
    v.minLength(1),
  ),
});

// ---------------------------------------------------------------------------------------------
// Requests

const ExpiresIn = v.pipe(v.number(), v.safeInteger(), v.minValue(MIN_EXPIRES_IN));

/** `POST /v1/sessions` body. */
export const CreateSessionRequestSchema = v.strictObject({
  interaction: v.unknown(),
  expires_in: v.optional(ExpiresIn),
});
/** `POST /v1/sessions` body. `interaction` is checked against {@link SurfaceSchema} separately. */
export interface CreateSessionRequest {
  interaction: Surface;
  expires_in?: number;
}

/** `POST /v1/sessions/{id}/revisions` body. */
export const PublishRequestSchema = v.strictObject({
  response_event_id: IdSchema,
  interaction: v.unknown(),
});
/** `POST /v1/sessions/{id}/revisions` body. */
export interface PublishRequest {
  response_event_id: string;
  interaction: Surface;
}

/** `POST /v1/sessions/{id}/complete` body. */
export const CompleteRequestSchema = v.strictObject({ response_event_id: IdSchema });
/** `POST /v1/sessions/{id}/complete` body. */
export type CompleteRequest = v.InferOutput<typeof CompleteRequestSchema>;

/**
 * `reason` of a withdraw or an Ask close: what the person's page shows. At most
 * {@link MAX_WITHDRAW_REASON_LENGTH} code points (checked by the server with the Surface length
 * rules), well-formed UTF-16 without U+0000.
 */
const WithdrawReason = v.pipe(
  v.string(),
  v.check((s) => textProblem(s) === undefined, 'not text a person can read'),
);

/** `POST /v1/sessions/{id}/withdraw` body (v1.4). */
export const WithdrawRequestSchema = v.strictObject({ reason: v.optional(WithdrawReason) });
/** `POST /v1/sessions/{id}/withdraw` body (v1.4). */
export type WithdrawRequest = v.InferOutput<typeof WithdrawRequestSchema>;

/** `POST /v1/asks/{id}/close` body (v1.4). */
export const CloseAskRequestSchema = v.strictObject({ reason: v.optional(WithdrawReason) });
/** `POST /v1/asks/{id}/close` body (v1.4). */
export type CloseAskRequest = v.InferOutput<typeof CloseAskRequestSchema>;

/** The `respondents` member of `POST /v1/asks`. */
export const AskRespondentsRequestSchema = v.strictObject({
  max: PositiveInt,
  name: v.optional(v.boolean()),
  expires_in: v.optional(ExpiresIn),
  respondent_expires_in: v.optional(ExpiresIn),
});

/** `POST /v1/asks` body. */
export const CreateAskRequestSchema = v.strictObject({
  interaction: v.unknown(),
  expires_in: v.optional(ExpiresIn),
  respondents: AskRespondentsRequestSchema,
});
/** `POST /v1/asks` body. */
export interface CreateAskRequest {
  interaction: Surface;
  expires_in?: number;
  respondents: v.InferOutput<typeof AskRespondentsRequestSchema>;
}

/** Query of `GET /v1/sessions/{id}/wait` (all three are required). */
export interface WaitQuery {
  revision: number;
  status: SessionStatus;
  timeout_ms: number;
}

// ---------------------------------------------------------------------------------------------
// Responses (the Session and Ask views and the receipt are read, and typed, in `wire-reader.ts`)

/** The longest action id an answer names, in UTF-16 code units. */
export const MAX_ANSWER_ACTION_LENGTH = 64;
/** The longest receipt (compact JWS) a Session view carries, in characters. */
export const MAX_RECEIPT_LENGTH = 8192;
/** The longest name a respondent may give, in UTF-16 code units. */
export const RESPONDENT_NAME_MAX_LENGTH = 200;
/** The longest `kid` a receipt's header may name, in UTF-16 code units. */
export const RECEIPT_KID_MAX_LENGTH = 128;

/** One public key of the key set. */
export const JwkSchema = v.object({
  kty: v.literal('OKP'),
  crv: v.literal('Ed25519'),
  x: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/, 'not a 32-byte key')),
  kid: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  use: v.literal('sig'),
  alg: v.literal('EdDSA'),
  ws: IdSchema,
});

/** `GET /.well-known/sess/jwks.json` as a server must send it: every entry a {@link JwkSchema}. */
export const JwksSchema = v.object({ keys: v.array(JwkSchema) });
/** The key set. */
export type Jwks = v.InferOutput<typeof JwksSchema>;

/**
 * The key set as a client reads it: the envelope only. Each entry is then read on its own with
 * {@link JwkSchema}, so one entry of an unknown shape is skipped instead of disabling every key.
 */
export const JwksEnvelopeSchema = v.object({ keys: v.array(v.unknown()) });

/** The largest key-set body a client reads, in bytes (64 KiB: hundreds of keys). */
export const MAX_JWKS_BYTES = 65_536;
