/**
 * Every error code the engine can produce, produced through `engine.call` against the local Sess
 * runtime (faults injected there), with the record state asserted after each. Store doubles wrap
 * the real memory store and are named as doubles. The last test checks that every code of the
 * error table was seen, and every test checks that no link, key or handle reached diagnostics
 * or an error message.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode, SessMcpError } from '../../src/core/contract/errors.js';
import type { HttpBinding, SessApi, StdioBinding } from '../../src/core/contract/ports.js';
import { SessApiError } from '../../src/core/contract/ports.js';
import { RECORD_FORMAT } from '../../src/core/model/record.js';
import { storeError } from '../../src/core/store-kit/kit.js';
import {
  approveAnswer,
  approveSurface,
  followUpSurface,
  forwardingSess,
  type Harness,
  type HarnessOptions,
  localClient,
  sessionIdOf,
  startHarness,
  storeDouble,
} from './harness.js';

const seen = new Set<ErrorCode>();
let h: Harness | undefined;

async function start(options?: HarnessOptions): Promise<Harness> {
  h = await startHarness(options);
  return h;
}

afterEach(async () => {
  if (h !== undefined) {
    // Diagnostics carry fixed words, codes and numbers only.
    const text = JSON.stringify(h.diagnostics);
    expect(text).not.toContain('sess_h_');
    expect(text).not.toContain(h.sess.origin);
    expect(text).not.toContain(h.sess.apiKey);
    for (const event of h.diagnostics) {
      expect(Object.keys(event).every((k) => ['event', 'code', 'tool', 'state', 'ms'].includes(k))).toBe(
        true,
      );
    }
    await h.close();
  }
  h = undefined;
});

/** Call, expect `code`, check the message holds no secret, and remember the code. */
async function expectCode(
  harness: Harness,
  code: ErrorCode,
  tool: Parameters<Harness['call']>[0],
  args: unknown,
) {
  const error = await harness.fail(tool, args);
  expect(error.code, error.message).toBe(code);
  expect(error.message).not.toContain(harness.sess.origin);
  expect(error.message).not.toContain(harness.sess.apiKey);
  expect(error.message).not.toContain('sess_h_');
  seen.add(code);
  return error;
}

async function stateOf(harness: Harness, handle: string) {
  return (await harness.record(handle))?.record.state;
}

/** The person answers, the `sess_response` that reads it fails with `code`, and the record stays waiting. */
async function answerRefused(harness: Harness, code: ErrorCode) {
  const { created, response } = await harness.submitted();
  const error = await expectCode(harness, code, 'sess_response', response);
  expect((await stateOf(harness, created.handle))?.kind).toBe('waiting');
  return error;
}

