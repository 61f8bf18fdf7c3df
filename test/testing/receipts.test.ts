import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Surface } from '../../src/core/model/surface.js';
import { digestJson } from '../../src/sess/digest.js';
import { importEd25519PublicKey, parseCompactJws, verifyCompactJwsSignature } from '../../src/sess/jws.js';
import { JwksSchema } from '../../src/sess/wire.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { receiptClaimsOf, receiptHeaderOf } from '../support/wire-views.js';
import { ANSWER, call, createSession, sampleSurface } from './helpers.js';

let sess: LocalSess;
beforeAll(async () => {
  sess = await startLocalSess();
});
afterAll(async () => {
  await sess.close();
});

/** What a receipt check against the published JWKS finds (a minimal verifier for these tests). */
async function inspect(origin: string, receipt: string) {
  const jwks = v.parse(JwksSchema, await (await fetch(`${origin}/.well-known/sess/jwks.json`)).json());
  const parsed = parseCompactJws(receipt);
  if (!parsed) return { ok: false as const, why: 'malformed' };
  const header = receiptHeaderOf(parsed.header);
  const claims = receiptClaimsOf(parsed.payload);
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return { ok: false as const, why: 'unknown_key_id', claims };
  const signatureOk = await verifyCompactJwsSignature(parsed, await importEd25519PublicKey(jwk));
  return {
    ok: signatureOk,
    why: signatureOk ? undefined : 'bad_signature',
    claims,
    keyWs: jwk.ws,
    kid: header.kid,
  };
}

async function answeredSession(target: LocalSess, surface: Surface = sampleSurface(), apiKey?: string) {
  const s = await createSession(target, { interaction: surface }, apiKey);
  await target.submitAnswer(s.human_url, ANSWER);
  const view = (await call(target, 'GET', `/v1/sessions/${s.id}`, apiKey === undefined ? {} : { apiKey }))
    .json;
  return { id: s.id as string, response: view.responses[0], view };
}

