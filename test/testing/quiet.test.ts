/**
 * The runtime logs nothing: through a whole round with refusals, faults, an Ask and an expiry,
 * not one byte reaches stdout, stderr or the console of the process it runs in.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { startLocalSess } from '../../src/testing/index.js';
import { ANSWER, call, createSession, newKey, sampleSurface } from './helpers.js';

const written: string[] = [];
beforeEach(() => {
  written.length = 0;
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      written.push(args.map(String).join(' '));
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

it('writes nothing anywhere during a round with refusals, faults, an Ask and an expiry', async () => {
  const sess = await startLocalSess();
  try {
    const s = await createSession(sess, { expires_in: 60 });
    await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: { ...sampleSurface(), title: 'x'.repeat(100) } },
      key: newKey(),
    });
    await call(sess, 'GET', '/v1/sessions/ses_nope', { apiKey: 'sk_wrong' });
    await sess.submitAnswer(
      s.human_url,
      { action: 'approve', values: { message: '' } },
      { expectStatus: 422 },
    );
    sess.faults.tamperReceipt('get', { mode: 'signature' });
    sess.faults.malformed('wait');
    await sess.submitAnswer(s.human_url, ANSWER);
    const view = (await call(sess, 'GET', `/v1/sessions/${s.id}`)).json;
    await call(sess, 'GET', `/v1/sessions/${s.id}/wait?revision=1&status=active&timeout_ms=0`);
    sess.faults.commitThenDrop('complete');
    await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: view.responses[0].event_id },
      key: newKey(),
      ifMatch: 1,
    }).catch(() => undefined);
    const ask = await call(sess, 'POST', '/v1/asks', {
      body: { interaction: sampleSurface(), respondents: { max: 1, name: true } },
      key: newKey(),
    });
    const r = await sess.startRespondent(ask.json.human_url, { name: 'Ana' });
    await sess.startRespondent(ask.json.human_url, { name: 'Bo' });
    await sess.submitAnswer(r.humanUrl!, ANSWER);
    const late = await createSession(sess, { expires_in: 30 });
    sess.clock.advance(90_000_000);
    await sess.openPage(late.human_url);
    await sess.extend(late.human_url);
    await fetch(`${sess.origin}/nothing/here`);
  } finally {
    await sess.close();
  }
  expect(written).toEqual([]);
});
