/**
 * A hostile form post to an answer page cannot freeze the local runtime: a number field posted
 * with 65 000 digits and a trailing letter (which a backtracking number pattern took seconds to
 * refuse) is refused at once, and a 1 MB value is refused by the page's body limit before it is
 * read; meanwhile another request is answered quickly.
 *
 * Timing on a shared, loaded machine: the paths are warmed up first, each case is tried up to ten
 * times and the best try counts, so a scheduling hiccup cannot fail it, while a parser that stalls
 * (seconds per try) fails every try.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Surface } from '../../src/core/model/surface.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { call, newKey } from './helpers.js';

const QUICK_MS = 100;
const TRIES = 10;

const NUMBERS: Surface = {
  mode: 'interactive',
  title: 'How many?',
  source: {
    kind: 'sess_surface',
    components: [{ type: 'field', name: 'n', label: 'How many', schema: { type: 'number' } }],
  },
  actions: [{ id: 'ok', label: 'OK', intent: 'submit' }],
};

/** Post `body` to the page and, at the same moment, read the JWKS; how long each took. */
async function postWithProbe(sess: LocalSess, url: string, body: string) {
  const started = performance.now();
  const post = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  }).then(
    async (r) => ({ status: r.status, text: await r.text(), ms: performance.now() - started }),
    // The runtime may close the connection after refusing a body it did not read.
    () => ({ status: 0, text: '', ms: performance.now() - started }),
  );
  const probe = fetch(`${sess.origin}/.well-known/sess/jwks.json`).then(async (r) => {
    await r.arrayBuffer();
    return { status: r.status, ms: performance.now() - started };
  });
  return { post: await post, probe: await probe };
}

describe('a hostile answer-page post', () => {
  let sess: LocalSess;
  let url: string;

  beforeAll(async () => {
    sess = await startLocalSess();
    const created = await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: NUMBERS },
      key: newKey(),
    });
    url = created.json.human_url;
    // Warm up the page's post path and the probe, so the first measured try is not a cold start.
    for (let i = 0; i < 3; i++) await postWithProbe(sess, url, '_revision=1&_action=ok&v%3An=12x');
  });
  afterAll(() => sess.close());

  const cases: [string, string, number[]][] = [
    ['65 000 digits and a letter', `_revision=1&_action=ok&v%3An=${'1'.repeat(65_000)}x`, [422]],
    [
      '65 000 digits with a dot and an exponent',
      `_revision=1&_action=ok&v%3An=${'1'.repeat(32_000)}.${'1'.repeat(32_000)}e1x`,
      [422],
    ],
    // Over the page's 64 KiB form limit: refused unread (the connection may close after the 413).
    ['a 1 MB value', `_revision=1&_action=ok&v%3An=${'1'.repeat(1_000_000)}x`, [413, 0]],
  ];

  it.each(cases)('%s is refused at once, and the runtime stays responsive', async (_, body, statuses) => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < TRIES && best >= QUICK_MS; i++) {
      const { post, probe } = await postWithProbe(sess, url, body);
      expect(statuses).toContain(post.status);
      if (post.status === 422) expect(post.text).toContain('Enter a number');
      expect(probe.status).toBe(200);
      best = Math.min(best, Math.max(post.ms, probe.ms));
    }
    console.log(
      `[sess-local] hostile post (${_}): refused and a concurrent request answered in ${best.toFixed(1)} ms`,
    );
    expect(best).toBeLessThan(QUICK_MS);
    // Nothing was taken as an answer.
    expect(sess.sessions.byUrl(url)!.view.responses).toEqual([]);
  });
});
