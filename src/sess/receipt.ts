/**
 * Receipt verification: proves that one answer (Session, revision, event, Surface, answer) was
 * signed by a receipt key of the trusted workspace, with Ed25519 over WebCrypto, in the order
 * `docs/sess-api.md` ("Verifying a receipt") gives. Holds the key-set cache: fetched from the
 * well-known path, refreshed at most once per cooldown, and refetched when a receipt names a key
 * id it does not hold (a rotation), so a rotation never blocks a valid answer: inside the cooldown
 * the answer gets the retryable `key_refresh_cooldown`, and verifies once a refetch is allowed.
 *
 * It does not decide what the trusted workspace is (the client does), records nothing, and never
 * puts a receipt, a key or an answer value in an error message.
 */
import * as v from 'valibot';
import {
  type Clock,
  SessApiError,
  systemClock,
  type VerificationReason,
  type VerifiedReceipt,
  type VerifyResponseInput,
} from '../core/ports.js';
import { digestJson } from './digest.js';
import { runExchange } from './errors.js';
import { importEd25519PublicKey, parseCompactJws, verifyCompactJwsSignature } from './jws.js';
import { validateSessOrigin } from './origin.js';
import { JwksSchema, PATHS, ReceiptClaimsSchema, ReceiptHeaderSchema } from './wire.js';

/** How long a fetched key set is trusted for lookups before a refetch is allowed, by default. */
export const DEFAULT_KEY_REFRESH_COOLDOWN_MS = 10_000;

/** The default deadline of one key-set fetch, in milliseconds. */
const DEFAULT_JWKS_TIMEOUT_MS = 30_000;

/** The largest `iat` a `Date` can hold, in seconds. */
const MAX_IAT_SECONDS = 8_640_000_000_000;

/** The largest key set read, in bytes. */
const MAX_JWKS_BYTES = 1_048_576;

/** Options of {@link createReceiptVerifier}. */
export interface ReceiptVerifierOptions {
  /** The API origin; the key set is read from its well-known path. Validated like the client's. */
  origin: string;
  /** Testing only: allow an `http://` loopback origin. @default false */
  allowInsecureLocalhost?: boolean;
  /** The expected `iss` claim. @default origin */
  issuer?: string;
  /** The `fetch` to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Time, for the cooldown. @default systemClock */
  clock?: Clock;
  /** At most one key-set fetch per this many milliseconds. @default 10 000 */
  keyRefreshCooldownMs?: number;
  /** Deadline of one key-set fetch, in milliseconds. @default 30 000 */
  requestTimeoutMs?: number;
}

/** The exact answer one receipt must prove, and against which workspace. */
export interface ReceiptCheck extends VerifyResponseInput {
  /** The trusted workspace; `undefined` fails with `context_missing`. */
  workspaceId: string | undefined;
}

/** Verifies receipts against one origin's key set, with its own cache. */
export interface ReceiptVerifier {
  /**
   * Verify one receipt. Throws {@link SessApiError} of kind `verification` (with `reason`), or
   * `aborted` when the caller's signal ends a key-set fetch.
   */
  verify(check: ReceiptCheck, signal?: AbortSignal): Promise<VerifiedReceipt>;
}

interface CachedKey {
  workspaceId: string;
  key: CryptoKey;
}

const REASON_TEXT: Record<VerificationReason, string> = {
  malformed: 'the receipt is malformed',
  bad_signature: 'the receipt signature is not valid',
  unknown_key_id: 'the receipt is signed with a key Sess does not list',
  foreign_key: 'the receipt is signed with a key of another workspace',
  claims_mismatch: 'the receipt is for another answer, Session, revision, event, Surface or issuer',
  key_set_unavailable: 'the receipt key set could not be fetched; try again later',
  key_refresh_cooldown:
    'the receipt is signed with a key not yet in the cached key set; try again in a few seconds',
  context_missing: 'no trusted workspace is known (set SESS_EXPECTED_WORKSPACE_ID)',
};

function aborted(): SessApiError {
  return new SessApiError('aborted', 'The receipt verification was aborted by the caller.');
}

