/**
 * The receipt check's base64url and canonical JSON are written for speed: these properties hold
 * them to the straightforward versions they replaced (kept here as the reference), for the values
 * they accept and for everything they refuse.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base64UrlDecode, base64UrlEncode, canonicalJson } from '../../src/sess/digest.js';

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

function referenceWrite(value: unknown, at: string): string {
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
            return referenceWrite(item, `${at}/${index}`);
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
        parts.push(`${JSON.stringify(key)}:${referenceWrite(member, `${at}/${key}`)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} cannot be JSON at "${at}"`);
  }
}

/** What a function returned, or the message it threw. */
function outcome(run: () => string): { text: string } | { error: string } {
  try {
    return { text: run() };
  } catch (error) {
    return { error: String((error as Error).message) };
  }
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
    for (const text of ['AB', 'AAB', 'AAAAAB', 'AA==', 'A', 'AAAAA', 'a+b/', 'YQ=', 'YR', 'YWJ', ' YWJj']) {
      expect(base64UrlDecode(text), text).toBe(referenceDecode(text));
      expect(base64UrlDecode(text), text).toBeUndefined();
    }
    expect(base64UrlDecode('')).toEqual(new Uint8Array(0));
    expect(base64UrlDecode('YWJj')).toEqual(new TextEncoder().encode('abc'));
  });
});

describe('canonicalJson', () => {
  it('writes every JSON value as the reference does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(referenceWrite(value, ''));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes or refuses every other value as the reference does, with the same message', () => {
    const odd = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.anything({
          maxDepth: 3,
          withNullPrototype: true,
          withSparseArray: true,
          withBigInt: true,
          withDate: true,
          withMap: true,
        }),
        fc.constantFrom(undefined, Number.NaN, -0, Infinity, Symbol('s'), () => 1, new Date(0)),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(odd, (value) => {
        expect(outcome(() => canonicalJson(value))).toEqual(outcome(() => referenceWrite(value, '')));
      }),
      { numRuns: 3000 },
    );
  });

  it('names where a value went wrong, as before', () => {
    expect(() => canonicalJson({ a: [1, { b: Number.NaN }] })).toThrow(
      'canonicalJson: a non-finite number at "/a/1/b"',
    );
    expect(() => canonicalJson([1, undefined])).toThrow('canonicalJson: undefined at "/1"');
    expect(() => canonicalJson({ d: new Date(0) })).toThrow('canonicalJson: not a plain object at "/d"');
    // A sparse array is written with its hole, as before: the reference's own output.
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    expect(canonicalJson([, 1])).toBe(referenceWrite([, 1], ''));
  });
});
