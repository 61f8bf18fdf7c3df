/**
 * Canonical JSON and the `sha-256:` digests a Sess receipt signs over (`sdg`, the Surface of one
 * revision, and `adg`, the answer). Both sides of the wire compute them the same way: the local
 * runtime when it signs, the client when it verifies.
 *
 * Uses WebCrypto (or the runtime's own SHA-256, `native-crypto.ts`) and `TextEncoder`, so it runs
 * on Node and edge runtimes alike. It does not decide *what* is digested (the receipt claims in
 * `wire.ts` say that) and never logs its input.
 */
import { nativeSha256 } from './native-crypto.js';

/** The prefix of every digest string: the algorithm, then base64url of the hash. */
export const DIGEST_PREFIX = 'sha-256:';

/**
 * Canonical JSON of a JSON value, exactly as `docs/sess-api.md` defines it:
 * object members sorted by key (UTF-16 code unit order, as `Array.prototype.sort` sorts strings),
 * no whitespace, strings and numbers written as `JSON.stringify` writes them, arrays in order.
 * Object members whose value is `undefined` are left out (as `JSON.stringify` does).
 *
 * @throws TypeError for a value JSON cannot hold: a non-finite number, a bigint, a function, a
 *   symbol, `undefined` at the top or inside an array, or an object that is not a plain object
 *   or array (a `Date`, a `Map`, a class instance).
 *
 * `{ b: 1, a: [true, 'x'] }` is written `{"a":[true,"x"],"b":1}`.
 */
export function canonicalJson(value: unknown): string {
  return write(value, '');
}

function write(value: unknown, at: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: a non-finite number at "${at}"`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value
          .map((item, index) => {
            if (item === undefined) throw new TypeError(`canonicalJson: undefined at "${at}/${index}"`);
            return write(item, `${at}/${index}`);
          })
          .join(',')}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(`canonicalJson: not a plain object at "${at}"`);
      }
      const record = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const member = record[key];
        if (member === undefined) continue;
        parts.push(`${JSON.stringify(key)}:${write(member, `${at}/${key}`)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} cannot be JSON at "${at}"`);
  }
}

export { sameJsonValue } from '../core/same-json.js';

/** Base64url without padding of some bytes. */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Decode base64url without padding. Returns `undefined` for anything that is not strict
 * base64url (padding, `+`, `/`, whitespace, or an impossible length).
 */
export function base64UrlDecode(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  let binary: string;
  try {
    binary = atob(padded);
  } catch {
    return undefined;
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  // Reject non-canonical encodings (stray low bits in the last character).
  if (base64UrlEncode(out) !== text) return undefined;
  return out;
}

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
  const bytes = new TextEncoder().encode(text);
  const hash = nativeSha256(bytes) ?? new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return DIGEST_PREFIX + base64UrlEncode(hash);
}

/** True when `text` has the shape of a digest string (`sha-256:` + 43 base64url characters). */
export function isDigest(text: string): boolean {
  return /^sha-256:[A-Za-z0-9_-]{43}$/.test(text);
}