function refuse(reason: VerificationReason, cause?: unknown): SessApiError {
  return new SessApiError('verification', `The receipt did not verify: ${REASON_TEXT[reason]}.`, {
    reason,
    ...(cause === undefined ? {} : { cause }),
  });
}

function resolveVerifierOptions(options: ReceiptVerifierOptions) {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  const insecure = options.allowInsecureLocalhost;
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    throw new TypeError('allowInsecureLocalhost must be a boolean');
  }
  let origin: string;
  try {
    origin = validateSessOrigin(options.origin, { allowInsecureLocalhost: insecure === true });
  } catch (error) {
    throw new TypeError(`origin is invalid: ${(error as Error).message}`);
  }
  const issuer = options.issuer ?? origin;
  if (typeof issuer !== 'string' || issuer.length === 0)
    throw new TypeError('issuer must be a non-empty string');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw new TypeError('fetch must be a function');
  const clock = options.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new TypeError('clock must have a now() method');
  }
  const cooldownMs = options.keyRefreshCooldownMs ?? DEFAULT_KEY_REFRESH_COOLDOWN_MS;
  if (typeof cooldownMs !== 'number' || !Number.isFinite(cooldownMs) || cooldownMs < 0) {
    throw new TypeError('keyRefreshCooldownMs must be a finite number ≥ 0');
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS;
  if (
    typeof requestTimeoutMs !== 'number' ||
    !Number.isFinite(requestTimeoutMs) ||
    requestTimeoutMs <= 0 ||
    requestTimeoutMs > 2_147_483_647
  ) {
    throw new TypeError('requestTimeoutMs must be a finite number of milliseconds > 0');
  }
  const fetch: typeof globalThis.fetch = (input, init) => fetchImpl(input, init);
  return { origin, issuer, fetch, clock, cooldownMs, requestTimeoutMs };
}

/**
 * Create a receipt verifier with its own key-set cache.
 *
 * @throws TypeError naming the option when an option is invalid.
 *
 * @example
 * ```ts
 * const verifier = createReceiptVerifier({ origin: 'https://api.sess.si' });
 * await verifier.verify({ workspaceId, sessionId, revision, eventId, surface, answer, receipt });
 * ```
 */
