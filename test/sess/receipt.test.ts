/**
 * Receipt verification against the local runtime's real Ed25519 receipts and JWKS: a genuine
 * answer verifies; every way a receipt can be wrong is refused with its reason; the key-set cache
 * refreshes at most once per cooldown, and a key rotation inside the cooldown is retryable and
 * verifies once the cooldown allows a refetch.
 */
import { describe, expect, it } from 'vitest';
import type { SessApi, VerificationReason, VerifyResponseInput } from '../../src/core/contract/ports.js';
import { generateSigningKey, signCompactJws } from '../../src/sess/jws.js';
import { createReceiptVerifier, type ReceiptVerifierOptions } from '../../src/sess/receipt.js';
import { type ReceiptTamper, startLocalSess } from '../../src/testing/index.js';
import {
  answer,
  answeredSession,
  clientFor,
  expectSessError,
  idemKey,
  proofOf,
  surface,
  useRuntime,
} from './helpers.js';

const sess = useRuntime();

/** An answered Session and the exact input that proves its answer. */
async function genuine(client: SessApi, title = 'Approve?'): Promise<VerifyResponseInput> {
  const { answered, surface: s } = await answeredSession(sess, client, { surface: surface(title) });
  return proofOf(answered, s);
}

/** A settable clock. */
function manualClock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('a genuine answer', () => {
  it('verifies, and says what it proved', async () => {
    const client = clientFor(sess);
    const input = await genuine(client);
    const proved = await client.verifyResponse(input);
    expect(proved).toEqual({
      workspaceId: sess.workspaceId,
      sessionId: input.sessionId,
      revision: 1,
      eventId: input.eventId,
      keyId: sess.keys.activeKid(),
      issuedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/),
      actorAssurance: 'link_holder',
    });
  });

  it('verifies at a later revision, over that revision’s Surface', async () => {
    const client = clientFor(sess);
    const first = await genuine(client);
    const created = sess.sessions.get(first.sessionId)!;
    await client.publish(first.sessionId, {
      expectedRevision: 1,
      responseEventId: first.eventId,
      surface: surface('Second step?'),
      idempotencyKey: idemKey(),
    });
    await sess.submitAnswer(created.view.human_url, answer('second'));
    const view = await client.getSession(first.sessionId);
    const r2 = view.responses[1]!;
    const input = {
      sessionId: first.sessionId,
      revision: 2,
      eventId: r2.eventId,
      surface: surface('Second step?'),
      answer: r2.answer,
      receipt: r2.receipt,
    };
    expect((await client.verifyResponse(input)).revision).toBe(2);
    // The first revision's Surface does not prove the second answer.
    await expectSessError(client.verifyResponse({ ...input, surface: surface('Approve?') }), 'verification', {
      reason: 'claims_mismatch',
    });
  });
});

