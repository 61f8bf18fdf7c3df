/**
 * The receipt key set against the local runtime (its JWKS, its controllable clock, its faults):
 * a key Sess withdrew stops verifying once the cached set is older than its maximum age (the set
 * is fetched again before verifying); inside the maximum age the cache and the cooldown hold;
 * one bad entry (malformed, repeated, off the curve, of small order) is skipped while every other
 * key still verifies; a key set that is too large or not served as JSON is unavailable.
 */
import { describe, expect, it } from 'vitest';
import { base64UrlDecode, base64UrlEncode } from '../../src/core/codec/base64url.js';
import type { SessApi, VerifyResponseInput } from '../../src/core/contract/ports.js';
import { importEd25519PublicKey } from '../../src/sess/jws.js';
import { createReceiptVerifier } from '../../src/sess/receipt.js';
import { DEFAULT_KEY_SET_MAX_AGE_MS } from '../../src/sess/settings.js';
import { MAX_JWKS_BYTES } from '../../src/sess/wire.js';
import { answeredSession, clientFor, expectSessError, proofOf, surface, useRuntime } from './helpers.js';

const sess = useRuntime({ clock: { frozen: true } });

/** A fresh signing key, and one answer whose receipt it signed. */
async function answerSignedByNewKey(client: SessApi): Promise<{ kid: string; input: VerifyResponseInput }> {
  const kid = await sess.keys.rotate();
  const { answered, surface: s } = await answeredSession(sess, client, { surface: surface('Signed?') });
  return { kid, input: proofOf(answered, s) };
}

const jwksFetches = () => sess.stats.requests.jwks ?? 0;

describe('the maximum age of the key set', () => {
  it('is ten minutes by default', () => {
    expect(DEFAULT_KEY_SET_MAX_AGE_MS).toBe(600_000);
  });

  it('a withdrawn key verifies from the cache until the set is older than its maximum age, then not', async () => {
    const client = clientFor(sess, { clock: sess.clock });
    const withdrawn = await answerSignedByNewKey(client);
    const before = jwksFetches();
    await client.verifyResponse(withdrawn.input);
    expect(jwksFetches()).toBe(before + 1);

    const kept = await answerSignedByNewKey(client);
    sess.keys.remove(withdrawn.kid);
    // Past the cooldown, inside the maximum age: the cached set still verifies, nothing is fetched.
    sess.clock.advance(DEFAULT_KEY_SET_MAX_AGE_MS - 1);
    await client.verifyResponse(withdrawn.input);
    expect(jwksFetches()).toBe(before + 1);

    sess.clock.advance(1);
    await expectSessError(client.verifyResponse(withdrawn.input), 'verification', {
      reason: 'unknown_key_id',
    });
    expect(jwksFetches()).toBe(before + 2);
    // The refetched set holds the key that is still listed.
    await client.verifyResponse(kept.input);
    expect(jwksFetches()).toBe(before + 2);
  });

  it('a failed refetch of an old set is key_set_unavailable, retried after the cooldown', async () => {
    const client = clientFor(sess, { clock: sess.clock, keySetMaxAgeMs: 60_000 });
    const { input } = await answerSignedByNewKey(client);
    await client.verifyResponse(input);
    sess.clock.advance(60_000);
    const before = jwksFetches();
    sess.faults.fail('jwks', 503);
    await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
    // The old set is not used meanwhile, and the cooldown holds: no second fetch.
    await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
    expect(jwksFetches()).toBe(before + 1);
    sess.clock.advance(10_000);
    expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
    expect(jwksFetches()).toBe(before + 2);
  });

  it('inside the maximum age the cooldown still holds for a rotated key', async () => {
    const verifier = createReceiptVerifier({
      origin: sess.origin,
      allowInsecureLocalhost: true,
      clock: sess.clock,
      keySetMaxAgeMs: 30_000,
    });
    const client = clientFor(sess, { receiptVerifier: verifier });
    const first = await answerSignedByNewKey(client);
    await client.verifyResponse(first.input);
    const rotated = await answerSignedByNewKey(client);
    await expectSessError(client.verifyResponse(rotated.input), 'verification', {
      reason: 'key_refresh_cooldown',
    });
    sess.clock.advance(10_000);
    await client.verifyResponse(rotated.input);
    await client.verifyResponse(first.input);
  });
});