describe('arguments and handles', () => {
  it('INVALID_ARGUMENTS: nothing reaches Sess or the store', async () => {
    const harness = await start();
    const error = await expectCode(harness, 'INVALID_ARGUMENTS', 'sess_request', {
      interaction: { ...approveSurface, title: 'x'.repeat(81) },
    });
    expect(error).toMatchObject({ field: '/interaction/title', limit: 80, length: 81, retryable: false });
    expect(await harness.store().countUnfinished()).toBe(0);
    expect(harness.sess.stats.requests.create ?? 0).toBe(0);
  });

  it('HANDLE_NOT_FOUND: an unknown handle, and a handle of another profile or origin', async () => {
    const harness = await start();
    await expectCode(harness, 'HANDLE_NOT_FOUND', 'sess_response', {
      handle: 'sess_h_AAAAAAAAAAAAAAAAAAAAAA',
      revision: 1,
    });
    const created = await harness.request();
    const original = harness.binding;
    harness.binding = { ...original, profile: 'work' };
    await expectCode(harness, 'HANDLE_NOT_FOUND', 'sess_response', { handle: created.handle, revision: 1 });
    harness.binding = { ...original, apiOrigin: 'http://127.0.0.1:9' };
    await expectCode(harness, 'HANDLE_NOT_FOUND', 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: 'evt_x',
    });
    harness.binding = original;
    expect((await stateOf(harness, created.handle))?.kind).toBe('waiting');
  });

  it('HANDLE_NOT_FOUND: a record of another scope is refused whatever the store returned', async () => {
    // Double: a store view that ignores its scope and answers from another binding's records.
    let leakFrom: StdioBinding | undefined;
    const harness = await start({
      wrapStore: (store) =>
        leakFrom === undefined
          ? store
          : storeDouble(store, {
              get: (handle) => harness.stores.forBinding(leakFrom as StdioBinding).get(handle),
            }),
    });
    const created = await harness.request();
    leakFrom = harness.binding;
    harness.binding = { ...harness.binding, profile: 'other' };
    await expectCode(harness, 'HANDLE_NOT_FOUND', 'sess_response', { handle: created.handle, revision: 1 });
    harness.binding = { ...leakFrom, credentialGeneration: 'gen-2' };
    await expectCode(harness, 'BINDING_MISMATCH', 'sess_response', { handle: created.handle, revision: 1 });
  });

  it('BINDING_MISMATCH: the same profile and origin with a rotated key', async () => {
    const harness = await start();
    const created = await harness.request();
    harness.binding = { ...harness.binding, credentialGeneration: 'gen-2' };
    await expectCode(harness, 'BINDING_MISMATCH', 'sess_response', { handle: created.handle, revision: 1 });
    expect((await stateOf(harness, created.handle))?.kind).toBe('waiting');
  });

  it('REVISION_MISMATCH names the current revision', async () => {
    const harness = await start();
    const { created, answered } = await harness.answered();
    const error = await expectCode(harness, 'REVISION_MISMATCH', 'sess_response', {
      handle: created.handle,
      revision: 2,
    });
    expect(error.message).toContain('it is 1');
    await expectCode(harness, 'REVISION_MISMATCH', 'sess_publish', {
      handle: created.handle,
      expected_revision: 2,
      response_event_id: answered.response?.eventId,
      interaction: followUpSurface,
    });
    expect((await stateOf(harness, created.handle))?.kind).toBe('answered');
  });

  it('RESPONSE_MISMATCH: another answer than the one held', async () => {
    const harness = await start();
    const { created } = await harness.answered();
    await expectCode(harness, 'RESPONSE_MISMATCH', 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: 'evt_not_this_one',
    });
    expect((await stateOf(harness, created.handle))?.kind).toBe('answered');
    expect(harness.sess.stats.requests.complete ?? 0).toBe(0);
  });
});

