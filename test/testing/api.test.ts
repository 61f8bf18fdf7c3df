import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionViewProblem } from '../../src/sess/view-checks.js';
import { AnswerRefusedError, type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { expectError } from '../support/wire-error.js';
import { sessionViewOf } from '../support/wire-views.js';
import { ANSWER, answeredSession, call, createSession, newKey, sampleSurface } from './helpers.js';

let sess: LocalSess;
beforeAll(async () => {
  sess = await startLocalSess();
});
afterAll(async () => {
  await sess.close();
});

describe('create, read', () => {
  it('creates a Session at revision 1 with a link, an expiry and the workspace header', async () => {
    const res = await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: sampleSurface(), expires_in: 600 },
      key: newKey(),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('sess-workspace-id')).toBe(sess.workspaceId);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const view = sessionViewOf(res.json);
    expect(sessionViewProblem(view)).toBeUndefined();
    expect(view).toMatchObject({
      revision: 1,
      status: 'active',
      workspace_id: sess.workspaceId,
      responses: [],
    });
    expect(view.human_url.startsWith(`${sess.origin}/s/`)).toBe(true);
    expect(res.headers.get('location')).toBe(`/v1/sessions/${view.id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(Date.parse(view.expires_at) - sess.clock.now()).toBeGreaterThan(590_000);
    expect(view.extendable_until).toBeDefined();
    const read = await call(sess, 'GET', `/v1/sessions/${view.id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);
  });

  it('refuses a missing or unknown API key with 401 and no workspace header', async () => {
    const none = await call(sess, 'GET', '/v1/sessions/ses_x', { apiKey: null });
    expectError(none, 401, 'unauthorized');
    expect(none.headers.get('sess-workspace-id')).toBeNull();
    expectError(await call(sess, 'GET', '/v1/sessions/ses_x', { apiKey: 'sk_wrong' }), 401, 'unauthorized');
    const key = sess.createApiKey();
    const s = await createSession(sess, {}, key);
    sess.revokeApiKey(key);
    expectError(await call(sess, 'GET', `/v1/sessions/${s.id}`, { apiKey: key }), 401, 'unauthorized');
  });

  it('answers 404 for an unknown Session and for another workspace’s Session', async () => {
    expectError(await call(sess, 'GET', '/v1/sessions/ses_nope'), 404, 'not_found');
    const other = await sess.createWorkspace();
    const theirs = await createSession(sess, {}, other.apiKey);
    const res = await call(sess, 'GET', `/v1/sessions/${theirs.id}`);
    expectError(res, 404, 'not_found');
    expect(res.headers.get('sess-workspace-id')).toBe(sess.workspaceId);
    expect(sess.stats.of(other.workspaceId).sessionsCreated).toBe(1);
  });

  it('refuses bad requests with a specific error', async () => {
    expectError(
      await call(sess, 'POST', '/v1/sessions', { body: '{nope', key: newKey() }),
      400,
      'invalid_request',
    );
    expectError(
      await call(sess, 'POST', '/v1/sessions', { body: { interaction: sampleSurface() } }),
      400,
      'invalid_request',
    );
    const text = await fetch(`${sess.origin}/v1/sessions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${sess.apiKey}`,
        'content-type': 'text/plain',
        'idempotency-key': newKey(),
      },
      body: '{}',
    });
    expect(text.status).toBe(415);
    const long = await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: { ...sampleSurface(), title: 'x'.repeat(95) } },
      key: newKey(),
    });
    expect(expectError(long, 422, 'invalid_request')).toMatchObject({
      field: '/interaction/title',
      limit: 80,
      length: 95,
    });
    const label = sampleSurface();
    label.actions[1]!.label = '🙂'.repeat(25);
    expect(
      expectError(
        await call(sess, 'POST', '/v1/sessions', { body: { interaction: label }, key: newKey() }),
        422,
        'invalid_request',
      ),
    ).toMatchObject({
      field: '/interaction/actions/1/label',
      limit: 24,
      length: 25,
    });
    const unknown = await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: sampleSurface(), extra: 1 },
      key: newKey(),
    });
    expect(expectError(unknown, 422, 'invalid_request').field).toBe('/extra');
    for (const [expiresIn, limit] of [
      [604_801, 604_800],
      [29, 30],
    ] as const) {
      const outOfRange = await call(sess, 'POST', '/v1/sessions', {
        body: { interaction: sampleSurface(), expires_in: expiresIn },
        key: newKey(),
      });
      expect(expectError(outOfRange, 422, 'invalid_request')).toMatchObject({
        field: '/expires_in',
        limit,
        length: expiresIn,
      });
    }
    const big = await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: sampleSurface(), pad: 'x'.repeat(140_000) },
      key: newKey(),
    });
    expect(expectError(big, 413, 'invalid_request').limit).toBe(131_072);
    expectError(await call(sess, 'GET', '/v1/sessions'), 405, 'method_not_allowed');
    expectError(await call(sess, 'GET', '/v1/nothing'), 404, 'not_found');
  });
});

