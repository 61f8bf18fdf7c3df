/**
 * `sess.onAnswer`: called once per accepted answer, with its Session and revision, after the
 * answer is committed and the held waits were woken and before the page's post is answered;
 * never for a refused submit; removable; a listener that throws changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { ANSWER, call, createSession } from './helpers.js';

describe('sess.onAnswer', () => {
  let sess: LocalSess;
  beforeAll(async () => {
    sess = await startLocalSess();
  });
  afterAll(() => sess.close());

  it('fires once per accepted answer, once it is committed, before the page answers', async () => {
    const s = await createSession(sess);
    const seen: Array<{
      sessionId: string;
      revision: number;
      answered: number;
      held: number;
      pageAnswered: boolean;
    }> = [];
    const held = call(sess, 'GET', `/v1/sessions/${s.id}/wait?revision=1&status=active&timeout_ms=10000`);
    await sess.whenWaiting(s.id);
    const off = sess.onAnswer((sessionId, revision) => {
      seen.push({
        sessionId,
        revision,
        answered: sess.sessions.get(sessionId)?.view.responses.length ?? -1,
        held: sess.pendingWaits(sessionId),
        pageAnswered,
      });
    });
    let pageAnswered = false;
    const page = sess.submitAnswer(s.human_url, ANSWER).then((r) => {
      pageAnswered = true;
      return r;
    });
    expect((await page).status).toBe(303);
    expect(seen).toEqual([{ sessionId: s.id, revision: 1, answered: 1, held: 0, pageAnswered: false }]);
    expect((await held).json.status).toBe('answered');
    // Refused (the Session is answered already): no call.
    const again = await sess.submitAnswer(s.human_url, ANSWER, { expectStatus: 409 });
    expect(again.status).toBe(409);
    expect(seen).toHaveLength(1);
    off();
    const other = await createSession(sess);
    await sess.submitAnswer(other.human_url, ANSWER);
    expect(seen).toHaveLength(1);
  });

  it('commits the answer whatever a listener throws', async () => {
    const s = await createSession(sess);
    const off = sess.onAnswer(() => {
      throw new Error('listener failure');
    });
    try {
      expect((await sess.submitAnswer(s.human_url, ANSWER)).status).toBe(303);
      expect(sess.sessions.get(s.id)?.view.responses).toHaveLength(1);
    } finally {
      off();
    }
  });
});
