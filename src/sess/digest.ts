/**
 * Canonical JSON and the `sha-256:` digests a Sess receipt signs over (`sdg`, the Surface of one
 * revision, and `adg`, the answer). Both sides of the wire compute them the same way: the local
 * runtime when it signs, the client when it verifies.
 *
 * Uses WebCrypto (or the runtime's own SHA-256, `native-crypto.ts`) and `TextEncoder`, so it runs
 * on Node and edge runtimes alike. It does not decide *what* is digested (the receipt claims in
 * `wire.ts` say that) and never logs its input.
 */
import { base64UrlEncode } from '../core/codec/base64url.js';
import { nativeSha256 } from './native-crypto.js';

/** One encoder for every digest (it keeps no state between calls). */
const UTF8 = new TextEncoder();

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
  try {
    return writeFast(value);
  } catch {
    // Written again with the path of every member, so the error names where the value went wrong.
    return write(value, '');
  }
}

/** Thrown by {@link writeFast} for anything {@link write} would refuse or write differently. */
const NOT_FAST = new Error('not written on the fast path');

/**
 * {@link write} without the path it keeps for its messages: the same text for every value it
 * writes, and {@link NOT_FAST} for anything else (then `write` writes it or throws its own error).
 */
function writeFast(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw NOT_FAST;
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          // A hole or `undefined`: `write` refuses the one and writes the other its own way.
          if (!(i in value) || value[i] === undefined) throw NOT_FAST;
          out += i === 0 ? writeFast(value[i]) : `,${writeFast(value[i])}`;
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw NOT_FAST;
      const record = value as Record<string, unknown>;
      let out = '{';
      for (const key of Object.keys(record).sort()) {
        const member = record[key];
        if (member === undefined) continue;
        out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${writeFast(member)}`;
      }
      return `${out}}`;
    }
    default:
      throw NOT_FAST;
  }
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
