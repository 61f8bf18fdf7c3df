import { describe, expect, it } from 'vitest';
import { askViewProblem, sessionViewProblem } from '../../src/sess/view-checks.js';
import { type ContradictionVariant, startLocalSess } from '../../src/testing/index.js';
import { useLocalSess } from '../support/local-sess.js';
import { askViewOf, sessionViewOf } from '../support/wire-views.js';
import { ANSWER, answeredSession, call, createSession, newKey, sampleSurface } from './helpers.js';

const sess = useLocalSess();

const createBody = () => ({ interaction: sampleSurface() });

describe('faults', () => {
  it('status: answers the error body and changes nothing', async () => {
    const before = sess().stats.of().sessionsCreated;
    sess().faults.fail('create', 503);
    const res = await call(sess(), 'POST', '/v1/sessions', { body: createBody(), key: newKey() });
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ error: { code: 'unavailable', message: expect.any(String) } });
    expect(res.headers.get('sess-workspace-id')).toBe(sess().workspaceId);
    expect(sess().stats.of().sessionsCreated).toBe(before);
    sess().faults.fail('create', 403, { code: 'plan_limit', limit: 5 });
    const plan = await call(sess(), 'POST', '/v1/sessions', { body: createBody(), key: newKey() });
    expect(plan.json.error).toMatchObject({ code: 'plan_limit', limit: 5 });
    sess().faults.fail('get', 429);
    const s = await createSession(sess());
    const limited = await call(sess(), 'GET', `/v1/sessions/${s.id}`);
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).status).toBe(200);
  });

  it('transport: the connection drops before anything happens', async () => {
    const before = sess().stats.of().sessionsCreated;
    sess().faults.drop('create');
    await expect(
      call(sess(), 'POST', '/v1/sessions', { body: createBody(), key: newKey() }),
    ).rejects.toThrow();
    expect(sess().stats.of().sessionsCreated).toBe(before);
  });

  it('delay: the call is handled after the delay', async () => {
    const s = await createSession(sess());
    sess().faults.delay('get', 250);
    const t0 = performance.now();
    const res = await call(sess(), 'GET', `/v1/sessions/${s.id}`);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(240);
    expect(res.status).toBe(200);
  });

  it('commit_then_drop on create: a Session exists, the client saw no answer, the same key replays it', async () => {
    const before = sess().stats.of().sessionsCreated;
    const key = newKey();
    sess().faults.commitThenDrop('create');
    await expect(call(sess(), 'POST', '/v1/sessions', { body: createBody(), key })).rejects.toThrow();
    expect(sess().stats.of().sessionsCreated).toBe(before + 1);
    const replay = await call(sess(), 'POST', '/v1/sessions', { body: createBody(), key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(sess().stats.of().sessionsCreated).toBe(before + 1);
  });

  it('commit_then_drop on publish and complete: committed; the identical call learns the outcome', async () => {
    const { s, next: body } = await answeredSession(sess());
    const key = newKey();
    sess().faults.commitThenDrop('publish');
    await expect(
      call(sess(), 'POST', `/v1/sessions/${s.id}/revisions`, { body, key, ifMatch: 1 }),
    ).rejects.toThrow();
    expect(sess().sessions.get(s.id)!.view.revision).toBe(2);
    const replay = await call(sess(), 'POST', `/v1/sessions/${s.id}/revisions`, { body, key, ifMatch: 1 });
    expect(replay.status).toBe(200);
    expect(replay.json.revision).toBe(2);

    await sess().submitAnswer(s.human_url, ANSWER);
    const evt2 = (await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.responses[1].event_id;
    const cKey = newKey();
    sess().faults.commitThenDrop('complete');
    await expect(
      call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
        body: { response_event_id: evt2 },
        key: cKey,
        ifMatch: 2,
      }),
    ).rejects.toThrow();
    expect(sess().sessions.get(s.id)!.view.status).toBe('completed');
    const done = await call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt2 },
      key: cKey,
      ifMatch: 2,
    });
    expect(done.json.status).toBe('completed');
  });

  it('commit_then_status: the change is committed but the answer is an error', async () => {
    const { s, eventId: evt } = await answeredSession(sess());
    const key = newKey();
    sess().faults.commitThenFail('complete', 500);
    const res = await call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt },
      key,
      ifMatch: 1,
    });
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('internal');
    expect(sess().sessions.get(s.id)!.view.status).toBe('completed');
    const replay = await call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt },
      key,
      ifMatch: 1,
    });
    expect(replay.status).toBe(200);
    expect(replay.json.status).toBe('completed');
  });

  it('malformed: a 2xx whose body is not JSON (the change is committed)', async () => {
    const before = sess().stats.of().sessionsCreated;
    sess().faults.malformed('create');
    const res = await call(sess(), 'POST', '/v1/sessions', { body: createBody(), key: newKey() });
    expect(res.status).toBe(201);
    expect(res.json).toBeUndefined();
    expect(sess().stats.of().sessionsCreated).toBe(before + 1);
    sess().faults.malformed('jwks', { body: '{"keys": 3}' });
    const jwks = await fetch(`${sess().origin}/.well-known/sess/jwks.json`);
    expect(await jwks.text()).toBe('{"keys": 3}');
  });

  it.each<ContradictionVariant>([
    'response_above_revision',
    'active_with_answer',
    'answered_without_answer',
    'duplicate_revision',
  ])('contradictory %s: a well-formed view that breaks the consistency rules', async (variant) => {
    const s = await createSession(sess());
    await sess().submitAnswer(s.human_url, ANSWER);
    sess().faults.contradictory('get', { variant });
    const res = await call(sess(), 'GET', `/v1/sessions/${s.id}`);
    const view = sessionViewOf(res.json);
    expect(sessionViewProblem(view)).toBeDefined();
    // An active Session with no answer yet is made contradictory too.
    const fresh = await createSession(sess());
    sess().faults.contradictory('get', { variant });
    const fv = sessionViewOf((await call(sess(), 'GET', `/v1/sessions/${fresh.id}`)).json);
    expect(sessionViewProblem(fv)).toBeDefined();
  });

  it('contradictory on an Ask read breaks the Ask counts', async () => {
    const ask = await call(sess(), 'POST', '/v1/asks', {
      body: { interaction: sampleSurface(), respondents: { max: 2 } },
      key: newKey(),
    });
    sess().faults.contradictory('getAsk');
    const view = askViewOf((await call(sess(), 'GET', `/v1/asks/${ask.json.id}`)).json);
    expect(askViewProblem(view)).toBeDefined();
  });

  it('times, pending and clear', async () => {
    const s = await createSession(sess());
    sess().faults.fail('get', 500, { times: 2 });
    expect(sess().faults.pending('get')).toBe(2);
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.error.code).toBe('internal');
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).status).toBe(500);
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).status).toBe(200);
    sess().faults.fail('jwks', 503, { times: Number.POSITIVE_INFINITY });
    expect((await fetch(`${sess().origin}/.well-known/sess/jwks.json`)).status).toBe(503);
    expect((await fetch(`${sess().origin}/.well-known/sess/jwks.json`)).status).toBe(503);
    sess().faults.clear();
    expect(sess().faults.pending()).toBe(0);
    expect((await fetch(`${sess().origin}/.well-known/sess/jwks.json`)).status).toBe(200);
    expect(() => sess().faults.fail('get', 200)).toThrow(TypeError);
    // biome-ignore lint/suspicious/noExplicitAny: an invalid endpoint on purpose
    expect(() => sess().faults.drop('nope' as any)).toThrow(TypeError);
  });

  it('counts requests per endpoint', async () => {
    const before = sess().stats.requests;
    const s = await createSession(sess());
    await call(sess(), 'GET', `/v1/sessions/${s.id}`);
    const after = sess().stats.requests;
    expect(after.create).toBe(before.create! + 1);
    expect(after.get).toBe(before.get! + 1);
  });
});

