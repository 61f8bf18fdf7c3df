/**
 * The Sess client: implements the {@link SessApi} port over the HTTP wire of `docs/sess-api.md`
 * with nothing but `fetch` and WebCrypto, so it runs on Node and edge runtimes alike.
 *
 * Every response is decoded strictly (`wire.ts` schemas and consistency rules, plus what the
 * request itself implies: the Session asked for, the revision a publish must produce, the
 * workspace this client talks to); anything else is a `protocol` error that fails closed. Failures
 * are reported as the kinds of {@link SessApiError}; the engine maps them to tool errors as
 * `docs/architecture.md` ("Error mapping") says.
 *
 * It deliberately logs nothing, retries nothing and keeps no state but the workspace it has seen
 * and the receipt key-set cache. The API key is read from `credential()` on every call and never
 * put in an error.
 */
import * as v from 'valibot';
import {
  type AskView,
  type Clock,
  type SessApi,
  SessApiError,
  type SessionStatus,
  systemClock,
} from '../core/ports.js';
import { runExchange } from './errors.js';
import { validateSessOrigin } from './origin.js';
import { createReceiptVerifier, DEFAULT_KEY_REFRESH_COOLDOWN_MS, type ReceiptVerifier } from './receipt.js';
import {
  askViewProblem,
  ErrorBodySchema,
  HEADERS,
  IdSchema,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_WAIT_MS,
  PATHS,
  SESSION_STATUSES,
  sessionViewProblem,
  toAskView,
  toSessionView,
  WireAskViewSchema,
  type WireSessionView,
  WireSessionViewSchema,
} from './wire.js';

/** Options of {@link createSessClient}. */
export interface SessClientOptions {
  /** The Sess API origin, e.g. `https://api.sess.si` (HTTPS, no path, query or credentials). */
  origin: string;
  /**
   * Returns the API key; called on every request, so a rotated key is picked up at once. The key
   * is sent only as `Authorization: Bearer …` to `origin` and never appears in an error.
   */
  credential: () => string | Promise<string>;
  /** The `fetch` to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * The workspace receipts must belong to. When set, a response naming another workspace is a
   * `protocol` error. When unset, the `Sess-Workspace-Id` this client's responses name is trusted
   * (a client that has seen none yet reads the Session it verifies to learn it); a runtime that
   * sends no such header then gets `context_missing`.
   */
  expectedWorkspaceId?: string;
  /** The receipt issuer (`iss`) when it differs from the origin. @default origin */
  receiptIssuer?: string;
  /** Testing only: allow `http://localhost`, `http://127.0.0.1`, `http://[::1]`. @default false */
  allowInsecureLocalhost?: boolean;
  /** Time, for the key-set cooldown. @default systemClock */
  clock?: Clock;
  /** At most one receipt key-set fetch per this many milliseconds. @default 10 000 */
  keyRefreshCooldownMs?: number;
  /**
   * The client's own deadline per request, in milliseconds; a wait gets its `timeoutMs` on top.
   * @default 30 000
   */
  requestTimeoutMs?: number;
  /**
   * A receipt verifier to share, with its key-set cache, between clients of the same origin (a
   * face that builds a client per call should pass one, so the key set is not fetched per call and
   * the cooldown holds across calls). Its own origin, issuer, clock and cooldown apply; the
   * trusted workspace is still this client's. @default a verifier of this client's own
   */
  receiptVerifier?: ReceiptVerifier;
}

