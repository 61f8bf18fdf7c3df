/**
 * The small ports the interaction engine runs on: {@link SessApi} (talking to Sess),
 * {@link HandleStore} (where records live), {@link Authority} (who is calling and what a handle
 * is bound to) and {@link Clock}. Interfaces and the few plain helpers their contracts need.
 *
 * Nothing here knows a transport or Sess's wire format: `src/sess` adapts the wire to
 * {@link SessApi}; stores and faces implement the rest.
 */

import type { Binding } from '../model/binding.js';
import type { InteractionRecord, InteractionStateKind, ListGroup } from '../model/record.js';
import type {
  CloseAskInput,
  CompleteInput,
  CreateAskInput,
  CreateSessionInput,
  PublishInput,
  WithdrawInput,
} from '../model/saved-requests.js';
import type { Answer, Surface } from '../model/surface.js';
import type { ErrorCode } from './errors.js';
import type { EventOutbox } from './outbox.js';

// ---------------------------------------------------------------------------------------------
// Sess

// The inputs the Sess operations take are defined with the record that saves them; the port names
// them again so its contract reads whole here.
export type {
  AskRespondentsOptions,
  CloseAskInput,
  CompleteInput,
  CreateAskInput,
  CreateSessionInput,
  PublishInput,
  WithdrawInput,
} from '../model/saved-requests.js';

/** Per-call options every {@link SessApi} method takes. */
export interface SessCallOptions {
  /** Aborting MUST end the call with a {@link SessApiError} of kind `aborted`. */
  signal?: AbortSignal;
}

/**
 * Where a Session is. `active`: waiting for an answer at `revision`; `answered`: an answer at
 * `revision` waits for the agent; `lapsed`: past `expiresAt` but the person may still ask for more
 * time; `completed`: closed by the agent; `expired`: closed for good without completion;
 * `withdrawn`: the agent took the question back before it was answered (final).
 */
export type SessionStatus = 'active' | 'answered' | 'lapsed' | 'completed' | 'expired' | 'withdrawn';

/** One answer a person gave, with its signed receipt (a compact JWS). */
export interface ResponseEvent {
  eventId: string;
  revision: number;
  answer: Answer;
  submittedAt: string;
  receipt: string;
}

/** A Session as Sess reports it. Decoded strictly: a self-contradictory view never gets here. */
export interface SessionView {
  sessionId: string;
  workspaceId: string;
  revision: number;
  status: SessionStatus;
  /** The link a person opens. A bearer capability: never log it. */
  humanUrl: string;
  expiresAt: string;
  /** Set on links of 20 hours or less: how far the person may extend a lapsed link. */
  extendableUntil?: string;
  /** Every answer so far, oldest first, at most one per revision, none above `revision`. */
  responses: ResponseEvent[];
}

/** One person (one browser) answering an Ask. */
export interface AskRespondentView {
  respondentId: string;
  sessionId: string;
  name?: string;
  /** `withdrawn`: the Ask was closed while this person had not answered yet. */
  status: 'started' | 'answered' | 'expired' | 'withdrawn';
  response?: ResponseEvent;
}

/** An Ask: one link, many respondents, an exact cap. */
export interface AskView {
  askId: string;
  workspaceId: string;
  status: 'open' | 'closed';
  humanUrl: string;
  expiresAt: string;
  max: number;
  started: number;
  answered: number;
  respondents: AskRespondentView[];
}

/** What a receipt check proved. */
export interface VerifiedReceipt {
  workspaceId: string;
  sessionId: string;
  revision: number;
  eventId: string;
  keyId: string;
  issuedAt: string;
  actorAssurance: 'link_holder';
}

/** The exact answer a receipt must prove. */
export interface VerifyResponseInput {
  sessionId: string;
  revision: number;
  eventId: string;
  /** The immutable Surface the engine sent for that revision. */
  surface: Surface;
  answer: Answer;
  receipt: string;
  /**
   * For a saved answer only: the workspace an earlier verification of this Session's receipt
   * already trusted (the record's). When given, the receipt must belong to it and no read is
   * made to learn it; a client that knows another trusted workspace refuses it.
   */
  workspaceId?: string | undefined;
}

