/**
 * Small pure helpers the engine needs to recognise things: unguessable handles and idempotency
 * keys, a canonical JSON form, and a digest of a Surface so an identical repeat of a confirmed
 * publish can be told from a different one.
 *
 * Uses only Web Crypto (`globalThis.crypto`), so it runs on Node 20 and edge runtimes alike. It
 * does not decide anything about state; the engine does.
 */

import { base64UrlEncode } from '../codec/base64url.js';
import { sameJsonValue } from '../same-json.js';

/** Bytes of randomness in every generated identifier (128 bits). */
const RANDOM_BYTES = 16;

/**
 * A fresh random identifier: 128 bits from the platform's CSPRNG, base64url without padding
 * (22 characters).
 */
export function defaultRandomId(): string {
  const bytes = new Uint8Array(RANDOM_BYTES);
  globalThis.crypto.getRandomValues(bytes);
  return base64UrlEncode(bytes);
}

/** The prefix of every handle this package issues. */
export const HANDLE_PREFIX = 'sess_h_';

/**
 * JSON with object keys sorted at every level, so two equal values always serialise the same.
 * `undefined` members are left out, as `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) out[key] = sortKeys(member);
    }
    return out;
  }
  return value;
}

/**
 * True when two JSON values are equal, ignoring key order: told by walking both where they are
 * plain JSON (`sameJsonValue`, which answers true only for values whose canonical JSON is the
 * same), else by their canonical JSON.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return sameJsonValue(a, b) || canonicalJson(a) === canonicalJson(b);
}

/** `sha256:` and the base64url SHA-256 of the canonical JSON of `value`. */
export async function jsonDigest(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const hash = await globalThis.crypto.subtle.digest('SHA-256', bytes);
  return `sha256:${base64UrlEncode(new Uint8Array(hash))}`;
}
