/**
 * The interaction flows of `sess-mcp-tools/5` through `engine.call`, against the local Sess
 * runtime, the real Sess client and the memory store: request → answer → publish → answer →
 * complete; `sess_ask` plain and with three respondents; expiry; a lapsed link; a cut wait that
 * resumes without a second Session; progress during a wait.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REWAIT_LINE, SHOW_LINK_PREFIX } from '../../src/core/contract/result.js';
import {
  approveAnswer,
  approveSurface,
  followUpSurface,
  type Harness,
  sessionIdOf,
  startHarness,
} from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('request → answer → publish → answer → complete', () => {
  it('runs the whole flow on one Session and releases only verified answers', async () => {
    h = await startHarness();
    const created = await h.call('sess_request', { interaction: approveSurface });
    if (!created.ok) throw new Error(JSON.stringify(created.error));
    const { handle, humanUrl, expiresAt } = created.interaction;
    expect(created.interaction).toMatchObject({ revision: 1, state: 'waiting' });
    expect(handle).toMatch(/^sess_h_[A-Za-z0-9_-]{22,}$/);
    expect(humanUrl).toMatch(new RegExp(`^${h.sess.origin}/`));
    expect(Number.isNaN(Date.parse(expiresAt ?? ''))).toBe(false);
    expect(created.text.startsWith(`${SHOW_LINK_PREFIX}${humanUrl}\n`)).toBe(true);
    expect((await h.record(handle))?.record.state.kind).toBe('waiting');

    // No answer yet: a short wait ends as waiting, with the re-wait line.
    const early = await h.call('sess_response', { handle, revision: 1, wait_ms: 0 });
    expect(early.ok && early.interaction.state).toBe('waiting');
    expect(early.text.startsWith(REWAIT_LINE)).toBe(true);

    await h.sess.submitAnswer(humanUrl as string, approveAnswer);
    const answered = await h.ok('sess_response', { handle, revision: 1, wait_ms: 5_000 });
    expect(answered).toMatchObject({
      handle,
      revision: 1,
      state: 'answered',
      response: {
        revision: 1,
        action: 'approve',
        values: approveAnswer.values,
        verified: true,
        actorAssurance: 'link_holder',
      },
    });
    expect(answered.humanUrl).toBeUndefined();
    const eventId = answered.response?.eventId as string;
    expect((await h.record(handle))?.record.state.kind).toBe('answered');

    // A saved answer is re-confirmed and returned again.
    expect(await h.ok('sess_response', { handle, revision: 1 })).toEqual(answered);

    const publish = {
      handle,
      expected_revision: 1,
      response_event_id: eventId,
      interaction: followUpSurface,
    };
    const published = await h.ok('sess_publish', publish);
    expect(published).toEqual({ handle, revision: 2, state: 'waiting' });
    const afterPublish = await h.record(handle);
    expect(afterPublish?.record.state).toMatchObject({
      kind: 'waiting',
      revision: 2,
      surface: followUpSurface,
    });
    expect(JSON.stringify(afterPublish)).not.toContain('(edited)');

    // An identical repeat of the confirmed publish succeeds without a request.
    const publishes = h.sess.stats.requests.publish;
    expect(await h.ok('sess_publish', publish)).toEqual({ handle, revision: 2, state: 'waiting' });
    expect(h.sess.stats.requests.publish).toBe(publishes);

    await h.sess.submitAnswer(humanUrl as string, { action: 'push', values: {} });
    const second = await h.ok('sess_response', { handle, revision: 2, wait_ms: 5_000 });
    expect(second).toMatchObject({
      revision: 2,
      state: 'answered',
      response: { action: 'push', revision: 2 },
    });

    const complete = { handle, expected_revision: 2, response_event_id: second.response?.eventId };
    const completed = await h.ok('sess_complete', complete);
    expect(completed).toEqual({ handle, revision: 2, state: 'completed' });
    const done = await h.record(handle);
    expect(done?.record.state).toEqual({
      kind: 'completed',
      sessionId: sessionIdOf(h.sess, humanUrl as string),
      revision: 2,
      lastMutation: { kind: 'complete', expectedRevision: 2, responseEventId: second.response?.eventId },
    });
    // The link and the answer data are gone from the local record.
    expect(JSON.stringify(done)).not.toContain(humanUrl as string);
    expect(JSON.stringify(done)).not.toContain('receipt');

    // Repeating the confirmed complete succeeds without a request; sess_response reports completed.
    const completes = h.sess.stats.requests.complete;
    expect(await h.ok('sess_complete', complete)).toEqual(completed);
    expect(h.sess.stats.requests.complete).toBe(completes);
    expect(await h.ok('sess_response', { handle, revision: 2 })).toEqual(completed);

    const stats = h.sess.stats.of();
    expect(stats.sessionsCreated).toBe(1);
    expect(stats.revisionsPublished).toBe(1);
    expect(stats.sessionsCompleted).toBe(1);
    expect(h.sess.sessions.byUrl(humanUrl as string)?.view.status).toBe('completed');
  });
});

describe('sess_ask', () => {
  it('creates one ordinary Session from fields, never waits, and its answer comes back verified', async () => {
    h = await startHarness();
    const created = await h.ok('sess_ask', {
      question: 'When works for a call tomorrow?',
      fields: [
        { type: 'choice', name: 'slot', label: 'Time', options: ['09:00', '14:00'], required: true },
        { type: 'text', name: 'note', label: 'Note' },
      ],
    });
    expect(created).toMatchObject({ revision: 1, state: 'waiting' });
    expect(created.ask).toBeUndefined();
    expect(h.sess.stats.of().sessionsCreated).toBe(1);
    expect(h.sess.stats.requests.wait ?? 0).toBe(0);

    await h.sess.submitAnswer(created.humanUrl as string, {
      action: 'submit',
      values: { slot: '14:00', note: 'ok' },
    });
    const answered = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
    expect(answered.response).toMatchObject({ values: { slot: '14:00', note: 'ok' }, verified: true });
  });

  it('with respondents asks three people through one link and returns each verified answer', async () => {
    h = await startHarness();
    const created = await h.ok('sess_ask', {
      question: 'Which day suits you?',
      fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'], required: true }],
      respondents: { max: 3, name: true },
    });
    expect(created).toMatchObject({
      revision: 1,
      state: 'waiting',
      ask: { open: true, max: 3, started: 0, answered: 0, answers: [] },
    });
    const askUrl = created.humanUrl as string;
    expect((await h.record(created.handle))?.record.state.kind).toBe('ask_open');

    const people = ['Ana', 'Bo', 'Cy'];
    const links: string[] = [];
    for (const name of people) {
      const started = await h.sess.startRespondent(askUrl, { name });
      expect(started.humanUrl).toBeDefined();
      links.push(started.humanUrl as string);
    }
    await h.sess.submitAnswer(links[0] as string, { action: 'submit', values: { day: 'Mon' } });
    const partial = await h.ok('sess_response', { handle: created.handle, revision: 1 });
    expect(partial.state).toBe('waiting');
    expect(partial.ask).toMatchObject({ open: true, started: 3, answered: 1 });
    expect(partial.ask?.answers).toEqual([
      expect.objectContaining({
        name: 'Ana',
        values: { day: 'Mon' },
        verified: true,
        actorAssurance: 'link_holder',
      }),
    ]);

    await h.sess.submitAnswer(links[1] as string, { action: 'submit', values: { day: 'Tue' } });
    await h.sess.submitAnswer(links[2] as string, { action: 'submit', values: { day: 'Tue' } });
    const closed = await h.ok('sess_response', { handle: created.handle, revision: 1 });
    expect(closed.state).toBe('closed');
    expect(closed.ask).toMatchObject({ open: false, max: 3, started: 3, answered: 3 });
    expect(closed.ask?.answers.map((a) => a.name).sort()).toEqual(people);
    const record = await h.record(created.handle);
    expect(record?.record.state.kind).toBe('ask_closed');
    expect(JSON.stringify(record)).not.toContain(askUrl);

    // A later read of the closed Ask still returns the verified answers.
    const again = await h.ok('sess_response', { handle: created.handle, revision: 1 });
    expect(again.ask?.answers).toHaveLength(3);

    // The cap is exact: a fourth person cannot start.
    const fourth = await h.sess.startRespondent(askUrl, { name: 'Di' });
    expect(fourth.humanUrl).toBeUndefined();
  });
});

describe('expiry and lapse', () => {
  it('a link that closed for good with no answer is expired, and that is final', async () => {
    h = await startHarness();
    // Longer than 20 hours: not extendable, straight from active to expired.
    const created = await h.request(approveSurface, { expires_in: 72_001 });
    h.sess.clock.advance(72_002_000);
    const expired = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
    expect(expired).toEqual({ handle: created.handle, revision: 1, state: 'expired' });
    expect((await h.record(created.handle))?.record.state).toMatchObject({ kind: 'expired', revision: 1 });
    expect(await h.ok('sess_response', { handle: created.handle, revision: 1 })).toEqual(expired);
  });

  it('a lapsed link reports waiting, and an answer after the person asked for more time is released', async () => {
    h = await startHarness();
    const created = await h.request(approveSurface, { expires_in: 30 });
    h.sess.clock.advance(31_000);
    expect(h.sess.sessions.byUrl(created.humanUrl)?.view.status).toBe('lapsed');
    const lapsed = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 150 });
    expect(lapsed).toEqual({ handle: created.handle, revision: 1, state: 'waiting' });
    expect((await h.record(created.handle))?.record.state.kind).toBe('waiting');

    const extended = await h.sess.extend(created.humanUrl);
    expect(extended.status).toBeLessThan(400);
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const answered = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
    expect(answered.state).toBe('answered');
  });

  it('a lapsed link that reaches its horizon is expired', async () => {
    h = await startHarness();
    const created = await h.request(approveSurface, { expires_in: 30 });
    h.sess.clock.advance(86_401_000);
    const out = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 0 });
    expect(out.state).toBe('expired');
  });
});

describe('a cut wait', () => {
  it('ends as needs_resume and resumes on the same Session', async () => {
    h = await startHarness();
    const created = await h.request();
    const sessionId = sessionIdOf(h.sess, created.humanUrl);
    const controller = new AbortController();
    const pending = h.call(
      'sess_response',
      { handle: created.handle, revision: 1, wait_ms: 30_000 },
      {
        signal: controller.signal,
      },
    );
    await h.sess.whenWaiting(sessionId);
    controller.abort();
    const cut = await pending;
    expect(cut.ok && cut.interaction).toEqual({ handle: created.handle, revision: 1, state: 'needs_resume' });
    expect(cut.text.startsWith(REWAIT_LINE)).toBe(true);
    expect((await h.record(created.handle))?.record.state.kind).toBe('waiting');

    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const resumed = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
    expect(resumed.state).toBe('answered');
    expect(h.sess.stats.of().sessionsCreated).toBe(1);
    expect(h.sess.stats.requests.create).toBe(1);
  });

  it('an already aborted signal ends the wait at once as needs_resume', async () => {
    h = await startHarness();
    const created = await h.request();
    const out = await h.ok(
      'sess_response',
      { handle: created.handle, revision: 1 },
      { signal: AbortSignal.abort() },
    );
    expect(out.state).toBe('needs_resume');
  });

  it('the wait is bounded by the engine ceiling, not by wait_ms alone', async () => {
    h = await startHarness({ engine: { maxWaitMs: 100 } });
    const created = await h.request();
    const started = Date.now();
    const out = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 45_000 });
    expect(out.state).toBe('waiting');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('a cancelled call', () => {
  it('starts no create, publish or complete it would never report', async () => {
    h = await startHarness();
    const cancelled = { signal: AbortSignal.abort() };
    const create = await h.call('sess_request', { interaction: approveSurface }, cancelled);
    expect(!create.ok && create.error).toMatchObject({
      code: 'SESS_UNAVAILABLE',
      retryable: true,
      reason: 'cancelled',
    });
    expect(await h.store().countUnfinished()).toBe(0);
    expect(h.sess.stats.requests.create ?? 0).toBe(0);

    const { created, complete } = await h.answered();
    const refused = await h.call('sess_complete', complete, cancelled);
    expect(!refused.ok && refused.error.code).toBe('SESS_UNAVAILABLE');
    expect((await h.record(created.handle))?.record.state.kind).toBe('answered');
    expect(h.sess.stats.requests.complete ?? 0).toBe(0);
  });

  it('never abandons a mutation that was already saved', async () => {
    h = await startHarness();
    const { complete } = await h.answered();
    h.sess.faults.fail('complete', 500);
    expect((await h.fail('sess_complete', complete)).code).toBe('OUTCOME_UNKNOWN');
    // The saved request is replayed even on a cancelled call: it was already decided.
    const replayed = await h.call('sess_complete', complete, { signal: AbortSignal.abort() });
    expect(replayed.ok && replayed.interaction.state).toBe('completed');
  });
});

describe('concurrent calls on one handle', () => {
  it('release one answer; a call that lost the race reports a conflict, never another answer', async () => {
    h = await startHarness();
    const created = await h.request();
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const args = { handle: created.handle, revision: 1, wait_ms: 5_000 };
    const outcomes = await Promise.all([
      h.call('sess_response', args),
      h.call('sess_response', args),
      h.call('sess_response', args),
    ]);
    const answered = outcomes.filter((o) => o.ok);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    for (const o of answered) expect(o.ok && o.interaction.response?.values).toEqual(approveAnswer.values);
    for (const o of outcomes.filter((x) => !x.ok)) {
      expect(!o.ok && o.error).toMatchObject({ code: 'INVALID_STATE', reason: 'stale_version' });
    }
    expect((await h.record(created.handle))?.record.state.kind).toBe('answered');
  });

  it('publish once when the same publish runs twice at the same time', async () => {
    h = await startHarness();
    const { created, publish } = await h.answered();
    const outcomes = await Promise.all([h.call('sess_publish', publish), h.call('sess_publish', publish)]);
    expect(outcomes.some((o) => o.ok && o.interaction.revision === 2)).toBe(true);
    // The loser either saw the winner's record or lost the compare-and-set: nothing more was sent.
    expect(h.sess.stats.of().revisionsPublished).toBe(1);
    expect(await h.ok('sess_publish', publish)).toEqual({
      handle: created.handle,
      revision: 2,
      state: 'waiting',
    });
  });
});

describe('progress', () => {
  it('sends increasing progress notifications during a long wait and stops after it', async () => {
    h = await startHarness({ engine: { progressIntervalMs: 40 } });
    const created = await h.request();
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const out = await h.ok(
      'sess_response',
      { handle: created.handle, revision: 1, wait_ms: 400 },
      { progress: (p) => void seen.push(p) },
    );
    expect(out.state).toBe('waiting');
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++)
      expect(seen[i]?.progress).toBeGreaterThan(seen[i - 1]?.progress as number);
    expect(seen.every((p) => p.total === 400 && typeof p.message === 'string')).toBe(true);
    const count = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(seen.length).toBe(count);
  });

  it('a failing progress sink never ends the wait', async () => {
    h = await startHarness({ engine: { progressIntervalMs: 20 } });
    const created = await h.request();
    let calls = 0;
    const out = await h.ok(
      'sess_response',
      { handle: created.handle, revision: 1, wait_ms: 150 },
      {
        progress: () => {
          calls += 1;
          if (calls % 2 === 0) throw new Error('sink broke');
          return Promise.reject(new Error('sink broke'));
        },
      },
    );
    expect(out.state).toBe('waiting');
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});