/**
 * The kinds of failure a {@link SessApi} reports, as an SDK would:
 * - `api`: Sess answered with an error (`status`, `apiCode`).
 * - `transport`: the connection failed after the request may have been sent.
 * - `not_sent`: the request was definitely not sent (`notSentKind` says why).
 * - `timeout`: no answer in time; for a mutation the outcome is unknown.
 * - `unknown_outcome`: the request was sent and its answer was lost.
 * - `aborted`: the caller's signal ended the call.
 * - `configuration`: the client is misconfigured (origin, key, trusted workspace).
 * - `protocol`: a response was malformed or self-contradictory; fail closed.
 * - `verification`: a receipt did not verify (`reason`).
 */
export type SessApiErrorKind =
  | 'api'
  | 'transport'
  | 'not_sent'
  | 'timeout'
  | 'unknown_outcome'
  | 'aborted'
  | 'configuration'
  | 'protocol'
  | 'verification';

/**
 * Why a receipt did not verify. `key_set_unavailable` and `key_refresh_cooldown` are retryable
 * (nothing is recorded); `context_missing` means no trusted workspace is configured; every other
 * reason blocks the interaction.
 */
export type VerificationReason =
  | 'malformed'
  | 'bad_signature'
  | 'unknown_key_id'
  | 'foreign_key'
  | 'claims_mismatch'
  | 'key_set_unavailable'
  | 'key_refresh_cooldown'
  | 'context_missing';

/**
 * Why a connection to Sess could not be made (a `not_sent` failure of `notSentKind: 'transport'`),
 * as one fixed word: the origin's host name does not resolve (`name_not_resolved`), its lookup
 * failed for now (`name_lookup_failed`), the connection was refused (`connection_refused`), there
 * is no route to the host (`unreachable`), no connection was made in time (`connect_timeout`), its
 * TLS certificate is not trusted: expired, not yet valid, self-signed or of an unknown issuer
 * (`tls_certificate`), or it is for another host name (`tls_name_mismatch`).
 */
export type ConnectCause =
  | 'name_not_resolved'
  | 'name_lookup_failed'
  | 'connection_refused'
  | 'unreachable'
  | 'connect_timeout'
  | 'tls_certificate'
  | 'tls_name_mismatch';

/** Details of a {@link SessApiError}. */
export interface SessApiErrorDetails {
  status?: number;
  /** Sess's own error code from the error body, e.g. `conflict`, `plan_limit`, `invalid_request`. */
  apiCode?: string;
  field?: string;
  limit?: number;
  length?: number;
  reason?: VerificationReason;
  /** For `protocol`: which check the response failed, a fixed snake_case word (never data). */
  protocolReason?: string;
  /** For `not_sent`: `configuration` (a deterministic client check) or `transport`. */
  notSentKind?: 'configuration' | 'transport';
  /** For a `not_sent` transport failure: why no connection was made. */
  connectCause?: ConnectCause;
  /**
   * For a `not_sent` transport failure: the Sess origin the connection was for (scheme, host and
   * port only; an origin is not a secret).
   */
  origin?: string;
  /**
   * For an `api` error of status 429 or 503: how long Sess asked the caller to wait before the
   * next request (its `Retry-After`), in milliseconds, at most an hour.
   */
  retryAfterMs?: number;
  cause?: unknown;
}

/** The one error a {@link SessApi} implementation throws. Its message never holds a secret. */
export class SessApiError extends Error {
  override readonly name = 'SessApiError';
  readonly kind: SessApiErrorKind;
  readonly status?: number;
  readonly apiCode?: string;
  readonly field?: string;
  readonly limit?: number;
  readonly length?: number;
  readonly reason?: VerificationReason;
  readonly protocolReason?: string;
  readonly notSentKind?: 'configuration' | 'transport';
  readonly connectCause?: ConnectCause;
  readonly origin?: string;
  readonly retryAfterMs?: number;

