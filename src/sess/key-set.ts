/**
 * The receipt key-set cache of one origin: fetches `/.well-known/sess/jwks.json` (bounded, JSON
 * only), keeps the usable keys (an entry that is malformed, repeats a key id, or is not a usable
 * Ed25519 key is skipped; the others still verify), and decides when to fetch again: at most once
 * per cooldown, before a lookup once the set is older than its maximum age (a set that old is not
 * used, so a key Sess withdrew stops verifying), and when a key id is unknown (a rotation).
 *
 * The age and the cooldown are counted on a clock a wall-clock step cannot turn back
 * (`steady-clock.ts`). It reports its state for a health check (`status`: held or not, its age,
 * the last fetch's failure as one word) without fetching. It verifies no receipt (`receipt.ts`
 * does) and never puts a key in an error message.
 */

import * as v from 'valibot';
import { verificationAborted as aborted, refuseReceipt as refuse } from './errors.js';
import { runExchange } from './exchange.js';
import { importEd25519PublicKey } from './jws.js';
import type { ConnectionSettings } from './settings.js';
import { steadyClock } from './steady-clock.js';
import { JwkSchema, JwksEnvelopeSchema, MAX_JWKS_BYTES, PATHS } from './wire.js';

/** A JSON media type: `application/json` or any `application/…+json`, parameters allowed. */
const JSON_CONTENT_TYPE = /^application\/(?:[A-Za-z0-9.!#$&^_-]+\+)?json\s*(?:;|$)/i;

/** One usable key: its workspace and the imported public key. */
export interface CachedKey {
  workspaceId: string;
  key: CryptoKey;
}

/** Why the last fetch of the key set failed, in one word: never a URL, a key or a message. */
export type ReceiptKeySetFailure =
  /** Unreachable, too slow, or larger than the bound. */
  | 'unreachable'
  /** Answered with another status than 200. */
  | 'bad_status'
  /** Not served as JSON, or not JSON. */
  | 'not_json'
  /** JSON, but not a key set. */
  | 'malformed';

/**
 * The state of a receipt key set, for a health report. Reading it fetches nothing.
 */
export type ReceiptKeySetStatus =
  /** No fetch has succeeded yet (the set is fetched on the first receipt to verify). */
  | { state: 'not_loaded'; lastError?: ReceiptKeySetFailure }
  /** A set is held and young enough to verify with; `lastError` when a later fetch failed. */
  | { state: 'loaded'; ageSeconds: number; keys: number; lastError?: ReceiptKeySetFailure }
  /**
   * The set held is past its maximum age: it is fetched again before the next receipt is
   * verified, and not used until then.
   */
  | { state: 'stale'; ageSeconds: number; keys: number; lastError?: ReceiptKeySetFailure };

/** Looks keys up by key id, fetching the set when its rules say so. */
export interface KeySetCache {
  /**
   * The key `kid`; throws `verification` (`unknown_key_id`, `key_refresh_cooldown`,
   * `key_set_unavailable`) or `aborted` when `signal` ends the wait for a fetch.
   */
  keyFor(kid: string, signal: AbortSignal | undefined): Promise<CachedKey>;
  /** The set's state now; fetches nothing. */
  status(): ReceiptKeySetStatus;
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

/** A key-set cache over checked settings. */
export function createKeySetCache(config: ConnectionSettings): KeySetCache {
  const { keyRefreshCooldownMs: cooldownMs, keySetMaxAgeMs: maxAgeMs } = config;
  const jwksUrl = config.origin + PATHS.jwks;
  // Ages and the cooldown are counted on a clock a wall-clock step cannot turn back.
  const steadyNow = steadyClock(config.clock);
  let keys: Map<string, CachedKey> | undefined;
  /** When the fetch that produced `keys` started. */
  let fetchedAt = 0;
  let lastAttemptAt: number | undefined;
  let inflight: Promise<void> | undefined;

  /** Why the last fetch failed; cleared by one that succeeds. */
  let lastError: ReceiptKeySetFailure | undefined;

  /**
   * Fetch and replace the key set; failed attempts count against the cooldown too. A failure is
   * kept as its word for {@link KeySetCache.status}; a success clears it.
   */
  async function refresh(): Promise<void> {
    const startedAt = steadyNow();
    lastAttemptAt = startedAt;
    const fail = (failure: ReceiptKeySetFailure, cause: unknown): never => {
      lastError = failure;
      throw refuse('key_set_unavailable', cause);
    };
    let response: { status: number; headers: Pick<Headers, 'get'>; text: string };
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
      return fail('unreachable', error);
    }
    if (response.status !== 200) fail('bad_status', new Error(`HTTP ${response.status}`));
    if (!JSON_CONTENT_TYPE.test(response.headers.get('content-type') ?? '')) {
      fail('not_json', new Error('the key set is not served as JSON'));
    }
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      fail('not_json', new Error('the key set is not JSON'));
    }
    const parsed = v.safeParse(JwksEnvelopeSchema, json);
    if (!parsed.success) return fail('malformed', new Error('the key set is malformed'));
    keys = await usableKeys(parsed.output.keys);
    fetchedAt = startedAt;
    lastError = undefined;
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
    const now = steadyNow();
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

  function status(): ReceiptKeySetStatus {
    const failed = lastError === undefined ? {} : { lastError };
    if (keys === undefined) return { state: 'not_loaded', ...failed };
    const age = steadyNow() - fetchedAt;
    return {
      state: age < maxAgeMs ? 'loaded' : 'stale',
      ageSeconds: Math.max(0, Math.floor(age / 1000)),
      keys: keys.size,
      ...failed,
    };
  }

  return { keyFor, status };
}
