/**
 * Base64url without padding (RFC 4648, section 5): the one encoder and the one strict decoder of
 * the package. Receipts (their JWS parts and key `x`), digests, handles, idempotency keys and
 * `sess_list` cursors are all written and read with it.
 *
 * The decoder accepts only the one canonical text of a byte string: no padding, no `+`, `/` or
 * whitespace, no impossible length and no stray low bits in the last character. Both directions
 * work character by character through a table, faster than `btoa`/`atob` and the string
 * replacements they need.
 *
 * Pure and synchronous: no I/O, no crypto, nothing that differs between runtimes.
 */

/** The 64 characters of base64url, by their 6-bit value. */
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The 6-bit value of each base64url character by its char code, -1 for every other code. */
const BASE64URL_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < BASE64URL.length; i++) values[BASE64URL.charCodeAt(i)] = i;
  return values;
})();

/**
 * Base64url without padding of some bytes.
 *
 * `base64UrlEncode(new TextEncoder().encode('abc'))` is `'YWJj'`.
 */
export function base64UrlEncode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]! + BASE64URL[n & 63]!;
  }
  const left = bytes.length - i;
  if (left === 1) {
    const n = bytes[i]!;
    out += BASE64URL[n >> 2]! + BASE64URL[(n & 3) << 4]!;
  } else if (left === 2) {
    const n = (bytes[i]! << 8) | bytes[i + 1]!;
    out += BASE64URL[n >> 10]! + BASE64URL[(n >> 4) & 63]! + BASE64URL[(n & 15) << 2]!;
  }
  return out;
}

/** The 6-bit value of the character at `index`, or -1 when it is not base64url. */
function valueAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? BASE64URL_VALUES[code]! : -1;
}

/**
 * The bytes of strict base64url without padding, or `undefined` for anything else: padding, `+`,
 * `/`, whitespace, an impossible length (one character past a multiple of four), and a
 * non-canonical text (stray low bits in the last character), so one byte string has one text.
 * The empty text is the empty byte string.
 */
export function base64UrlDecode(text: string): Uint8Array<ArrayBuffer> | undefined {
  const left = text.length % 4;
  if (left === 1) return undefined;
  const whole = text.length - left;
  const out = new Uint8Array((whole / 4) * 3 + (left === 0 ? 0 : left - 1));
  let at = 0;
  for (let i = 0; i < whole; i += 4) {
    const a = valueAt(text, i);
    const b = valueAt(text, i + 1);
    const c = valueAt(text, i + 2);
    const d = valueAt(text, i + 3);
    if ((a | b | c | d) < 0) return undefined;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[at++] = n >> 16;
    out[at++] = (n >> 8) & 255;
    out[at++] = n & 255;
  }
  if (left === 2) {
    const a = valueAt(text, whole);
    const b = valueAt(text, whole + 1);
    if ((a | b) < 0 || (b & 15) !== 0) return undefined;
    out[at] = (a << 2) | (b >> 4);
  } else if (left === 3) {
    const a = valueAt(text, whole);
    const b = valueAt(text, whole + 1);
    const c = valueAt(text, whole + 2);
    if ((a | b | c) < 0 || (c & 3) !== 0) return undefined;
    out[at++] = (a << 2) | (b >> 4);
    out[at] = ((b & 15) << 4) | (c >> 2);
  }
  return out;
}
