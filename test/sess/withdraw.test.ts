/**
 * The client's withdraw and Ask close against the real local runtime: what each sends and must
 * get back, the race with an answer (409), a lost response repeated with the same key, an
 * endpoint a Sess does not offer (404/405, by fault and by a runtime started with `withdrawal`),
 * and what the client refuses to send.
 */
import { describe, expect, it } from 'vitest';
import { startLocalSess } from '../../src/testing/index.js';
import {
  answer,
  answeredSession,
  clientFor,
  expectSessError,
  idemKey,
  surface,
  surfaceAsk,
  useRuntime,
} from './helpers.js';

const sess = useRuntime();

async function created() {
  const client = clientFor(sess);
  const view = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
  return { client, view };
}

describe('withdrawSession', () => {
  it('withdraws an open Session and returns it withdrawn at the same revision', async () => {
    const { client, view } = await created();
    const out = await client.withdrawSession(view.sessionId, {
      expectedRevision: 1,
      reason: 'Plans changed',
      idempotencyKey: idemKey(),
    });
    expect(out).toMatchObject({ sessionId: view.sessionId, revision: 1, status: 'withdrawn', responses: [] });
    expect((await client.getSession(view.sessionId)).status).toBe('withdrawn');
    // A wait on the final status returns at once with it.
    const waited = await client.waitSession(view.sessionId, {
      revision: 1,
      status: 'withdrawn',
      timeoutMs: 20_000,
    });
    expect(waited.status).toBe('withdrawn');
  });

  it('an answer committed just before is 409 conflict, and the answer stays', async () => {
    const client = clientFor(sess);
    const { created: view } = await answeredSession(sess, client);
    await expectSessError(
      client.withdrawSession(view.sessionId, { expectedRevision: 1, idempotencyKey: idemKey() }),
      'api',
      { status: 409, apiCode: 'conflict' },
    );
    const now = await client.getSession(view.sessionId);
    expect(now.status).toBe('answered');
    expect(now.responses[0]?.answer).toEqual(answer());
  });

  it('a lost response is unknown_outcome; the same request repeated learns it was withdrawn', async () => {
    const { client, view } = await created();
    const input = { expectedRevision: 1, reason: 'Not needed', idempotencyKey: idemKey() };
    const before = sess.stats.of().sessionsWithdrawn;
    sess.faults.commitThenDrop('withdraw');
    await expectSessError(client.withdrawSession(view.sessionId, input), 'unknown_outcome');
    sess.faults.fail('withdraw', 500);
    await expectSessError(client.withdrawSession(view.sessionId, input), 'api', { status: 500 });
    const out = await client.withdrawSession(view.sessionId, input);
    expect(out.status).toBe('withdrawn');
    expect(sess.stats.of().sessionsWithdrawn).toBe(before + 1);
  });

  it('a Sess without the endpoint answers 404 or 405; a view that is not withdrawn is protocol', async () => {
    const { client, view } = await created();
    sess.faults.fail('withdraw', 404, { code: 'not_found' });
    await expectSessError(
      client.withdrawSession(view.sessionId, { expectedRevision: 1, idempotencyKey: idemKey() }),
      'api',
      { status: 404, apiCode: 'not_found' },
    );
    sess.faults.fail('withdraw', 405, { code: 'method_not_allowed' });
    await expectSessError(
      client.withdrawSession(view.sessionId, { expectedRevision: 1, idempotencyKey: idemKey() }),
      'api',
      { status: 405 },
    );
    sess.faults.malformed('withdraw');
    await expectSessError(
      client.withdrawSession(view.sessionId, { expectedRevision: 1, idempotencyKey: idemKey() }),
      'protocol',
    );
    const other = await created();
    sess.faults.contradictory('withdraw', { variant: 'active_with_answer' });
    await expectSessError(
      other.client.withdrawSession(other.view.sessionId, { expectedRevision: 1, idempotencyKey: idemKey() }),
      'protocol',
    );
  });

  it('refuses to send a bad reason, revision, id or key (not_sent, configuration)', async () => {
    const { client, view } = await created();
    const sent = sess.stats.requests.withdraw ?? 0;
    const bad = [
      { expectedRevision: 1, reason: 'x'.repeat(161), idempotencyKey: idemKey() },
      { expectedRevision: 1, reason: 'a\u0000b', idempotencyKey: idemKey() },
      { expectedRevision: 1, reason: '\udc00', idempotencyKey: idemKey() },
      { expectedRevision: 0, idempotencyKey: idemKey() },
      { expectedRevision: 1, idempotencyKey: 'has space' },
    ];
    for (const input of bad) {
      await expectSessError(client.withdrawSession(view.sessionId, input), 'not_sent', {
        notSentKind: 'configuration',
      });
    }
    await expectSessError(
      client.withdrawSession('bad id', { expectedRevision: 1, idempotencyKey: idemKey() }),
      'not_sent',
    );
    expect(sess.stats.requests.withdraw).toBe(sent);
    // 160 astral characters are 160 code points: allowed.
    const out = await client.withdrawSession(view.sessionId, {
      expectedRevision: 1,
      reason: '😀'.repeat(160),
      idempotencyKey: idemKey(),
    });
    expect(out.status).toBe('withdrawn');
  });
});