describe('the key set state a health report reads (keySetStatus)', () => {
  it('is not_loaded, then loaded with its age, stale past its maximum age, and keeps the last failure as one word', async () => {
    const verifier = createReceiptVerifier({
      origin: sess.origin,
      allowInsecureLocalhost: true,
      clock: sess.clock,
      keySetMaxAgeMs: 60_000,
    });
    const client = clientFor(sess, { receiptVerifier: verifier });
    const before = jwksFetches();
    expect(verifier.keySetStatus?.()).toEqual({ state: 'not_loaded' });
    // Reading the state fetches nothing.
    expect(jwksFetches()).toBe(before);
    const { input } = await answerSignedByNewKey(client);
    await client.verifyResponse(input);
    const loaded = verifier.keySetStatus?.();
    expect(loaded).toMatchObject({ state: 'loaded', ageSeconds: 0 });
    expect(loaded?.state === 'loaded' && loaded.keys).toBeGreaterThanOrEqual(1);
    sess.clock.advance(42_000);
    expect(verifier.keySetStatus?.()).toMatchObject({ state: 'loaded', ageSeconds: 42 });
    sess.clock.advance(18_000);
    expect(verifier.keySetStatus?.()).toMatchObject({ state: 'stale', ageSeconds: 60 });
    sess.faults.fail('jwks', 503);
    await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
    const failed = verifier.keySetStatus?.();
    expect(failed).toMatchObject({ state: 'stale', lastError: 'bad_status' });
    expect(JSON.stringify(failed)).not.toContain(sess.origin);
    sess.clock.advance(10_000);
    await client.verifyResponse(input);
    expect(verifier.keySetStatus?.()).toEqual({
      state: 'loaded',
      ageSeconds: 0,
      keys: expect.any(Number),
    });
  });
});

describe('the key set under a wall-clock step', () => {
  const HOUR = 3_600_000;

  it('stepped back a day: an hour later a withdrawn key no longer verifies and a rotated-in one does', async () => {
    const client = clientFor(sess, { clock: sess.clock });
    const first = await answerSignedByNewKey(client);
    await client.verifyResponse(first.input);
    const before = jwksFetches();
    // The clock steps back a day, and a verification right after reads it (no time has passed);
    // an answer is signed by the current key after the step.
    sess.clock.set(sess.clock.now() - 24 * HOUR);
    await client.verifyResponse(first.input);
    const { answered, surface: s } = await answeredSession(sess, client, { surface: surface('Stepped?') });
    const withdrawnInput = proofOf(answered, s);
    // Sess withdraws that key and signs with a new one from now on.
    const rotated = await answerSignedByNewKey(client);
    sess.keys.remove(first.kid);
    // An hour of real time later (the clock still reads 23 hours behind the fetch): the set is an
    // hour old, so it is fetched again; the withdrawn key is gone and the new one verifies.
    sess.clock.advance(HOUR);
    await expectSessError(client.verifyResponse(withdrawnInput), 'verification', {
      reason: 'unknown_key_id',
    });
    expect((await client.verifyResponse(rotated.input)).eventId).toBe(rotated.input.eventId);
    expect(jwksFetches()).toBe(before + 1);
  });

  it('stepped back a day: a rotated-in key is not held in the cooldown until the clock catches up', async () => {
    const verifier = createReceiptVerifier({
      origin: sess.origin,
      allowInsecureLocalhost: true,
      clock: sess.clock,
    });
    const client = clientFor(sess, { receiptVerifier: verifier });
    const first = await answerSignedByNewKey(client);
    await client.verifyResponse(first.input);
    sess.clock.set(sess.clock.now() - 24 * HOUR);
    await client.verifyResponse(first.input);
    const rotated = await answerSignedByNewKey(client);
    // Inside the cooldown (no time passed): refused for now, as without a step.
    await expectSessError(client.verifyResponse(rotated.input), 'verification', {
      reason: 'key_refresh_cooldown',
    });
    // Ten seconds later the cooldown is over, though the clock reads a day behind the last fetch.
    sess.clock.advance(10_000);
    expect((await client.verifyResponse(rotated.input)).eventId).toBe(rotated.input.eventId);
  });

  it('stepped forward a day: the set counts as old at once and is fetched again (one fetch more, no key kept longer)', async () => {
    const client = clientFor(sess, { clock: sess.clock });
    const first = await answerSignedByNewKey(client);
    await client.verifyResponse(first.input);
    const before = jwksFetches();
    sess.clock.advance(24 * HOUR);
    await client.verifyResponse(first.input);
    expect(jwksFetches()).toBe(before + 1);
  });
});

/** The encodings of the eight points of small order, and encodings that are no point at all. */
const SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000', // identity (order 1)
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // order 2
  '0000000000000000000000000000000000000000000000000000000000000000', // order 4
  '0000000000000000000000000000000000000000000000000000000000000080', // order 4
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa', // order 8
];
const NOT_A_POINT = [
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // y = p (not canonical)
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // y = p + 1 (not canonical)
  '0100000000000000000000000000000000000000000000000000000000000080', // x = 0 with the sign bit
  '0200000000000000000000000000000000000000000000000000000000000000', // y = 2 is not on the curve
];
const fromHex = (hex: string) =>
  base64UrlEncode(Uint8Array.from(hex.match(/../g)!, (b) => Number.parseInt(b, 16)));

