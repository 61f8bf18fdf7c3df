/**
 * Idempotent mutations of the local Sess runtime: a stored `2xx` reply per (workspace, method,
 * path, Idempotency-Key) scope, replayed for the same request and refused for a different one
 * (`422 idempotency_mismatch`), with the check repeated after the awaited preparation so two
 * concurrent identical requests commit once.
 *
 * It knows nothing of what is being changed; the API routes build the scope and the fingerprint.
 */
import { canonicalJson } from '../../core/codec/canonical-json.js';
import { ApiFailure, type ApiResult } from './api-failure.js';

interface StoredReply {
  fingerprint: string;
  result: ApiResult;
}

/** @internal The stored replies of one runtime. */
export class IdempotentReplies {
  readonly #replies = new Map<string, StoredReply>();

  /** The fingerprint of a mutation: its body and its If-Match revision. */
  static fingerprint(body: unknown, ifMatch: number | null): string {
    return canonicalJson({ body, if_match: ifMatch });
  }

  /**
   * Run an idempotent mutation: replay a stored 2xx reply for the same key and fingerprint, refuse
   * a different fingerprint, else `prepare` (async checks and digests) then `commit` (synchronous).
   */
  async run(scope: string, fingerprint: string, prepare: () => Promise<() => ApiResult>): Promise<ApiResult> {
    const replay = () => {
      const stored = this.#replies.get(scope);
      if (stored === undefined) return undefined;
      if (stored.fingerprint !== fingerprint) {
        throw new ApiFailure(
          422,
          'idempotency_mismatch',
          'This Idempotency-Key was used with a different request. Use a new key for a new request.',
        );
      }
      return { ...stored.result, headers: { ...stored.result.headers, 'idempotent-replayed': 'true' } };
    };
    const early = replay();
    if (early) return early;
    const commit = await prepare();
    // A concurrent identical request may have committed while we awaited.
    const late = replay();
    if (late) return late;
    const result = commit();
    if (result.status >= 200 && result.status < 300) this.#replies.set(scope, { fingerprint, result });
    return result;
  }
}