describe('receipts', () => {
  it('a genuine receipt verifies against the JWKS and binds the Session, revision, event, Surface and answer', async () => {
    const surface = sampleSurface('Ship it?');
    const { id, response } = await answeredSession(sess, surface);
    const result = await inspect(sess.origin, response.receipt);
    expect(result.ok).toBe(true);
    expect(result.keyWs).toBe(sess.workspaceId);
    expect(result.claims).toEqual({
      iss: sess.origin,
      ws: sess.workspaceId,
      sid: id,
      rev: 1,
      evt: response.event_id,
      sdg: await digestJson(surface),
      adg: await digestJson(ANSWER),
      act: 'link_holder',
      iat: Math.floor(Date.parse(response.submitted_at) / 1000),
    });
    expect(parseCompactJws(response.receipt)!.header).toEqual({
      alg: 'EdDSA',
      kid: result.kid,
      typ: 'sess-receipt+jwt',
    });
  });

  it('publishes every key with its workspace; ?ws filters; a second workspace signs with its own key', async () => {
    const other = await sess.createWorkspace();
    const { response } = await answeredSession(sess, sampleSurface(), other.apiKey);
    const result = await inspect(sess.origin, response.receipt);
    expect(result.ok).toBe(true);
    expect(result.keyWs).toBe(other.workspaceId);
    expect(result.claims!.ws).toBe(other.workspaceId);
    const res = await fetch(`${sess.origin}/.well-known/sess/jwks.json?ws=${other.workspaceId}`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=10');
    const filtered = v.parse(JwksSchema, await res.json());
    expect(filtered.keys.map((k) => k.ws)).toEqual([other.workspaceId]);
    expect(filtered.keys[0]!.kid).not.toBe(sess.keys.activeKid());
  });

  it('rotation signs new answers with the new key; the old key stays listed until removed', async () => {
    const before = await answeredSession(sess);
    const oldKid = sess.keys.activeKid();
    const newKid = await sess.keys.rotate();
    expect(newKid).not.toBe(oldKid);
    const after = await answeredSession(sess);
    expect((await inspect(sess.origin, after.response.receipt)).kid).toBe(newKid);
    expect((await inspect(sess.origin, before.response.receipt)).ok).toBe(true);
    sess.keys.remove(oldKid);
    expect((await inspect(sess.origin, before.response.receipt)).why).toBe('unknown_key_id');
    expect((await inspect(sess.origin, after.response.receipt)).ok).toBe(true);
  });

  it('uses the configured issuer', async () => {
    const other = await startLocalSess({ issuer: 'https://api.sess.example' });
    try {
      const { response } = await answeredSession(other);
      expect((await inspect(other.origin, response.receipt)).claims!.iss).toBe('https://api.sess.example');
    } finally {
      await other.close();
    }
  });
});

describe('tampered receipts (fault)', () => {
  it('signature: one flipped bit fails the signature', async () => {
    const { id } = await answeredSession(sess);
    sess.faults.tamperReceipt('get', { mode: 'signature' });
    const view = (await call(sess, 'GET', `/v1/sessions/${id}`)).json;
    expect((await inspect(sess.origin, view.responses[0].receipt)).why).toBe('bad_signature');
    // Only that one response was tampered with.
    const clean = (await call(sess, 'GET', `/v1/sessions/${id}`)).json;
    expect((await inspect(sess.origin, clean.responses[0].receipt)).ok).toBe(true);
  });

  it('unknown_key: signed by a key that is in no key set', async () => {
    const { id } = await answeredSession(sess);
    sess.faults.tamperReceipt('get', { mode: 'unknown_key' });
    const view = (await call(sess, 'GET', `/v1/sessions/${id}`)).json;
    expect((await inspect(sess.origin, view.responses[0].receipt)).why).toBe('unknown_key_id');
  });

  it('other_workspace_key: a valid signature by a key published for another workspace', async () => {
    const { id } = await answeredSession(sess);
    sess.faults.tamperReceipt('wait', { mode: 'other_workspace_key' });
    const view = (await call(sess, 'GET', `/v1/sessions/${id}/wait?revision=1&status=active&timeout_ms=0`))
      .json;
    const result = await inspect(sess.origin, view.responses[0].receipt);
    expect(result.ok).toBe(true);
    expect(result.keyWs).not.toBe(sess.workspaceId);
    expect(result.claims!.ws).toBe(sess.workspaceId);
  });

  it('replay: a genuine receipt of an earlier answer stands in for the current one', async () => {
    const s = await createSession(sess);
    await sess.submitAnswer(s.human_url, ANSWER);
    const evt1 = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json.responses[0].event_id;
    await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, {
      body: { response_event_id: evt1, interaction: sampleSurface('Next?') },
      key: `replay-${s.id}`,
      ifMatch: 1,
    });
    await sess.submitAnswer(s.human_url, ANSWER);
    sess.faults.tamperReceipt('get', { mode: 'replay' });
    const view = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json;
    const second = await inspect(sess.origin, view.responses[1].receipt);
    expect(second.ok).toBe(true);
    expect(second.claims!.rev).toBe(1);
    expect(second.claims!.evt).toBe(evt1);
    expect(view.responses[1].event_id).not.toBe(evt1);
  });

  it.each(['sid', 'rev', 'evt', 'sdg', 'adg', 'ws'] as const)(
    'claim %s: a valid signature over a changed claim',
    async (claim) => {
      const { id, response } = await answeredSession(sess);
      const genuine = (await inspect(sess.origin, response.receipt)).claims!;
      sess.faults.tamperReceipt('get', { mode: 'claim', claim });
      const view = (await call(sess, 'GET', `/v1/sessions/${id}`)).json;
      const result = await inspect(sess.origin, view.responses[0].receipt);
      expect(result.ok).toBe(true);
      expect(result.claims![claim]).not.toEqual(genuine[claim]);
      const { [claim]: _a, ...restTampered } = result.claims!;
      const { [claim]: _b, ...restGenuine } = genuine;
      expect(restTampered).toEqual(restGenuine);
    },
  );
});
