/**
 * Receipt verification: proves that one answer (Session, revision, event, Surface, answer, and
 * for an Ask respondent its Ask and name when the receipt states them) was signed by a receipt
 * key of the trusted workspace, with Ed25519 over WebCrypto, in the order `docs/sess-api.md`
 * ("Verifying a receipt") gives.
 *
 * Holds the key-set cache: fetched from the well-known path, at most once per cooldown; fetched
 * again before verifying once it is older than its maximum age (so a key Sess withdrew stops
 * verifying), and when a receipt names a key id it does not hold (a rotation, so a rotation never
 * blocks a valid answer: inside the cooldown the answer gets the retryable
 * `key_refresh_cooldown`). An entry of the key set that is malformed, repeats a key id, or is not
 * a usable Ed25519 key is skipped; the other keys still verify.
 *
 * It does not decide what the trusted workspace is (the client does), records nothing, and never
 * puts a receipt, a key or an answer value in an error message.
 */
import * as v from 'valibot';
import { readOptions } from '../core/options.js';
import {
  SessApiError,
  type VerificationReason,
  type VerifiedReceipt,
  type VerifyResponseInput,
} from '../core/ports.js';
import { digestJson } from './digest.js';
import { runExchange } from './errors.js';
import { importEd25519PublicKey, parseCompactJws, verifyCompactJwsSignature } from './jws.js';
import { type ConnectionOptions, type ConnectionSettings, readConnectionOptions } from './settings.js';
import {
  JwkSchema,
  JwksEnvelopeSchema,
  MAX_JWKS_BYTES,
  PATHS,
  ReceiptClaimsSchema,
  ReceiptHeaderSchema,
} from './wire.js';

/** The largest `iat` a `Date` can hold, in seconds. */
const MAX_IAT_SECONDS = 8_640_000_000_000;