describe('publish and complete', () => {
  it('OUTCOME_UNKNOWN keeps the request; PENDING_MUTATION_DIFFERS and MUTATION_PENDING refuse others; the identical call replays it', async () => {
    const harness = await start();
    const { created, answered } = await harness.answered();
    const eventId = answered.response?.eventId as string;
    const publish = {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: eventId,
      interaction: followUpSurface,
    };
    harness.sess.faults.commitThenDrop('publish');
    const lost = await expectCode(harness, 'OUTCOME_UNKNOWN', 'sess_publish', publish);
    expect(lost.retryable).toBe(true);
    const pending = await stateOf(harness, created.handle);
    expect(pending).toMatchObject({
      kind: 'publish_pending',
      request: { expectedRevision: 1, surface: followUpSurface },
    });

    await expectCode(harness, 'PENDING_MUTATION_DIFFERS', 'sess_publish', {
      ...publish,
      interaction: { ...followUpSurface, title: 'Something else?' },
    });
    await expectCode(harness, 'MUTATION_PENDING', 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: eventId,
    });
    await expectCode(harness, 'MUTATION_PENDING', 'sess_response', { handle: created.handle, revision: 1 });
    expect(await stateOf(harness, created.handle)).toEqual(pending);
    const sent = harness.sess.stats.requests.publish;

    // The identical call replays the saved request with its key: Sess answers the original outcome.
    expect(await harness.ok('sess_publish', publish)).toEqual({
      handle: created.handle,
      revision: 2,
      state: 'waiting',
    });
    expect(harness.sess.stats.requests.publish).toBe((sent as number) + 1);
    expect(harness.sess.stats.of().revisionsPublished).toBe(1);
    expect((await stateOf(harness, created.handle))?.kind).toBe('waiting');
  });

  it('OUTCOME_UNKNOWN on a 500 complete, then the identical call completes', async () => {
    const harness = await start();
    const { created, complete } = await harness.answered();
    harness.sess.faults.fail('complete', 500);
    await expectCode(harness, 'OUTCOME_UNKNOWN', 'sess_complete', complete);
    expect((await stateOf(harness, created.handle))?.kind).toBe('complete_pending');
    await expectCode(harness, 'PENDING_MUTATION_DIFFERS', 'sess_complete', {
      ...complete,
      response_event_id: 'evt_other',
    });
    await expectCode(harness, 'MUTATION_PENDING', 'sess_publish', {
      ...complete,
      interaction: followUpSurface,
    });
    expect(await harness.ok('sess_complete', complete)).toEqual({
      handle: created.handle,
      revision: 1,
      state: 'completed',
    });
    expect(harness.sess.stats.of().sessionsCompleted).toBe(1);
  });

  it('INVALID_STATE: an Ask handle, no answer yet, already completed', async () => {
    const harness = await start();
    const ask = await harness.ok('sess_ask', {
      question: 'Which day?',
      fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'] }],
      respondents: { max: 2 },
    });
    const onAsk = await expectCode(harness, 'INVALID_STATE', 'sess_publish', {
      handle: ask.handle,
      expected_revision: 1,
      response_event_id: 'evt_x',
      interaction: followUpSurface,
    });
    expect(onAsk).toMatchObject({ reason: 'ask_handle', state: 'ask_open' });
    await expectCode(harness, 'INVALID_STATE', 'sess_complete', {
      handle: ask.handle,
      expected_revision: 1,
      response_event_id: 'evt_x',
    });

    const created = await harness.request();
    const early = await expectCode(harness, 'INVALID_STATE', 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: 'evt_x',
    });
    expect(early).toMatchObject({ reason: 'no_answer_yet', state: 'waiting' });
    expect(harness.sess.stats.requests.complete ?? 0).toBe(0);
  });

  it('INVALID_STATE: a lost compare-and-set releases nothing', async () => {
    // Double: a store whose updates always lose the compare-and-set, as if another call came first.
    const harness = await start({
      wrapStore: (store) =>
        storeDouble(store, {
          update: async (record, version) => {
            if (record.state.kind === 'answered') {
              throw new SessMcpError('INVALID_STATE', 'stale', { reason: 'stale_version' });
            }
            return store.update(record, version);
          },
        }),
    });
    const error = await answerRefused(harness, 'INVALID_STATE');
    expect(error.reason).toBe('stale_version');
  });

  it('MUTATION_REJECTED: a deterministic refusal blocks, and the engine never leaves blocked', async () => {
    const harness = await start();
    const { created, publish } = await harness.answered();
    harness.sess.faults.fail('publish', 409, { code: 'conflict' });
    const error = await expectCode(harness, 'MUTATION_REJECTED', 'sess_publish', publish);
    expect(error).toMatchObject({ reason: 'conflict', state: 'blocked', retryable: false });
    expect(await stateOf(harness, created.handle)).toMatchObject({
      kind: 'blocked',
      code: 'MUTATION_REJECTED',
      previous: 'publish_pending',
    });
    const sent = harness.sess.stats.requests.publish;
    await expectCode(harness, 'MUTATION_REJECTED', 'sess_publish', publish);
    await expectCode(harness, 'MUTATION_REJECTED', 'sess_response', { handle: created.handle, revision: 1 });
    expect(harness.sess.stats.requests.publish).toBe(sent);
  });
});

