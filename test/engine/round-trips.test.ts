/**
 * Sess round trips of `sess_response`, counted by the local runtime: the first release after a
 * wait is wait → verify → one confirming read; a repeat on a saved answer is verify (offline,
 * against the workspace the record learned from the create) → one confirming read, also for a
 * client built for that one call, as the HTTP face builds them. The confirming read must name the
 * record's workspace; otherwise nothing is released.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SessApi, SessionView } from '../../src/core/contract/ports.js';
import { createSessClient } from '../../src/sess/client.js';
import type { ReceiptVerifier } from '../../src/sess/receipt.js';
import { createReceiptVerifier } from '../../src/sess/receipt.js';
import { approveAnswer, type Harness, startForwardingHarness } from '../engine/harness.js';

let h: Harness;
let verifier: ReceiptVerifier;
/** The client the next call gets; {@link freshClient} replaces it (a client per call). */
let current: SessApi;
/** The client methods the engine called, in order (a named double that records and delegates). */
let calls: string[] = [];
/** A view rewrite applied to what `getSession` returns (a named double around the real client). */
let rewrite: ((view: SessionView) => SessionView) | undefined;

function freshClient(): SessApi {
  current = createSessClient({
    origin: h.sess.origin,
    credential: () => h.sess.apiKey,
    allowInsecureLocalhost: true,
    receiptVerifier: verifier,
  });
  return current;
}

beforeAll(async () => {
  h = await startForwardingHarness(
    () => current,
    (name, real) =>
      async (...args) => {
        calls.push(name);
        const out = await real(...args);
        return name === 'getSession' && rewrite ? rewrite(structuredClone(out as SessionView)) : out;
      },
  );
  verifier = createReceiptVerifier({
    origin: h.sess.origin,
    allowInsecureLocalhost: true,
    keyRefreshCooldownMs: 0,
  });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  freshClient();
  calls = [];
  rewrite = undefined;
});

/** The runtime's request counters since `before`, for the endpoints a read path uses. */
function since(before: Readonly<Record<string, number>>) {
  const now = h.sess.stats.requests;
  const delta = (k: string) => (now[k] ?? 0) - (before[k] ?? 0);
  return { get: delta('get'), wait: delta('wait'), jwks: delta('jwks'), create: delta('create') };
}

/** A request answered by the person, read once so the key set is cached. */
async function savedAnswer() {
  const created = await h.request();
  await h.sess.submitAnswer(created.humanUrl, approveAnswer);
  const first = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
  expect(first.state).toBe('answered');
  return { created, first };
}

/** A saved answer's stored state, read back from the store. */
async function savedState() {
  const { created, first } = await savedAnswer();
  const stored = await h.record(created.handle);
  if (stored === undefined || stored.record.state.kind !== 'answered') throw new Error('no answer saved');
  return { created, first, stored, state: stored.record.state };
}

/** The client's `verifyResponse` input for a stored answer, with a caller-given workspace. */
function verifyInput(state: Awaited<ReturnType<typeof savedState>>['state'], workspaceId: string) {
  return {
    sessionId: state.session.sessionId,
    revision: 1,
    eventId: state.response.eventId,
    surface: state.surface,
    answer: state.response.answer,
    receipt: state.response.receipt,
    workspaceId,
  };
}

describe('the first release after a wait', () => {
  it('is one wait, then verification, then one confirming read (the wait never confirms)', async () => {
    const created = await h.request();
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    // Warm the shared key set, as any long-running face has it.
    await savedAnswer();
    freshClient();
    calls = [];
    const before = { ...h.sess.stats.requests };
    const out = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
    expect(out.state).toBe('answered');
    expect(since(before)).toEqual({ get: 1, wait: 1, jwks: 0, create: 0 });
    expect(calls).toEqual(['waitSession', 'verifyResponse', 'getSession']);
  });
});

describe('a repeat sess_response on a saved answer', () => {
  it('is one confirming read after offline verification, with a client made for that call', async () => {
    const { created, first } = await savedAnswer();
    for (let i = 0; i < 3; i++) {
      freshClient();
      calls = [];
      const before = { ...h.sess.stats.requests };
      const again = await h.ok('sess_response', { handle: created.handle, revision: 1 });
      expect(again.state).toBe('answered');
      expect(again.response).toEqual(first.response);
      expect(since(before)).toEqual({ get: 1, wait: 0, jwks: 0, create: 0 });
      // Verification first, then the one read.
      expect(calls).toEqual(['verifyResponse', 'getSession']);
    }
  });

  it('is one confirming read with a client that already talked to Sess', async () => {
    const { created } = await savedAnswer();
    const before = { ...h.sess.stats.requests };
    await h.ok('sess_response', { handle: created.handle, revision: 1 });
    expect(since(before)).toEqual({ get: 1, wait: 0, jwks: 0, create: 0 });
  });

  it('a confirming read of another workspace is a protocol error: nothing released, record kept', async () => {
    const { created } = await savedAnswer();
    freshClient();
    rewrite = (view) => ({ ...view, workspaceId: 'ws_someoneelse0000' });
    const error = await h.fail('sess_response', { handle: created.handle, revision: 1 });
    expect(error.code).toBe('SESS_PROTOCOL_ERROR');
    expect((await h.record(created.handle))?.record.state.kind).toBe('answered');
    // Once the reads are genuine again, the saved answer is released as before.
    rewrite = undefined;
    freshClient();
    expect((await h.ok('sess_response', { handle: created.handle, revision: 1 })).state).toBe('answered');
  });

  it('a record whose workspace is not the receipt\u2019s is refused, never released', async () => {
    const { created, stored } = await savedState();
    const tampered = structuredClone(stored.record);
    if (tampered.state.kind !== 'answered') throw new Error('unreachable');
    tampered.state.session.workspaceId = 'ws_someoneelse0000';
    await h.store().update(tampered, stored.version);
    freshClient();
    const before = { ...h.sess.stats.requests };
    const out = await h.call('sess_response', { handle: created.handle, revision: 1 });
    expect(out.ok).toBe(false);
    expect(out.ok ? '' : out.error.code).toBe('VERIFICATION_FAILED');
    // Refused by the offline verification: the confirming read was never made.
    expect(since(before).get).toBe(0);
  });
});

describe('the client with a caller-given workspace', () => {
  it('verifies a saved receipt with no request when the key set is cached', async () => {
    const { state, first } = await savedState();
    const client = freshClient();
    const before = { ...h.sess.stats.requests };
    const receipt = await client.verifyResponse(verifyInput(state, state.session.workspaceId));
    expect(receipt.eventId).toBe(first.response?.eventId);
    expect(since(before)).toEqual({ get: 0, wait: 0, jwks: 0, create: 0 });
  });

  it('refuses, sending nothing, a given workspace that is not a workspace id', async () => {
    const { state } = await savedState();
    const client = freshClient();
    const before = { ...h.sess.stats.requests };
    await expect(client.verifyResponse(verifyInput(state, 'not a workspace'))).rejects.toMatchObject({
      kind: 'not_sent',
      notSentKind: 'configuration',
    });
    expect(since(before)).toEqual({ get: 0, wait: 0, jwks: 0, create: 0 });
  });

  it('refuses a given workspace that disagrees with the one its responses named', async () => {
    const { state } = await savedState();
    const client = freshClient();
    await client.getSession(state.session.sessionId);
    await expect(client.verifyResponse(verifyInput(state, 'ws_someoneelse0000'))).rejects.toMatchObject({
      kind: 'protocol',
    });
  });
});