/** The default per-request deadline, in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The largest response body the client reads, in bytes. */
const MAX_RESPONSE_BYTES = 8_388_608;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]+$/;
// What of a server's own words may go into a message: an error code, a JSON pointer, a path.
const SAFE_API_CODE = /^[a-z][a-z0-9_]{0,63}$/;
const SAFE_POINTER = /^(\/[A-Za-z0-9_~.-]{0,64}){0,16}$/;
const WIRE_MEMBERS: ReadonlySet<string> = new Set([
  'id',
  'workspace_id',
  'revision',
  'status',
  'human_url',
  'expires_at',
  'extendable_until',
  'responses',
  'event_id',
  'answer',
  'action',
  'values',
  'submitted_at',
  'receipt',
  'max',
  'started',
  'answered',
  'respondents',
  'session_id',
  'name',
  'response',
]);
// Printable ASCII without spaces: nothing that could break out of the Authorization header.
const BEARER_TOKEN = /^[\x21-\x7e]+$/;

function optionError(name: string, problem: string): TypeError {
  return new TypeError(`${name} ${problem}`);
}

function isId(value: unknown): value is string {
  return v.is(IdSchema, value);
}

function isPositiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

interface ResolvedOptions {
  origin: string;
  credential: () => string | Promise<string>;
  fetch: typeof fetch;
  expectedWorkspaceId: string | undefined;
  issuer: string;
  clock: Clock;
  keyRefreshCooldownMs: number;
  requestTimeoutMs: number;
  receiptVerifier: ReceiptVerifier | undefined;
}

function resolveOptions(options: SessClientOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  const insecure = options.allowInsecureLocalhost;
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    throw optionError('allowInsecureLocalhost', 'must be a boolean');
  }
  let origin: string;
  try {
    origin = validateSessOrigin(options.origin, { allowInsecureLocalhost: insecure === true });
  } catch (error) {
    throw optionError('origin', `is invalid: ${(error as Error).message}`);
  }
  if (typeof options.credential !== 'function') throw optionError('credential', 'must be a function');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw optionError('fetch', 'must be a function');
  const expected = options.expectedWorkspaceId;
  if (expected !== undefined && !isId(expected)) {
    throw optionError('expectedWorkspaceId', 'must be a workspace id (1–128 of A–Z a–z 0–9 _ -)');
  }
  const issuer = options.receiptIssuer;
  if (issuer !== undefined && (typeof issuer !== 'string' || issuer.length === 0)) {
    throw optionError('receiptIssuer', 'must be a non-empty string');
  }
  const clock = options.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw optionError('clock', 'must have a now() method');
  }
  const cooldown = options.keyRefreshCooldownMs ?? DEFAULT_KEY_REFRESH_COOLDOWN_MS;
  if (typeof cooldown !== 'number' || !Number.isFinite(cooldown) || cooldown < 0) {
    throw optionError('keyRefreshCooldownMs', 'must be a finite number ≥ 0');
  }
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > 2_147_483_647) {
    throw optionError('requestTimeoutMs', 'must be a finite number of milliseconds > 0');
  }
  const verifier = options.receiptVerifier;
  if (
    verifier !== undefined &&
    (typeof verifier !== 'object' || verifier === null || typeof verifier.verify !== 'function')
  ) {
    throw optionError('receiptVerifier', 'must be a verifier from createReceiptVerifier()');
  }
  return {
    origin,
    credential: options.credential,
    // Called unbound: some runtimes refuse `fetch` with another `this`.
    fetch: (input, init) => fetchImpl(input, init),
    expectedWorkspaceId: expected,
    issuer: issuer ?? origin,
    clock,
    keyRefreshCooldownMs: cooldown,
    requestTimeoutMs: timeout,
    receiptVerifier: verifier,
  };
}

/** A request the client refuses to build: nothing is sent, and repeating it cannot help. */
function refuseToSend(what: string, problem: string): SessApiError {
  return new SessApiError('not_sent', `The request to ${what} was not sent: ${problem}.`, {
    notSentKind: 'configuration',
  });
}

function protocol(what: string, problem: string): SessApiError {
  return new SessApiError('protocol', `Sess sent an invalid response to ${what}: ${problem}.`);
}