describe('keys that must never verify', () => {
  it.each([...SMALL_ORDER, ...NOT_A_POINT])('%s is refused on import', async (hex) => {
    const jwk = { kty: 'OKP', crv: 'Ed25519', x: fromHex(hex) };
    await expect(importEd25519PublicKey(jwk)).rejects.toThrow(TypeError);
  });

  it('real keys of the runtime import', async () => {
    for (const key of sess.keys.jwks().keys) {
      expect(base64UrlDecode(key.x)?.length).toBe(32);
      await expect(importEd25519PublicKey(key)).resolves.toBeDefined();
    }
  });
});

describe('one bad entry of the key set', () => {
  it('is skipped: malformed, repeated, off-curve and small-order entries leave every other key usable', async () => {
    const client = clientFor(sess, { clock: sess.clock, keyRefreshCooldownMs: 0 });
    const repeated = await answerSignedByNewKey(client);
    const good = await answerSignedByNewKey(client);
    const listed = sess.keys.jwks().keys;
    const repeatedJwk = listed.find((k) => k.kid === repeated.kid)!;
    const ws = sess.workspaceId;
    const weak = [...SMALL_ORDER, ...NOT_A_POINT].map((hex, i) => ({
      kty: 'OKP',
      crv: 'Ed25519',
      x: fromHex(hex),
      kid: `weak_${i}`,
      use: 'sig',
      alg: 'EdDSA',
      ws,
    }));
    const keys = [{ kty: 'RSA', kid: 'rsa' }, 'not a key', null, ...weak, repeatedJwk, ...listed];
    sess.faults.malformed('jwks', { body: JSON.stringify({ keys }), times: 100 });
    expect((await client.verifyResponse(good.input)).keyId).toBe(good.kid);
    // A key id listed twice is ambiguous: neither entry is trusted.
    await expectSessError(client.verifyResponse(repeated.input), 'verification', {
      reason: 'unknown_key_id',
    });
    // A receipt naming a weak key, with the signature that forges one (R = identity, S = 0).
    const [header, payload] = good.input.receipt.split('.') as [string, string];
    const forgedSignature = new Uint8Array(64);
    forgedSignature[0] = 1;
    for (const jwk of weak) {
      const parsed = JSON.parse(new TextDecoder().decode(base64UrlDecode(header)));
      const h = base64UrlEncode(new TextEncoder().encode(JSON.stringify({ ...parsed, kid: jwk.kid })));
      const receipt = `${h}.${payload}.${base64UrlEncode(forgedSignature)}`;
      await expectSessError(client.verifyResponse({ ...good.input, receipt }), 'verification', {
        reason: 'unknown_key_id',
      });
    }
  });
});

describe('the key-set response', () => {
  it(`is read up to ${MAX_JWKS_BYTES} bytes; a larger one is key_set_unavailable`, async () => {
    const client = clientFor(sess, { clock: sess.clock, keyRefreshCooldownMs: 0 });
    const { input } = await answerSignedByNewKey(client);
    const keys = sess.keys.jwks().keys;
    const padded = (size: number) => {
      const bare = JSON.stringify({ keys, padding: '' });
      return JSON.stringify({ keys, padding: 'x'.repeat(size - bare.length) });
    };
    expect(padded(MAX_JWKS_BYTES).length).toBe(MAX_JWKS_BYTES);
    sess.faults.malformed('jwks', { body: padded(MAX_JWKS_BYTES) });
    await client.verifyResponse(input);
    sess.faults.malformed('jwks', { body: padded(MAX_JWKS_BYTES + 1) });
    const fresh = clientFor(sess, { clock: sess.clock, keyRefreshCooldownMs: 0 });
    await expectSessError(fresh.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
  });

  it('must be served as JSON (application/json or application/…+json)', async () => {
    const { input } = await answerSignedByNewKey(clientFor(sess));
    const servedAs =
      (contentType: string): typeof fetch =>
      async (url, init) => {
        const response = await fetch(url, init);
        if (!String(url).endsWith('/jwks.json')) return response;
        return new Response(await response.text(), {
          status: response.status,
          headers: { 'content-type': contentType },
        });
      };
    for (const contentType of ['text/html', 'text/plain', 'application/octet-stream', '']) {
      const client = clientFor(sess, { fetch: servedAs(contentType) });
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
    }
    for (const contentType of ['application/json; charset=utf-8', 'application/jwk-set+json']) {
      const client = clientFor(sess, { fetch: servedAs(contentType) });
      expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
    }
  });
});
