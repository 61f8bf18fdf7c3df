/**
 * The runtime's own Ed25519 check and SHA-256 (`src/sess/native-crypto.ts`) answer exactly what
 * WebCrypto answers for the same bytes, and are found on this Node (so the receipt check really
 * takes the synchronous path here).
 */
import { describe, expect, it } from 'vitest';
import { base64UrlEncode } from '../../src/core/codec/base64url.js';
import { digestCanonicalJson } from '../../src/sess/digest.js';
import { importEd25519PublicKey } from '../../src/sess/jws.js';
import { nativeEd25519Verify, nativeSha256 } from '../../src/sess/native-crypto.js';

const encode = (text: string) => new TextEncoder().encode(text);

/** A signing key, and its public key imported as the receipt check imports a key set's keys. */
async function keyPair() {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { privateKey: pair.privateKey, publicKey: await importEd25519PublicKey(jwk) };
}

describe('native Ed25519 check', () => {
  it('agrees with WebCrypto on good, altered and foreign signatures', async () => {
    const signer = await keyPair();
    const other = await keyPair();
    const data = encode('eyJhbGciOiJFZERTQSJ9.eyJzaWQiOiJzZXNfMSJ9');
    const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, signer.privateKey, data));
    const flipped = signature.slice();
    flipped[10]! ^= 1;
    const alteredData = data.slice();
    alteredData[0]! ^= 1;
    const cases: Array<[string, CryptoKey, Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>, boolean]> = [
      ['valid', signer.publicKey, signature, data, true],
      ['a flipped signature bit', signer.publicKey, flipped, data, false],
      ['altered data', signer.publicKey, signature, alteredData, false],
      ['another key', other.publicKey, signature, data, false],
      ['an all-zero signature', signer.publicKey, new Uint8Array(64), data, false],
    ];
    for (const [name, key, sig, bytes, expected] of cases) {
      const viaWebCrypto = await crypto.subtle.verify({ name: 'Ed25519' }, key, sig, bytes);
      expect(viaWebCrypto, name).toBe(expected);
      expect(nativeEd25519Verify(key, sig, bytes), name).toBe(expected);
    }
  });

  it('answers undefined, not false, for a key it cannot use', async () => {
    const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    expect(nativeEd25519Verify(hmac as CryptoKey, new Uint8Array(64), encode('x'))).toBeUndefined();
  });

  it('answers undefined for an Ed25519 key that was not imported by importEd25519PublicKey', async () => {
    const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, false, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    const data = encode('x');
    const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, pair.privateKey, data));
    expect(nativeEd25519Verify(pair.publicKey, signature, data)).toBeUndefined();
  });
});

describe('native SHA-256', () => {
  it('hashes the same bytes as WebCrypto, and the digest string is the same either way', async () => {
    const texts = ['', '{"a":1}', 'é☃', '😀 astral', '\ud800 lone surrogate', 'x'.repeat(100_000)];
    for (const text of texts) {
      const bytes = encode(text);
      const web = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
      const native = nativeSha256(bytes);
      expect(native, JSON.stringify(text.slice(0, 20))).toBeDefined();
      expect(base64UrlEncode(native!)).toBe(base64UrlEncode(web));
      expect(await digestCanonicalJson(text)).toBe(`sha-256:${base64UrlEncode(web)}`);
    }
  });
});
