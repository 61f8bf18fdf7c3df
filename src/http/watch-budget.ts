/**
 * What each credential may still spend on the watcher's Sess calls: a token bucket of
 * `callsPerMinute` calls (refilled evenly over a minute) and the backoff after `SESS_UNAVAILABLE`
 * (`Backoff` of the shared watch policy), per credential.
 *
 * A credential is known here only by an HMAC-SHA-256 of it under a key drawn for this watcher
 * (WebCrypto): the credential itself is never kept, and the digest cannot be checked against a
 * guess outside this process. A binding scope remembers the digest of its last credential, so a
 * record whose credential is out of calls or backing off is passed over without asking the host
 * for the credential again.
 *
 * It sends nothing and decides nothing about a record: `watcher.ts` asks before each poll and
 * reports each call and each outcome.
 */
import { base64UrlEncode } from '../core/codec/base64url.js';
import { Backoff } from '../faces/wake/watch-policy.js';
import type { SessApi } from '../index.js';

/** One credential's bucket and backoff. */
interface Budget {
  tokens: number;
  at: number;
  backoff: Backoff;
}

/** How long an idle credential's budget is kept (then it is full again anyway). */
const IDLE_FORGET_MS = 5 * 60_000;

/** The budgets of every credential one watcher has used. */
export class CredentialBudgets {
  private readonly budgets = new Map<string, Budget>();
  private readonly lastKeyOfScope = new Map<string, string>();
  private hmacKey: Promise<CryptoKey> | undefined;

  constructor(private readonly callsPerMinute: number) {}

  /** The digest `credential` is known by (HMAC-SHA-256 under this watcher's own key, base64url). */
  async keyOf(credential: string): Promise<string> {
    this.hmacKey ??= globalThis.crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const mac = await globalThis.crypto.subtle.sign(
      'HMAC',
      await this.hmacKey,
      new TextEncoder().encode(credential),
    );
    return base64UrlEncode(new Uint8Array(mac));
  }

  private budget(key: string, now: number): Budget {
    let budget = this.budgets.get(key);
    if (budget === undefined) {
      budget = { tokens: this.callsPerMinute, at: now, backoff: new Backoff() };
      this.budgets.set(key, budget);
    }
    // Refill evenly: callsPerMinute per 60 s, up to one minute's worth.
    budget.tokens = Math.min(
      this.callsPerMinute,
      budget.tokens + ((now - budget.at) * this.callsPerMinute) / 60_000,
    );
    budget.at = now;
    return budget;
  }

  /** Whether a poll with the credential `key` may start at `now`: a call left, no backoff. */
  mayStart(key: string, now: number): boolean {
    const budget = this.budget(key, now);
    return budget.tokens >= 1 && budget.backoff.pausedFor(now) === 0;
  }

  /** Whether `scope`'s last credential is known to be out of calls or backing off at `now`. */
  held(scope: string, now: number): boolean {
    const key = this.lastKeyOfScope.get(scope);
    return key !== undefined && !this.mayStart(key, now);
  }

  /** `scope` polls with the credential `key` (until it is seen with another). */
  remember(scope: string, key: string): void {
    this.lastKeyOfScope.set(scope, key);
  }

  /** One Sess call made with `key` at `now` (a bucket may go below zero: the next poll waits longer). */
  spend(key: string, now: number): void {
    this.budget(key, now).tokens -= 1;
  }

  /** A poll with `key` succeeded. */
  succeeded(key: string): void {
    this.budgets.get(key)?.backoff.succeeded();
  }

  /** A poll with `key` met `SESS_UNAVAILABLE` at `now`: back off (the pause in ms is returned). */
  unavailable(key: string, now: number, retryAfterMs?: number): number {
    return this.budget(key, now).backoff.failed(now, retryAfterMs);
  }

  /** The shortest time until some held credential may start again (for a watcher's rest). */
  soonest(now: number): number | undefined {
    let soonest: number | undefined;
    for (const [key, budget] of this.budgets) {
      if (this.mayStart(key, now)) continue;
      const refill = budget.tokens >= 1 ? 0 : ((1 - budget.tokens) * 60_000) / this.callsPerMinute;
      const wait = Math.max(refill, budget.backoff.pausedFor(now));
      soonest = soonest === undefined ? wait : Math.min(soonest, wait);
    }
    return soonest;
  }

  /** Forget the budgets idle for long enough to be full again, and scopes that point at none. */
  prune(now: number): void {
    for (const [key, budget] of this.budgets) {
      if (now - budget.at > IDLE_FORGET_MS && budget.backoff.pausedFor(now) === 0) this.budgets.delete(key);
    }
    for (const [scope, key] of this.lastKeyOfScope)
      if (!this.budgets.has(key)) this.lastKeyOfScope.delete(scope);
  }
}

/**
 * `sess` with every Sess call counted first (`count`), as the budget needs: each call of the
 * API, not the receipt check (which reads the key set rarely, from its own cache).
 */
export function countedSess(sess: SessApi, count: () => void): SessApi {
  const counted =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      count();
      return call(...args);
    };
  return {
    createSession: counted((input, options) => sess.createSession(input, options)),
    getSession: counted((id, options) => sess.getSession(id, options)),
    waitSession: counted((id, known, options) => sess.waitSession(id, known, options)),
    publish: counted((id, input, options) => sess.publish(id, input, options)),
    complete: counted((id, input, options) => sess.complete(id, input, options)),
    withdrawSession: counted((id, input, options) => sess.withdrawSession(id, input, options)),
    closeAsk: counted((id, input, options) => sess.closeAsk(id, input, options)),
    createAsk: counted((input, options) => sess.createAsk(input, options)),
    getAsk: counted((id, options) => sess.getAsk(id, options)),
    verifyResponse: (input, options) => sess.verifyResponse(input, options),
  };
}
