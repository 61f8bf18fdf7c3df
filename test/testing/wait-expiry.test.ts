import { describe, expect, it } from 'vitest';
import { startLocalSess } from '../../src/testing/index.js';
import { useLocalSess } from '../support/local-sess.js';
import { ANSWER, call, createSession, newKey } from './helpers.js';

const sess = useLocalSess({ clock: { frozen: true } });

function waitPath(id: string, revision: number, status: string, timeoutMs: number): string {
  return `/v1/sessions/${id}/wait?revision=${revision}&status=${status}&timeout_ms=${timeoutMs}`;
}

describe('long-poll wait', () => {
  it('returns at once when the Session is not at the known (revision, status)', async () => {
    const s = await createSession(sess());
    const t0 = performance.now();
    const res = await call(sess(), 'GET', waitPath(s.id, 1, 'answered', 45_000));
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('active');
  });

  it('returns the unchanged view at the timeout', async () => {
    const s = await createSession(sess());
    const t0 = performance.now();
    const res = await call(sess(), 'GET', waitPath(s.id, 1, 'active', 300));
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3_000);
    expect(res.json).toMatchObject({ status: 'active', revision: 1 });
    expect(sess().pendingWaits(s.id)).toBe(0);
  });

  it('wakes at once on a submitted answer (median submit → return far under the ceiling)', async () => {
    const samples: number[] = [];
    for (let i = 0; i < 15; i++) {
      const s = await createSession(sess());
      const pending = call(sess(), 'GET', waitPath(s.id, 1, 'active', 45_000));
      await sess().whenWaiting(s.id);
      const t0 = performance.now();
      const page = await sess().submitAnswer(s.human_url, ANSWER);
      const res = await pending;
      samples.push(performance.now() - t0);
      expect(page.status).toBe(303);
      expect(res.json.status).toBe('answered');
      expect(res.json.responses[0].answer).toEqual(ANSWER);
    }
    samples.sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)]!;
    console.log(
      `[sess-local] submit → wait-return median ${median.toFixed(1)} ms over ${samples.length} (max ${samples.at(-1)!.toFixed(1)} ms)`,
    );
    expect(median).toBeLessThan(500);
  });

  it('wakes on publish and complete, and returns at once on a final status', async () => {
    const s = await createSession(sess());
    await sess().submitAnswer(s.human_url, ANSWER);
    const evt = (await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.responses[0].event_id;
    const pending = call(sess(), 'GET', waitPath(s.id, 1, 'answered', 45_000));
    await sess().whenWaiting(s.id);
    await call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: evt },
      key: newKey(),
      ifMatch: 1,
    });
    expect((await pending).json.status).toBe('completed');
    const t0 = performance.now();
    const final = await call(sess(), 'GET', waitPath(s.id, 1, 'completed', 45_000));
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(final.json.status).toBe('completed');
  });

  it('is abandoned when the client closes the connection', async () => {
    const s = await createSession(sess());
    const controller = new AbortController();
    const pending = call(sess(), 'GET', waitPath(s.id, 1, 'active', 45_000), { signal: controller.signal });
    await sess().whenWaiting(s.id);
    controller.abort();
    await expect(pending).rejects.toThrow();
    for (let i = 0; i < 100 && sess().pendingWaits(s.id) > 0; i++) await new Promise((r) => setImmediate(r));
    expect(sess().pendingWaits(s.id)).toBe(0);
    expect(sess().sessions.get(s.id)!.view.status).toBe('active');
  });

  it('close() ends pending waits and stops promptly', async () => {
    const other = await startLocalSess();
    const s = await createSession(other);
    const pending = call(other, 'GET', waitPath(s.id, 1, 'active', 45_000)).then(
      (r) => r.status,
      () => 'dropped',
    );
    await other.whenWaiting(s.id);
    const t0 = performance.now();
    await other.close();
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect([200, 'dropped']).toContain(await pending);
    expect(other.pendingWaits()).toBe(0);
    await expect(fetch(`${other.origin}/.well-known/sess/jwks.json`)).rejects.toThrow();
  });

  it('refuses bad query parameters', async () => {
    const s = await createSession(sess());
    for (const q of [
      'revision=0&status=active&timeout_ms=10',
      'revision=1&status=done&timeout_ms=10',
      'revision=1&status=active&timeout_ms=45001',
      'revision=1&status=active',
      'status=active&timeout_ms=10',
    ]) {
      const res = await call(sess(), 'GET', `/v1/sessions/${s.id}/wait?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.error.code).toBe('invalid_request');
    }
  });

  it('holds many concurrent waits and wakes them all on one answer', async () => {
    const s = await createSession(sess());
    const n = 200;
    const waits = Array.from({ length: n }, () => call(sess(), 'GET', waitPath(s.id, 1, 'active', 45_000)));
    await sess().whenWaiting(s.id, n);
    const t0 = performance.now();
    await sess().submitAnswer(s.human_url, ANSWER);
    const results = await Promise.all(waits);
    const took = performance.now() - t0;
    console.log(`[sess-local] ${n} concurrent waits woken by one answer in ${took.toFixed(0)} ms`);
    expect(results.every((r) => r.json.status === 'answered')).toBe(true);
    expect(sess().pendingWaits()).toBe(0);
  });
});

describe('link lifetime on the clock', () => {
  it('lapses a short link, wakes the wait, extends it from the page, then expires it for good at the horizon', async () => {
    const s = await createSession(sess(), { expires_in: 600 });
    expect(Date.parse(s.extendable_until) - Date.parse(s.expires_at)).toBe(86_400_000 - 600_000);
    const pending = call(sess(), 'GET', waitPath(s.id, 1, 'active', 45_000));
    await sess().whenWaiting(s.id);
    sess().clock.advance(600_000);
    const lapsed = (await pending).json;
    expect(lapsed.status).toBe('lapsed');
    const lapsedPage = await sess().openPage(s.human_url);
    expect(lapsedPage.status).toBe(200);
    expect(lapsedPage.html).toContain(`${new URL(s.human_url).pathname}/extend`);
    // A submit on a lapsed link is refused; more time reopens it.
    expect((await sess().submitAnswer(s.human_url, ANSWER, { expectStatus: 410 })).status).toBe(410);
    const ext = await sess().extend(s.human_url);
    expect(ext.status).toBe(303);
    const reopened = (await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json;
    expect(reopened.status).toBe('active');
    expect(Date.parse(reopened.expires_at)).toBe(sess().clock.now() + 600_000);
    // Past the horizon it is closed for good.
    sess().clock.advance(86_400_000);
    const expired = (await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json;
    expect(expired.status).toBe('expired');
    expect((await sess().extend(s.human_url)).status).toBe(410);
    expect((await sess().submitAnswer(s.human_url, ANSWER, { expectStatus: 410 })).status).toBe(410);
    expect((await sess().openPage(s.human_url)).status).toBe(410);
    sess().clock.set(sess().clock.now() - 90_000_000);
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('expired');
  });

  it('expires a link over 20 hours straight away, without extendable_until', async () => {
    const s = await createSession(sess(), { expires_in: 72_001 });
    expect(s.extendable_until).toBeUndefined();
    sess().clock.advance(72_001_000);
    expect((await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json.status).toBe('expired');
    const early = await call(sess(), 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: 'evt_x' },
      key: newKey(),
      ifMatch: 1,
    });
    expect(early.status).toBe(410);
    expect(early.json.error.code).toBe('expired');
  });

  it('keeps an answer accepted before the end', async () => {
    const s = await createSession(sess(), { expires_in: 60 });
    await sess().submitAnswer(s.human_url, ANSWER);
    sess().clock.advance(30 * 86_400_000);
    const view = (await call(sess(), 'GET', `/v1/sessions/${s.id}`)).json;
    expect(view.status).toBe('answered');
    expect(view.responses[0].answer).toEqual(ANSWER);
  });

  it('wakes a wait on expiry while the clock runs in real time', async () => {
    const running = await startLocalSess();
    try {
      const s = await createSession(running, { expires_in: 30 });
      // Move to 200 ms before expiry; the clock keeps running, the wait must wake by itself.
      running.clock.advance(29_800);
      const t0 = performance.now();
      const res = await call(running, 'GET', waitPath(s.id, 1, 'active', 10_000));
      expect(res.json.status).toBe('lapsed');
      expect(performance.now() - t0).toBeLessThan(3_000);
    } finally {
      await running.close();
    }
  });
});
