/**
 * The local runtime's withdraw and Ask close (wire v1.4), spoken on the raw wire: the new
 * `withdrawn` status, the endpoints' checks in the documented order, idempotent replays, the plan's
 * open-Session count, and what the person's page shows and refuses afterwards.
 */
import { describe, expect, it } from 'vitest';
import { sessionViewProblem } from '../../src/sess/view-checks.js';
import { startLocalSess } from '../../src/testing/index.js';
import { useLocalSess } from '../support/local-sess.js';
import { expectError } from '../support/wire-error.js';
import { sessionViewOf } from '../support/wire-views.js';
import { ANSWER, answeredSession, call, createSession, newKey, sampleSurface } from './helpers.js';

const sess = useLocalSess();

const withdraw = (
  id: string,
  body: unknown,
  options: { key?: string | null; ifMatch?: number | string } = {},
) =>
  call(sess(), 'POST', `/v1/sessions/${id}/withdraw`, {
    body,
    key: options.key === undefined ? newKey() : options.key,
    ...(options.ifMatch === undefined ? { ifMatch: 1 } : { ifMatch: options.ifMatch }),
  });

/** The person's page of a withdrawn Session: gone (410), and saying it was withdrawn. */
async function withdrawnPage(humanUrl: string) {
  const page = await sess().openPage(humanUrl);
  expect(page.status).toBe(410);
  expect(page.html).toContain('This question was withdrawn.');
  return page;
}