describe('creating', () => {
  it('CREATE_REJECTED carries Sess field, limit and length; no record stays', async () => {
    const harness = await start({ sess: { plan: { maxExpiresIn: 3_600 } } });
    const error = await expectCode(harness, 'CREATE_REJECTED', 'sess_request', {
      interaction: approveSurface,
      expires_in: 7_200,
    });
    expect(error).toMatchObject({ field: '/expires_in', limit: 3_600, length: 7_200, retryable: false });
    expect(await harness.store().countUnfinished()).toBe(0);
  });

  it('PLAN_LIMIT_REACHED: no link, no record', async () => {
    const harness = await start({ sess: { plan: { maxOpenSessions: 1 } } });
    await harness.request();
    await expectCode(harness, 'PLAN_LIMIT_REACHED', 'sess_request', { interaction: approveSurface });
    expect(await harness.store().countUnfinished()).toBe(1);
    expect(harness.sess.stats.of().sessionsCreated).toBe(1);
  });

  it("PRINCIPAL_QUOTA_REACHED: refused before Sess is called, over all the principal's clients; withdrawing one frees a place", async () => {
    const harness = await start({ engine: { maxOpenPerPrincipal: 2 } });
    const alice: HttpBinding = {
      kind: 'http',
      origin: 'https://mcp.example.test',
      workspaceId: harness.sess.workspaceId,
      principalId: 'alice',
      clientId: 'client-1',
      grantId: 'grant-1',
      grantGeneration: '1',
    };
    harness.actingAs = alice;
    const first = await harness.request();
    harness.actingAs = { ...alice, clientId: 'client-2', grantId: 'grant-2' };
    await harness.request();
    const error = await expectCode(harness, 'PRINCIPAL_QUOTA_REACHED', 'sess_ask', {
      question: 'Which day?',
      fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'] }],
      respondents: { max: 2 },
    });
    expect(error).toMatchObject({ limit: 2, retryable: false });
    expect(harness.sess.stats.of().sessionsCreated).toBe(2);
    // Another principal is not counted with Alice; a stdio profile has no quota.
    harness.actingAs = { ...alice, principalId: 'bob' };
    await harness.request();
    harness.actingAs = undefined;
    for (let i = 0; i < 3; i++) await harness.request();
    harness.actingAs = alice;
    await harness.ok('sess_withdraw', { handle: first.handle, expected_revision: 1 });
    await harness.request();
    expect(harness.sess.stats.of().sessionsCreated).toBe(7);
  });

  it('CREATE_OUTCOME_UNKNOWN: a lost create is recorded, never retried, and answers every later call', async () => {
    const harness = await start();
    harness.sess.faults.commitThenDrop('create');
    const error = await expectCode(harness, 'CREATE_OUTCOME_UNKNOWN', 'sess_request', {
      interaction: approveSurface,
    });
    expect(error.retryable).toBe(false);
    expect(harness.sess.stats.requests.create).toBe(1);
    expect(harness.sess.stats.of().sessionsCreated).toBe(1);
    const [record] = await harness.store().listUnfinished();
    expect(record?.record.state).toMatchObject({ kind: 'create_unknown', reason: 'unknown_outcome' });
    const handle = record?.record.handle as string;
    await expectCode(harness, 'CREATE_OUTCOME_UNKNOWN', 'sess_response', { handle, revision: 1 });
    await expectCode(harness, 'CREATE_OUTCOME_UNKNOWN', 'sess_complete', {
      handle,
      expected_revision: 1,
      response_event_id: 'evt_x',
    });
    expect(harness.sess.stats.requests.create).toBe(1);
  });

  it('CREATE_OUTCOME_UNKNOWN on a 500 create', async () => {
    const harness = await start();
    harness.sess.faults.fail('createAsk', 500);
    await expectCode(harness, 'CREATE_OUTCOME_UNKNOWN', 'sess_ask', {
      question: 'Which day?',
      fields: [{ type: 'boolean', name: 'ok', label: 'OK?' }],
      respondents: { max: 2 },
    });
    const [record] = await harness.store().listUnfinished();
    expect(record?.record.state).toMatchObject({ kind: 'create_unknown', reason: 'server_error' });
  });

  it('CREATED_NOT_SAVED: a confirmed create that cannot be saved is not repeated; the intent stays', async () => {
    // Double: a store whose save after the create fails (a transient write failure).
    const harness = await start({
      wrapStore: (store) =>
        storeDouble(store, {
          update: async (record, version) => {
            if (record.state.kind === 'waiting') throw storeError('disk full', true, 'io_transient');
            return store.update(record, version);
          },
        }),
    });
    const error = await expectCode(harness, 'CREATED_NOT_SAVED', 'sess_request', {
      interaction: approveSurface,
    });
    expect(error.retryable).toBe(false);
    expect(harness.sess.stats.of().sessionsCreated).toBe(1);
    const [record] = await harness.store().listUnfinished();
    expect(record?.record.state.kind).toBe('create_intent');
    await expectCode(harness, 'CREATE_OUTCOME_UNKNOWN', 'sess_response', {
      handle: record?.record.handle,
      revision: 1,
    });
  });

  it('STATE_STORE_FULL: the 101st unfinished interaction sends nothing', async () => {
    const harness = await start();
    const store = harness.store();
    const now = new Date().toISOString();
    for (let i = 0; i < 100; i++) {
      await store.create({
        format: RECORD_FORMAT,
        handle: `sess_h_fill${i}`,
        binding: harness.binding,
        createdAt: now,
        updatedAt: now,
        state: { kind: 'create_intent', request: { idempotencyKey: `k${i}`, surface: approveSurface } },
      });
    }
    await expectCode(harness, 'STATE_STORE_FULL', 'sess_request', { interaction: approveSurface });
    expect(harness.sess.stats.requests.create ?? 0).toBe(0);
    expect(await store.countUnfinished()).toBe(100);
  });
});