describe('refusals', () => {
  it('another Session, revision, event, Surface or answer is claims_mismatch', async () => {
    const client = clientFor(sess);
    const input = await genuine(client);
    const other = await genuine(client);
    const variants: Partial<VerifyResponseInput>[] = [
      { sessionId: other.sessionId },
      { revision: 2 },
      { eventId: other.eventId },
      { surface: surface('Another title') },
      { answer: answer('another value') },
      { answer: { ...input.answer, action: 'stop' } },
    ];
    for (const change of variants) {
      await expectSessError(client.verifyResponse({ ...input, ...change }), 'verification', {
        reason: 'claims_mismatch',
      });
    }
    // The other Session's receipt does not prove this Session's answer either.
    await expectSessError(client.verifyResponse({ ...input, receipt: other.receipt }), 'verification', {
      reason: 'claims_mismatch',
    });
  });

  it.each<[string, ReceiptTamper, VerificationReason]>([
    ['a flipped signature bit', { mode: 'signature' }, 'bad_signature'],
    ['a key in no key set', { mode: 'unknown_key' }, 'unknown_key_id'],
    ['a key of another workspace', { mode: 'other_workspace_key' }, 'foreign_key'],
    ['a genuine receipt of another answer', { mode: 'replay' }, 'claims_mismatch'],
    ['another Surface digest, re-signed', { mode: 'claim', claim: 'sdg' }, 'claims_mismatch'],
    ['another answer digest, re-signed', { mode: 'claim', claim: 'adg' }, 'claims_mismatch'],
    ['another Session id, re-signed', { mode: 'claim', claim: 'sid' }, 'claims_mismatch'],
    ['another revision, re-signed', { mode: 'claim', claim: 'rev' }, 'claims_mismatch'],
    ['another event, re-signed', { mode: 'claim', claim: 'evt' }, 'claims_mismatch'],
    ['another workspace claim, re-signed', { mode: 'claim', claim: 'ws' }, 'claims_mismatch'],
    [
      'another issuer, re-signed',
      { mode: 'claim', claim: 'iss', value: 'https://evil.example' },
      'claims_mismatch',
    ],
    [
      'another actor assurance, re-signed',
      { mode: 'claim', claim: 'act', value: 'verified_person' },
      'claims_mismatch',
    ],
    ['a non-string actor assurance, re-signed', { mode: 'claim', claim: 'act', value: 7 }, 'malformed'],
  ])('%s is refused (%s → %s)', async (_name, tamper, reason) => {
    const client = clientFor(sess);
    const input = await genuine(client);
    sess.faults.tamperReceipt('get', tamper);
    const view = await client.getSession(input.sessionId);
    const receipt = view.responses[0]!.receipt;
    expect(receipt).not.toBe(input.receipt);
    await expectSessError(client.verifyResponse({ ...input, receipt }), 'verification', { reason });
    // The genuine receipt still verifies on the same client.
    expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
  });

  it('a receipt that is not a compact JWS, or has the wrong header, is malformed', async () => {
    const client = clientFor(sess);
    const input = await genuine(client);
    const key = await generateSigningKey(sess.workspaceId, 'k_test_only');
    const payload = JSON.parse(Buffer.from(input.receipt.split('.')[1]!, 'base64url').toString('utf8'));
    const headers = [
      { alg: 'EdDSA', kid: 'k_test_only', typ: 'JWT' },
      { alg: 'EdDSA', typ: 'sess-receipt+jwt' },
      { alg: 'EdDSA', kid: 'k_test_only', typ: 'sess-receipt+jwt', crit: ['exp'] },
      { alg: 'EdDSA', kid: 'k_test_only', typ: 'sess-receipt+jwt', jwk: key.publicJwk },
    ];
    const receipts = ['', 'not-a-jws', 'a.b.c', `${input.receipt}.x`, input.receipt.slice(0, -2)];
    for (const header of headers) receipts.push(await signCompactJws(header, payload, key.privateKey));
    for (const receipt of receipts) {
      await expectSessError(client.verifyResponse({ ...input, receipt }), 'verification', {
        reason: 'malformed',
      });
    }
  });

  it('with no trusted workspace known, verification is context_missing', async () => {
    const local = await startLocalSess({ workspaceHeader: false });
    try {
      const client = clientFor(local);
      const { answered, surface: s } = await answeredSession(local, client);
      const input = proofOf(answered, s);
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'context_missing' });
      expect(local.stats.requests.jwks).toBe(0);
      const configured = clientFor(local, { expectedWorkspaceId: local.workspaceId });
      expect((await configured.verifyResponse(input)).workspaceId).toBe(local.workspaceId);
    } finally {
      await local.close();
    }
  });

  it('a fresh client (a new process verifying a saved answer) learns the workspace with one read', async () => {
    const input = await genuine(clientFor(sess));
    const fresh = clientFor(sess);
    const gets = sess.stats.requests.get ?? 0;
    expect((await fresh.verifyResponse(input)).sessionId).toBe(input.sessionId);
    expect(sess.stats.requests.get).toBe(gets + 1);
    // Known from then on: no further read.
    expect((await fresh.verifyResponse(input)).sessionId).toBe(input.sessionId);
    expect(sess.stats.requests.get).toBe(gets + 1);
  });

  it('the read that learns the workspace fails like any read, and a header naming another workspace is protocol', async () => {
    const input = await genuine(clientFor(sess));
    sess.faults.fail('get', 503);
    await expectSessError(clientFor(sess).verifyResponse(input), 'api', { status: 503 });
    await expectSessError(clientFor(sess).verifyResponse({ ...input, sessionId: 'ses_unknown' }), 'api', {
      status: 404,
    });
    // A key of another workspace cannot read this Session at all.
    const other = await sess.createWorkspace();
    const theirs = clientFor(sess, { credential: () => other.apiKey });
    await expectSessError(theirs.verifyResponse(input), 'api', { status: 404 });
    // A key of another workspace that has already seen its own workspace refuses the receipt.
    await theirs.createSession({ surface: surface(), idempotencyKey: idemKey() });
    await expectSessError(theirs.verifyResponse(input), 'verification', { reason: 'foreign_key' });
  });

  it('the issuer can be configured (receiptIssuer)', async () => {
    const local = await startLocalSess({ issuer: 'https://receipts.example' });
    try {
      const client = clientFor(local);
      const { answered, surface: s } = await answeredSession(local, client);
      const input = proofOf(answered, s);
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'claims_mismatch' });
      const configured = clientFor(local, { receiptIssuer: 'https://receipts.example' });
      await configured.getSession(input.sessionId);
      expect((await configured.verifyResponse(input)).revision).toBe(1);
    } finally {
      await local.close();
    }
  });
});

