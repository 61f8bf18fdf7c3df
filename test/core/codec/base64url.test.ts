/**
 * The one base64url (`src/core/codec/base64url.ts`) is written for speed: these properties hold it
 * to the straightforward `btoa`/`atob` versions it replaced (kept here as the reference), for every
 * byte string it writes and for every text it reads or refuses.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base64UrlDecode, base64UrlEncode } from '../../../src/core/codec/base64url.js';

function referenceEncode(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function referenceDecode(text: string): Uint8Array | undefined {
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
  if (referenceEncode(out) !== text) return undefined;
  return out;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Mostly base64url characters, with the ones strict decoding refuses mixed in. */
const base64ish = fc
  .array(
    fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...BASE64URL) },
      fc.constantFrom('+', '/', '=', ' ', '\n', '.', 'é', '\u0100', '\uD83D'),
    ),
    {
      maxLength: 90,
    },
  )
  .map((chars) => chars.join(''));

describe('base64url', () => {
  it('encodes every byte string as the reference does, and decodes it back', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = base64UrlEncode(bytes);
        expect(text).toBe(referenceEncode(bytes));
        expect(base64UrlDecode(text)).toEqual(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts and refuses exactly what the reference does, with the same bytes', () => {
    fc.assert(
      fc.property(base64ish, (text) => {
        const expected = referenceDecode(text);
        const got = base64UrlDecode(text);
        expect(got === undefined).toBe(expected === undefined);
        if (expected !== undefined) expect(got).toEqual(expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses stray low bits, padding, an impossible length and the standard alphabet', () => {
    const refused = [
      'AB',
      'AAB',
      'AAAAAB',
      'AA==',
      'abc=',
      'A',
      'a',
      'AAAAA',
      'a+b/',
      'ab+c',
      'YQ=',
      'YR',
      'YWJ',
      ' YWJj',
    ];
    for (const text of refused) {
      expect(base64UrlDecode(text), text).toBe(referenceDecode(text));
      expect(base64UrlDecode(text), text).toBeUndefined();
    }
    expect(base64UrlDecode('')).toEqual(new Uint8Array(0));
    expect(base64UrlDecode('YWJj')).toEqual(new TextEncoder().encode('abc'));
  });
});