describe('reading, waiting and verifying', () => {
  it('VERIFICATION_FAILED: a tampered receipt blocks and releases nothing', async () => {
    const harness = await start();
    const { created, response } = await harness.submitted();
    harness.sess.faults.tamperReceipt('wait', { mode: 'signature' });
    const error = await expectCode(harness, 'VERIFICATION_FAILED', 'sess_response', response);
    expect(error).toMatchObject({ reason: 'bad_signature', state: 'blocked' });
    expect(await stateOf(harness, created.handle)).toMatchObject({
      kind: 'blocked',
      code: 'VERIFICATION_FAILED',
    });
    expect(JSON.stringify(await harness.record(created.handle))).not.toContain('(edited)');
    await expectCode(harness, 'VERIFICATION_FAILED', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
  });

  it('VERIFICATION_FAILED: a receipt signed for another answer (claim tampered, valid signature)', async () => {
    const harness = await start();
    const created = await harness.request();
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    harness.sess.faults.tamperReceipt('wait', { mode: 'claim', claim: 'adg' });
    await expectCode(harness, 'VERIFICATION_FAILED', 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
  });

  it('RECOVERY_BLOCKED: a waiting Session withdrawn by another actor, not by this record', async () => {
    const harness = await start();
    const created = await harness.request();
    await harness.client.withdrawSession(sessionIdOf(harness.sess, created.humanUrl), {
      expectedRevision: 1,
      idempotencyKey: 'someone-else',
    });
    const error = await expectCode(harness, 'RECOVERY_BLOCKED', 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(error.reason).toBe('session_moved_on');
    expect(await stateOf(harness, created.handle)).toMatchObject({ kind: 'blocked', previous: 'waiting' });
  });

  it('RECOVERY_BLOCKED: the Session moved on behind a saved answer', async () => {
    const harness = await start();
    const { created, answered } = await harness.answered();
    // Another actor with the same key publishes directly.
    await harness.client.publish(sessionIdOf(harness.sess, created.humanUrl), {
      expectedRevision: 1,
      responseEventId: answered.response?.eventId as string,
      surface: followUpSurface,
      idempotencyKey: 'someone-else',
    });
    const error = await expectCode(harness, 'RECOVERY_BLOCKED', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(error.reason).toBe('session_moved_on');
    expect(await stateOf(harness, created.handle)).toMatchObject({ kind: 'blocked', previous: 'answered' });
    await expectCode(harness, 'RECOVERY_BLOCKED', 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: answered.response?.eventId,
    });
  });

  it('SESS_UNAVAILABLE: a failed wait or confirming read changes nothing', async () => {
    const harness = await start();
    const created = await harness.request();
    const before = await harness.record(created.handle);
    harness.sess.faults.fail('wait', 503);
    const error = await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(error.retryable).toBe(true);
    harness.sess.faults.drop('wait');
    await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_response', { handle: created.handle, revision: 1 });
    expect(await harness.record(created.handle)).toEqual(before);

    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    harness.sess.faults.fail('get', 503);
    await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(await harness.record(created.handle)).toEqual(before);

    const answered = await harness.ok('sess_response', { handle: created.handle, revision: 1 });
    const saved = await harness.record(created.handle);
    harness.sess.faults.fail('get', 503);
    await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_response', { handle: created.handle, revision: 1 });
    expect(await harness.record(created.handle)).toEqual(saved);
    expect(await harness.ok('sess_response', { handle: created.handle, revision: 1 })).toEqual(answered);
  });

  it('SESS_UNAVAILABLE: the receipt keys cannot be fetched; nothing is recorded', async () => {
    const harness = await start();
    const created = await harness.request();
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    harness.sess.faults.fail('jwks', 503, { times: 5 });
    await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect((await stateOf(harness, created.handle))?.kind).toBe('waiting');
    harness.sess.faults.clear('jwks');
    expect((await harness.ok('sess_response', { handle: created.handle, revision: 1 })).state).toBe(
      'answered',
    );
  });

  it('NOT_CONFIGURED: no credential, and a revoked key', async () => {
    const harness = await start();
    const created = await harness.request();
    harness.sess.revokeApiKey(harness.sess.apiKey);
    const error = await expectCode(harness, 'NOT_CONFIGURED', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(error.retryable).toBe(false);
    // The key Sess refused, told apart from a client that is misconfigured.
    expect(error.message).toBe(
      'Sess refused the API key (HTTP 401): it is wrong, revoked or not for this Sess. Ask the owner to fix the configuration.',
    );
    await expectCode(harness, 'NOT_CONFIGURED', 'sess_request', { interaction: approveSurface });
    expect(await harness.store().countUnfinished()).toBe(1);
    expect((await stateOf(harness, created.handle))?.kind).toBe('waiting');
  });

  it('NOT_CONFIGURED for an empty credential says the credential is empty, and nothing is sent', async () => {
    // A client on the harness's runtime whose credential gives an empty key.
    let empty: SessApi | undefined;
    const harness = await start({
      wrapSess: () => forwardingSess(() => (empty ??= localClient(h!.sess, { credential: () => '' }))),
    });
    const error = await expectCode(harness, 'NOT_CONFIGURED', 'sess_request', {
      interaction: approveSurface,
    });
    expect(error.message).toBe(
      'No Sess API key is configured: the credential is empty (SESS_API_KEY for the stdio server, principal.credential() over HTTP). Ask the owner to fix the configuration.',
    );
    expect(harness.sess.stats.of().sessionsCreated).toBe(0);
  });

  it('NOT_CONFIGURED names SESS_EXPECTED_WORKSPACE_ID when no trusted workspace is known', async () => {
    const harness = await start({ sess: { workspaceHeader: false } });
    const error = await answerRefused(harness, 'NOT_CONFIGURED');
    expect(error.message).toContain('SESS_EXPECTED_WORKSPACE_ID');
  });

  it('SESS_PROTOCOL_ERROR: a self-contradictory view fails closed and changes nothing', async () => {
    const harness = await start();
    const created = await harness.request();
    const before = await harness.record(created.handle);
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    harness.sess.faults.contradictory('wait', { variant: 'active_with_answer' });
    const error = await expectCode(harness, 'SESS_PROTOCOL_ERROR', 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(error.retryable).toBe(false);
    expect(await harness.record(created.handle)).toEqual(before);
  });

  it('STATE_STORE_ERROR: the store’s own retryable flag passes through; a foreign throw is not retryable', async () => {
    // Double: a store whose reads fail, first transiently, then with a foreign error.
    let failure: unknown;
    const harness = await start({
      wrapStore: (store) =>
        storeDouble(store, {
          get: async (handle) => {
            if (failure !== undefined) throw failure;
            return store.get(handle);
          },
        }),
    });
    const created = await harness.request();
    failure = storeError('The state directory could not be read.', true, 'io_transient');
    const transient = await expectCode(harness, 'STATE_STORE_ERROR', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(transient.retryable).toBe(true);
    failure = new Error('EIO: /secret/path');
    const foreign = await expectCode(harness, 'STATE_STORE_ERROR', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(foreign.retryable).toBe(false);
    expect(foreign.message).not.toContain('/secret/path');
  });
});

describe('the error mapping, case by case', () => {
  it('Sess’s own 503 on create: nothing was done, so no record stays and it is retryable', async () => {
    const harness = await start();
    harness.sess.faults.fail('create', 503, { code: 'unavailable' });
    const error = await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_request', {
      interaction: approveSurface,
    });
    expect(error.retryable).toBe(true);
    expect(await harness.store().countUnfinished()).toBe(0);
    harness.sess.faults.fail('create', 429, { code: 'rate_limited' });
    await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_request', { interaction: approveSurface });
    expect(await harness.store().countUnfinished()).toBe(0);
    expect(harness.sess.stats.of().sessionsCreated).toBe(0);
  });

  it('a refused or dropped publish keeps the request saved; the identical call applies it once', async () => {
    const harness = await start();
    const { created, publish } = await harness.answered();
    harness.sess.faults.fail('publish', 503, { code: 'unavailable' });
    await expectCode(harness, 'SESS_UNAVAILABLE', 'sess_publish', publish);
    expect((await stateOf(harness, created.handle))?.kind).toBe('publish_pending');
    harness.sess.faults.drop('publish');
    await expectCode(harness, 'OUTCOME_UNKNOWN', 'sess_publish', publish);
    expect((await stateOf(harness, created.handle))?.kind).toBe('publish_pending');
    expect((await harness.ok('sess_publish', publish)).revision).toBe(2);
    expect(harness.sess.stats.of().revisionsPublished).toBe(1);
  });

  it('a mutation the client refuses to send (not_sent, configuration) blocks', async () => {
    // Double: a Sess client whose complete is refused by its own deterministic checks.
    const harness = await start({
      wrapSess: (sess) => ({
        ...sess,
        createSession: (input, o) => sess.createSession(input, o),
        getSession: (id, o) => sess.getSession(id, o),
        waitSession: (id, known, o) => sess.waitSession(id, known, o),
        verifyResponse: (input, o) => sess.verifyResponse(input, o),
        complete: async () => {
          throw new SessApiError('not_sent', 'refused', { notSentKind: 'configuration' });
        },
      }),
    });
    const { created, answered } = await harness.answered();
    const error = await expectCode(harness, 'MUTATION_REJECTED', 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: answered.response?.eventId,
    });
    expect(error.reason).toBe('not_sent_configuration');
    expect(await stateOf(harness, created.handle)).toMatchObject({
      kind: 'blocked',
      previous: 'complete_pending',
    });
  });

  it('a 404 of the interaction’s own Session blocks with RECOVERY_BLOCKED', async () => {
    const harness = await start();
    const { created } = await harness.answered();
    harness.sess.faults.fail('get', 404, { code: 'not_found' });
    const error = await expectCode(harness, 'RECOVERY_BLOCKED', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(error.reason).toBe('session_not_found');
  });

  it('a malformed confirming read is SESS_PROTOCOL_ERROR and the saved answer stays', async () => {
    const harness = await start();
    const { created } = await harness.answered();
    const saved = await harness.record(created.handle);
    harness.sess.faults.malformed('get');
    await expectCode(harness, 'SESS_PROTOCOL_ERROR', 'sess_response', {
      handle: created.handle,
      revision: 1,
    });
    expect(await harness.record(created.handle)).toEqual(saved);
  });
});

describe('withdrawing', () => {
  it('ANSWER_ARRIVED: Sess holds an answer at expected_revision; the record is as it was', async () => {
    const harness = await start();
    const created = await harness.request();
    const before = await stateOf(harness, created.handle);
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    await expectCode(harness, 'ANSWER_ARRIVED', 'sess_withdraw', {
      handle: created.handle,
      expected_revision: 1,
    });
    expect(await stateOf(harness, created.handle)).toEqual(before);
  });

  it('WITHDRAW_UNAVAILABLE: a Sess without the endpoint; the record is as it was, never blocked', async () => {
    const harness = await start();
    const created = await harness.request();
    const before = await stateOf(harness, created.handle);
    harness.sess.faults.fail('withdraw', 405);
    await expectCode(harness, 'WITHDRAW_UNAVAILABLE', 'sess_withdraw', {
      handle: created.handle,
      expected_revision: 1,
    });
    expect(await stateOf(harness, created.handle)).toEqual(before);
  });
});

afterAll(() => {
  // Every code of the error table is produced by the engine through the tools.
  expect([...seen].sort()).toEqual([...ERROR_CODES].sort());
});
