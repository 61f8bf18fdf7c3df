/**
 * The answer page's watch (`GET /s/{token}/state?revision=<n>&status=<status>`): held while the
 * Session stays where the page saw it, answered as soon as it changes in any way (a follow-up, a
 * completion, a lapse on the runtime's clock), at once when it already moved, and abandoned with
 * the browser's connection. It carries the page's headers and nothing secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { ANSWER, answeredSession, call, createSession, newKey } from './helpers.js';

async function watch(url: string, revision: number, status: string, signal?: AbortSignal) {
  const u = new URL(url);
  const res = await fetch(`${u.origin}${u.pathname}/state?revision=${revision}&status=${status}`, {
    ...(signal ? { signal } : {}),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

describe('the answer page watch', () => {
  let sess: LocalSess;
  beforeAll(async () => {
    sess = await startLocalSess();
  });
  afterAll(() => sess.close());

  it('is held while nothing changes and answers the moment a follow-up is published', async () => {
    const { s, next } = await answeredSession(sess);
    const held = watch(s.human_url, 1, 'answered');
    await sess.whenWaiting(s.id);
    const publish = await call(sess, 'POST', `/v1/sessions/${s.id}/revisions`, {
      body: next,
      key: newKey(),
      ifMatch: 1,
    });
    expect(publish.status).toBe(200);
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ changed: true, final: false });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(sess.pendingWaits(s.id)).toBe(0);
  });

  it('picks up a completion (a final state) and a lapse on the clock, not only new revisions', async () => {
    const { s, eventId } = await answeredSession(sess);
    const held = watch(s.human_url, 1, 'answered');
    await sess.whenWaiting(s.id);
    await call(sess, 'POST', `/v1/sessions/${s.id}/complete`, {
      body: { response_event_id: eventId },
      key: newKey(),
      ifMatch: 1,
    });
    expect((await held).json).toEqual({ changed: true, final: true });
    // Asked again about the final state: nothing can change, so it answers at once.
    expect((await watch(s.human_url, 1, 'completed')).json).toEqual({ changed: false, final: true });

    const short = await createSession(sess, { expires_in: 60 });
    const lapse = watch(short.human_url, 1, 'active');
    await sess.whenWaiting(short.id);
    sess.clock.advance(61_000);
    expect((await lapse).json).toEqual({ changed: true, final: false });
    expect(sess.sessions.get(short.id)!.view.status).toBe('lapsed');
  });

  it('answers at once when the page is already behind, or names no valid state', async () => {
    const s = await createSession(sess);
    await sess.submitAnswer(s.human_url, ANSWER);
    expect((await watch(s.human_url, 1, 'active')).json).toEqual({ changed: true, final: false });
    expect((await watch(s.human_url, 1, 'bogus')).json).toEqual({ changed: true, final: false });
    expect((await watch(s.human_url, Number.NaN, 'answered')).json).toEqual({ changed: true, final: false });
  });

  it('ends the held wait when the browser goes away; other methods and unknown links are refused', async () => {
    const s = await createSession(sess);
    const pages = sess.stats.requests.page ?? 0;
    const abort = new AbortController();
    const held = watch(s.human_url, 1, 'active', abort.signal).catch((e: unknown) => e);
    await sess.whenWaiting(s.id);
    abort.abort();
    expect(await held).toBeInstanceOf(Error);
    await expect.poll(() => sess.pendingWaits(s.id)).toBe(0);
    expect(sess.stats.requests.page).toBe(pages + 1);

    const u = new URL(s.human_url);
    const post = await fetch(`${u.origin}${u.pathname}/state`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect((await fetch(`${u.origin}/s/nope/state?revision=1&status=active`)).status).toBe(404);
  });
});