export function createReceiptVerifier(options: ReceiptVerifierOptions): ReceiptVerifier {
  const config = resolveVerifierOptions(options);
  const { issuer, cooldownMs } = config;
  const jwksUrl = config.origin + PATHS.jwks;
  let keys: Map<string, CachedKey> | undefined;
  let lastAttemptAt: number | undefined;
  let inflight: Promise<void> | undefined;

  /** Fetch and replace the key set; failed attempts count against the cooldown too. */
  async function refresh(): Promise<void> {
    lastAttemptAt = config.clock.now();
    let text: string;
    let status: number;
    try {
      const response = await runExchange({
        fetch: config.fetch,
        url: jwksUrl,
        method: 'GET',
        headers: { accept: 'application/json' },
        mutation: false,
        what: 'fetch the receipt key set',
        timeoutMs: config.requestTimeoutMs,
        maxBytes: MAX_JWKS_BYTES,
      });
      text = response.text;
      status = response.status;
    } catch (error) {
      throw refuse('key_set_unavailable', error);
    }
    if (status !== 200) throw refuse('key_set_unavailable', new Error(`HTTP ${status}`));
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw refuse('key_set_unavailable', new Error('the key set is not JSON'));
    }
    const parsed = v.safeParse(JwksSchema, json);
    if (!parsed.success) throw refuse('key_set_unavailable', new Error('the key set is malformed'));
    const next = new Map<string, CachedKey>();
    for (const jwk of parsed.output.keys) {
      if (next.has(jwk.kid))
        throw refuse('key_set_unavailable', new Error('a key id repeats in the key set'));
      let key: CryptoKey;
      try {
        key = await importEd25519PublicKey(jwk);
      } catch {
        throw refuse('key_set_unavailable', new Error('a key of the key set is not an Ed25519 key'));
      }
      next.set(jwk.kid, { workspaceId: jwk.ws, key });
    }
    keys = next;
  }

  /**
   * One refresh at a time: concurrent verifications share it. The fetch itself runs under the
   * verifier's deadline only, so one caller's abort never fails another caller's verification;
   * each caller stops waiting on its own signal.
   */
  async function awaitRefresh(signal: AbortSignal | undefined): Promise<void> {
    if (inflight === undefined) {
      inflight = refresh().finally(() => {
        inflight = undefined;
      });
      // A caller that stopped waiting must not leave the rejection unhandled.
      inflight.catch(() => {});
    }
    const shared = inflight;
    if (signal === undefined) return shared;
    if (signal.aborted) throw aborted();
    let onAbort = () => {};
    const stop = new Promise<never>((_, reject) => {
      onAbort = () => reject(aborted());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([shared, stop]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async function keyFor(kid: string, signal: AbortSignal | undefined): Promise<CachedKey> {
    const cached = keys?.get(kid);
    if (cached !== undefined) return cached;
    if (inflight === undefined) {
      const now = config.clock.now();
      if (lastAttemptAt !== undefined && now - lastAttemptAt < cooldownMs) {
        // Nothing fetched yet (the last attempt failed): the set is unavailable, not stale.
        throw refuse(keys === undefined ? 'key_set_unavailable' : 'key_refresh_cooldown');
      }
    }
    await awaitRefresh(signal);
    const fresh = keys?.get(kid);
    if (fresh === undefined) throw refuse('unknown_key_id');
    return fresh;
  }

  return {
    async verify(check, signal) {
      if (signal?.aborted) throw aborted();
      if (check.workspaceId === undefined) throw refuse('context_missing');
      const jws = parseCompactJws(check.receipt);
      if (jws === undefined) throw refuse('malformed');
      const header = v.safeParse(ReceiptHeaderSchema, jws.header);
      // Another actor assurance is a well-formed receipt for something else: a claims mismatch
      // (decided after the signature), not a malformed receipt.
      const act = jws.payload.act;
      const actMatches = act === 'link_holder';
      const claims = v.safeParse(
        ReceiptClaimsSchema,
        typeof act === 'string' ? { ...jws.payload, act: 'link_holder' } : jws.payload,
      );
      if (!header.success || !claims.success) throw refuse('malformed');
      if (Object.keys(jws.header).some((name) => name !== 'alg' && name !== 'kid' && name !== 'typ')) {
        // `crit`, `jwk`, `x5u` and friends would change what the signature means: refuse them.
        throw refuse('malformed');
      }
      const kid = header.output.kid;
      const key = await keyFor(kid, signal);
      if (key.workspaceId !== check.workspaceId) throw refuse('foreign_key');
      if (!(await verifyCompactJwsSignature(jws, key.key))) throw refuse('bad_signature');
      let surfaceDigest: string;
      let answerDigest: string;
      try {
        surfaceDigest = await digestJson(check.surface);
        answerDigest = await digestJson({ action: check.answer.action, values: check.answer.values });
      } catch {
        throw new SessApiError(
          'configuration',
          'The Surface or answer to verify is not JSON; nothing was verified.',
        );
      }
      const c = claims.output;
      // A time `Date` cannot hold is not a receipt Sess could have issued.
      if (c.iat > MAX_IAT_SECONDS) throw refuse('malformed');
      const matches =
        c.iss === issuer &&
        c.ws === check.workspaceId &&
        c.sid === check.sessionId &&
        c.rev === check.revision &&
        c.evt === check.eventId &&
        c.sdg === surfaceDigest &&
        c.adg === answerDigest &&
        actMatches;
      if (!matches) throw refuse('claims_mismatch');
      return {
        workspaceId: c.ws,
        sessionId: c.sid,
        revision: c.rev,
        eventId: c.evt,
        keyId: kid,
        issuedAt: new Date(c.iat * 1000).toISOString(),
        actorAssurance: 'link_holder',
      };
    },
  };
}
