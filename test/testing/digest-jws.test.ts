import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/codec/canonical-json.js';
import { sameJsonValue } from '../../src/core/codec/same-json.js';
import { digestJson, isDigest } from '../../src/sess/digest.js';
import {
  generateSigningKey,
  importEd25519PublicKey,
  parseCompactJws,
  RECEIPT_TYP,
  signCompactJws,
  verifyCompactJwsSignature,
} from '../../src/sess/jws.js';

/** Whether canonicalJson writes `a` and `b` the same, or `undefined` when it refuses either. */
function sameCanonical(a: unknown, b: unknown): boolean | undefined {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return undefined;
  }
}

describe('sameJsonValue', () => {
  it('is true for a JSON value and its canonical JSON parsed back, whatever the member order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(sameJsonValue(value, JSON.parse(canonicalJson(value)))).toBe(true);
        expect(sameJsonValue(JSON.parse(JSON.stringify(value)), value)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('is true only where canonicalJson writes both the same (never for a value it refuses)', () => {
    const anything = fc.anything({ withNullPrototype: true, withObjectString: true, withBoxedValues: true });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), anything), fc.oneof(fc.jsonValue(), anything), (a, b) => {
        if (sameJsonValue(a, b)) expect(sameCanonical(a, b)).toBe(true);
        if (sameJsonValue(a, a)) expect(sameCanonical(a, a)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('tells members left out, reordered, changed or added', () => {
    const base = { a: 1, b: [true, 'x', { c: null }], d: undefined };
    expect(sameJsonValue(base, { b: [true, 'x', { c: null }], a: 1 })).toBe(true);
    expect(sameJsonValue({ a: -0 }, { a: 0 })).toBe(true);
    expect(sameJsonValue(base, { a: 1, b: [true, 'x', { c: 0 }] })).toBe(false);
    expect(sameJsonValue(base, { a: 1, b: [true, 'x', { c: null }], e: 2 })).toBe(false);
    expect(sameJsonValue(base, { a: 1, b: [true, 'x'] })).toBe(false);
    expect(sameJsonValue({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameJsonValue([1], { 0: 1 })).toBe(false);
    expect(sameJsonValue({ d: new Date(0) }, { d: new Date(0) })).toBe(false);
    expect(sameJsonValue([Number.NaN], [Number.NaN])).toBe(false);
    expect(sameJsonValue([undefined], [undefined])).toBe(false);
  });
});

describe('canonicalJson', () => {
  it('sorts keys, drops whitespace and writes strings and numbers as JSON.stringify does', () => {
    expect(canonicalJson({ b: [1, 'é\n"'], a: null, c: undefined, A: { z: 1.5, y: -0 } })).toBe(
      '{"A":{"y":0,"z":1.5},"a":null,"b":[1,"é\\n\\""]}',
    );
    expect(canonicalJson([true, false, 'x', 1e21])).toBe('[true,false,"x",1e+21]');
  });

  it('is independent of member order', () => {
    expect(canonicalJson({ a: 1, b: { c: 2, d: 3 } })).toBe(canonicalJson({ b: { d: 3, c: 2 }, a: 1 }));
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', [Number.POSITIVE_INFINITY]],
    ['undefined in an array', [undefined]],
    ['a Date', { d: new Date(0) }],
    ['a bigint', 1n],
    ['a function', () => 1],
  ])('refuses %s', (_name, value) => {
    expect(() => canonicalJson(value)).toThrow(TypeError);
  });
});

describe('digestJson', () => {
  it('is sha-256 of the canonical JSON in base64url', async () => {
    // SHA-256("{}") = 44136fa3...; known value
    expect(await digestJson({})).toBe('sha-256:RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o');
    const d = await digestJson({ x: [1, 2] });
    expect(isDigest(d)).toBe(true);
    expect(await digestJson({ x: [2, 1] })).not.toBe(d);
  });
});

describe('compact JWS with Ed25519', () => {
  it('signs, parses and verifies; a flipped signature byte fails; another key fails', async () => {
    const key = await generateSigningKey('ws_a', 'k1');
    expect(key.publicJwk).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      kid: 'k1',
      use: 'sig',
      alg: 'EdDSA',
      ws: 'ws_a',
    });
    const token = await signCompactJws(
      { alg: 'EdDSA', kid: 'k1', typ: RECEIPT_TYP },
      { sid: 's', rev: 1 },
      key.privateKey,
    );
    const parsed = parseCompactJws(token)!;
    expect(parsed.header).toEqual({ alg: 'EdDSA', kid: 'k1', typ: RECEIPT_TYP });
    expect(parsed.payload).toEqual({ sid: 's', rev: 1 });
    const pub = await importEd25519PublicKey(key.publicJwk);
    expect(await verifyCompactJwsSignature(parsed, pub)).toBe(true);
    parsed.signature[10]! ^= 1;
    expect(await verifyCompactJwsSignature(parsed, pub)).toBe(false);
    const other = await generateSigningKey('ws_a', 'k2');
    expect(
      await verifyCompactJwsSignature(parseCompactJws(token)!, await importEd25519PublicKey(other.publicJwk)),
    ).toBe(false);
  });

  it('refuses malformed tokens and keys', async () => {
    expect(parseCompactJws('a.b')).toBeUndefined();
    expect(parseCompactJws('e30.e30.AAAA')).toBeUndefined(); // signature not 64 bytes
    expect(parseCompactJws('WzFd.e30.' + 'A'.repeat(86))).toBeUndefined(); // header is an array
    expect(parseCompactJws('x'.repeat(9000))).toBeUndefined();
    await expect(importEd25519PublicKey({ kty: 'EC', crv: 'P-256', x: 'AA' })).rejects.toThrow(TypeError);
    await expect(importEd25519PublicKey({ kty: 'OKP', crv: 'Ed25519', x: 'AAAA' })).rejects.toThrow(
      TypeError,
    );
    const key = await generateSigningKey('ws', 'k');
    await expect(signCompactJws({ alg: 'none' }, {}, key.privateKey)).rejects.toThrow(TypeError);
  });
});