  constructor(kind: SessApiErrorKind, message: string, details: SessApiErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    if (details.status !== undefined) this.status = details.status;
    if (details.apiCode !== undefined) this.apiCode = details.apiCode;
    if (details.field !== undefined) this.field = details.field;
    if (details.limit !== undefined) this.limit = details.limit;
    if (details.length !== undefined) this.length = details.length;
    if (details.reason !== undefined) this.reason = details.reason;
    if (details.protocolReason !== undefined) this.protocolReason = details.protocolReason;
    if (details.notSentKind !== undefined) this.notSentKind = details.notSentKind;
    if (details.connectCause !== undefined) this.connectCause = details.connectCause;
    if (details.origin !== undefined) this.origin = details.origin;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * Talking to Sess, already bound to one credential.
 *
 * Implementations MUST decode every response strictly and throw {@link SessApiError} of kind
 * `protocol` for anything malformed or self-contradictory; MUST send `idempotencyKey` so a
 * repeated create/publish/complete with the same key is answered with the original outcome;
 * MUST throw only {@link SessApiError}; MUST NOT log links, keys, receipts or answers.
 */
export interface SessApi {
  /** Create a Session at revision 1. */
  createSession(input: CreateSessionInput, options?: SessCallOptions): Promise<SessionView>;
  /** Read a Session. */
  getSession(sessionId: string, options?: SessCallOptions): Promise<SessionView>;
  /**
   * Wait at most `timeoutMs` (≤ 45 000) until the Session is no longer at (`revision`, `status`);
   * MUST return at once when it already differs, and return the current view when time runs out.
   */
  waitSession(
    sessionId: string,
    known: { revision: number; status: SessionStatus; timeoutMs: number },
    options?: SessCallOptions,
  ): Promise<SessionView>;
  /** Publish the next revision after the answer `responseEventId` at `expectedRevision`. */
  publish(sessionId: string, input: PublishInput, options?: SessCallOptions): Promise<SessionView>;
  /** Complete the Session after the answer `responseEventId` at `expectedRevision`. */
  complete(sessionId: string, input: CompleteInput, options?: SessCallOptions): Promise<SessionView>;
  /**
   * Withdraw the Session at `expectedRevision` while it has no answer there: Sess closes it
   * (`withdrawn`, final) and the person's page says so. An answer at that revision is `api` 409.
   */
  withdrawSession(sessionId: string, input: WithdrawInput, options?: SessCallOptions): Promise<SessionView>;
  /**
   * Close an Ask to new respondents and withdraw every respondent page not yet answered; answers
   * already given stay readable. Resolves to the closed Ask.
   */
  closeAsk(askId: string, input: CloseAskInput, options?: SessCallOptions): Promise<AskView>;
  /** Create an Ask. */
  createAsk(input: CreateAskInput, options?: SessCallOptions): Promise<AskView>;
  /** Read an Ask with every respondent. */
  getAsk(askId: string, options?: SessCallOptions): Promise<AskView>;
  /**
   * Verify the receipt of one answer for that exact Session, revision, event, Surface and answer,
   * against the trusted workspace. Throws kind `verification` with a {@link VerificationReason}.
   */
  verifyResponse(input: VerifyResponseInput, options?: SessCallOptions): Promise<VerifiedReceipt>;
}

// ---------------------------------------------------------------------------------------------
// Bindings and authority

// What a handle is bound to is model data (`model/binding.ts`); the `Authority` port resolves it.
export type { Binding, HttpBinding, StdioBinding } from '../model/binding.js';

/** Which fields a scope is made of: a stdio profile, an HTTP grant, or an HTTP principal. */
type ScopeTag = 'stdio' | 'http' | 'http-principal';

/** A scope made recently, with the identity fields (all strings) it was made from. */
interface RecentScope {
  tag: ScopeTag;
  fields: readonly string[];
  scope: string;
}

/** How many scopes {@link bindingScope} keeps: the few bindings a process serves at once. */
const RECENT_SCOPES = 16;
const recentScopes: RecentScope[] = [];
let nextRecent = 0;

/** The tag and identity fields of a binding's scope. */
function scopeFields(binding: Binding): { tag: ScopeTag; fields: unknown[] } {
  if (binding.kind === 'stdio') return { tag: 'stdio', fields: [binding.profile, binding.apiOrigin] };
  const person = [binding.origin, binding.workspaceId, binding.principalId];
  return binding.share === 'principal'
    ? { tag: 'http-principal', fields: person }
    : { tag: 'http', fields: [...person, binding.clientId, binding.grantId] };
}

/** True when `fields` are exactly the identity fields of `memo`, each the same string. */
function sameIdentity(tag: ScopeTag, fields: readonly unknown[], memo: RecentScope): boolean {
  return (
    memo.tag === tag &&
    memo.fields.length === fields.length &&
    memo.fields.every((field, index) => field === fields[index])
  );
}

/**
 * The identity part of a binding (everything but the credential or grant generation), as a
 * stable string. Records are scoped by it: another scope never sees them (`HANDLE_NOT_FOUND`);
 * the same scope with another generation gets `BINDING_MISMATCH` ({@link sameGeneration}).
 *
 * An HTTP binding's scope is its origin, workspace, principal, client and grant; with
 * `share: 'principal'`, its origin, workspace and principal only (another scope than any
 * client's and grant's, so records made without `share` are not in it).
 */
export function bindingScope(binding: Binding): string {
  // A request asks this several times, for its own binding and for the binding of every record
  // it reads (a new object each time, with the same strings): the scopes made last are kept with
  // their fields and given again while every identity field is the same string.
  const { tag, fields } = scopeFields(binding);
  for (const memo of recentScopes) if (sameIdentity(tag, fields, memo)) return memo.scope;
  const scope = JSON.stringify([tag, ...fields]);
  // Only strings are compared by value; a binding with anything else is not remembered.
  if (fields.every((field) => typeof field === 'string')) {
    recentScopes[nextRecent] = { tag, fields: fields as string[], scope };
    nextRecent = (nextRecent + 1) % RECENT_SCOPES;
  }
  return scope;
}

/** The generation part of a binding. */
export function bindingGeneration(binding: Binding): string {
  return binding.kind === 'stdio' ? binding.credentialGeneration : binding.grantGeneration;
}

/**
 * Whether a caller of binding `call` may use a record made under binding `record` of the same
 * scope ({@link bindingScope}); `false` is `BINDING_MISMATCH`. The one rule every engine path and
 * store applies:
 * - a record shared by its principal (`share: 'principal'`) is refused only to the client and
 *   grant it was made through at another grant generation (that grant was revoked and consented
 *   again); every other client and grant of the person reaches it;
 * - any other record, only to the same credential or grant generation.
 */
export function sameGeneration(record: Binding, call: Binding): boolean {
  if (record.kind === 'http' && call.kind === 'http' && record.share === 'principal') {
    const sameGrant = record.clientId === call.clientId && record.grantId === call.grantId;
    return !sameGrant || record.grantGeneration === call.grantGeneration;
  }
  return bindingGeneration(record) === bindingGeneration(call);
}

/**
 * Whether every record a caller of `binding` may use has the caller's generation, so a listing
 * may ask the store for that one generation (`ListPageQuery.generation`). Not so for a binding
 * shared by its principal: the records of the person's other grants are of other generations.
 */
export function hasOneGeneration(binding: Binding): boolean {
  return binding.kind === 'stdio' || binding.share !== 'principal';
}

/**
 * Who is behind a binding, whatever client or grant they came through, as a stable string: over
 * HTTP the person (origin, workspace and principal, without the client and the grant), so that
 * registering more OAuth clients does not give one person more of a shared limit; over stdio the
 * same as {@link bindingScope} (the profile and the API origin: one owner). The wait gate caps
 * upstream waits per principal by it as well as per scope.
 */
export function bindingPrincipal(binding: Binding): string {
  return binding.kind === 'stdio'
    ? bindingScope(binding)
    : JSON.stringify(['http', binding.origin, binding.workspaceId, binding.principalId]);
}

/** Everything one tool call runs with, resolved by an {@link Authority}. */
export interface CallAuthority {
  binding: Binding;
  /** Sess, bound to this caller's credential. */
  sess: SessApi;
  /** Records, scoped to `bindingScope(binding)`. */
  store: HandleStore;
}

/**
 * Who is calling. `resolve` MUST be called at most once per tool call and MUST throw a
 * `SessMcpError` `NOT_CONFIGURED` when no credential can be had (stdio reads `SESS_API_KEY` here,
 * on the first tool call, never at start-up).
 */
export interface Authority {
  resolve(): Promise<CallAuthority>;
}

// ---------------------------------------------------------------------------------------------
// Store

/** A record with the version compare-and-set works on. */
export interface VersionedRecord {
  /** Starts at 1 on create and goes up by exactly 1 on every successful update. */
  version: number;
  record: InteractionRecord;
}

/** How many unfinished interactions one binding scope may hold. */
export const MAX_UNFINISHED = 100;

/**
 * The per-principal quota of open interactions the HTTP face sets unless told otherwise. Size it
 * so that quota × principals active at once ≤ the Sess plan's limit of open Sessions, or one busy
 * caller can fill the plan for everyone.
 */
export const DEFAULT_MAX_OPEN_PER_PRINCIPAL = 25;

/** The largest per-principal quota an option takes. */
export const MAX_OPEN_PER_PRINCIPAL = 100_000;

/** The limits a {@link HandleStore.create} enforces besides {@link MAX_UNFINISHED}. */
export interface CreateLimits {
  /**
   * The most unfinished records the binding's principal ({@link bindingPrincipal}) may hold over
   * all its scopes, the new one included. Ignored for a stdio binding (a profile has one caller).
   */
  maxOpenPerPrincipal?: number;
}

/**
 * The fixed words a store failure carries in its `reason`; callers branch on these, never on the
 * message. `INVALID_STATE`:
 * - `exists`: `create` under a handle that exists; nothing was written.
 * - `stale_version`: `update` at a version that is not the current one; nothing was written.
 *
 * Non-retryable `STATE_STORE_ERROR`, refused before anything is written:
 * - `invalid_record`: the record is not one this store can write (shape, or not JSON).
 * - `invalid_handle`: the record's handle is not a store key.
 * - `foreign_scope`: the record belongs to another binding scope than the view.
 * - `db_data`: the database refused the record's data (a value it cannot hold).
 *
 * Non-retryable `STATE_STORE_ERROR` about what is stored:
 * - `corrupt`: a stored record is unreadable or inconsistent.
 * - `unsupported_version`: a stored record is of a format this version does not read.
 *
 * `STATE_STORE_ERROR` about the medium:
 * - `io_transient`, `db_transient`, `busy` (retryable): a later attempt may get through.
 * - `io_permanent`, `db_permanent` (not retryable): the owner must fix the directory or database.
 * - `unsafe_path`: a directory is another user's or writable by group or others, or a path the
 *   store writes is a symbolic link; the owner must fix the state directory (file store).
 * - `not_migrated`: the table is missing or older than this version; run `migrate()`.
 * - `pg_missing`: the `pg` package is not installed.
 * - `closed`: the store was closed.
 * - `store_failure`: the store threw something that is not a `SessMcpError` (set by the engine).
 */
export type StoreErrorReason = (typeof STORE_ERROR_REASONS)[number];

/** Every {@link StoreErrorReason}, in the order of its documentation. */
export const STORE_ERROR_REASONS = [
  'exists',
  'stale_version',
  'invalid_record',
  'invalid_handle',
  'foreign_scope',
  'db_data',
  'corrupt',
  'unsupported_version',
  'io_transient',
  'io_permanent',
  'busy',
  'db_transient',
  'db_permanent',
  'unsafe_path',
  'not_migrated',
  'pg_missing',
  'closed',
  'store_failure',
] as const;

/**
 * Where records of one binding scope live.
 *
 * Implementations MUST:
 * - store every record the engine can make and return it deep-equal: any string, including
 *   U+0000, lone surrogates and astral characters, in any position (answers are untrusted input
 *   and are kept as they came);
 * - make `create` fail with `SessMcpError` `INVALID_STATE` (reason `exists`) when the handle
 *   exists, in any scope;
 * - enforce {@link MAX_UNFINISHED} atomically in `create`: an unfinished record over the cap fails
 *   with `STATE_STORE_FULL` and writes nothing, exact under concurrency;
 * - enforce `limits.maxOpenPerPrincipal` atomically in `create` for an HTTP binding, counting by
 *   {@link bindingPrincipal}: an unfinished record that would make the principal's unfinished
 *   records over all its scopes exceed it fails with `PRINCIPAL_QUOTA_REACHED` and writes nothing,
 *   exact under concurrency, across every process sharing the store's medium;
 * - make `update` a compare-and-set that fails with `INVALID_STATE` (reason `stale_version`) and
 *   changes nothing when `expectedVersion` is not the current version;
 * - never return a record of another scope, and treat a handle that is not a store key as not found;
 * - report failures as `STATE_STORE_ERROR` with a {@link StoreErrorReason}: unreadable or
 *   unsupported-version records and records it refuses to write as non-retryable, transient
 *   failures of the medium as retryable;
 * - write each change whole or not at all.
 */
export interface HandleStore {
  get(handle: string): Promise<VersionedRecord | undefined>;
  create(record: InteractionRecord, limits?: CreateLimits): Promise<VersionedRecord>;
  update(record: InteractionRecord, expectedVersion: number): Promise<VersionedRecord>;
  /** Remove a record; with `expectedVersion`, only if it is still at that version. */
  delete(handle: string, expectedVersion?: number): Promise<boolean>;
  /** Unfinished records of this scope, oldest first. */
  listUnfinished(): Promise<VersionedRecord[]>;
  countUnfinished(): Promise<number>;
  /**
   * One page of this scope's records, finished ones included, in listing order (see
   * {@link ListPageQuery}). Optional: a store without it still works with `sess_list` through
   * `listUnfinished`, but then lists no finished records (`completed`, `expired`, `withdrawn`,
   * closed Asks).
   */
  listPage?(query: ListPageQuery): Promise<ListPage>;
  /**
   * The secret `sess_list` signs its cursors with, so a caller can neither forge nor change one.
   * Implementations MUST return at least {@link LIST_CURSOR_KEY_BYTES} bytes drawn from a CSPRNG,
   * MUST return the same bytes from every view over the same records (every instance of a shared
   * store, and after a restart for a durable one), so a cursor made on one instance pages on
   * another, and MUST never write them to a log or an error message. The caller does not change
   * the bytes returned. Optional: without it the engine signs with a key of its own process, so
   * cursors page only within that process.
   */
  listCursorKey?(): Promise<Uint8Array>;
}

/** The fewest bytes a {@link HandleStore.listCursorKey} holds (256 bits). */
export const LIST_CURSOR_KEY_BYTES = 32;

/**
 * Where a listing page starts: the key of the last record of the previous page. Pages are a
 * keyset over (`group` ascending, `createdAt` descending, `handle` descending), so a page stays
 * stable while records change state.
 */
export interface ListPageKey {
  group: ListGroup;
  createdAt: string;
  handle: string;
}

/**
 * What {@link HandleStore.listPage} is asked for. A store MUST apply `kinds` and `generation`
 * itself, so that the work of one page is bounded by `limit` (and a constant), never by the
 * number of records it leaves out: an index per state kind and generation, not a filter after
 * reading. It MAY also return a record whose generation it does not know yet (a row an earlier
 * version of the store wrote, until its migration fills it in); `sess_list` checks the binding of
 * every record it lists.
 */
export interface ListPageQuery {
  /** Only records whose `state.kind` is one of these; every kind when absent. */
  kinds?: readonly InteractionStateKind[];
  /**
   * Only records whose binding generation (`bindingGeneration(record.binding)`) is this; every
   * generation of the view's scope when absent. `sess_list` sends it whenever its caller's
   * records all have one generation (`hasOneGeneration`), and checks every record it lists with
   * `sameGeneration`.
   */
  generation?: string;
  /** Records strictly after this key in listing order; from the first when absent. */
  after?: ListPageKey;
  /** At most this many records (1–100). */
  limit: number;
}

/** One listing page. */
export interface ListPage {
  /**
   * In listing order: `listGroupOf(record.state.kind)` ascending, then `createdAt` descending,
   * then `handle` descending (compared as UTF-16 code units, i.e. `"C"` collation).
   */
  records: VersionedRecord[];
  /** True when records after the last one returned exist. */
  more: boolean;
}

/**
 * A backend that holds the records of many bindings and hands out one {@link HandleStore} view
 * per binding. A view sees, counts and caps only the records of `bindingScope(binding)`; records
 * of the same scope with another credential or grant generation are returned (the engine decides
 * by {@link sameGeneration} which of them are `BINDING_MISMATCH`).
 */
export interface HandleStoreFactory {
  /** The store view of one binding scope. Cheap: call it per tool call. */
  forBinding(binding: Binding): HandleStore;
  /**
   * The store's event outbox (`outbox.ts`): every event a record write adds is owed to every sink
   * until delivered. Optional: a store without it delivers no events.
   */
  outbox?(): EventOutbox;
  /**
   * One page of the records a watcher polls, over every scope: those whose state kind is one of
   * `WATCHED_STATE_KINDS` (`waiting`, `ask_open`), in handle order (UTF-16 code units, the `"C"`
   * collation), strictly after `query.after`. The HTTP watcher and sweep
   * (`createSessMcpWatcher`) page through it; a store without it cannot be watched.
   *
   * Implementations MUST:
   * - return only records of a watched kind, each deep-equal to what was written (the store's own
   *   copy), whatever its scope or generation;
   * - return them in ascending handle order, every handle strictly after `query.after`, at most
   *   `query.limit` of them;
   * - bound the work of one page by `limit` (and a constant), never by the number of records of
   *   other kinds: an index of the watched records, not a filter after reading them all;
   * - set `next` whenever more watched records may follow (the handle to pass as `after`, at
   *   least the last returned), and leave it out only when none follow; a record that changed
   *   kind or cannot be read between the index and the read is left out, without failing the
   *   page (reading its handle reports it);
   * - throw a `TypeError` naming the field for a query out of bounds (`limit` 1–
   *   {@link MAX_WAITING_PAGE_LIMIT}, `after` a string).
   */
  waiting?(query: WaitingQuery): Promise<WaitingPage>;
  /**
   * Whether the store can serve now: what a readiness check (`createSessMcpHttpHandler`'s
   * `health.store`) asks before a load balancer sends requests here. Optional: a store without it
   * cannot gate readiness.
   *
   * Implementations MUST:
   * - never throw: every failure is `{ kind: 'not_ready', reason }`, the reason a
   *   {@link StoreNotReadyReason};
   * - answer within {@link STORE_READY_TIMEOUT_MS} (`timeout` when the medium has not answered by
   *   then), and keep at most one check of the medium in flight, so a hung database is not asked
   *   again by every probe;
   * - report `not_migrated` when the store's layout is older than this version (its `migrate()`
   *   has not run, or not to its end), and `closed` once the store was closed;
   * - read and write no record, and never call Sess.
   */
  ready?(): Promise<StoreReadiness>;
  /**
   * Remove finished records that finished before `query.olderThan`, at most `query.limit` of them,
   * over every scope: retention, for a host's own schedule (the watchers call it too). Optional:
   * a store without it keeps every record until the owner removes it.
   *
   * Implementations MUST:
   * - remove only records of a finished kind (`FINISHED`: `completed`, `expired`, `withdrawn`,
   *   `ask_closed`) whose finish time (`finishedAtOf`: the record's `updatedAt`) is before
   *   `olderThan`; never a record that waits for the person, the agent or the owner (`blocked`,
   *   `create_*`, `*_pending`), nor one that cannot be read;
   * - keep a record while one of its events is owed to a sink (an attempt made or claimed and
   *   neither delivered nor dead-lettered, `holdsRecord` in the store kit's outbox rules), and
   *   remove a pruned record's events and their deliveries with it, so nothing is left behind;
   * - remove each record whole: a read of its handle afterwards finds nothing (the engine then
   *   reports `HANDLE_NOT_FOUND`), a read during the prune finds it whole or not at all;
   * - bound the work of one call by `limit` (and a constant) through an index of the finished
   *   records by finish time, and never hold up writes of unfinished records for longer than one
   *   small batch; set `more` when records that qualify may be left;
   * - throw a `TypeError` naming the field for a query out of bounds (`olderThan` not a time in
   *   milliseconds, `limit` not 1 to {@link MAX_PRUNE_LIMIT}) or with a field it does not know.
   */
  prune?(query: PruneQuery): Promise<PruneResult>;
}

/** The most records one {@link PruneQuery} may remove. */
export const MAX_PRUNE_LIMIT = 1_000;

/** The records one {@link PruneQuery} removes when it sets no `limit`. */
export const DEFAULT_PRUNE_LIMIT = 100;

/** What {@link HandleStoreFactory.prune} is asked for. */
export interface PruneQuery {
  /** Remove records that finished before this time, in milliseconds since the epoch. */
  olderThan: number;
  /**
   * At most this many records (1 to {@link MAX_PRUNE_LIMIT}).
   * @default 100 ({@link DEFAULT_PRUNE_LIMIT})
   */
  limit?: number;
}

/** What one {@link HandleStoreFactory.prune} did. */
export interface PruneResult {
  /** How many records it removed. */
  removed: number;
  /** True when more records that qualify may be left: call again (a loop ends when it is false). */
  more: boolean;
}

/** The longest a store's {@link HandleStoreFactory.ready} takes before it answers `timeout`: 1 s. */
export const STORE_READY_TIMEOUT_MS = 1_000;

/**
 * Why a store is not ready: a {@link StoreErrorReason} (`db_transient` for a database that cannot
 * be reached, `not_migrated`, `unsafe_path`, `closed`, …), or `timeout` when the medium did not
 * answer within {@link STORE_READY_TIMEOUT_MS}.
 */
export type StoreNotReadyReason = StoreErrorReason | 'timeout';

/** What {@link HandleStoreFactory.ready} found. */
export type StoreReadiness =
  /** The medium answered and the store's layout is current. */
  | { kind: 'ready' }
  /** It did not: `reason` says why in one word, never a path, host or password. */
  | { kind: 'not_ready'; reason: StoreNotReadyReason };

/** The most records one {@link WaitingQuery} may ask for. */
export const MAX_WAITING_PAGE_LIMIT = 500;

/** What {@link HandleStoreFactory.waiting} is asked for. */
export interface WaitingQuery {
  /** Records whose handle comes strictly after this one; from the first when absent. */
  after?: string;
  /** At most this many records (1 to {@link MAX_WAITING_PAGE_LIMIT}). */
  limit: number;
}

/** One page of {@link HandleStoreFactory.waiting}. */
export interface WaitingPage {
  /** Watched records in ascending handle order. */
  records: VersionedRecord[];
  /** Where the next page starts (pass it as `after`); absent when no watched record follows. */
  next?: string;
}

// ---------------------------------------------------------------------------------------------
// Clock and diagnostics

/** Time, replaceable in tests. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A diagnostic event: a fixed event name and, at most, a code, numbers, names and a received
 * value that is not a secret. Sinks receive nothing else: never a link, key, handle secret,
 * receipt or answer value.
 */
export interface DiagnosticEvent {
  event: string;
  code?: ErrorCode;
  tool?: string;
  state?: string;
  ms?: number;
  /** The name (never the value) of the configuration variable or option the event is about. */
  variable?: string;
  /** The field of a value the event is about (e.g. a principal's `grantGeneration`), never its value. */
  field?: string;
  /** What that field must be, in fixed words (`a non-empty string`, `an array of strings`, …). */
  expected?: string;
  /**
   * The value received that the event is about, only where it is not a secret: the `Host` or
   * `Origin` header of a refused request (`http.host_rejected`, `http.origin_rejected`). At most
   * 200 characters (a longer value is cut and ends with `…`), with every control character,
   * bidirectional formatting character, line or paragraph separator and lone surrogate written as
   * `\uXXXX`.
   */
  received?: string;
}

/** Where diagnostics go (stderr for stdio, the host's sink for HTTP). */
export type DiagnosticsSink = (event: DiagnosticEvent) => void;