describe('options', () => {
  it('workspaceHeader: false omits Sess-Workspace-Id', async () => {
    const bare = await startLocalSess({ workspaceHeader: false });
    try {
      const res = await call(bare, 'POST', '/v1/sessions', { body: createBody(), key: newKey() });
      expect(res.status).toBe(201);
      expect(res.headers.get('sess-workspace-id')).toBeNull();
    } finally {
      await bare.close();
    }
  });

  it.each([
    ['not_offered', 404, 'not_found'],
    ['method_not_allowed', 405, 'method_not_allowed'],
  ] as const)(
    'withdrawal: %s answers withdraw and close %i while the Session and the Ask exist',
    async (withdrawal, status, code) => {
      const old = await startLocalSess({ withdrawal });
      try {
        const s = await createSession(old);
        const ask = await call(old, 'POST', '/v1/asks', {
          body: { interaction: sampleSurface(), respondents: { max: 2 } },
          key: newKey(),
        });
        expect(ask.status).toBe(201);
        const before = old.stats.requests;
        const paths = [`/v1/sessions/${s.id}/withdraw`, `/v1/asks/${ask.json.id}/close`];
        for (const path of paths) {
          const res = await call(old, 'POST', path, { body: {}, key: newKey(), ifMatch: 1 });
          expect(res.status, path).toBe(status);
          expect(res.json).toEqual({ error: { code, message: expect.any(String) } });
          if (status === 405) expect(res.headers.get('allow')).toBe('');
          expect(res.headers.get('sess-workspace-id')).toBe(old.workspaceId);
          // Any method: the call is not there at all.
          expect((await call(old, 'GET', path)).status).toBe(status);
        }
        // Nothing was withdrawn or closed, and neither endpoint counted a request.
        expect(old.stats.requests.withdraw).toBe(before.withdraw);
        expect(old.stats.requests.closeAsk).toBe(before.closeAsk);
        expect(old.stats.of()).toMatchObject({ sessionsWithdrawn: 0, asksClosed: 0 });
        const read = await call(old, 'GET', `/v1/sessions/${s.id}`);
        expect(read.status).toBe(200);
        expect(read.json).toMatchObject({ id: s.id, status: 'active', revision: 1 });
        expect((await call(old, 'GET', `/v1/asks/${ask.json.id}`)).json.status).toBe('open');
        // The rest of the wire works as always: the Session is answered and completed.
        await old.submitAnswer(s.human_url, ANSWER);
        const eventId = (await call(old, 'GET', `/v1/sessions/${s.id}`)).json.responses[0].event_id;
        const done = await call(old, 'POST', `/v1/sessions/${s.id}/complete`, {
          body: { response_event_id: eventId },
          key: newKey(),
          ifMatch: 1,
        });
        expect(done.json.status).toBe('completed');
      } finally {
        await old.close();
      }
    },
  );

  it('withdrawal: offered (the default) withdraws and closes', async () => {
    const s = await createSession(sess());
    const res = await call(sess(), 'POST', `/v1/sessions/${s.id}/withdraw`, {
      body: {},
      key: newKey(),
      ifMatch: 1,
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('withdrawn');
  });

  it('refuses bad options with a TypeError naming them', async () => {
    await expect(startLocalSess({ port: -1 })).rejects.toThrow(/port/);
    await expect(startLocalSess({ plan: { maxOpenSessions: 0 } })).rejects.toThrow(/plan.maxOpenSessions/);
    await expect(startLocalSess({ clock: { start: 'not a date' } })).rejects.toThrow(/clock.start/);
  });

  // The one option form of the package: `startLocalSess: option "<name>" <rule>.`
  it.each([
    [{ port: -1 }, 'port', 'must be a whole number from 0 to 65535'],
    [{ port: 80.5 }, 'port', 'must be a whole number from 0 to 65535'],
    [{ host: '' }, 'host', 'must be a non-empty string'],
    [{ plan: null }, 'plan', 'must be an object'],
    [{ plan: { maxOpenSessions: 0 } }, 'plan.maxOpenSessions', 'must be a whole number of at least 1'],
    [{ plan: { maxExpiresIn: 29 } }, 'plan.maxExpiresIn', 'must be a whole number of at least 30'],
    [{ plan: { maxRespondents: '5' } }, 'plan.maxRespondents', 'must be a whole number of at least 1'],
    [
      { plan: { maxSessions: 5 } },
      'plan.maxSessions',
      'is not a key of "plan" (maxExpiresIn, maxOpenSessions, maxRespondents)',
    ],
    [
      { clock: { start: 'not a date' } },
      'clock.start',
      'must be a valid time (a Date, epoch milliseconds or a date string)',
    ],
    [{ clock: { frozen: 'yes' } }, 'clock.frozen', 'must be a boolean'],
    [{ issuer: 7 }, 'issuer', 'must be a non-empty string'],
    [{ workspaceHeader: 'no' }, 'workspaceHeader', 'must be a boolean'],
    [{ withdrawal: 'off' }, 'withdrawal', 'must be one of "offered", "not_offered", "method_not_allowed"'],
    [{ withdrawal: false }, 'withdrawal', 'must be one of "offered", "not_offered", "method_not_allowed"'],
    [{ workspaceId: 'ws 1' }, 'workspaceId', 'must be 1 to 128 characters of A-Z a-z 0-9 . _ : -'],
    [{ apiKey: 'sk with space' }, 'apiKey', 'must be 1 to 256 printable ASCII characters without spaces'],
  ])('%o: option "%s" %s', async (options, name, rule) => {
    await expect(startLocalSess(options as never)).rejects.toThrow(
      new TypeError(`startLocalSess: option "${name}" ${rule}.`),
    );
  });

  it('refuses options that are not an object', async () => {
    await expect(startLocalSess(null as never)).rejects.toThrow(
      new TypeError('startLocalSess: options must be an object.'),
    );
  });
});
