/**
 * The Sess client against the real local runtime over loopback: every endpoint, idempotent
 * replay, and every error kind the client reports.
 */
import { describe, expect, it } from 'vitest';
import { createSessClient } from '../../src/sess/client.js';
import { MAX_RETRY_AFTER_MS, retryAfterMsOf } from '../../src/sess/wire.js';
import { startLocalSess } from '../../src/testing/index.js';
import {
  afterAnswer,
  answer,
  answeredSession,
  clientFor,
  closedPort,
  expectSessError,
  idemKey,
  SECRET_ANSWER_VALUE,
  surface,
  surfaceAsk,
  useRuntime,
} from './helpers.js';

const sess = useRuntime();

describe('endpoints', () => {
  it('creates a Session at revision 1, active, in the key’s workspace', async () => {
    const client = clientFor(sess);
    const view = await client.createSession({
      surface: surface(),
      expiresIn: 600,
      idempotencyKey: idemKey(),
    });
    expect(view).toMatchObject({
      revision: 1,
      status: 'active',
      workspaceId: sess.workspaceId,
      responses: [],
    });
    expect(view.humanUrl.startsWith(sess.origin)).toBe(true);
    expect(Date.parse(view.expiresAt)).toBeGreaterThan(Date.now() + 500_000);
    expect(view.extendableUntil).toBeDefined();
    expect(sess.sessions.get(view.sessionId)?.surfaces).toEqual([surface()]);
  });

  it('reads a Session with its answers', async () => {
    const client = clientFor(sess);
    const { created } = await answeredSession(sess, client);
    const view = await client.getSession(created.sessionId);
    expect(view.status).toBe('answered');
    expect(view.responses).toHaveLength(1);
    expect(view.responses[0]).toMatchObject({ revision: 1, answer: answer() });
    expect(view.responses[0]?.eventId).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('waits: returns at once when the Session already differs', async () => {
    const client = clientFor(sess);
    const { created } = await answeredSession(sess, client);
    const started = performance.now();
    const view = await client.waitSession(created.sessionId, {
      revision: 1,
      status: 'active',
      timeoutMs: 45_000,
    });
    expect(view.status).toBe('answered');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('waits: returns the unchanged view when time runs out', async () => {
    const client = clientFor(sess);
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    const started = performance.now();
    const view = await client.waitSession(created.sessionId, {
      revision: 1,
      status: 'active',
      timeoutMs: 150,
    });
    expect(view).toMatchObject({ revision: 1, status: 'active' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('waits: an answer wakes a pending wait', async () => {
    const client = clientFor(sess);
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    const waiting = client.waitSession(created.sessionId, {
      revision: 1,
      status: 'active',
      timeoutMs: 20_000,
    });
    await sess.whenWaiting(created.sessionId);
    const submitted = performance.now();
    await sess.submitAnswer(created.humanUrl, answer());
    const view = await waiting;
    expect(view.status).toBe('answered');
    expect(performance.now() - submitted).toBeLessThan(5_000);
  });

  it('a wait longer than requestTimeoutMs is not cut by it (the deadline is the wait plus a margin)', async () => {
    const created = await clientFor(sess).createSession({ surface: surface(), idempotencyKey: idemKey() });
    const client = clientFor(sess, { requestTimeoutMs: 200 });
    const view = await client.waitSession(created.sessionId, {
      revision: 1,
      status: 'active',
      timeoutMs: 500,
    });
    expect(view).toMatchObject({ revision: 1, status: 'active' });
  });

  it('publishes the next revision after the answer', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    const next = await client.publish(created.sessionId, {
      ...afterAnswer(answered),
      surface: surface('And the tag?'),
    });
    expect(next).toMatchObject({ revision: 2, status: 'active' });
    expect(next.responses.map((r) => r.revision)).toEqual([1]);
    expect(sess.sessions.get(created.sessionId)?.surfaces[1]?.title).toBe('And the tag?');
  });

  it('completes after the answer', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    const done = await client.complete(created.sessionId, afterAnswer(answered));
    expect(done).toMatchObject({ revision: 1, status: 'completed' });
    expect(sess.sessions.get(created.sessionId)?.view.status).toBe('completed');
  });

  it('creates and reads an Ask with per-respondent answers', async () => {
    const client = clientFor(sess);
    const ask = await client.createAsk({
      surface: surface('Which day?'),
      respondents: { max: 2, name: true, expiresIn: 900, respondentExpiresIn: 300 },
      idempotencyKey: idemKey(),
    });
    expect(ask).toMatchObject({ status: 'open', max: 2, started: 0, answered: 0, respondents: [] });
    const first = await sess.startRespondent(ask.humanUrl, { name: 'Ana' });
    expect(first.humanUrl).toBeDefined();
    await sess.submitAnswer(first.humanUrl!, answer('Tuesday'));
    await sess.startRespondent(ask.humanUrl, { name: 'Bo' });
    const read = await client.getAsk(ask.askId);
    expect(read).toMatchObject({ askId: ask.askId, started: 2, answered: 1, max: 2 });
    const answeredOne = read.respondents.find((r) => r.status === 'answered')!;
    expect(answeredOne).toMatchObject({ name: 'Ana', response: { revision: 1, answer: answer('Tuesday') } });
    // The respondent's receipt is its own Session's, over the Ask's Surface.
    const receipt = await client.verifyResponse({
      sessionId: answeredOne.sessionId,
      revision: 1,
      eventId: answeredOne.response!.eventId,
      surface: surface('Which day?'),
      answer: answeredOne.response!.answer,
      receipt: answeredOne.response!.receipt,
    });
    expect(receipt.sessionId).toBe(answeredOne.sessionId);
  });
});

describe('what goes on the wire', () => {
  it('sends the key as a bearer token, JSON bodies, Idempotency-Key and a quoted If-Match', async () => {
    const seen: Array<{ method: string; url: string; headers: Headers; body: unknown }> = [];
    const recording: typeof fetch = (input, init) => {
      seen.push({
        method: init?.method ?? 'GET',
        url: String(input),
        headers: new Headers(init?.headers),
        body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      });
      return fetch(input, init);
    };
    const client = clientFor(sess, { fetch: recording });
    const { created, answered } = await answeredSession(sess, client);
    const key = idemKey();
    await client.complete(created.sessionId, {
      expectedRevision: 1,
      responseEventId: answered.responses[0]!.eventId,
      idempotencyKey: key,
    });
    const create = seen.find((s) => s.method === 'POST' && s.url.endsWith('/v1/sessions'))!;
    expect(create.headers.get('authorization')).toBe(`Bearer ${sess.apiKey}`);
    expect(create.headers.get('content-type')).toBe('application/json');
    expect(create.headers.get('idempotency-key')).toMatch(/^test-/);
    expect(create.body).toEqual({ interaction: surface() });
    const complete = seen.find((s) => s.url.endsWith('/complete'))!;
    expect(complete.url).toBe(`${sess.origin}/v1/sessions/${created.sessionId}/complete`);
    expect(complete.headers.get('if-match')).toBe('"1"');
    expect(complete.headers.get('idempotency-key')).toBe(key);
    expect(complete.body).toEqual({ response_event_id: answered.responses[0]!.eventId });
    const read = seen.find((s) => s.method === 'GET')!;
    expect(read.body).toBeUndefined();
    expect(read.headers.get('content-type')).toBeNull();
  });

  it('sends a wait as revision, status and timeout_ms', async () => {
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    const client = clientFor(sess, { fetch: recording });
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    await client.waitSession(created.sessionId, { revision: 1, status: 'active', timeoutMs: 0 });
    const url = new URL(urls.at(-1)!);
    expect(url.pathname).toBe(`/v1/sessions/${created.sessionId}/wait`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      revision: '1',
      status: 'active',
      timeout_ms: '0',
    });
  });
});

describe('idempotent replay', () => {
  it('create: the same key gives the same Session, and only one exists', async () => {
    const client = clientFor(sess);
    const key = idemKey();
    const before = sess.stats.of().sessionsCreated;
    const a = await client.createSession({ surface: surface('Replay?'), idempotencyKey: key });
    const b = await client.createSession({ surface: surface('Replay?'), idempotencyKey: key });
    expect(b).toEqual(a);
    expect(sess.stats.of().sessionsCreated).toBe(before + 1);
  });

  it('createAsk: the same key gives the same Ask', async () => {
    const client = clientFor(sess);
    const input = { surface: surface('Who comes?'), respondents: { max: 4 }, idempotencyKey: idemKey() };
    const before = sess.stats.of().asksCreated;
    const a = await client.createAsk(input);
    expect(await client.createAsk(input)).toEqual(a);
    expect(sess.stats.of().asksCreated).toBe(before + 1);
  });

  it('create: the same key with another body is an idempotency_mismatch', async () => {
    const client = clientFor(sess);
    const key = idemKey();
    await client.createSession({ surface: surface('One'), idempotencyKey: key });
    await expectSessError(client.createSession({ surface: surface('Two'), idempotencyKey: key }), 'api', {
      status: 422,
      apiCode: 'idempotency_mismatch',
    });
  });

  it('publish: the same key replays the original outcome, even after the person answered again', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    const input = { ...afterAnswer(answered), surface: surface('Next?') };
    const first = await client.publish(created.sessionId, input);
    await sess.submitAnswer(created.humanUrl, answer('second'));
    const replay = await client.publish(created.sessionId, input);
    expect(replay).toEqual(first);
    expect(sess.stats.of().revisionsPublished).toBeGreaterThan(0);
    expect(sess.sessions.get(created.sessionId)?.view).toMatchObject({ revision: 2, status: 'answered' });
  });

  it('complete: the same key replays; a new key is a conflict', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    const input = afterAnswer(answered);
    const first = await client.complete(created.sessionId, input);
    expect(await client.complete(created.sessionId, input)).toEqual(first);
    await expectSessError(
      client.complete(created.sessionId, { ...input, idempotencyKey: idemKey() }),
      'api',
      {
        status: 409,
        apiCode: 'conflict',
      },
    );
  });

  it('a publish committed but answered 500 is api 500; repeating the identical call learns it took effect', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    const input = { ...afterAnswer(answered), surface: surface('Committed?') };
    sess.faults.commitThenFail('publish', 500);
    await expectSessError(client.publish(created.sessionId, input), 'api', { status: 500 });
    expect(sess.sessions.get(created.sessionId)?.view.revision).toBe(2);
    const replay = await client.publish(created.sessionId, input);
    expect(replay).toMatchObject({ revision: 2, status: 'active' });
  });

  it('an unknown outcome (commit, then the connection drops) is resolved by repeating the identical call', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    const input = afterAnswer(answered);
    sess.faults.commitThenDrop('complete');
    await expectSessError(client.complete(created.sessionId, input), 'unknown_outcome');
    expect(sess.sessions.get(created.sessionId)?.view.status).toBe('completed');
    const replay = await client.complete(created.sessionId, input);
    expect(replay.status).toBe('completed');
  });
});

describe('error kinds', () => {
  describe('api', () => {
    it('401 unauthorized for a revoked key', async () => {
      const key = sess.createApiKey();
      const client = createSessClient({
        origin: sess.origin,
        credential: () => key,
        allowInsecureLocalhost: true,
      });
      sess.revokeApiKey(key);
      const error = await expectSessError(client.getSession('ses_x'), 'api', {
        status: 401,
        apiCode: 'unauthorized',
      });
      expect(error.message).not.toContain(key);
    });

    it('404 not_found for a Session of no one', async () => {
      await expectSessError(clientFor(sess).getSession('ses_does_not_exist'), 'api', {
        status: 404,
        apiCode: 'not_found',
      });
      await expectSessError(clientFor(sess).getAsk('ask_does_not_exist'), 'api', {
        status: 404,
        apiCode: 'not_found',
      });
    });

    it('404 for a Session of another workspace', async () => {
      const other = await sess.createWorkspace();
      const theirs = createSessClient({
        origin: sess.origin,
        credential: () => other.apiKey,
        allowInsecureLocalhost: true,
      });
      const view = await theirs.createSession({ surface: surface(), idempotencyKey: idemKey() });
      await expectSessError(clientFor(sess).getSession(view.sessionId), 'api', {
        status: 404,
        apiCode: 'not_found',
      });
    });

    it('422 invalid_request with field, limit and length for a title that is too long', async () => {
      const error = await expectSessError(
        clientFor(sess).createSession({ surface: surface('x'.repeat(81)), idempotencyKey: idemKey() }),
        'api',
        { status: 422, apiCode: 'invalid_request', field: '/interaction/title', limit: 80, length: 81 },
      );
      expect(error.message).toContain('/interaction/title');
    });

    it('422 for a lifetime below 30 s names /expires_in', async () => {
      await expectSessError(
        clientFor(sess).createSession({ surface: surface(), expiresIn: 29, idempotencyKey: idemKey() }),
        'api',
        { status: 422, field: '/expires_in', limit: 30, length: 29 },
      );
    });

    it('409 conflict for a publish at a stale revision', async () => {
      const client = clientFor(sess);
      const { created, answered } = await answeredSession(sess, client);
      await expectSessError(
        client.publish(created.sessionId, {
          expectedRevision: 2,
          responseEventId: answered.responses[0]!.eventId,
          surface: surface(),
          idempotencyKey: idemKey(),
        }),
        'api',
        { status: 409, apiCode: 'conflict' },
      );
    });

    it('403 forbidden for a publish on an Ask respondent’s Session', async () => {
      const client = clientFor(sess);
      const ask = await surfaceAsk(client, 1);
      const started = await sess.startRespondent(ask.humanUrl);
      await sess.submitAnswer(started.humanUrl!, answer());
      const read = await client.getAsk(ask.askId);
      const r = read.respondents[0]!;
      await expectSessError(
        client.complete(r.sessionId, {
          expectedRevision: 1,
          responseEventId: r.response!.eventId,
          idempotencyKey: idemKey(),
        }),
        'api',
        { status: 403, apiCode: 'forbidden' },
      );
    });

    it('410 expired for a complete on an expired Session', async () => {
      const local = await startLocalSess({ clock: { frozen: true } });
      try {
        const client = clientFor(local);
        const created = await client.createSession({
          surface: surface(),
          expiresIn: 72_001,
          idempotencyKey: idemKey(),
        });
        local.clock.advance(72_001_000);
        const view = await client.getSession(created.sessionId);
        expect(view.status).toBe('expired');
        await expectSessError(
          client.complete(created.sessionId, {
            expectedRevision: 1,
            responseEventId: 'evt_none',
            idempotencyKey: idemKey(),
          }),
          'api',
          { status: 410, apiCode: 'expired' },
        );
      } finally {
        await local.close();
      }
    });

    it('403 plan_limit with its limit', async () => {
      const local = await startLocalSess({ plan: { maxOpenSessions: 1 } });
      try {
        const client = clientFor(local);
        await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
        await expectSessError(
          client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
          'api',
          {
            status: 403,
            apiCode: 'plan_limit',
            limit: 1,
          },
        );
      } finally {
        await local.close();
      }
    });

    it.each([
      [500, 'internal'],
      [503, 'unavailable'],
      [429, 'rate_limited'],
    ])('%i %s is reported with its status and code', async (status, code) => {
      sess.faults.fail('get', status);
      await expectSessError(clientFor(sess).getSession('ses_any'), 'api', { status, apiCode: code });
    });

    it.each([
      [429, {}, 1_000],
      [429, { 'retry-after': '7' }, 7_000],
      [503, { 'retry-after': '0' }, 0],
      [503, {}, undefined],
      [429, { 'retry-after': '99999999' }, MAX_RETRY_AFTER_MS],
      [429, { 'retry-after': 'soon' }, undefined],
      [500, { 'retry-after': '5' }, undefined],
    ] as const)('%i with Retry-After %j carries retryAfterMs %s', async (status, headers, expected) => {
      sess.faults.fail('get', status, { headers: { ...headers } });
      const error = await expectSessError(clientFor(sess).getSession('ses_any'), 'api', { status });
      expect(error.retryAfterMs).toBe(expected);
    });

    it('reads a Retry-After date as the time until it, and a date past as no wait', () => {
      const now = Date.UTC(2026, 11, 3, 12, 0, 0);
      expect(retryAfterMsOf('Thu, 03 Dec 2026 12:00:30 GMT', now)).toBe(30_000);
      expect(retryAfterMsOf('Thu, 03 Dec 2026 11:00:00 GMT', now)).toBe(0);
      expect(retryAfterMsOf(' 12 ', now)).toBe(12_000);
      for (const bad of ['', '-1', '1.5', '1e3', '12345678901', null])
        expect(retryAfterMsOf(bad, now)).toBeUndefined();
    });

    it('an unknown error code keeps its status', async () => {
      sess.faults.fail('create', 418, { code: 'teapot' });
      await expectSessError(
        clientFor(sess).createSession({ surface: surface(), idempotencyKey: idemKey() }),
        'api',
        {
          status: 418,
          apiCode: 'teapot',
        },
      );
    });
  });

  describe('transport and not_sent', () => {
    it('a read whose connection drops is transport', async () => {
      sess.faults.drop('get');
      await expectSessError(clientFor(sess).getSession('ses_any'), 'transport');
    });

    it('a mutation whose connection drops is unknown_outcome (the client cannot tell it was not committed)', async () => {
      sess.faults.drop('create');
      await expectSessError(
        clientFor(sess).createSession({ surface: surface(), idempotencyKey: idemKey() }),
        'unknown_outcome',
      );
    });

    it('a closed port is not_sent (transport), for reads and mutations alike', async () => {
      const port = await closedPort();
      const client = createSessClient({
        origin: `http://127.0.0.1:${port}`,
        credential: () => 'sk_whatever',
        allowInsecureLocalhost: true,
      });
      await expectSessError(client.getSession('ses_x'), 'not_sent', { notSentKind: 'transport' });
      await expectSessError(
        client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
        'not_sent',
        {
          notSentKind: 'transport',
        },
      );
    });

    it('a request the client refuses to build is not_sent (configuration) and sends nothing', async () => {
      const client = clientFor(sess);
      const before = sess.stats.requests;
      await expectSessError(client.getSession('../v1/asks'), 'not_sent', { notSentKind: 'configuration' });
      await expectSessError(
        client.createSession({ surface: surface(), idempotencyKey: 'has space' }),
        'not_sent',
        {
          notSentKind: 'configuration',
        },
      );
      await expectSessError(
        client.createSession({ surface: surface(), idempotencyKey: 'x'.repeat(256) }),
        'not_sent',
        { notSentKind: 'configuration' },
      );
      await expectSessError(
        client.publish('ses_x', {
          expectedRevision: 0,
          responseEventId: 'evt_x',
          surface: surface(),
          idempotencyKey: idemKey(),
        }),
        'not_sent',
        { notSentKind: 'configuration' },
      );
      await expectSessError(
        client.waitSession('ses_x', { revision: 1, status: 'active', timeoutMs: 45_001 }),
        'not_sent',
        { notSentKind: 'configuration' },
      );
      await expectSessError(
        client.createSession({ surface: surface(), expiresIn: 1.5, idempotencyKey: idemKey() }),
        'not_sent',
        { notSentKind: 'configuration' },
      );
      expect(sess.stats.requests).toEqual(before);
    });
  });

  describe('timeout', () => {
    it('a read past the client deadline is timeout', async () => {
      sess.faults.delay('get', 5_000);
      const client = clientFor(sess, { requestTimeoutMs: 150 });
      const started = performance.now();
      await expectSessError(client.getSession('ses_any'), 'timeout');
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it('a long-poll past its wait plus the margin is timeout', async () => {
      const created = await clientFor(sess).createSession({ surface: surface(), idempotencyKey: idemKey() });
      const client = clientFor(sess, { requestTimeoutMs: 150 });
      sess.faults.delay('wait', 5_000);
      const started = performance.now();
      await expectSessError(
        client.waitSession(created.sessionId, { revision: 1, status: 'active', timeoutMs: 100 }),
        'timeout',
      );
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(240);
      expect(took).toBeLessThan(2_500);
    });

    it('a mutation past the client deadline is unknown_outcome', async () => {
      sess.faults.delay('create', 5_000);
      await expectSessError(
        clientFor(sess, { requestTimeoutMs: 150 }).createSession({
          surface: surface(),
          idempotencyKey: idemKey(),
        }),
        'unknown_outcome',
      );
    });
  });

  describe('aborted', () => {
    it('the caller’s signal ends a wait at once', async () => {
      const client = clientFor(sess);
      const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
      const controller = new AbortController();
      const waiting = client.waitSession(
        created.sessionId,
        { revision: 1, status: 'active', timeoutMs: 30_000 },
        { signal: controller.signal },
      );
      await sess.whenWaiting(created.sessionId);
      const started = performance.now();
      controller.abort();
      await expectSessError(waiting, 'aborted');
      expect(performance.now() - started).toBeLessThan(1_000);
    });

    it('an already aborted signal sends nothing', async () => {
      const before = sess.stats.requests;
      await expectSessError(
        clientFor(sess).createSession(
          { surface: surface(), idempotencyKey: idemKey() },
          { signal: AbortSignal.abort() },
        ),
        'aborted',
      );
      expect(sess.stats.requests).toEqual(before);
    });

    it('aborting a mutation in flight is aborted, not timeout', async () => {
      sess.faults.delay('create', 5_000);
      const controller = new AbortController();
      const pending = clientFor(sess).createSession(
        { surface: surface(), idempotencyKey: idemKey() },
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(), 50);
      await expectSessError(pending, 'aborted');
    });
  });

  describe('configuration', () => {
    it.each([
      ['an empty key', () => ''],
      ['a key with a space', () => 'sk bad'],
      ['a key with a newline', () => 'sk\nX-Evil: 1'],
      [
        'a provider that throws',
        () => {
          throw new Error('sk_leaky_secret_in_message');
        },
      ],
      ['a provider that rejects', () => Promise.reject(new Error('sk_leaky_secret_in_message'))],
    ])('%s is configuration, and nothing is sent', async (_name, credential) => {
      const before = sess.stats.requests;
      const client = createSessClient({ origin: sess.origin, credential, allowInsecureLocalhost: true });
      const error = await expectSessError(client.getSession('ses_x'), 'configuration');
      expect(error.message).not.toContain('sk_leaky_secret_in_message');
      expect(error.cause).toBeUndefined();
      expect(sess.stats.requests).toEqual(before);
    });

    it('the key is read on every call (a rotated key is used at once)', async () => {
      let key = 'sk_not_valid';
      const client = createSessClient({
        origin: sess.origin,
        credential: () => key,
        allowInsecureLocalhost: true,
      });
      await expectSessError(client.getSession('ses_x'), 'api', { status: 401 });
      key = sess.apiKey;
      await expectSessError(client.getSession('ses_x'), 'api', { status: 404 });
    });
  });
});

describe('no secret in an error message', () => {
  it('errors never carry the API key, a link or an answer value', async () => {
    const { recordedErrors } = await import('./helpers.js');
    expect(recordedErrors.length).toBeGreaterThan(20);
    const links = sess.sessions.list().map((s) => s.view.human_url);
    for (const error of recordedErrors) {
      const text = `${error.message} ${String(error.cause ?? '')} ${JSON.stringify(error)}`;
      expect(text).not.toContain(sess.apiKey);
      expect(text).not.toContain(SECRET_ANSWER_VALUE);
      for (const link of links) expect(text).not.toContain(link);
    }
  });
});