describe('the key set', () => {
  it('a key-set fetch failure is key_set_unavailable (retryable), then verifies once a fetch is allowed', async () => {
    const clock = manualClock();
    const client = clientFor(sess, { clock });
    const input = await genuine(client);
    for (const inject of [
      () => sess.faults.fail('jwks', 503),
      () => sess.faults.drop('jwks'),
      () => sess.faults.malformed('jwks'),
      () => sess.faults.malformed('jwks', { body: '{"keys":{"kty":"OKP"}}' }),
    ]) {
      inject();
      const before = sess.stats.requests.jwks ?? 0;
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
      // Inside the cooldown nothing is fetched again.
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
      expect(sess.stats.requests.jwks).toBe(before + 1);
      clock.advance(10_000);
    }
    expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
  });

  it('concurrent verifications share one key-set fetch', async () => {
    const client = clientFor(sess);
    const inputs = await Promise.all([genuine(client, 'A'), genuine(client, 'B'), genuine(client, 'C')]);
    const before = sess.stats.requests.jwks ?? 0;
    const results = await Promise.all(
      inputs.flatMap((input) => [client.verifyResponse(input), client.verifyResponse(input)]),
    );
    expect(results).toHaveLength(6);
    expect(sess.stats.requests.jwks).toBe(before + 1);
  });

  it('unknown key ids refetch at most once per cooldown', async () => {
    const clock = manualClock();
    const client = clientFor(sess, { clock });
    const input = await genuine(client);
    sess.faults.tamperReceipt('get', { mode: 'unknown_key' });
    const receipt = (await client.getSession(input.sessionId)).responses[0]!.receipt;
    const before = sess.stats.requests.jwks ?? 0;
    await expectSessError(client.verifyResponse({ ...input, receipt }), 'verification', {
      reason: 'unknown_key_id',
    });
    for (let i = 0; i < 5; i++) {
      clock.advance(1_000);
      await expectSessError(client.verifyResponse({ ...input, receipt }), 'verification', {
        reason: 'key_refresh_cooldown',
      });
    }
    expect(sess.stats.requests.jwks).toBe(before + 1);
    clock.advance(5_000);
    await expectSessError(client.verifyResponse({ ...input, receipt }), 'verification', {
      reason: 'unknown_key_id',
    });
    expect(sess.stats.requests.jwks).toBe(before + 2);
  });

  it('a rotation inside the cooldown is key_refresh_cooldown, and the same answer verifies after it', async () => {
    const local = await startLocalSess();
    try {
      const clock = manualClock();
      const client = clientFor(local, { clock });
      // Warm the cache with the old key.
      const old = await answeredSession(local, client);
      const oldInput = proofOf(old.answered, old.surface);
      await client.verifyResponse(oldInput);
      expect(local.stats.requests.jwks).toBe(1);

      const oldKid = local.keys.activeKid();
      const newKid = await local.keys.rotate();
      expect(newKid).not.toBe(oldKid);
      const fresh = await answeredSession(local, client);
      const input = proofOf(fresh.answered, fresh.surface);

      clock.advance(4_000);
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_refresh_cooldown' });
      clock.advance(5_999);
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'key_refresh_cooldown' });
      expect(local.stats.requests.jwks).toBe(1);

      clock.advance(1);
      const proved = await client.verifyResponse(input);
      expect(proved.keyId).toBe(newKid);
      expect(local.stats.requests.jwks).toBe(2);
      // Old receipts still verify: the rotated-out key stays listed.
      expect((await client.verifyResponse(oldInput)).keyId).toBe(oldKid);
      expect(local.stats.requests.jwks).toBe(2);
    } finally {
      await local.close();
    }
  });

  it('the cooldown is configurable (keyRefreshCooldownMs: 0 refetches at once)', async () => {
    const local = await startLocalSess();
    try {
      const client = clientFor(local, { keyRefreshCooldownMs: 0 });
      const old = await answeredSession(local, client);
      const r0 = old.answered.responses[0]!;
      await client.verifyResponse({
        sessionId: old.answered.sessionId,
        revision: 1,
        eventId: r0.eventId,
        surface: old.surface,
        answer: r0.answer,
        receipt: r0.receipt,
      });
      await local.keys.rotate();
      const fresh = await answeredSession(local, client);
      const r1 = fresh.answered.responses[0]!;
      const proved = await client.verifyResponse({
        sessionId: fresh.answered.sessionId,
        revision: 1,
        eventId: r1.eventId,
        surface: fresh.surface,
        answer: r1.answer,
        receipt: r1.receipt,
      });
      expect(proved.keyId).toBe(local.keys.activeKid());
    } finally {
      await local.close();
    }
  });

  it('a caller’s abort ends its own wait for the key set, not another caller’s', async () => {
    const client = clientFor(sess);
    const input = await genuine(client);
    sess.faults.delay('jwks', 300);
    const controller = new AbortController();
    const aborted = client.verifyResponse(input, { signal: controller.signal });
    const patient = client.verifyResponse(input);
    setTimeout(() => controller.abort(), 30);
    await expectSessError(aborted, 'aborted');
    expect((await patient).eventId).toBe(input.eventId);
  });
});

