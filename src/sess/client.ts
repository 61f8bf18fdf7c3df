/**
 * The Sess client's operations: implements the {@link SessApi} port over the HTTP wire of
 * `docs/sess-api.md` with nothing but `fetch` and WebCrypto, so it runs on Node and edge runtimes
 * alike. Its one job is the operations: what each request carries, what its answer must imply
 * (the revision a publish must produce, the answer a completion follows), and which workspace and
 * Ask a receipt is verified against. The HTTP plumbing is `calls.ts`, decoding is `decode.ts`,
 * receipts are `receipt.ts`.
 *
 * Failures are reported as the kinds of {@link SessApiError}; the engine maps them to tool errors
 * as `docs/architecture.md` ("Error mapping") says. It deliberately logs nothing, retries nothing
 * and keeps no state but the workspace it has seen, the Ask each respondent Session it read
 * belongs to (bounded), and the receipt key-set cache.
 */
import { codePointLength, textProblem } from '../core/contract/limits.js';
import { type OptionReader, readOptions } from '../core/contract/options.js';
import {
  type Clock,
  type SessApi,
  SessApiError,
  type SessCallOptions,
  type SessionView,
} from '../core/contract/ports.js';
import { RECEIPT_ISSUER_RULE, SESS_ID_RULE, WAIT_MS_RULE } from '../core/contract/rules.js';
import { type CallResult, createCaller } from './calls.js';
import { decodeAsk, decodeSession, regression, toSessionView } from './decode.js';
import { protocol, refuseToSend } from './errors.js';
import type { Transport } from './exchange.js';
import { nodeTransport } from './node-transport.js';
import { type ReceiptAskContext, type ReceiptVerifier, receiptVerifier } from './receipt.js';
import { type ConnectionSettings, readConnectionOptions } from './settings.js';
import {
  HEADERS,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_WITHDRAW_REASON_LENGTH,
  PATHS,
  SESSION_STATUSES,
} from './wire.js';
import type { WireSessionView } from './wire-reader.js';

/** Options of {@link createSessClient}. */
export interface SessClientOptions {
  /** The Sess API origin, e.g. `https://api.sess.si` (HTTPS, no path, query or credentials). */
  origin: string;
  /**
   * Returns the API key; called on every request, so a rotated key is picked up at once. The key
   * is sent only as `Authorization: Bearer …` to `origin` and never appears in an error.
   */
  credential: () => string | Promise<string>;
  /**
   * The `fetch` to use. When unset, Node sends over `node:http` / `node:https` with kept-alive
   * sockets (fewer objects per request than `fetch`, the same behaviour) unless `globalThis.fetch`
   * was replaced after this package loaded (then that is used); every other runtime uses its
   * `fetch`. @default globalThis.fetch (on Node: `node:http`)
   */
  fetch?: typeof fetch;
  /**
   * The workspace receipts must belong to (1–128 of `A–Z a–z 0–9 . _ : -`). When set, a response
   * naming another workspace is a `protocol` error. When unset, the `Sess-Workspace-Id` this client's responses name is trusted
   * (a client that has seen none yet reads the Session it verifies to learn it); a runtime that
   * sends no such header then gets `context_missing`.
   */
  expectedWorkspaceId?: string;
  /**
   * The receipt issuer (`iss`) when it differs from the origin: printable ASCII without spaces, at
   * most 2048 characters. @default origin
   */
  receiptIssuer?: string;
  /** Testing only: allow `http://localhost`, `http://127.0.0.1`, `http://[::1]`. @default false */
  allowInsecureLocalhost?: boolean;
  /** Time, for the key-set cooldown and maximum age. @default systemClock */
  clock?: Clock;
  /** At most one receipt key-set fetch per this many milliseconds. @default 10 000 */
  keyRefreshCooldownMs?: number;
  /**
   * How long a fetched receipt key set is trusted, in milliseconds; past it the set is fetched
   * again before a receipt is verified, so a key Sess withdrew stops verifying. At least
   * `keyRefreshCooldownMs`. @default 600 000 (10 minutes)
   */
  keySetMaxAgeMs?: number;
  /**
   * The client's own deadline per request, in milliseconds; a wait gets its `timeoutMs` on top.
   * @default 30 000
   */
  requestTimeoutMs?: number;
  /**
   * A receipt verifier to share, with its key-set cache, between clients of the same origin (a
   * face that builds a client per call should pass one, so the key set is not fetched per call and
   * the cooldown holds across calls). Its own origin, issuer, clock, cooldown and maximum age
   * apply; the trusted workspace is still this client's. @default a verifier of this client's own
   */
  receiptVerifier?: ReceiptVerifier;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]+$/;