/** A JSON media type: `application/json` or any `application/…+json`, parameters allowed. */
const JSON_CONTENT_TYPE = /^application\/(?:[A-Za-z0-9.!#$&^_-]+\+)?json\s*(?:;|$)/i;

/** Options of {@link createReceiptVerifier}. */
export interface ReceiptVerifierOptions extends ConnectionOptions {
  /** The API origin; the key set is read from its well-known path. Validated like the client's. */
  origin: string;
  /** Testing only: allow an `http://` loopback origin. @default false */
  allowInsecureLocalhost?: boolean;
  /** The expected `iss` claim. @default origin */
  issuer?: string;
  /** The `fetch` to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Time, for the cooldown and the key set's age. @default systemClock */
  clock?: ConnectionOptions['clock'];
  /** At most one key-set fetch per this many milliseconds. @default 10 000 */
  keyRefreshCooldownMs?: number;
  /**
   * How long a fetched key set is trusted, in milliseconds; past it the set is fetched again
   * before a receipt is verified, so a key Sess withdrew stops verifying. At least
   * `keyRefreshCooldownMs`. @default 600 000 (10 minutes)
   */
  keySetMaxAgeMs?: number;
  /** Deadline of one key-set fetch, in milliseconds. @default 30 000 */
  requestTimeoutMs?: number;
}

/** The Ask a respondent's answer belongs to, for receipts that state it. */
export interface ReceiptAskContext {
  /** The Ask the respondent's Session belongs to. */
  askId: string;
  /** The name the Ask view gives the respondent (absent when it gives none). */
  respondentName?: string | undefined;
}

/** The exact answer one receipt must prove, and against which workspace. */
export interface ReceiptCheck extends VerifyResponseInput {
  /** The trusted workspace; `undefined` fails with `context_missing`. */
  workspaceId: string | undefined;
  /**
   * For an Ask respondent's answer: its Ask and name. A receipt that states an Ask id (`ask`) or a
   * name (`name`) must state these; a receipt without them still verifies. Without a context the
   * two claims are not compared.
   */
  ask?: ReceiptAskContext | undefined;
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
  claims_mismatch:
    'the receipt is for another answer, Session, revision, event, Surface, issuer, Ask or respondent',
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

/** The usable keys of a key-set body: malformed, repeated and unusable entries are left out. */
async function usableKeys(entries: readonly unknown[]): Promise<Map<string, CachedKey>> {
  const seen = new Map<string, v.InferOutput<typeof JwkSchema>>();
  const repeated = new Set<string>();
  for (const entry of entries) {
    const jwk = v.safeParse(JwkSchema, entry);
    if (!jwk.success) continue;
    // A repeated key id is ambiguous: neither entry is trusted.
    if (seen.has(jwk.output.kid)) repeated.add(jwk.output.kid);
    else seen.set(jwk.output.kid, jwk.output);
  }
  const keys = new Map<string, CachedKey>();
  for (const [kid, jwk] of seen) {
    if (repeated.has(kid)) continue;
    try {
      keys.set(kid, { workspaceId: jwk.ws, key: await importEd25519PublicKey(jwk) });
    } catch {
      // Not a usable Ed25519 key (off the curve, small order): skipped.
    }
  }
  return keys;
}

/** Whether the claims of a respondent's receipt agree with its Ask (claims that are absent agree). */
function askClaimsMatch(
  claims: { ask?: string; name?: string },
  ask: ReceiptAskContext | undefined,
): boolean {
  if (ask === undefined) return true;
  if (claims.ask !== undefined && claims.ask !== ask.askId) return false;
  return claims.name === undefined || claims.name === ask.respondentName;
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
  const read = readOptions('createReceiptVerifier', options);
  const config = readConnectionOptions(read, options);
  const issuer = read.optionalString('issuer', options.issuer) ?? config.origin;
  return receiptVerifier(config, issuer);
}

/** A verifier over checked settings (the client builds its own with its settings). */
export function receiptVerifier(config: ConnectionSettings, issuer: string): ReceiptVerifier {
  const { keyRefreshCooldownMs: cooldownMs, keySetMaxAgeMs: maxAgeMs } = config;
  const jwksUrl = config.origin + PATHS.jwks;
  let keys: Map<string, CachedKey> | undefined;
  /** When the fetch that produced `keys` started. */
  let fetchedAt = 0;
  let lastAttemptAt: number | undefined;
  let inflight: Promise<void> | undefined;

  /** Fetch and replace the key set; failed attempts count against the cooldown too. */
  async function refresh(): Promise<void> {
    const startedAt = config.clock.now();
    lastAttemptAt = startedAt;
    let response: { status: number; headers: Headers; text: string };
    try {
      response = await runExchange({
        fetch: config.fetch,
        url: jwksUrl,
        method: 'GET',
        headers: { accept: 'application/json' },
        mutation: false,
        what: 'fetch the receipt key set',
        timeoutMs: config.requestTimeoutMs,
        maxBytes: MAX_JWKS_BYTES,
      });
    } catch (error) {
      // Unreachable, too slow, or larger than MAX_JWKS_BYTES.
      throw refuse('key_set_unavailable', error);
    }
    if (response.status !== 200) throw refuse('key_set_unavailable', new Error(`HTTP ${response.status}`));
    if (!JSON_CONTENT_TYPE.test(response.headers.get('content-type') ?? '')) {
      throw refuse('key_set_unavailable', new Error('the key set is not served as JSON'));
    }
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      throw refuse('key_set_unavailable', new Error('the key set is not JSON'));
    }
    const parsed = v.safeParse(JwksEnvelopeSchema, json);
    if (!parsed.success) throw refuse('key_set_unavailable', new Error('the key set is malformed'));
    keys = await usableKeys(parsed.output.keys);
    fetchedAt = startedAt;
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
    const now = config.clock.now();
    // A set past its maximum age is not used at all: a key Sess withdrew must stop verifying.
    const fresh = keys !== undefined && now - fetchedAt < maxAgeMs;
    const cached = fresh ? keys?.get(kid) : undefined;
    if (cached !== undefined) return cached;
    if (inflight === undefined && lastAttemptAt !== undefined && now - lastAttemptAt < cooldownMs) {
      // No usable set (none yet, or only a stale one after a failed fetch): unavailable, not stale.
      throw refuse(fresh ? 'key_refresh_cooldown' : 'key_set_unavailable');
    }
    await awaitRefresh(signal);
    const found = keys?.get(kid);
    if (found === undefined) throw refuse('unknown_key_id');
    return found;
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
        actMatches &&
        askClaimsMatch(c, check.ask);
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