/** Where the first problem of a failed decode is, as a dotted path (member names only, no values). */
function issuePath(issues: readonly v.BaseIssue<unknown>[]): string {
  const first = issues[0];
  const path = first === undefined ? null : v.getDotPath(first);
  if (path === null) return 'the body';
  // Record keys (answer `values`) are the server's words: the path stops before the first segment
  // that is not a wire member name or an index.
  const shown: string[] = [];
  for (const segment of path.split('.')) {
    if (!WIRE_MEMBERS.has(segment) && !/^\d{1,6}$/.test(segment)) break;
    shown.push(segment);
  }
  return shown.length === 0 ? 'the body' : shown.join('.');
}

interface Call {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  mutation: boolean;
  what: string;
  /** The status a success must have. */
  expectStatus: number;
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

/**
 * Create a {@link SessApi} bound to one origin and credential.
 *
 * Every method throws only {@link SessApiError}; its `kind` says what happened (the engine turns
 * kinds into tool errors as `docs/architecture.md`, "Error mapping", says):
 * - `api`: Sess answered with an error body (`status`, `apiCode`, `field`, `limit`, `length`), or
 *   a 5xx without one (`status` only);
 * - `not_sent`: nothing left this process, `notSentKind: 'transport'` (refused, unreachable, DNS,
 *   TLS) or `'configuration'` (the client refused to build the request: a bad id, idempotency key,
 *   revision, wait or lifetime);
 * - `transport`: a read's connection failed after it may have been sent;
 * - `unknown_outcome`: a create, publish or complete was (possibly) sent and its answer was lost,
 *   including when the client's deadline ran out; repeat it with the same idempotency key;
 * - `timeout`: a read had no answer by the deadline (`requestTimeoutMs`, or a wait's `timeoutMs`
 *   plus `requestTimeoutMs`);
 * - `aborted`: the caller's signal ended the call;
 * - `configuration`: no usable API key (the provider failed, returned nothing, or a value that
 *   cannot be a bearer token), or a Surface that is not JSON when verifying;
 * - `protocol`: a response that is malformed, self-contradictory, of another Session or
 *   workspace, a redirect, or a 4xx without a Sess error body; fail closed;
 * - `verification`: a receipt did not verify (`reason`).
 *
 * @throws TypeError naming the option when an option is invalid.
 * @example
 * ```ts
 * const sess = createSessClient({
 *   origin: 'https://api.sess.si',
 *   credential: () => process.env.SESS_API_KEY ?? '',
 * });
 * const view = await sess.createSession({ surface, idempotencyKey: crypto.randomUUID() });
 * ```
 */
export function createSessClient(options: SessClientOptions): SessApi {
  const config = resolveOptions(options);
  /** The workspace named by `Sess-Workspace-Id` on this client's responses. */
  let seenWorkspaceId: string | undefined;
  const receipts =
    config.receiptVerifier ??
    createReceiptVerifier({
      origin: config.origin,
      allowInsecureLocalhost: options.allowInsecureLocalhost === true,
      issuer: config.issuer,
      fetch: config.fetch,
      clock: config.clock,
      keyRefreshCooldownMs: config.keyRefreshCooldownMs,
      requestTimeoutMs: config.requestTimeoutMs,
    });

  async function apiKey(): Promise<string> {
    let key: unknown;
    try {
      key = await config.credential();
    } catch {
      // Its message is not kept: a provider may have put the key in it.
      throw new SessApiError('configuration', 'The Sess API key could not be read.');
    }
    if (typeof key !== 'string' || key.length === 0) {
      throw new SessApiError('configuration', 'No Sess API key is configured (SESS_API_KEY).');
    }
    if (!BEARER_TOKEN.test(key)) {
      throw new SessApiError('configuration', 'The Sess API key has characters a bearer token cannot carry.');
    }
    return key;
  }

  /** Check `Sess-Workspace-Id` against the expected and previously seen workspace. */
  function noteWorkspace(headers: Headers, what: string): string | undefined {
    const header = headers.get(HEADERS.workspaceId);
    if (header === null) return undefined;
    if (!isId(header)) throw protocol(what, 'the Sess-Workspace-Id header is not a workspace id');
    if (config.expectedWorkspaceId !== undefined && header !== config.expectedWorkspaceId) {
      throw protocol(what, 'the Sess-Workspace-Id header names another workspace than the expected one');
    }
    if (seenWorkspaceId !== undefined && header !== seenWorkspaceId) {
      throw protocol(what, 'the Sess-Workspace-Id header changed between responses');
    }
    seenWorkspaceId = header;
    return header;
  }

  function apiError(status: number, text: string, call: Call): SessApiError {
    let parsed: v.SafeParseResult<typeof ErrorBodySchema> | undefined;
    try {
      parsed = v.safeParse(ErrorBodySchema, JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || !parsed.success) {
      // A proxy's 5xx page is still an unavailable server; a 4xx without Sess's body is not Sess.
      if (status >= 500) {
        return new SessApiError('api', `Sess failed to ${call.what} (HTTP ${status}).`, { status });
      }
      return protocol(call.what, `HTTP ${status} without a Sess error body`);
    }
    const { limit, length } = parsed.output.error;
    // A code or pointer of another shape is dropped (then the status alone classifies the error):
    // it would be the server's free text in our message.
    const code = SAFE_API_CODE.test(parsed.output.error.code) ? parsed.output.error.code : undefined;
    const field =
      parsed.output.error.field !== undefined && SAFE_POINTER.test(parsed.output.error.field)
        ? parsed.output.error.field
        : undefined;
    const extra = [
      field === undefined ? '' : ` at ${field}`,
      limit === undefined ? '' : ` (limit ${limit}${length === undefined ? '' : `, length ${length}`})`,
    ].join('');
    // Sess's own `message` is left out: only fixed words and numbers go into ours.
    return new SessApiError(
      'api',
      `Sess refused to ${call.what}: HTTP ${status} ${code ?? 'error'}${extra}.`,
      {
        status,
        ...(code === undefined ? {} : { apiCode: code }),
        ...(field === undefined ? {} : { field }),
        ...(limit === undefined ? {} : { limit }),
        ...(length === undefined ? {} : { length }),
      },
    );
  }

  /** Send one call; return the decoded JSON of a success, throw a {@link SessApiError} otherwise. */
  async function send(call: Call): Promise<{ json: unknown; headers: Headers; workspaceId?: string }> {
    if (call.signal?.aborted) {
      throw new SessApiError('aborted', `The call to ${call.what} was aborted by the caller.`);
    }
    let body: string | undefined;
    if (call.body !== undefined) {
      try {
        body = JSON.stringify(call.body);
      } catch {
        throw refuseToSend(call.what, 'its body is not JSON');
      }
    }
    const key = await apiKey();
    const headers: Record<string, string> = {
      accept: 'application/json',
      [HEADERS.authorization]: `Bearer ${key}`,
      ...call.headers,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await runExchange({
      fetch: config.fetch,
      url: config.origin + call.path,
      method: call.method,
      headers,
      ...(body === undefined ? {} : { body }),
      mutation: call.mutation,
      what: call.what,
      timeoutMs: call.timeoutMs ?? config.requestTimeoutMs,
      signal: call.signal,
      maxBytes: MAX_RESPONSE_BYTES,
    });
    const workspaceId = noteWorkspace(response.headers, call.what);
    if (response.status !== call.expectStatus) {
      if (response.status >= 400) throw apiError(response.status, response.text, call);
      throw protocol(call.what, `unexpected HTTP ${response.status}`);
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^application\/json\s*(;|$)/i.test(contentType)) throw protocol(call.what, 'the body is not JSON');
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      throw protocol(call.what, 'the body is not JSON');
    }
    return workspaceId === undefined
      ? { json, headers: response.headers }
      : { json, headers: response.headers, workspaceId };
  }

  /** Decode a Session view and check it against itself, the headers and the workspace. */
  function decodeSession(
    result: { json: unknown; headers: Headers; workspaceId?: string },
    what: string,
    sessionId?: string,
  ): WireSessionView {
    const parsed = v.safeParse(WireSessionViewSchema, result.json);
    if (!parsed.success) throw protocol(what, `malformed Session at ${issuePath(parsed.issues)}`);
    const wire = parsed.output;
    const problem = sessionViewProblem(wire);
    if (problem !== undefined) throw protocol(what, problem);
    if (sessionId !== undefined && wire.id !== sessionId) throw protocol(what, 'a view of another Session');
    checkWorkspace(wire.workspace_id, result.workspaceId, what);
    const etag = result.headers.get(HEADERS.etag);
    if (etag !== null && etag !== `"${wire.revision}"` && etag !== `W/"${wire.revision}"`) {
      throw protocol(what, 'the ETag disagrees with the revision');
    }
    return wire;
  }

  function checkWorkspace(bodyWorkspace: string, headerWorkspace: string | undefined, what: string): void {
    if (headerWorkspace !== undefined && bodyWorkspace !== headerWorkspace) {
      throw protocol(what, 'the body names another workspace than the Sess-Workspace-Id header');
    }
    if (config.expectedWorkspaceId !== undefined && bodyWorkspace !== config.expectedWorkspaceId) {
      throw protocol(what, 'the body names another workspace than the expected one');
    }
  }

  function decodeAsk(
    result: { json: unknown; headers: Headers; workspaceId?: string },
    what: string,
    askId?: string,
  ): AskView {
    const parsed = v.safeParse(WireAskViewSchema, result.json);
    if (!parsed.success) throw protocol(what, `malformed Ask at ${issuePath(parsed.issues)}`);
    const problem = askViewProblem(parsed.output);
    if (problem !== undefined) throw protocol(what, problem);
    if (askId !== undefined && parsed.output.id !== askId) throw protocol(what, 'a view of another Ask');
    checkWorkspace(parsed.output.workspace_id, result.workspaceId, what);
    return toAskView(parsed.output);
  }

  function checkIdempotencyKey(key: unknown, what: string): string {
    if (typeof key !== 'string' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !IDEMPOTENCY_KEY.test(key)) {
      throw refuseToSend(what, 'the idempotency key is not 1–255 printable ASCII characters without spaces');
    }
    return key;
  }

  function checkId(id: unknown, what: string, name: string): string {
    if (!isId(id)) throw refuseToSend(what, `the ${name} is not an id`);
    return id;
  }

  function checkExpiresIn(value: unknown, what: string, name: string): void {
    if (value !== undefined && !isPositiveInt(value)) {
      throw refuseToSend(what, `${name} is not a whole number of seconds`);
    }
  }

  function responseAt(wire: WireSessionView, revision: number) {
    return wire.responses.find((r) => r.revision === revision);
  }

  /**
   * The workspace receipts must belong to: the expected one, or the one this client's responses
   * named. A client that has not talked to Sess yet (a fresh process verifying a saved answer)
   * learns it from an authenticated read of the Session whose receipt it verifies; that read's
   * failure is the verification's failure (`api`, `transport`, `protocol`, …).
   */
  async function trustedWorkspace(
    sessionId: string,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    if (config.expectedWorkspaceId !== undefined) return config.expectedWorkspaceId;
    if (seenWorkspaceId === undefined && isId(sessionId)) {
      await api.getSession(sessionId, signal === undefined ? {} : { signal });
    }
    return seenWorkspaceId;
  }

  const api: SessApi = {
    async createSession(input, callOptions) {
      const what = 'create a Session';
      const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
      checkExpiresIn(input.expiresIn, what, 'expiresIn');
      const body: Record<string, unknown> = { interaction: input.surface };
      if (input.expiresIn !== undefined) body.expires_in = input.expiresIn;
      const result = await send({
        method: 'POST',
        path: PATHS.sessions,
        body,
        headers: { [HEADERS.idempotencyKey]: idempotencyKey },
        mutation: true,
        what,
        expectStatus: 201,
        signal: callOptions?.signal,
      });
      const wire = decodeSession(result, what);
      if (wire.revision !== 1 || wire.status !== 'active' || wire.responses.length > 0) {
        throw protocol(what, 'a new Session that is not active at revision 1');
      }
      return toSessionView(wire);
    },

    async getSession(sessionId, callOptions) {
      const what = 'read a Session';
      const id = checkId(sessionId, what, 'Session id');
      const result = await send({
        method: 'GET',
        path: PATHS.session(id),
        mutation: false,
        what,
        expectStatus: 200,
        signal: callOptions?.signal,
      });
      return toSessionView(decodeSession(result, what, id));
    },

    async waitSession(sessionId, known, callOptions) {
      const what = 'wait for a Session';
      const id = checkId(sessionId, what, 'Session id');
      if (!isPositiveInt(known.revision))
        throw refuseToSend(what, 'the known revision is not a positive integer');
      if (!(SESSION_STATUSES as readonly string[]).includes(known.status)) {
        throw refuseToSend(what, 'the known status is not a Session status');
      }
      const waitMs = known.timeoutMs;
      if (typeof waitMs !== 'number' || !Number.isSafeInteger(waitMs) || waitMs < 0 || waitMs > MAX_WAIT_MS) {
        throw refuseToSend(what, `the wait is not a whole number of milliseconds from 0 to ${MAX_WAIT_MS}`);
      }
      const query = new URLSearchParams({
        revision: String(known.revision),
        status: known.status,
        timeout_ms: String(waitMs),
      });
      const result = await send({
        method: 'GET',
        path: `${PATHS.wait(id)}?${query.toString()}`,
        mutation: false,
        what,
        expectStatus: 200,
        timeoutMs: waitMs + config.requestTimeoutMs,
        signal: callOptions?.signal,
      });
      const wire = decodeSession(result, what, id);
      const problem = regression(known, wire.revision, wire.status);
      if (problem !== undefined) throw protocol(what, problem);
      return toSessionView(wire);
    },

    async publish(sessionId, input, callOptions) {
      const what = 'publish the next revision';
      const id = checkId(sessionId, what, 'Session id');
      const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
      if (!isPositiveInt(input.expectedRevision)) {
        throw refuseToSend(what, 'the expected revision is not a positive integer');
      }
      const eventId = checkId(input.responseEventId, what, 'response event id');
      const result = await send({
        method: 'POST',
        path: PATHS.revisions(id),
        body: { response_event_id: eventId, interaction: input.surface },
        headers: {
          [HEADERS.idempotencyKey]: idempotencyKey,
          [HEADERS.ifMatch]: `"${input.expectedRevision}"`,
        },
        mutation: true,
        what,
        expectStatus: 200,
        signal: callOptions?.signal,
      });
      const wire = decodeSession(result, what, id);
      if (wire.revision !== input.expectedRevision + 1 || wire.status !== 'active') {
        throw protocol(what, 'the Session is not active at the next revision');
      }
      if (responseAt(wire, input.expectedRevision)?.event_id !== eventId) {
        throw protocol(what, 'the published revision does not follow the given answer');
      }
      return toSessionView(wire);
    },

    async complete(sessionId, input, callOptions) {
      const what = 'complete a Session';
      const id = checkId(sessionId, what, 'Session id');
      const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
      if (!isPositiveInt(input.expectedRevision)) {
        throw refuseToSend(what, 'the expected revision is not a positive integer');
      }
      const eventId = checkId(input.responseEventId, what, 'response event id');
      const result = await send({
        method: 'POST',
        path: PATHS.complete(id),
        body: { response_event_id: eventId },
        headers: {
          [HEADERS.idempotencyKey]: idempotencyKey,
          [HEADERS.ifMatch]: `"${input.expectedRevision}"`,
        },
        mutation: true,
        what,
        expectStatus: 200,
        signal: callOptions?.signal,
      });
      const wire = decodeSession(result, what, id);
      if (wire.status !== 'completed' || wire.revision !== input.expectedRevision) {
        throw protocol(what, 'the Session is not completed at the expected revision');
      }
      if (responseAt(wire, wire.revision)?.event_id !== eventId) {
        throw protocol(what, 'the Session was completed after another answer');
      }
      return toSessionView(wire);
    },

    async createAsk(input, callOptions) {
      const what = 'create an Ask';
      const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
      const r = input.respondents;
      if (typeof r !== 'object' || r === null || !isPositiveInt(r.max)) {
        throw refuseToSend(what, 'respondents.max is not a positive integer');
      }
      checkExpiresIn(input.expiresIn, what, 'expiresIn');
      checkExpiresIn(r.expiresIn, what, 'respondents.expiresIn');
      checkExpiresIn(r.respondentExpiresIn, what, 'respondents.respondentExpiresIn');
      if (r.name !== undefined && typeof r.name !== 'boolean') {
        throw refuseToSend(what, 'respondents.name is not a boolean');
      }
      const respondents: Record<string, unknown> = { max: r.max };
      if (r.name !== undefined) respondents.name = r.name;
      if (r.expiresIn !== undefined) respondents.expires_in = r.expiresIn;
      if (r.respondentExpiresIn !== undefined) respondents.respondent_expires_in = r.respondentExpiresIn;
      const body: Record<string, unknown> = { interaction: input.surface, respondents };
      if (input.expiresIn !== undefined) body.expires_in = input.expiresIn;
      const result = await send({
        method: 'POST',
        path: PATHS.asks,
        body,
        headers: { [HEADERS.idempotencyKey]: idempotencyKey },
        mutation: true,
        what,
        expectStatus: 201,
        signal: callOptions?.signal,
      });
      const view = decodeAsk(result, what);
      if (view.respondents.length > 0 || view.max !== r.max) {
        throw protocol(what, 'a new Ask that already has respondents or another cap');
      }
      return view;
    },

    async getAsk(askId, callOptions) {
      const what = 'read an Ask';
      const id = checkId(askId, what, 'Ask id');
      const result = await send({
        method: 'GET',
        path: PATHS.ask(id),
        mutation: false,
        what,
        expectStatus: 200,
        signal: callOptions?.signal,
      });
      return decodeAsk(result, what, id);
    },

    async verifyResponse(input, callOptions) {
      const signal = callOptions?.signal;
      if (signal?.aborted)
        throw new SessApiError('aborted', 'The receipt verification was aborted by the caller.');
      return receipts.verify(
        {
          workspaceId: await trustedWorkspace(input.sessionId, signal),
          sessionId: input.sessionId,
          revision: input.revision,
          eventId: input.eventId,
          surface: input.surface,
          answer: input.answer,
          receipt: input.receipt,
        },
        signal,
      );
    },
  };
  return api;
}

/**
 * Why a wait result is older than what the caller already knew, or `undefined`. A Session never
 * goes back a revision; at one revision an answer is never taken back and a final status stays.
 */
function regression(
  known: { revision: number; status: SessionStatus },
  revision: number,
  status: SessionStatus,
): string | undefined {
  if (revision < known.revision) return 'the Session went back to an earlier revision';
  if (revision > known.revision) return undefined;
  const hadAnswer = known.status === 'answered' || known.status === 'completed';
  const hasAnswer = status === 'answered' || status === 'completed';
  if (hadAnswer && !hasAnswer) return 'the answer at the known revision disappeared';
  if ((known.status === 'completed' || known.status === 'expired') && status !== known.status) {
    return 'a final status changed';
  }
  return undefined;
}