/** How many respondent Sessions the client remembers the Ask of (the oldest are forgotten first). */
const MAX_REMEMBERED_RESPONDENTS = 10_000;

function isPositiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function checkIdempotencyKey(key: unknown, what: string): string {
  if (typeof key !== 'string' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !IDEMPOTENCY_KEY.test(key)) {
    throw refuseToSend(what, 'the idempotency key is not 1–255 printable ASCII characters without spaces');
  }
  return key;
}

function checkId(id: unknown, what: string, name: string): string {
  if (!SESS_ID_RULE.test(id)) throw refuseToSend(what, `the ${name} is not an id`);
  return id;
}

function checkExpiresIn(value: unknown, what: string, name: string): void {
  if (value !== undefined && !isPositiveInt(value)) {
    throw refuseToSend(what, `${name} is not a whole number of seconds`);
  }
}

/** The optional `reason` of a withdraw or close, as the body carries it. */
function reasonBody(reason: unknown, what: string): Record<string, unknown> {
  if (reason === undefined) return {};
  if (typeof reason !== 'string' || textProblem(reason) !== undefined) {
    throw refuseToSend(what, 'the reason is not text without U+0000 or unpaired surrogates');
  }
  if (codePointLength(reason) > MAX_WITHDRAW_REASON_LENGTH) {
    throw refuseToSend(what, `the reason is longer than ${MAX_WITHDRAW_REASON_LENGTH} characters`);
  }
  return { reason };
}

function responseAt(wire: WireSessionView, revision: number) {
  return wire.responses.find((r) => r.revision === revision);
}

/** What a publish and a complete share: the Session, the answer they follow, and the key. */
interface AfterAnswerInput {
  expectedRevision: number;
  responseEventId: string;
  idempotencyKey: string;
}

