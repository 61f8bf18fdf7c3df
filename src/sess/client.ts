/**
 * The Sess client: implements the {@link SessApi} port over the HTTP wire of `docs/sess-api.md`
 * with nothing but `fetch` and WebCrypto, so it runs on Node and edge runtimes alike. This module
 * reads the client's options and binds the operations to one credential: the Session operations
 * are `session-calls.ts`, the Ask operations `ask-calls.ts`, receipt verification
 * `verify-call.ts`, what they share `client-context.ts`. The HTTP plumbing is `calls.ts`, decoding
 * is `decode.ts`, receipts are `receipt.ts`.
 *
 * Failures are reported as the kinds of {@link SessApiError}; the engine maps them to tool errors
 * as `docs/architecture.md` ("Error mapping") says. It deliberately logs nothing, retries nothing
 * and keeps no state but the workspace it has seen, the Ask each respondent Session it read
 * belongs to (bounded), and the receipt key-set cache.
 */
import { type OptionReader, optionNames, readOptions } from '../core/contract/options.js';
import type { Clock, SessApi } from '../core/contract/ports.js';
import { RECEIPT_ISSUER_RULE, SESS_ID_RULE } from '../core/contract/rules.js';
import { closeAsk, createAsk, getAsk } from './ask-calls.js';
import { createCaller } from './calls.js';
import type { ClientContext } from './client-context.js';
import type { Transport } from './exchange.js';
import { nodeTransport } from './node-transport.js';
import { type ReceiptVerifier, receiptVerifier } from './receipt.js';
import {
  complete,
  createSession,
  getSession,
  publish,
  waitSession,
  withdrawSession,
} from './session-calls.js';
import { type ConnectionSettings, readConnectionOptions } from './settings.js';
import { verifyResponse } from './verify-call.js';

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
   * The workspace `credential` must belong to (1–128 of `A–Z a–z 0–9 . _ : -`): a response whose
   * `Sess-Workspace-Id` names another is refused as `configuration` (nothing changed), and before
   * its first create the client reads a Session that does not exist to learn the key's workspace
   * from that header, so a key of another workspace creates nothing. A Sess that sends no such
   * header cannot be checked. The HTTP handler gives each request's client the principal's
   * `workspaceId`. @default no check
   */
  credentialWorkspaceId?: string;
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

/** The option names of {@link SessClientOptions}; any other key is refused. */
const CLIENT_OPTIONS = optionNames<SessClientOptions>()(
  'origin',
  'credential',
  'fetch',
  'expectedWorkspaceId',
  'credentialWorkspaceId',
  'receiptIssuer',
  'allowInsecureLocalhost',
  'clock',
  'keyRefreshCooldownMs',
  'keySetMaxAgeMs',
  'requestTimeoutMs',
  'receiptVerifier',
);
/** The option names of {@link createSessClientFactory}: the client's, but those of one credential. */
const FACTORY_OPTIONS = CLIENT_OPTIONS.filter(
  (name) => name !== 'credential' && name !== 'credentialWorkspaceId',
);

/** The options of one client a {@link createSessClientFactory} makes, besides its credential. */
export interface SessCredentialOptions {
  /** As {@link SessClientOptions.credentialWorkspaceId}. @default no check */
  credentialWorkspaceId?: string;
}

/** The option names of {@link SessCredentialOptions}. */
const CREDENTIAL_OPTIONS = optionNames<SessCredentialOptions>()('credentialWorkspaceId');

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
 *   cannot be a bearer token), an API key of another workspace than `credentialWorkspaceId`, or
 *   a Surface that is not JSON when verifying;
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
  const read = readOptions('createSessClient', options, { known: CLIENT_OPTIONS });
  const connection = readConnectionOptions(read, options);
  const credential = read.func<() => string | Promise<string>>('credential', options.credential);
  const settings = readClientSettings(read, options, connection);
  const credentialWorkspaceId = read.optionalRule(
    'credentialWorkspaceId',
    options.credentialWorkspaceId,
    SESS_ID_RULE,
  );
  return buildSessClient(
    settings,
    { credential, credentialWorkspaceId },
    options.fetch === undefined ? nodeTransport() : undefined,
  );
}

/** One credential a client speaks for, and the workspace it must belong to. */
interface ClientCredential {
  credential: () => string | Promise<string>;
  credentialWorkspaceId: string | undefined;
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
  options: Omit<SessClientOptions, 'credential' | 'credentialWorkspaceId'>,
): (credential: () => string | Promise<string>, perCredential?: SessCredentialOptions) => SessApi {
  const read = readOptions('createSessClientFactory', options, { known: FACTORY_OPTIONS });
  const connection = readConnectionOptions(read, options);
  const settings = readClientSettings(read, options, connection);
  const credentialOf = (
    credential: () => string | Promise<string>,
    perCredential: SessCredentialOptions | undefined,
  ): ClientCredential => {
    const own = readOptions('createSessClientFactory', perCredential, {
      known: CREDENTIAL_OPTIONS,
      allowMissing: true,
    });
    return {
      credential,
      credentialWorkspaceId: own.optionalRule(
        'credentialWorkspaceId',
        perCredential?.credentialWorkspaceId,
        SESS_ID_RULE,
      ),
    };
  };
  if (options.fetch !== undefined) {
    return (credential, perCredential) =>
      buildSessClient(settings, credentialOf(credential, perCredential), undefined);
  }
  return (credential, perCredential) => {
    const fetchImpl = globalThis.fetch;
    return buildSessClient(
      { ...settings, connection: { ...connection, fetch: (input, init) => fetchImpl(input, init) } },
      credentialOf(credential, perCredential),
      nodeTransport(),
    );
  };
}

/** A client on `credential`: the operations of `session-calls.ts`, `ask-calls.ts` and `verify-call.ts` over one context. */
function buildSessClient(
  settings: ClientSettings,
  { credential, credentialWorkspaceId }: ClientCredential,
  transport: Transport | undefined,
): SessApi {
  const { connection, expectedWorkspaceId, receipts } = settings;
  const ctx: ClientContext = {
    caller: createCaller({
      origin: connection.origin,
      credential,
      fetch: connection.fetch,
      transport,
      expectedWorkspaceId,
      credentialWorkspaceId,
      requestTimeoutMs: connection.requestTimeoutMs,
    }),
    connection,
    expectedWorkspaceId,
    credentialWorkspaceId,
    receipts,
    respondents: new Map(),
  };
  return {
    createSession: (input, callOptions) => createSession(ctx, input, callOptions),
    getSession: (sessionId, callOptions) => getSession(ctx, sessionId, callOptions),
    waitSession: (sessionId, known, callOptions) => waitSession(ctx, sessionId, known, callOptions),
    publish: (sessionId, input, callOptions) => publish(ctx, sessionId, input, callOptions),
    complete: (sessionId, input, callOptions) => complete(ctx, sessionId, input, callOptions),
    withdrawSession: (sessionId, input, callOptions) => withdrawSession(ctx, sessionId, input, callOptions),
    closeAsk: (askId, input, callOptions) => closeAsk(ctx, askId, input, callOptions),
    createAsk: (input, callOptions) => createAsk(ctx, input, callOptions),
    getAsk: (askId, callOptions) => getAsk(ctx, askId, callOptions),
    verifyResponse: (input, callOptions) => verifyResponse(ctx, input, callOptions),
  };
}