describe('closeAsk', () => {
  it('closes an Ask: answered respondents stay, open pages are withdrawn', async () => {
    const client = clientFor(sess);
    const ask = await surfaceAsk(client, 3);
    const a = await sess.startRespondent(ask.humanUrl);
    await sess.startRespondent(ask.humanUrl);
    await sess.submitAnswer(a.humanUrl!, answer());
    const input = { reason: 'Enough answers', idempotencyKey: idemKey() };
    sess.faults.commitThenDrop('closeAsk');
    await expectSessError(client.closeAsk(ask.askId, input), 'unknown_outcome');
    const closed = await client.closeAsk(ask.askId, input);
    expect(closed.status).toBe('closed');
    expect(closed.respondents.map((r) => r.status)).toEqual(['answered', 'withdrawn']);
    expect(closed.respondents[0]?.response?.answer).toEqual(answer());
    expect((await client.getAsk(ask.askId)).status).toBe('closed');
    await expectSessError(client.closeAsk(ask.askId, { idempotencyKey: idemKey() }), 'api', {
      status: 409,
      apiCode: 'conflict',
    });
  });

  it('a close answer that is not an Ask is protocol', async () => {
    const client = clientFor(sess);
    const ask = await surfaceAsk(client, 2);
    sess.faults.malformed('closeAsk', { body: JSON.stringify({ not: 'an ask' }) });
    await expectSessError(client.closeAsk(ask.askId, { idempotencyKey: idemKey() }), 'protocol');
  });
});

describe('a Sess that does not offer withdrawal (startLocalSess `withdrawal`)', () => {
  it.each([
    ['not_offered', 404, 'not_found'],
    ['method_not_allowed', 405, 'method_not_allowed'],
  ] as const)(
    '%s: both calls are api %i, and the Session and the Ask still read as open',
    async (withdrawal, status, apiCode) => {
      const old = await startLocalSess({ withdrawal });
      try {
        const client = clientFor(old);
        const view = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
        const ask = await surfaceAsk(client, 2);
        const input = { expectedRevision: 1, reason: 'Plans changed', idempotencyKey: idemKey() };
        // Distinct from every other failure: a definite answer (not unknown_outcome), with the status.
        await expectSessError(client.withdrawSession(view.sessionId, input), 'api', { status, apiCode });
        await expectSessError(client.closeAsk(ask.askId, { idempotencyKey: idemKey() }), 'api', {
          status,
          apiCode,
        });
        // The identical request again: still the same answer, never a protocol error.
        await expectSessError(client.withdrawSession(view.sessionId, input), 'api', { status, apiCode });
        expect(await client.getSession(view.sessionId)).toMatchObject({
          sessionId: view.sessionId,
          revision: 1,
          status: 'active',
        });
        expect((await client.getAsk(ask.askId)).status).toBe('open');
        expect(old.stats.of()).toMatchObject({ sessionsWithdrawn: 0, asksClosed: 0 });
        // The person can still answer it, and the answer verifies.
        await old.submitAnswer(view.humanUrl, answer());
        expect((await client.getSession(view.sessionId)).status).toBe('answered');
      } finally {
        await old.close();
      }
    },
  );
});
