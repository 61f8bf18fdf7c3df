import { describe, expect, it } from 'vitest';
import { askViewProblem } from '../../src/sess/view-checks.js';
import { useLocalSess } from '../support/local-sess.js';
import { askViewOf } from '../support/wire-views.js';
import { ANSWER, call, newKey, sampleSurface, type WireJson } from './helpers.js';

const sess = useLocalSess({ clock: { frozen: true } });

async function createAsk(
  respondents: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<WireJson> {
  const res = await call(sess(), 'POST', '/v1/asks', {
    body: { interaction: sampleSurface('Lunch?'), respondents, ...extra },
    key: newKey(),
  });
  if (res.status !== 201) throw new Error(`createAsk ${res.status} ${res.text}`);
  expect(askViewProblem(askViewOf(res.json))).toBeUndefined();
  return res.json;
}

async function readAsk(id: string) {
  const res = await call(sess(), 'GET', `/v1/asks/${id}`);
  expect(res.status).toBe(200);
  const view = askViewOf(res.json);
  expect(askViewProblem(view)).toBeUndefined();
  return view;
}

describe('Asks', () => {
  it('holds the exact cap under 50 concurrent respondent starts', async () => {
    const ask = await createAsk({ max: 7 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => sess().startRespondent(ask.human_url)),
    );
    const accepted = results.filter((r) => r.status === 303);
    const refused = results.filter((r) => r.status === 409);
    expect(accepted).toHaveLength(7);
    expect(refused).toHaveLength(43);
    expect(new Set(accepted.map((r) => r.humanUrl)).size).toBe(7);
    const view = await readAsk(ask.id);
    expect(view).toMatchObject({ started: 7, answered: 0, status: 'open', max: 7 });
    expect(sess().stats.of().respondentsStarted).toBeGreaterThanOrEqual(7);
  });

  it('gives each browser its own page by cookie, records answers per respondent, closes when all answered', async () => {
    const ask = await createAsk({ max: 2 });
    const first = await sess().startRespondent(ask.human_url);
    expect(first.status).toBe(303);
    expect(first.cookie).toMatch(/^sess_ask_/);
    // The same browser comes back to its own page, not a new slot.
    const again = await sess().openPage(ask.human_url, { cookie: first.cookie! });
    expect(again.status).toBe(303);
    expect(new URL(again.location!, sess().origin).href).toBe(first.humanUrl);
    expect((await readAsk(ask.id)).started).toBe(1);

    expect((await sess().submitAnswer(first.humanUrl!, ANSWER)).status).toBe(303);
    let view = await readAsk(ask.id);
    expect(view).toMatchObject({ started: 1, answered: 1, status: 'open' });
    const r0 = view.respondents[0]!;
    expect(r0.status).toBe('answered');
    expect(r0.response).toMatchObject({ revision: 1, answer: ANSWER });
    // The respondent's Session is completed and readable; publish/complete on it are forbidden.
    const rs = await call(sess(), 'GET', `/v1/sessions/${r0.session_id}`);
    expect(rs.json).toMatchObject({ status: 'completed', revision: 1 });
    const pub = await call(sess(), 'POST', `/v1/sessions/${r0.session_id}/complete`, {
      body: { response_event_id: r0.response!.event_id },
      key: newKey(),
      ifMatch: 1,
    });
    expect(pub.status).toBe(403);
    expect(pub.json.error.code).toBe('forbidden');
    expect((await sess().openPage(first.humanUrl!)).status).toBe(200);

    const second = await sess().startRespondent(ask.human_url);
    expect(second.status).toBe(303);
    expect((await readAsk(ask.id)).status).toBe('open');
    await sess().submitAnswer(second.humanUrl!, { action: 'stop', values: { message: 'no', push: false } });
    view = await readAsk(ask.id);
    expect(view).toMatchObject({ started: 2, answered: 2, status: 'closed' });
    expect((await sess().startRespondent(ask.human_url)).status).toBe(409);
  });

  it('asks for a name when configured and refuses an empty one', async () => {
    const ask = await createAsk({ max: 3, name: true });
    const page = await sess().openPage(ask.human_url);
    expect(page.status).toBe(200);
    expect((await readAsk(ask.id)).started).toBe(0);
    expect((await sess().startRespondent(ask.human_url, { name: '   ' })).status).toBe(422);
    const named = await sess().startRespondent(ask.human_url, { name: 'Ana' });
    expect(named.status).toBe(303);
    const view = await readAsk(ask.id);
    expect(view.respondents[0]).toMatchObject({ name: 'Ana', status: 'started' });
  });

  it('expires respondents and closes the Ask on the clock', async () => {
    const ask = await createAsk({ max: 3, expires_in: 600, respondent_expires_in: 60 });
    const r = await sess().startRespondent(ask.human_url);
    sess().clock.advance(61_000);
    let view = await readAsk(ask.id);
    expect(view.respondents[0]!.status).toBe('expired');
    expect(view.status).toBe('open');
    expect((await sess().submitAnswer(r.humanUrl!, ANSWER, { expectStatus: 410 })).status).toBe(410);
    sess().clock.advance(600_000);
    view = await readAsk(ask.id);
    expect(view.status).toBe('closed');
    expect((await sess().startRespondent(ask.human_url)).status).toBe(410);
  });

  it('refuses bad Ask requests with field and limit', async () => {
    const both = await call(sess(), 'POST', '/v1/asks', {
      body: { interaction: sampleSurface(), expires_in: 600, respondents: { max: 2, expires_in: 600 } },
      key: newKey(),
    });
    expect(both.status).toBe(422);
    expect(both.json.error.field).toBe('/respondents/expires_in');
    const tooMany = await call(sess(), 'POST', '/v1/asks', {
      body: { interaction: sampleSurface(), respondents: { max: 1001 } },
      key: newKey(),
    });
    expect(tooMany.json.error).toMatchObject({
      code: 'invalid_request',
      field: '/respondents/max',
      limit: 1000,
      length: 1001,
    });
    const rl = await call(sess(), 'POST', '/v1/asks', {
      body: {
        interaction: sampleSurface(),
        respondents: { max: 2, expires_in: 600, respondent_expires_in: 601 },
      },
      key: newKey(),
    });
    expect(rl.json.error).toMatchObject({
      field: '/respondents/respondent_expires_in',
      limit: 600,
      length: 601,
    });
    const none = await call(sess(), 'POST', '/v1/asks', {
      body: { interaction: sampleSurface(), respondents: { max: 0 } },
      key: newKey(),
    });
    expect(none.json.error).toMatchObject({ code: 'invalid_request', field: '/respondents/max' });
    expect((await call(sess(), 'GET', '/v1/asks/ask_nope')).status).toBe(404);
  });

  it('replays a create-Ask with the same key', async () => {
    const key = newKey();
    const body = { interaction: sampleSurface(), respondents: { max: 2 } };
    const a = await call(sess(), 'POST', '/v1/asks', { body, key });
    const b = await call(sess(), 'POST', '/v1/asks', { body, key });
    expect(b.text).toBe(a.text);
    expect(
      (await call(sess(), 'POST', '/v1/asks', { body: { ...body, respondents: { max: 3 } }, key })).status,
    ).toBe(422);
  });
});