/** One of the two calls after an answer, and what its answer must show. */
interface AfterAnswerCall {
  what: string;
  path: (id: string) => string;
  body: Record<string, unknown>;
  /** The revision the answer must be at: the expected one plus `step`. */
  step: 0 | 1;
  /** The status the answer must have. */
  status: 'active' | 'completed';
  /** What a wrong revision or status is called. */
  notThere: string;
  /** What another answer than the given one at the expected revision is called. */
  otherAnswer: string;
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
 * ```ts source="examples/snippets/sess.examples.ts#createSessClient"
 * const sess = createSessClient({
 *   origin: 'https://api.sess.si',
 *   credential: () => process.env.SESS_API_KEY ?? '',
 * });
 * const view = await sess.createSession({ surface, idempotencyKey: crypto.randomUUID() });
 * ```
 */
export function createSessClient(options: SessClientOptions): SessApi {
  const read = readOptions('createSessClient', options);
  const connection = readConnectionOptions(read, options);
  const credential = read.func<() => string | Promise<string>>('credential', options.credential);
  const settings = readClientSettings(read, options, connection);
  return buildSessClient(settings, credential, options.fetch === undefined ? nodeTransport() : undefined);
}

/** The options of a client checked once: everything but the credential. */
interface ClientSettings {
  connection: ConnectionSettings;
  expectedWorkspaceId: string | undefined;
  receipts: ReceiptVerifier;
}

function readClientSettings(
  read: OptionReader,
  options: Omit<SessClientOptions, 'credential'>,
  connection: ConnectionSettings,
): ClientSettings {
  const expectedWorkspaceId = read.optionalRule(
    'expectedWorkspaceId',
    options.expectedWorkspaceId,
    SESS_ID_RULE,
  );
  const issuer =
    read.optionalRule('receiptIssuer', options.receiptIssuer, RECEIPT_ISSUER_RULE) ?? connection.origin;
  const shared = options.receiptVerifier;
  if (
    shared !== undefined &&
    (typeof shared !== 'object' || shared === null || typeof shared.verify !== 'function')
  ) {
    read.fail('receiptVerifier', 'must be a verifier from createReceiptVerifier()');
  }
  return { connection, expectedWorkspaceId, receipts: shared ?? receiptVerifier(connection, issuer) };
}

/**
 * For an embedder that builds a client per request (as the HTTP handler does: one per caller's
 * credential): the options are checked once, then each call returns a client on that
 * `credential`, as {@link createSessClient} would build it from the same options. Without `options.fetch`, each client takes `globalThis.fetch` (and
 * the Node transport, while that is the global one) as it is when the client is built.
 * Pass `options.receiptVerifier`: without it the clients share one verifier, of the `fetch`
 * found when the factory was made.
 * @throws {TypeError} as `createSessClient` does, naming the option.
 */
export function createSessClientFactory(
  options: Omit<SessClientOptions, 'credential'>,
): (credential: () => string | Promise<string>) => SessApi {
  const read = readOptions('createSessClientFactory', options);
  const connection = readConnectionOptions(read, options);
  const settings = readClientSettings(read, options, connection);
  if (options.fetch !== undefined) {
    return (credential) => buildSessClient(settings, credential, undefined);
  }
  return (credential) => {
    const fetchImpl = globalThis.fetch;
    return buildSessClient(
      { ...settings, connection: { ...connection, fetch: (input, init) => fetchImpl(input, init) } },
      credential,
      nodeTransport(),
    );
  };
}

function buildSessClient(
  settings: ClientSettings,
  credential: () => string | Promise<string>,
  transport: Transport | undefined,
): SessApi {
  const { connection, expectedWorkspaceId, receipts } = settings;
  const caller = createCaller({
    origin: connection.origin,
    credential,
    fetch: connection.fetch,
    transport,
    expectedWorkspaceId,
    requestTimeoutMs: connection.requestTimeoutMs,
  });
  /** The Ask (and name) of each respondent Session this client read, for its receipt's claims. */
  const respondents = new Map<string, ReceiptAskContext>();

  function session(result: CallResult, what: string, sessionId?: string): WireSessionView {
    return decodeSession(result, what, {
      ...(sessionId === undefined ? {} : { id: sessionId }),
      workspaceId: expectedWorkspaceId,
    });
  }

  /**
   * The workspace receipts must belong to: the expected one, or the one this client's responses
   * named, or the one the caller learned from an authenticated response for this Session (a
   * saved record's). A caller's workspace that disagrees with what this client knows is a
   * `protocol` error. A client that knows none learns it from an authenticated read of the
   * Session whose receipt it verifies; that read's failure is the verification's failure (`api`,
   * `transport`, `protocol`, …).
   */
  async function trustedWorkspace(
    sessionId: string,
    given: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    const what = 'verify an answer';
    if (given !== undefined && !SESS_ID_RULE.test(given)) {
      throw refuseToSend(what, "the caller's workspace is not a workspace id");
    }
    const known = expectedWorkspaceId ?? caller.seenWorkspaceId();
    if (known !== undefined) {
      if (given !== undefined && given !== known) {
        throw protocol(
          what,
          "the caller's workspace is not the one this client talks to",
          'caller_workspace',
        );
      }
      return known;
    }
    if (given !== undefined) return given;
    if (SESS_ID_RULE.test(sessionId)) await api.getSession(sessionId, signal === undefined ? {} : { signal });
    return caller.seenWorkspaceId();
  }

  /**
   * A Session mutation under `If-Match: "<expectedRevision>"` that must answer 200 with the
   * Session: the id, idempotency key and revision are checked first, then `body()` (which may
   * refuse too), all before anything is sent. Returns the Session the server answered.
   */
  async function atRevision(
    sessionId: string,
    input: { idempotencyKey: string; expectedRevision: number },
    what: string,
    path: (id: string) => string,
    callOptions: SessCallOptions | undefined,
    body: () => Record<string, unknown>,
  ): Promise<WireSessionView> {
    const id = checkId(sessionId, what, 'Session id');
    const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
    if (!isPositiveInt(input.expectedRevision)) {
      throw refuseToSend(what, 'the expected revision is not a positive integer');
    }
    const result = await caller.send({
      method: 'POST',
      path: path(id),
      body: body(),
      headers: {
        [HEADERS.idempotencyKey]: idempotencyKey,
        [HEADERS.ifMatch]: `"${input.expectedRevision}"`,
      },
      mutation: true,
      what,
      expectStatus: 200,
      signal: callOptions?.signal,
    });
    return session(result, what, id);
  }

  /**
   * Publish and complete: both follow the answer at `expectedRevision`, under `If-Match`, and
   * must answer with the Session at the revision and status `call` names, after that answer.
   */
  async function afterAnswer(
    sessionId: string,
    input: AfterAnswerInput,
    call: AfterAnswerCall,
    callOptions: SessCallOptions | undefined,
  ): Promise<SessionView> {
    const { what } = call;
    let eventId = '';
    const wire = await atRevision(sessionId, input, what, call.path, callOptions, () => {
      eventId = checkId(input.responseEventId, what, 'response event id');
      return { response_event_id: eventId, ...call.body };
    });
    if (wire.revision !== input.expectedRevision + call.step || wire.status !== call.status) {
      throw protocol(what, call.notThere, 'mutation_not_applied');
    }
    if (responseAt(wire, input.expectedRevision)?.event_id !== eventId) {
      throw protocol(what, call.otherAnswer, 'mutation_other_answer');
    }
    return toSessionView(wire);
  }

  /** Create a Session or an Ask: a POST with an idempotency key that must answer 201. */
  function create(
    path: string,
    body: Record<string, unknown>,
    idempotencyKey: string,
    what: string,
    callOptions: SessCallOptions | undefined,
  ) {
    return caller.send({
      method: 'POST',
      path,
      body,
      headers: { [HEADERS.idempotencyKey]: idempotencyKey },
      mutation: true,
      what,
      expectStatus: 201,
      signal: callOptions?.signal,
    });
  }

  /** Read a Session or an Ask. */
  function get(path: string, what: string, callOptions: SessCallOptions | undefined, timeoutMs?: number) {
    return caller.send({
      method: 'GET',
      path,
      mutation: false,
      what,
      expectStatus: 200,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      signal: callOptions?.signal,
    });
  }

  const api: SessApi = {
    async createSession(input, callOptions) {
      const what = 'create a Session';
      const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
      checkExpiresIn(input.expiresIn, what, 'expiresIn');
      const body: Record<string, unknown> = { interaction: input.surface };
      if (input.expiresIn !== undefined) body.expires_in = input.expiresIn;
      const wire = session(await create(PATHS.sessions, body, idempotencyKey, what, callOptions), what);
      if (wire.revision !== 1 || wire.status !== 'active' || wire.responses.length > 0) {
        throw protocol(what, 'a new Session that is not active at revision 1', 'create_not_new');
      }
      return toSessionView(wire);
    },

    async getSession(sessionId, callOptions) {
      const what = 'read a Session';
      const id = checkId(sessionId, what, 'Session id');
      return toSessionView(session(await get(PATHS.session(id), what, callOptions), what, id));
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
      if (!WAIT_MS_RULE.test(waitMs)) throw refuseToSend(what, `the wait is not ${WAIT_MS_RULE.text}`);
      const query = new URLSearchParams({
        revision: String(known.revision),
        status: known.status,
        timeout_ms: String(waitMs),
      });
      const path = `${PATHS.wait(id)}?${query.toString()}`;
      const result = await get(path, what, callOptions, waitMs + connection.requestTimeoutMs);
      const wire = session(result, what, id);
      const problem = regression(known, wire.revision, wire.status);
      if (problem !== undefined) throw protocol(what, problem, 'wait_regressed');
      return toSessionView(wire);
    },

    publish(sessionId, input, callOptions) {
      const call: AfterAnswerCall = {
        what: 'publish the next revision',
        path: PATHS.revisions,
        body: { interaction: input.surface },
        step: 1,
        status: 'active',
        notThere: 'the Session is not active at the next revision',
        otherAnswer: 'the published revision does not follow the given answer',
      };
      return afterAnswer(sessionId, input, call, callOptions);
    },

    complete(sessionId, input, callOptions) {
      const call: AfterAnswerCall = {
        what: 'complete a Session',
        path: PATHS.complete,
        body: {},
        step: 0,
        status: 'completed',
        notThere: 'the Session is not completed at the expected revision',
        otherAnswer: 'the Session was completed after another answer',
      };
      return afterAnswer(sessionId, input, call, callOptions);
    },

    async withdrawSession(sessionId, input, callOptions) {
      const what = 'withdraw a Session';
      const wire = await atRevision(sessionId, input, what, PATHS.withdraw, callOptions, () =>
        reasonBody(input.reason, what),
      );
      if (wire.status !== 'withdrawn' || wire.revision !== input.expectedRevision) {
        throw protocol(what, 'the Session is not withdrawn at the expected revision', 'withdraw_not_applied');
      }
      return toSessionView(wire);
    },

    async closeAsk(askId, input, callOptions) {
      const what = 'close an Ask';
      const id = checkId(askId, what, 'Ask id');
      const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
      const result = await caller.send({
        method: 'POST',
        path: PATHS.closeAsk(id),
        body: reasonBody(input.reason, what),
        // An Ask has one revision; If-Match states it, as on every other mutation.
        headers: { [HEADERS.idempotencyKey]: idempotencyKey, [HEADERS.ifMatch]: '"1"' },
        mutation: true,
        what,
        expectStatus: 200,
        signal: callOptions?.signal,
      });
      const view = decodeAsk(result, what, { id, workspaceId: expectedWorkspaceId });
      if (view.status !== 'closed' || view.respondents.some((r) => r.status === 'started')) {
        throw protocol(what, 'the Ask is not closed, or a respondent page is still open', 'ask_not_closed');
      }
      return view;
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
      const respondentsBody: Record<string, unknown> = { max: r.max };
      if (r.name !== undefined) respondentsBody.name = r.name;
      if (r.expiresIn !== undefined) respondentsBody.expires_in = r.expiresIn;
      if (r.respondentExpiresIn !== undefined) respondentsBody.respondent_expires_in = r.respondentExpiresIn;
      const body: Record<string, unknown> = { interaction: input.surface, respondents: respondentsBody };
      if (input.expiresIn !== undefined) body.expires_in = input.expiresIn;
      const result = await create(PATHS.asks, body, idempotencyKey, what, callOptions);
      const view = decodeAsk(result, what, { workspaceId: expectedWorkspaceId });
      if (view.respondents.length > 0 || view.max !== r.max) {
        throw protocol(what, 'a new Ask that already has respondents or another cap', 'ask_not_new');
      }
      return view;
    },

    async getAsk(askId, callOptions) {
      const what = 'read an Ask';
      const id = checkId(askId, what, 'Ask id');
      const view = decodeAsk(await get(PATHS.ask(id), what, callOptions), what, {
        id,
        workspaceId: expectedWorkspaceId,
      });
      for (const r of view.respondents) {
        respondents.delete(r.sessionId);
        respondents.set(r.sessionId, { askId: view.askId, respondentName: r.name });
      }
      for (const oldest of respondents.keys()) {
        if (respondents.size <= MAX_REMEMBERED_RESPONDENTS) break;
        respondents.delete(oldest);
      }
      return view;
    },

    async verifyResponse(input, callOptions) {
      const signal = callOptions?.signal;
      if (signal?.aborted)
        throw new SessApiError('aborted', 'The receipt verification was aborted by the caller.');
      return receipts.verify(
        {
          workspaceId: await trustedWorkspace(input.sessionId, input.workspaceId, signal),
          sessionId: input.sessionId,
          revision: input.revision,
          eventId: input.eventId,
          surface: input.surface,
          answer: input.answer,
          receipt: input.receipt,
          ask: respondents.get(input.sessionId),
        },
        signal,
      );
    },
  };
  return api;
}