describe('answer, publish, complete', () => {
  it('runs request → answer → publish → answer → complete with preconditions enforced', async () => {
    const s = await createSession(sess);
    // Not answered yet: publish and complete conflict.
    const early = await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: 'evt_x' },
      key: newKey(),
      ifMatch: 1,
    });
    expectError(early, 409, 'conflict');

    const page = await sess.submitAnswer(s.human_url, ANSWER);
    expect(page.status).toBe(303);
    const answered = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json;
    expect(answered.status).toBe('answered');
    expect(answered.responses).toHaveLength(1);
    expect(answered.responses[0]).toMatchObject({ revision: 1, answer: ANSWER });
    const evt1 = answered.responses[0].event_id;

    // Wrong revision, wrong event, missing If-Match.
    const follow = sampleSurface('Anything else?');
    expectError(
      await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, {
        body: { response_event_id: evt1, interaction: follow },
        key: newKey(),
        ifMatch: 2,
      }),
      409,
      'conflict',
    );
    expectError(
      await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, {
        body: { response_event_id: 'evt_other', interaction: follow },
        key: newKey(),
        ifMatch: 1,
      }),
      409,
      'conflict',
    );
    expectError(
      await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, {
        body: { response_event_id: evt1, interaction: follow },
        key: newKey(),
      }),
      400,
      'invalid_request',
    );

    const published = await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, {
      body: { response_event_id: evt1, interaction: follow },
      key: newKey(),
      ifMatch: '1',
    });
    expect(published.status).toBe(200);
    expect(published.json).toMatchObject({ revision: 2, status: 'active' });
    expect(sessionViewProblem(sessionViewOf(published.json))).toBeUndefined();
    expect(sess.sessions.get(s.id)!.surfaces[1]!.title).toBe('Anything else?');

    // The page now shows the follow-up; a post for revision 1 is stale.
    expect((await sess.submitAnswer(s.human_url, ANSWER, { revision: 1, expectStatus: 409 })).status).toBe(
      409,
    );
    expect(
      (await sess.submitAnswer(s.human_url, { action: 'stop', values: { message: 'no', push: false } }))
        .status,
    ).toBe(303);
    const second = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json;
    expect(second.status).toBe('answered');
    const evt2 = second.responses[1].event_id;
    expect(second.responses[1]).toMatchObject({
      revision: 2,
      answer: { action: 'stop', values: { message: 'no', push: false } },
    });

    const done = await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt2 },
      key: newKey(),
      ifMatch: 2,
    });
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ status: 'completed', revision: 2 });
    expect(sessionViewProblem(sessionViewOf(done.json))).toBeUndefined();
    // Completing again with another key is a conflict; the page says done.
    expectError(
      await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
        body: { response_event_id: evt2 },
        key: newKey(),
        ifMatch: 2,
      }),
      409,
      'conflict',
    );
    const shown = await sess.openPage(s.human_url);
    expect(shown.status).toBe(200);
    expect((await sess.submitAnswer(s.human_url, ANSWER, { expectStatus: 409 })).status).toBe(409);
  });

  it('serves the page with no-store, no-referrer and a script-free CSP; unknown links are 404', async () => {
    const s = await createSession(sess);
    const res = await fetch(s.human_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(await res.text()).toContain('Approve this commit?');
    expect((await fetch(`${sess.origin}/s/unknownToken`)).status).toBe(404);
    expect((await fetch(`${sess.origin}/a/unknownToken`)).status).toBe(404);
  });

  it('keeps the form and shows errors for an invalid answer (422), without recording it', async () => {
    const s = await createSession(sess);
    const res = await sess.submitAnswer(
      s.human_url,
      { action: 'approve', values: { message: '', push: false } },
      { expectStatus: 422 },
    );
    expect(res.status).toBe(422);
    expect((await call(sess, 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('active');
    const bad = await sess.submitAnswer(
      s.human_url,
      { action: 'nope', values: { message: 'x' } },
      { expectStatus: 422 },
    );
    expect(bad.status).toBe(422);
  });

  it('submitAnswer refuses what the page would refuse, with its messages, and a refusal the page gave', async () => {
    const s = await createSession(sess);
    // A value that does not fit its field's schema: refused with the page's message, nothing posted.
    const before = sess.stats.requests.page ?? 0;
    const typed = await sess
      .submitAnswer(s.human_url, { action: 'approve', values: { message: 'x', push: 'yes' } })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(typed).toBeInstanceOf(AnswerRefusedError);
    expect(typed).toMatchObject({
      status: 422,
      pageErrors: ['Tick the box for yes, or leave it empty for no.'],
    });
    expect(sess.stats.requests.page ?? 0).toBe(before);
    // Posted as it is, the page refuses it with the same message (not read as "no").
    const posted = await sess.submitAnswer(
      s.human_url,
      { action: 'approve', values: { message: 'x', push: 'yes' } },
      { expectStatus: 422 },
    );
    expect(posted.html).toContain('Tick the box for yes, or leave it empty for no.');
    expect((await call(sess, 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('active');
    // Accepted once; a second answer at that revision is the page's own refusal.
    await sess.submitAnswer(s.human_url, ANSWER);
    await expect(sess.submitAnswer(s.human_url, ANSWER)).rejects.toThrow(
      /^submitAnswer: the page answered 409: .+ \(pass \{ expectStatus \} to test a refusal\)\.$/,
    );
  });
});

describe('idempotency', () => {
  it('replays create with the same key and body (one Session), refuses a different body', async () => {
    const before = sess.stats.of().sessionsCreated;
    const key = newKey();
    const body = { interaction: sampleSurface(), expires_in: 900 };
    const a = await call(sess, 'POST', '/v1/sessions', { body, key });
    // Same body with another member order is the same request.
    const reordered = { expires_in: 900, interaction: JSON.parse(JSON.stringify(sampleSurface())) };
    const b = await call(sess, 'POST', '/v1/sessions', { body: reordered, key });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.text).toBe(a.text);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(sess.stats.of().sessionsCreated).toBe(before + 1);
    const c = await call(sess, 'POST', '/v1/sessions', { body: { ...body, expires_in: 901 }, key });
    expectError(c, 422, 'idempotency_mismatch');
    expect(sess.stats.of().sessionsCreated).toBe(before + 1);
  });

  it('replays concurrent identical creates as one Session', async () => {
    const before = sess.stats.of().sessionsCreated;
    const key = newKey();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(sess, 'POST', '/v1/sessions', { body: { interaction: sampleSurface() }, key }),
      ),
    );
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
    expect(sess.stats.of().sessionsCreated).toBe(before + 1);
  });

  it('replays publish and complete after the state moved on; a changed body or If-Match is a mismatch', async () => {
    const { s, eventId: evt1, next: body } = await answeredSession(sess);
    const pKey = newKey();
    const first = await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, { body, key: pKey, ifMatch: 1 });
    expect(first.status).toBe(200);
    await sess.submitAnswer(s.human_url, ANSWER);
    const again = await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, { body, key: pKey, ifMatch: 1 });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(sess.sessions.get(s.id)!.view.revision).toBe(2);
    expectError(
      await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, { body, key: pKey, ifMatch: 2 }),
      422,
      'idempotency_mismatch',
    );

    const evt2 = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json.responses[1].event_id;
    const cKey = newKey();
    const done = await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt2 },
      key: cKey,
      ifMatch: 2,
    });
    expect(done.status).toBe(200);
    const replay = await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt2 },
      key: cKey,
      ifMatch: 2,
    });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(done.text);
    expectError(
      await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
        body: { response_event_id: evt1 },
        key: cKey,
        ifMatch: 2,
      }),
      422,
      'idempotency_mismatch',
    );
  });

  it('does not store errors: a failed request with a key can succeed later with the same key', async () => {
    const s = await createSession(sess);
    const key = newKey();
    const early = await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: 'evt_later' },
      key,
      ifMatch: 1,
    });
    expectError(early, 409, 'conflict');
    await sess.submitAnswer(s.human_url, ANSWER);
    const evt = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json.responses[0].event_id;
    const ok = await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt },
      key: newKey(),
      ifMatch: 1,
    });
    expect(ok.status).toBe(200);
  });
});

describe('plan limit', () => {
  it('refuses a create over the open-Session cap with plan_limit and creates nothing', async () => {
    const small = await startLocalSess({ plan: { maxOpenSessions: 2 } });
    try {
      await createSession(small);
      await createSession(small);
      const res = await call(small, 'POST', '/v1/sessions', {
        body: { interaction: sampleSurface() },
        key: newKey(),
      });
      expect(expectError(res, 403, 'plan_limit').limit).toBe(2);
      expect(small.stats.of().sessionsCreated).toBe(2);
    } finally {
      await small.close();
    }
  });
});
