/**
 * A receipt's parts are decoded by one strict UTF-8 decoder shared by every token: a refused part
 * (a sequence cut short included) leaves nothing behind for the next token.
 */
import { describe, expect, it } from 'vitest';
import { base64UrlEncode } from '../../src/core/codec/base64url.js';
import { parseCompactJws } from '../../src/sess/jws.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const cut = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xe2, 0x82]); // `{"a":` and 2 of 3 bytes of `€`

describe('parseCompactJws', () => {
  it('refuses a part that is not UTF-8, then reads the next token whole', () => {
    const part = (bytes: Uint8Array) => base64UrlEncode(bytes);
    const signature = part(new Uint8Array(64));
    expect(parseCompactJws(`${part(cut)}.${part(utf8('{}'))}.${signature}`)).toBeUndefined();
    const good = parseCompactJws(
      `${part(utf8('{"alg":"EdDSA","n":"é"}'))}.${part(utf8('{"x":"€"}'))}.${signature}`,
    );
    expect(good?.header).toEqual({ alg: 'EdDSA', n: 'é' });
    expect(good?.payload).toEqual({ x: '€' });
  });
});
