/**
 * The `sha-256:` digests a Sess receipt signs over (`sdg`, the Surface of one revision, and `adg`,
 * the answer): SHA-256 of canonical JSON (`src/core/codec/canonical-json.ts`). Both sides of the
 * wire compute them the same way: the local runtime when it signs, the client when it verifies.
 *
 * Uses WebCrypto (or the runtime's own SHA-256, `native-crypto.ts`) and `TextEncoder`, so it runs
 * on Node and edge runtimes alike. It does not decide *what* is digested (the receipt claims in
 * `wire.ts` say that) and never logs its input.
 */
import { base64UrlEncode } from '../core/codec/base64url.js';
import { canonicalJson } from '../core/codec/canonical-json.js';
import { nativeSha256 } from './native-crypto.js';

/** One encoder for every digest (it keeps no state between calls). */
const UTF8 = new TextEncoder();

/** The prefix of every digest string: the algorithm, then base64url of the hash. */
export const DIGEST_PREFIX = 'sha-256:';

/**
 * The digest of a JSON value: `sha-256:` + base64url (no padding) of SHA-256 over the UTF-8
 * bytes of its {@link canonicalJson}: 43 characters after the prefix.
 */
export async function digestJson(value: unknown): Promise<string> {
  return digestCanonicalJson(canonicalJson(value));
}

/**
 * The `sha-256:` digest of text that already is canonical JSON (`canonicalJson`'s output). Hashed
 * by the runtime's own synchronous SHA-256 where there is one (`native-crypto.ts`), else by
 * WebCrypto; the bytes hashed are the same UTF-8 either way.
 */
export async function digestCanonicalJson(text: string): Promise<string> {
  const bytes = UTF8.encode(text);
  const hash = nativeSha256(bytes) ?? new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return DIGEST_PREFIX + base64UrlEncode(hash);
}

/** True when `text` has the shape of a digest string (`sha-256:` + 43 base64url characters). */
export function isDigest(text: string): boolean {
  return /^sha-256:[A-Za-z0-9_-]{43}$/.test(text);
}