describe('a shared verifier', () => {
  it('keeps one key-set cache across clients (a face that builds a client per call)', async () => {
    const local = await startLocalSess();
    try {
      const verifier = createReceiptVerifier({ origin: local.origin, allowInsecureLocalhost: true });
      const inputs = [];
      for (let i = 0; i < 3; i++) {
        const client = clientFor(local, { receiptVerifier: verifier });
        const { answered, surface: s } = await answeredSession(local, client);
        inputs.push(proofOf(answered, s));
        await client.verifyResponse(inputs[i]!);
      }
      expect(local.stats.requests.jwks).toBe(1);
      // The trusted workspace is still each client's own.
      const other = await local.createWorkspace();
      const theirs = clientFor(local, { receiptVerifier: verifier, credential: () => other.apiKey });
      await theirs.createSession({ surface: surface(), idempotencyKey: idemKey() });
      await expectSessError(theirs.verifyResponse(inputs[0]!), 'verification', { reason: 'foreign_key' });
    } finally {
      await local.close();
    }
  });

  it('skips the signature of a receipt it verified, yet compares claims and the key set on every repeat', async () => {
    const local = await startLocalSess();
    try {
      const clock = manualClock();
      const verifier = createReceiptVerifier({
        origin: local.origin,
        allowInsecureLocalhost: true,
        clock,
        keyRefreshCooldownMs: 1_000,
        keySetMaxAgeMs: 1_000,
      });
      const client = clientFor(local, { receiptVerifier: verifier });
      const { answered, surface: s } = await answeredSession(local, client);
      const input = proofOf(answered, s);
      expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
      expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
      // A remembered signature proves nothing about another Surface or answer.
      await expectSessError(
        client.verifyResponse({ ...input, surface: surface('Another title') }),
        'verification',
        {
          reason: 'claims_mismatch',
        },
      );
      await expectSessError(
        client.verifyResponse({ ...input, answer: answer('another value') }),
        'verification',
        {
          reason: 'claims_mismatch',
        },
      );
      // A repeat with the same values, built afresh and in another member order, still verifies;
      // the same Surface changed in place after a repeat does not.
      const reordered = JSON.parse(JSON.stringify(input)) as typeof input;
      reordered.surface = Object.fromEntries(
        Object.entries(reordered.surface).reverse(),
      ) as typeof input.surface;
      expect((await client.verifyResponse(reordered)).eventId).toBe(input.eventId);
      (reordered.surface as { title: string }).title = 'Changed in place';
      await expectSessError(client.verifyResponse(reordered), 'verification', { reason: 'claims_mismatch' });
      expect((await client.verifyResponse(input)).eventId).toBe(input.eventId);
      // Nor does it outlive its key: once the set is fetched again without it, the receipt fails.
      const oldKid = local.keys.activeKid();
      await local.keys.rotate();
      local.keys.remove(oldKid);
      clock.advance(1_001);
      await expectSessError(client.verifyResponse(input), 'verification', { reason: 'unknown_key_id' });
      expect(local.stats.requests.jwks).toBe(2);
    } finally {
      await local.close();
    }
  });

  it('refuses bad options with a TypeError naming the option', () => {
    const bad: Array<[string, Partial<ReceiptVerifierOptions>]> = [
      ['origin', { origin: 'http://127.0.0.1:1' }],
      ['keyRefreshCooldownMs', { keyRefreshCooldownMs: -1 }],
      ['keySetMaxAgeMs', { keySetMaxAgeMs: -1 }],
      ['requestTimeoutMs', { requestTimeoutMs: 0 }],
      ['issuer', { issuer: '' }],
      ['clock', { clock: {} as never }],
    ];
    for (const [name, extra] of bad) {
      expect(() => createReceiptVerifier({ origin: 'https://a.example', ...extra })).toThrow(
        new RegExp(`^createReceiptVerifier: option "${name}" `),
      );
    }
    expect(() => clientFor(sess, { receiptVerifier: {} as never })).toThrow(
      /^createSessClient: option "receiptVerifier" /,
    );
  });
});