describe('POST /v1/sessions/{id}/withdraw', () => {
  it('withdraws an open Session: final, same revision, waits return, the page says so and refuses', async () => {
    const s = await createSession(sess());
    const waiting = call(
      sess(),
      'GET',
      `/v1/sessions/${s.id}/wait?revision=1&status=active&timeout_ms=20000`,
    );
    await sess().whenWaiting(s.id);
    const res = await withdraw(s.id, { reason: 'Plans changed <b>today</b>' });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBe('"1"');
    const view = sessionViewOf(res.json);
    expect(sessionViewProblem(view)).toBeUndefined();
    expect(view).toMatchObject({ id: s.id, revision: 1, status: 'withdrawn', responses: [] });
    expect((await waiting).json.status).toBe('withdrawn');
    // A wait on a final status returns at once.
    const again = await call(
      sess(),
      'GET',
      `/v1/sessions/${s.id}/wait?revision=1&status=withdrawn&timeout_ms=20000`,
    );
    expect(again.json.status).toBe('withdrawn');
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('withdrawn');

    const page = await withdrawnPage(s.human_url);
    // The reason is shown, escaped.
    expect(page.html).toContain('Plans changed &lt;b&gt;today&lt;/b&gt;');
    expect(page.html).not.toContain('<b>today</b>');
    expect(page.html).not.toContain('<form');

    const submit = await sess().submitAnswer(s.human_url, ANSWER, { expectStatus: 410 });
    expect(submit.status).toBe(410);
    expect(submit.html).toContain('This question was withdrawn.');
    expect(sess().sessions.get(s.id)?.view.responses ?? []).toHaveLength(0);
    expect(sess().stats.of().sessionsWithdrawn).toBeGreaterThanOrEqual(1);

    const watch = await sess().openPage(`${new URL(s.human_url).pathname}/state?revision=1&status=active`);
    expect(JSON.parse(watch.html)).toEqual({ changed: true, final: true });
  });

  it('wakes a held page watch at once with a final change, and a respondent page of a closed Ask too', async () => {
    const s = await createSession(sess());
    const u = new URL(s.human_url);
    const held = fetch(`${u.origin}${u.pathname}/state?revision=1&status=active`);
    await sess().whenWaiting(s.id);
    expect((await withdraw(s.id, {})).status).toBe(200);
    expect(await (await held).json()).toEqual({ changed: true, final: true });
    expect(sess().pendingWaits(s.id)).toBe(0);

    const ask = await call(sess(), 'POST', '/v1/asks', {
      body: { interaction: sampleSurface('Lunch?'), respondents: { max: 2 } },
      key: newKey(),
    });
    const r = await sess().startRespondent(ask.json.human_url);
    const ru = new URL(r.humanUrl!);
    const respondentId = sess().sessions.byUrl(r.humanUrl!)!.view.id;
    const heldRespondent = fetch(`${ru.origin}${ru.pathname}/state?revision=1&status=active`);
    await sess().whenWaiting(respondentId);
    const closed = await call(sess(), 'POST', `/v1/asks/${ask.json.id}/close`, {
      body: {},
      key: newKey(),
      ifMatch: 1,
    });
    expect(closed.status).toBe(200);
    expect(await (await heldRespondent).json()).toEqual({ changed: true, final: true });
  });

  it('withdraws without a reason, and a lapsed Session too', async () => {
    const s = await createSession(sess(), { expires_in: 60 });
    sess().clock.advance(61_000);
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('lapsed');
    const res = await withdraw(s.id, {});
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('withdrawn');
    const page = await withdrawnPage(s.human_url);
    expect(page.html).not.toContain('Their note');
    // More time cannot reopen it.
    expect((await sess().extend(s.human_url)).status).toBe(410);
  });

  it('refuses in the documented order and changes nothing', async () => {
    const s = await createSession(sess());
    expectError(await withdraw(s.id, {}, { key: null }), 400, 'invalid_request');
    expectError(await withdraw(s.id, {}, { ifMatch: 'one' }), 400, 'invalid_request');
    expect(expectError(await withdraw(s.id, { reason: 'x', extra: 1 }), 422, 'invalid_request').field).toBe(
      '/extra',
    );
    expect(expectError(await withdraw(s.id, { reason: 'a\u0000b' }), 422, 'invalid_request').field).toBe(
      '/reason',
    );
    expect(expectError(await withdraw(s.id, { reason: '\ud800' }), 422, 'invalid_request').field).toBe(
      '/reason',
    );
    const long = expectError(await withdraw(s.id, { reason: '😀'.repeat(161) }), 422, 'invalid_request');
    expect(long).toMatchObject({ field: '/reason', limit: 160, length: 161 });
    expect((await withdraw(s.id, { reason: '😀'.repeat(160) }, { ifMatch: 2 })).status).toBe(409);
    expectError(await withdraw('ses_unknown', {}), 404, 'not_found');
    expectError(await call(sess(), 'GET', `/v1/sessions/${s.id}/withdraw`), 405, 'method_not_allowed');
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('active');
  });

  it('never takes back an answer: an answered or completed Session is 409, an expired one 410', async () => {
    const { s, eventId } = await answeredSession(sess());
    const answered = expectError(await withdraw(s.id, {}), 409, 'conflict');
    expect(answered.message).toMatch(/answer/);
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('answered');
    await call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: eventId },
      key: newKey(),
      ifMatch: 1,
    });
    expectError(await withdraw(s.id, {}), 409, 'conflict');
    const long = await createSession(sess(), { expires_in: 100_000 });
    sess().clock.advance(100_001_000);
    expectError(await withdraw(long.id, {}), 410, 'expired');
  });

  it('replays the same key and body; a new key on a withdrawn Session is 409; a changed body is a mismatch', async () => {
    const s = await createSession(sess());
    const key = newKey();
    const first = await withdraw(s.id, { reason: 'No longer needed' }, { key });
    expect(first.status).toBe(200);
    const replay = await withdraw(s.id, { reason: 'No longer needed' }, { key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectError(await withdraw(s.id, { reason: 'Other' }, { key }), 422, 'idempotency_mismatch');
    expectError(await withdraw(s.id, { reason: 'No longer needed' }), 409, 'conflict');
  });

  it('a withdrawn Session no longer counts against the open-Session cap', async () => {
    const small = await startLocalSess({ plan: { maxOpenSessions: 1 } });
    try {
      const create = () =>
        call(small, 'POST', '/v1/sessions', { body: { interaction: sampleSurface() }, key: newKey() });
      const first = await create();
      expect(first.status).toBe(201);
      expectError(await create(), 403, 'plan_limit');
      const res = await call(small, 'POST', `/v1/sessions/${first.json.id}/withdraw`, {
        body: {},
        key: newKey(),
        ifMatch: 1,
      });
      expect(res.status).toBe(200);
      expect((await create()).status).toBe(201);
    } finally {
      await small.close();
    }
  });

  it('supports the fault queue like every other endpoint', async () => {
    const s = await createSession(sess());
    sess().faults.fail('withdraw', 500);
    expectError(await withdraw(s.id, {}), 500, 'internal');
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('active');
    const key = newKey();
    sess().faults.commitThenDrop('withdraw');
    await expect(withdraw(s.id, {}, { key })).rejects.toThrow();
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('withdrawn');
    const replay = await withdraw(s.id, {}, { key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(sess().stats.requests.withdraw).toBeGreaterThanOrEqual(3);
  });
});

describe('POST /v1/asks/{id}/close', () => {
  const createAsk = async (max = 3) => {
    const res = await call(sess(), 'POST', '/v1/asks', {
      body: { interaction: sampleSurface('Team lunch?'), respondents: { max } },
      key: newKey(),
    });
    expect(res.status).toBe(201);
    return res.json;
  };

  it('closes to new respondents, withdraws pages not yet answered, keeps the answers given', async () => {
    const ask = await createAsk();
    const a = await sess().startRespondent(ask.human_url);
    const b = await sess().startRespondent(ask.human_url);
    expect((await sess().submitAnswer(a.humanUrl!, ANSWER)).status).toBe(303);
    const res = await call(sess(), 'POST', `/v1/asks/${ask.id}/close`, {
      body: { reason: 'We have enough answers' },
      key: newKey(),
      ifMatch: 1,
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('closed');
    expect(res.json.answered).toBe(1);
    const statuses = res.json.respondents.map((r: { status: string }) => r.status);
    expect(statuses).toEqual(['answered', 'withdrawn']);
    expect(res.json.respondents[0].response.answer).toEqual(ANSWER);

    const bPage = await sess().openPage(b.humanUrl!);
    expect(bPage.status).toBe(410);
    expect(bPage.html).toContain('We have enough answers');
    expect((await sess().submitAnswer(b.humanUrl!, ANSWER, { expectStatus: 410 })).status).toBe(410);
    const newcomer = await sess().startRespondent(ask.human_url);
    expect(newcomer.status).toBe(410);
    expect(newcomer.html).toContain('This question was withdrawn.');
    expect((await call(sess(), 'GET', `/v1/asks/${ask.id}`)).json.started).toBe(2);
  });

  it('refuses a second close with a new key (409), a wrong If-Match (409), a past deadline (410), a respondent withdraw (403)', async () => {
    const ask = await createAsk();
    const r = await sess().startRespondent(ask.human_url);
    const sessionId = sess().sessions.byUrl(r.humanUrl!)!.view.id;
    expectError(
      await call(sess(), 'POST', `/v1/sessions/${sessionId}/withdraw`, {
        body: {},
        key: newKey(),
        ifMatch: 1,
      }),
      403,
      'forbidden',
    );
    const close = (ifMatch: number) =>
      call(sess(), 'POST', `/v1/asks/${ask.id}/close`, { body: {}, key: newKey(), ifMatch });
    expectError(await close(2), 409, 'conflict');
    expect((await close(1)).status).toBe(200);
    expectError(await close(1), 409, 'conflict');
    const late = await createAsk();
    sess().clock.advance(3_601_000);
    expectError(
      await call(sess(), 'POST', `/v1/asks/${late.id}/close`, { body: {}, key: newKey(), ifMatch: 1 }),
      410,
      'expired',
    );
  });
});
