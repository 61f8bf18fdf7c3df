/**
 * Small pure helpers the engine needs to recognise things: unguessable handles and idempotency
 * keys, JSON equality, and a digest of a Surface so an identical repeat of a confirmed publish can
 * be told from a different one. Canonical JSON and base64url are the shared codecs'
 * (`src/core/codec/`).
 *
 * Uses only Web Crypto (`globalThis.crypto`), so it runs on Node 20 and edge runtimes alike. It
 * does not decide anything about state; the engine does.
 */

import { base64UrlEncode } from '../codec/base64url.js';
import { canonicalJson } from '../codec/canonical-json.js';
import { sameJsonValue } from '../codec/same-json.js';
import { SessMcpError } from '../contract/errors.js';
import { HANDLE_PREFIX, RANDOM_ID_BITS, RANDOM_ID_RULE } from '../contract/rules.js';

/** Bytes of randomness in every generated identifier (128 bits). */
const RANDOM_BYTES = RANDOM_ID_BITS / 8;

/**
 * A fresh random identifier: 128 bits from the platform's CSPRNG, base64url without padding
 * (22 characters).
 */
export function defaultRandomId(): string {
  const bytes = new Uint8Array(RANDOM_BYTES);
  globalThis.crypto.getRandomValues(bytes);
  return base64UrlEncode(bytes);
}

/**
 * A new handle: {@link HANDLE_PREFIX} and one id of `randomId`. The id is checked here, where the
 * handle is made, against the rule the engine's options are checked with (`RANDOM_ID_RULE`): a
 * handle longer than the tools take would be saved and then refused by every later call.
 *
 * @throws SessMcpError `NOT_CONFIGURED` when the id breaks the rule; the id is never repeated.
 */
export function newHandle(randomId: () => string): string {
  const id: unknown = randomId();
  if (!RANDOM_ID_RULE.test(id)) {
    throw new SessMcpError(
      'NOT_CONFIGURED',
      `The engine's randomId returned an id that is not ${RANDOM_ID_RULE.text}; nothing was saved or sent. Ask the owner to fix the randomId option.`,
      { retryable: false },
    );
  }
  return `${HANDLE_PREFIX}${id}`;
}

/**
 * True when two JSON values are equal, ignoring key order: told by walking both where they are
 * plain JSON (`sameJsonValue`, which answers true only for values whose canonical JSON is the
 * same), else by their canonical JSON. False when canonical JSON refuses either (what is not JSON
 * is not the same JSON value as anything), so it never throws.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (sameJsonValue(a, b)) return true;
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/**
 * `sha256:` and the base64url SHA-256 of the canonical JSON of `value`.
 *
 * @throws TypeError when `value` is not JSON (canonical JSON refuses it).
 */
export async function jsonDigest(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const hash = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return `sha256:${base64UrlEncode(new Uint8Array(hash))}`;
}