describe('the key-set fetch', () => {
  it('uses the client’s fetch, at the well-known path, without the API key', async () => {
    const seen: Array<{ url: string; headers: Headers }> = [];
    const recording: typeof fetch = (input, init) => {
      seen.push({ url: String(input), headers: new Headers(init?.headers) });
      return fetch(input, init);
    };
    const client = clientFor(sess, { fetch: recording });
    const input = await genuine(client);
    await client.verifyResponse(input);
    const jwks = seen.filter((s) => s.url.endsWith('/.well-known/sess/jwks.json'));
    expect(jwks).toHaveLength(1);
    expect(jwks[0]!.url).toBe(`${sess.origin}/.well-known/sess/jwks.json`);
    expect(jwks[0]!.headers.get('authorization')).toBeNull();
  });

  it('a key-set fetch past the deadline is key_set_unavailable', async () => {
    const client = clientFor(sess);
    const input = await genuine(client);
    const slow = clientFor(sess, { requestTimeoutMs: 150 });
    await slow.getSession(input.sessionId).catch(() => {});
    sess.faults.delay('jwks', 5_000);
    await expectSessError(slow.verifyResponse(input), 'verification', { reason: 'key_set_unavailable' });
  });

  it('a Surface or answer that is not JSON is configuration, not a verdict on the receipt', async () => {
    const client = clientFor(sess);
    const input = await genuine(client);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expectSessError(
      client.verifyResponse({ ...input, answer: { action: 'approve', values: { n: 10n as never } } }),
      'configuration',
    );
    await expectSessError(client.verifyResponse({ ...input, surface: cyclic as never }), 'configuration');
  });
});
