/**
 * `sess_withdraw` end to end over the local Sess runtime: the full state × `sess_withdraw` table
 * (every row, with the runtime's request counters proving "nothing was sent" where it says so),
 * the write-ahead protocol (a lost outcome, an identical repeat, a different one), Sess's refusals
 * that leave the record as it was (an answer first: `ANSWER_ARRIVED`; no withdrawal offered:
 * `WITHDRAW_UNAVAILABLE`; expired), an Ask's close, and what `sess_response`, `sess_publish` and
 * `sess_complete` answer around a withdraw.
 */
import { describe, expect, it } from 'vitest';
import type { DurableStep } from '../../src/core/engine/types.js';
import type { InteractionState } from '../../src/core/model/record.js';
import { STEP_NAMES } from '../support/durable-steps.js';
import { answerStatus } from '../support/local-sess.js';
import { approveAnswer, approveSurface, type Harness, sessionIdOf, useHarnessLifecycle } from './harness.js';

const harnesses = useHarnessLifecycle();

const REASON = 'Sorted out in chat; no answer needed.';

/** API calls the runtime received per endpoint, so a test can prove a call sent nothing. */
function requests(h: Harness): Record<string, number> {
  return { ...h.sess.stats.requests };
}

/** The state of a handle's record. */
async function stateOf(h: Harness, handle: string): Promise<InteractionState> {
  const found = await h.record(handle);
  if (found === undefined) throw new Error('no record');
  return found.record.state;
}

/** Calls `run` and proves the runtime received no API call meanwhile. */
async function sendsNothing<T>(h: Harness, run: () => Promise<T>): Promise<T> {
  const before = requests(h);
  const out = await run();
  expect(requests(h)).toEqual(before);
  return out;
}

/** A `sess_ask` with respondents, and its link. */
async function askOf(h: Harness, max = 3) {
  const created = await h.ok('sess_ask', {
    question: 'Which day suits you?',
    fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'], required: true }],
    respondents: { max },
  });
  return { handle: created.handle, askUrl: created.humanUrl as string };
}

describe('sess_withdraw of a waiting Session', () => {
  it('withdraws it: the page says so with the reason and refuses an answer; the record is withdrawn and finished', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const unfinished = await h.store().countUnfinished();
    const before = requests(h);
    const out = await h.ok('sess_withdraw', { handle: created.handle, expected_revision: 1, reason: REASON });
    expect(out).toEqual({ handle: created.handle, revision: 1, state: 'withdrawn' });
    expect(h.sess.stats.requests.withdraw).toBe((before.withdraw ?? 0) + 1);

    const snapshot = h.sess.sessions.byUrl(created.humanUrl);
    expect(snapshot?.view.status).toBe('withdrawn');
    expect(h.sess.stats.of().sessionsWithdrawn).toBe(1);
    const page = await h.sess.openPage(created.humanUrl);
    expect(page.status).toBe(410);
    expect(page.html).toContain('This question was withdrawn.');
    expect(page.html).toContain('Sorted out in chat');
    const submit = await h.sess.submitAnswer(created.humanUrl, approveAnswer, { expectStatus: 410 });
    expect(submit.status).toBe(410);
    expect(h.sess.sessions.byUrl(created.humanUrl)?.view.responses).toEqual([]);

    const state = await stateOf(h, created.handle);
    expect(state).toEqual({
      kind: 'withdrawn',
      sessionId: sessionIdOf(h.sess, created.humanUrl),
      revision: 1,
      withdrawal: { expectedRevision: 1, reasonDigest: expect.stringMatching(/^sha256:/) },
    });
    // The link, the Surface and the reason are gone from the record; the title stays for listings.
    const text = JSON.stringify((await h.record(created.handle))?.record.state);
    expect(text).not.toContain(created.humanUrl);
    expect(text).not.toContain('Sorted out');
    expect(await h.store().countUnfinished()).toBe(unfinished - 1);

    // sess_response reads it as withdrawn, never with an answer, and sends nothing.
    const read = await sendsNothing(h, () => h.ok('sess_response', { handle: created.handle, revision: 1 }));
    expect(read).toEqual({ handle: created.handle, revision: 1, state: 'withdrawn' });
  });

  it('withdraws without a reason, and after a follow-up at the current revision', async () => {
    const h = await harnesses.start();
    const { created, publish } = await h.answered();
    await h.ok('sess_publish', publish);
    const out = await h.ok('sess_withdraw', { handle: created.handle, expected_revision: 2 });
    expect(out).toEqual({ handle: created.handle, revision: 2, state: 'withdrawn' });
    expect(await stateOf(h, created.handle)).toMatchObject({ kind: 'withdrawn', revision: 2 });
    expect((await h.sess.openPage(created.humanUrl)).html).toContain('This question was withdrawn.');
  });

  it('a repeat with the same input succeeds without a request; another input is INVALID_STATE naming withdrawn', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const args = { handle: created.handle, expected_revision: 1, reason: REASON };
    await h.ok('sess_withdraw', args);
    const again = await sendsNothing(h, () => h.ok('sess_withdraw', args));
    expect(again).toEqual({ handle: created.handle, revision: 1, state: 'withdrawn' });
    for (const other of [
      { handle: created.handle, expected_revision: 1, reason: 'Another reason.' },
      { handle: created.handle, expected_revision: 1 },
      { handle: created.handle, expected_revision: 2, reason: REASON },
    ]) {
      const error = await sendsNothing(h, () => h.fail('sess_withdraw', other));
      expect(error).toMatchObject({ code: 'INVALID_STATE', state: 'withdrawn', retryable: false });
      expect(error.message).toContain('state withdrawn');
    }
    expect(h.sess.stats.of().sessionsWithdrawn).toBe(1);
  });

  it('another expected_revision is REVISION_MISMATCH and sends nothing', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const error = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: created.handle, expected_revision: 2 }),
    );
    expect(error).toMatchObject({ code: 'REVISION_MISMATCH', state: 'waiting' });
    expect((await stateOf(h, created.handle)).kind).toBe('waiting');
  });

  it('a reason over 160 code points, or with U+0000, is INVALID_ARGUMENTS at /reason and sends nothing', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const long = await sendsNothing(h, () =>
      h.fail('sess_withdraw', {
        handle: created.handle,
        expected_revision: 1,
        reason: '\u{1F600}'.repeat(161),
      }),
    );
    expect(long).toEqual({
      code: 'INVALID_ARGUMENTS',
      message: '/reason is 161 characters; the limit is 160. Shorten it to at most 160 characters.',
      retryable: false,
      field: '/reason',
      limit: 160,
      length: 161,
    });
    const nul = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1, reason: 'a\u0000' }),
    );
    expect(nul).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/reason' });
    const empty = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1, reason: '' }),
    );
    expect(empty).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/reason' });
    expect(h.sess.stats.requests.withdraw ?? 0).toBe(0);
  });

  it('a call cancelled before anything was saved saves and sends nothing', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const controller = new AbortController();
    controller.abort();
    const error = await sendsNothing(h, () =>
      h.fail(
        'sess_withdraw',
        { handle: created.handle, expected_revision: 1 },
        { signal: controller.signal },
      ),
    );
    expect(error).toMatchObject({ code: 'SESS_UNAVAILABLE', reason: 'cancelled' });
    expect((await stateOf(h, created.handle)).kind).toBe('waiting');
  });

  it('reaches the durable steps withdraw.* in the order publish and complete use', async () => {
    const steps: DurableStep[] = [];
    const h = await harnesses.start({ engine: { hooks: { onStep: (s) => void steps.push(s) } } });
    const created = await h.request();
    steps.length = 0;
    await h.ok('sess_withdraw', { handle: created.handle, expected_revision: 1 });
    // The `withdrawn` event is saved with the record: its step comes right after that save.
    const withdrawSteps = STEP_NAMES.map((s) => `withdraw.${s}`);
    expect(steps).toEqual([...withdrawSteps.slice(0, -1), 'event.after_state_saved', withdrawSteps.at(-1)]);
  });
});

describe('the state × sess_withdraw table', () => {
  it('answered: refused locally with ANSWER_ARRIVED (read it with sess_response); nothing sent', async () => {
    const h = await harnesses.start();
    const { created } = await h.answered();
    const before = await stateOf(h, created.handle);
    const error = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 }),
    );
    expect(error).toMatchObject({ code: 'ANSWER_ARRIVED', state: 'answered', retryable: false });
    expect(error.message).toMatch(/sess_response.*sess_complete/);
    expect(await stateOf(h, created.handle)).toEqual(before);
  });

  it('publish_pending and complete_pending: MUTATION_PENDING; nothing sent', async () => {
    const h = await harnesses.start();
    for (const tool of ['sess_publish', 'sess_complete'] as const) {
      const { created, publish, complete } = await h.answered();
      h.sess.faults.drop(tool === 'sess_publish' ? 'publish' : 'complete');
      expect(await h.fail(tool, tool === 'sess_publish' ? publish : complete)).toMatchObject({
        code: 'OUTCOME_UNKNOWN',
      });
      const pending = tool === 'sess_publish' ? 'publish_pending' : 'complete_pending';
      expect((await stateOf(h, created.handle)).kind).toBe(pending);
      const error = await sendsNothing(h, () =>
        h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 }),
      );
      expect(error).toMatchObject({ code: 'MUTATION_PENDING', state: pending });
      expect(error.message).toContain(tool);
    }
  });

  it('create_intent and create_unknown: CREATE_OUTCOME_UNKNOWN; nothing sent', async () => {
    const h = await harnesses.start();
    const crashing = h.makeEngine({
      hooks: {
        onStep: (step) => {
          if (step === 'create.after_intent_saved') throw new Error('crash');
        },
      },
    });
    await crashing.call('sess_request', { interaction: approveSurface });
    h.sess.faults.drop('create');
    await h.fail('sess_request', { interaction: approveSurface });
    const records = await h.store().listUnfinished();
    const kinds = records.map((r) => r.record.state.kind).sort();
    expect(kinds).toEqual(['create_intent', 'create_unknown']);
    for (const { record } of records) {
      const error = await sendsNothing(h, () =>
        h.fail('sess_withdraw', { handle: record.handle, expected_revision: 1 }),
      );
      expect(error).toMatchObject({ code: 'CREATE_OUTCOME_UNKNOWN', state: record.state.kind });
    }
  });

  it('blocked: the blocked code; nothing sent', async () => {
    const h = await harnesses.start();
    const { created, publish } = await h.answered();
    h.sess.faults.fail('publish', 422);
    expect(await h.fail('sess_publish', publish)).toMatchObject({ code: 'MUTATION_REJECTED' });
    expect((await stateOf(h, created.handle)).kind).toBe('blocked');
    const error = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 }),
    );
    expect(error).toMatchObject({ code: 'MUTATION_REJECTED', state: 'blocked' });
  });

  it('completed and expired: INVALID_STATE naming the state; nothing sent', async () => {
    const h = await harnesses.start();
    const { created, complete } = await h.answered();
    await h.ok('sess_complete', complete);
    const done = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 }),
    );
    expect(done).toMatchObject({ code: 'INVALID_STATE', state: 'completed', reason: 'completed' });
    expect(done.message).toContain('state completed');

    const late = await h.request(approveSurface, { expires_in: 72_001 });
    h.sess.clock.advance(72_002_000);
    expect((await h.ok('sess_response', { handle: late.handle, revision: 1, wait_ms: 0 })).state).toBe(
      'expired',
    );
    const expired = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle: late.handle, expected_revision: 1 }),
    );
    expect(expired).toMatchObject({ code: 'INVALID_STATE', state: 'expired', reason: 'expired' });
    expect(expired.message).toContain('state expired');
  });

  it('withdraw_pending: the identical call replays the saved request; another is PENDING_MUTATION_DIFFERS with nothing sent', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const args = { handle: created.handle, expected_revision: 1, reason: REASON };
    h.sess.faults.commitThenDrop('withdraw');
    const lost = await h.fail('sess_withdraw', args);
    expect(lost).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: true });
    expect(lost.message).toContain('sess_withdraw');
    const pending = await stateOf(h, created.handle);
    expect(pending).toMatchObject({
      kind: 'withdraw_pending',
      request: { expectedRevision: 1, reason: REASON },
    });

    for (const other of [
      { handle: created.handle, expected_revision: 1 },
      { handle: created.handle, expected_revision: 1, reason: 'Something else.' },
      { handle: created.handle, expected_revision: 2, reason: REASON },
    ]) {
      const error = await sendsNothing(h, () => h.fail('sess_withdraw', other));
      expect(error).toMatchObject({ code: 'PENDING_MUTATION_DIFFERS', state: 'withdraw_pending' });
    }
    // The other tools wait for that repeat, and send nothing.
    const read = await sendsNothing(h, () =>
      h.fail('sess_response', { handle: created.handle, revision: 1 }),
    );
    expect(read).toMatchObject({ code: 'MUTATION_PENDING', state: 'withdraw_pending' });
    expect(read.message).toContain('Repeat that identical sess_withdraw call');
    const complete = await sendsNothing(h, () =>
      h.fail('sess_complete', { handle: created.handle, expected_revision: 1, response_event_id: 'evt_x' }),
    );
    expect(complete).toMatchObject({ code: 'MUTATION_PENDING', state: 'withdraw_pending' });

    const before = h.sess.stats.requests.withdraw ?? 0;
    const replayed = await h.ok('sess_withdraw', args);
    expect(replayed).toEqual({ handle: created.handle, revision: 1, state: 'withdrawn' });
    expect(h.sess.stats.requests.withdraw).toBe(before + 1);
    // The replay used the saved idempotency key: Sess withdrew once.
    expect(h.sess.stats.of().sessionsWithdrawn).toBe(1);
    expect((await stateOf(h, created.handle)).kind).toBe('withdrawn');
  });

  it('withdrawn: sess_publish and sess_complete are INVALID_STATE withdrawn; nothing sent', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    await h.ok('sess_withdraw', { handle: created.handle, expected_revision: 1 });
    for (const tool of ['sess_publish', 'sess_complete'] as const) {
      const args: Record<string, unknown> = {
        handle: created.handle,
        expected_revision: 1,
        response_event_id: 'evt_x',
      };
      if (tool === 'sess_publish') args.interaction = approveSurface;
      const error = await sendsNothing(h, () => h.fail(tool, args));
      expect(error).toMatchObject({ code: 'INVALID_STATE', state: 'withdrawn', reason: 'withdrawn' });
    }
  });
});

describe('Sess refuses the withdraw: the record is left as it was', () => {
  it('an answer at expected_revision first (409): ANSWER_ARRIVED, and sess_response returns that answer', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const before = await stateOf(h, created.handle);
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const error = await h.fail('sess_withdraw', {
      handle: created.handle,
      expected_revision: 1,
      reason: REASON,
    });
    expect(error).toMatchObject({ code: 'ANSWER_ARRIVED', state: 'waiting', retryable: false });
    expect(error.message).toContain('call sess_response, which returns it');
    expect(await stateOf(h, created.handle)).toEqual(before);
    const answered = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
    expect(answered).toMatchObject({ state: 'answered', response: { values: approveAnswer.values } });
    expect(h.sess.stats.of().sessionsWithdrawn).toBe(0);
  });

  it('after a follow-up, the record keeps its last confirmed publish', async () => {
    const h = await harnesses.start();
    const { created, publish } = await h.answered();
    await h.ok('sess_publish', publish);
    const before = await stateOf(h, created.handle);
    expect(before).toMatchObject({ kind: 'waiting', lastMutation: { kind: 'publish' } });
    expect((await h.sess.submitAnswer(created.humanUrl, { action: 'push', values: {} })).status).toBe(303);
    await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 2 });
    expect(await stateOf(h, created.handle)).toEqual(before);
    // An identical repeat of the confirmed publish is still recognised.
    expect((await h.ok('sess_publish', publish)).state).toBe('waiting');
  });

  it.each([404, 405])(
    'a Sess without the endpoint (%i) while the Session exists: WITHDRAW_UNAVAILABLE, never blocked',
    async (status) => {
      const h = await harnesses.start();
      const created = await h.request();
      const before = await stateOf(h, created.handle);
      const reads = h.sess.stats.requests.get ?? 0;
      h.sess.faults.fail('withdraw', status);
      const error = await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 });
      expect(error).toMatchObject({
        code: 'WITHDRAW_UNAVAILABLE',
        retryable: false,
        reason: 'withdraw_not_offered',
        state: 'waiting',
      });
      // One read told it from an unknown Session.
      expect(h.sess.stats.requests.get).toBe(reads + 1);
      expect(await stateOf(h, created.handle)).toEqual(before);
      expect(h.sess.sessions.byUrl(created.humanUrl)?.view.status).toBe('active');
      // The question stays open and an answer is released as usual.
      await h.sess.submitAnswer(created.humanUrl, approveAnswer);
      expect(
        (await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 })).state,
      ).toBe('answered');
    },
  );

  it('404 on the endpoint and on the read: the Session is unknown, so the record needs its owner', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    h.sess.faults.fail('withdraw', 404);
    h.sess.faults.fail('get', 404);
    const error = await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 });
    expect(error).toMatchObject({ code: 'RECOVERY_BLOCKED', reason: 'session_not_found' });
    expect(await stateOf(h, created.handle)).toMatchObject({ kind: 'blocked', previous: 'withdraw_pending' });
  });

  it('a failed read after 404 keeps the request saved; the identical repeat reconciles', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    h.sess.faults.fail('withdraw', 404);
    h.sess.faults.fail('get', 503);
    const error = await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 });
    expect(error).toMatchObject({ code: 'SESS_UNAVAILABLE' });
    expect((await stateOf(h, created.handle)).kind).toBe('withdraw_pending');
    expect((await h.ok('sess_withdraw', { handle: created.handle, expected_revision: 1 })).state).toBe(
      'withdrawn',
    );
  });

  it('410 expired: INVALID_STATE expired, the record as it was (sess_response then records the expiry)', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const before = await stateOf(h, created.handle);
    h.sess.faults.fail('withdraw', 410);
    const error = await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 });
    expect(error).toMatchObject({ code: 'INVALID_STATE', reason: 'expired', state: 'waiting' });
    expect(await stateOf(h, created.handle)).toEqual(before);
  });

  it('another refusal (422): MUTATION_REJECTED without blocking; the record as it was', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    const before = await stateOf(h, created.handle);
    h.sess.faults.fail('withdraw', 422);
    const error = await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 });
    expect(error).toMatchObject({ code: 'MUTATION_REJECTED', state: 'waiting', reason: 'invalid_request' });
    expect(await stateOf(h, created.handle)).toEqual(before);
  });

  it.each([
    ['a dropped connection', 'OUTCOME_UNKNOWN', (h: Harness) => h.sess.faults.drop('withdraw')],
    ['503 unavailable', 'SESS_UNAVAILABLE', (h: Harness) => h.sess.faults.fail('withdraw', 503)],
    ['429 rate limited', 'SESS_UNAVAILABLE', (h: Harness) => h.sess.faults.fail('withdraw', 429)],
    [
      '500 after the commit',
      'OUTCOME_UNKNOWN',
      (h: Harness) => h.sess.faults.commitThenFail('withdraw', 500),
    ],
  ] as const)(
    '%s keeps the request saved (%s); the identical repeat reconciles',
    async (_name, code, inject) => {
      const h = await harnesses.start();
      const created = await h.request();
      inject(h);
      expect(await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1 })).toMatchObject({
        code,
      });
      expect((await stateOf(h, created.handle)).kind).toBe('withdraw_pending');
      expect((await h.ok('sess_withdraw', { handle: created.handle, expected_revision: 1 })).state).toBe(
        'withdrawn',
      );
      expect(h.sess.stats.of().sessionsWithdrawn).toBe(1);
    },
  );
});

describe('sess_withdraw of an Ask', () => {
  it('closes it: no one new starts, unanswered pages are withdrawn, answers given stay readable (closed)', async () => {
    const h = await harnesses.start();
    const { handle, askUrl } = await askOf(h);
    const first = await h.sess.startRespondent(askUrl);
    const second = await h.sess.startRespondent(askUrl);
    await h.sess.submitAnswer(first.humanUrl as string, { action: 'submit', values: { day: 'Mon' } });
    const unfinished = await h.store().countUnfinished();

    const out = await h.ok('sess_withdraw', { handle, expected_revision: 1, reason: REASON });
    expect(out).toEqual({ handle, revision: 1, state: 'closed' });
    expect(h.sess.stats.of().asksClosed).toBe(1);
    expect((await h.sess.startRespondent(askUrl)).humanUrl).toBeUndefined();
    const page = await h.sess.openPage(second.humanUrl as string);
    expect(page.status).toBe(410);
    expect(page.html).toContain('This question was withdrawn.');
    expect(
      (
        await h.sess.submitAnswer(
          second.humanUrl as string,
          { action: 'submit', values: { day: 'Tue' } },
          { expectStatus: 410 },
        )
      ).status,
    ).toBe(410);

    expect(await stateOf(h, handle)).toMatchObject({
      kind: 'ask_closed',
      withdrawal: { expectedRevision: 1, reasonDigest: expect.stringMatching(/^sha256:/) },
    });
    expect(JSON.stringify(await stateOf(h, handle))).not.toContain(askUrl);
    expect(await h.store().countUnfinished()).toBe(unfinished - 1);

    const read = await h.ok('sess_response', { handle, revision: 1 });
    expect(read.state).toBe('closed');
    expect(read.ask).toMatchObject({ open: false, answered: 1 });
    expect(read.ask?.answers).toEqual([expect.objectContaining({ values: { day: 'Mon' }, verified: true })]);
  });

  it('expected_revision must be 1; a repeat with the same input succeeds, another is INVALID_STATE closed', async () => {
    const h = await harnesses.start();
    const { handle } = await askOf(h);
    expect(
      await sendsNothing(h, () => h.fail('sess_withdraw', { handle, expected_revision: 2 })),
    ).toMatchObject({
      code: 'REVISION_MISMATCH',
      state: 'ask_open',
    });
    await h.ok('sess_withdraw', { handle, expected_revision: 1 });
    expect(await sendsNothing(h, () => h.ok('sess_withdraw', { handle, expected_revision: 1 }))).toEqual({
      handle,
      revision: 1,
      state: 'closed',
    });
    const other = await sendsNothing(h, () =>
      h.fail('sess_withdraw', { handle, expected_revision: 1, reason: 'x' }),
    );
    expect(other).toMatchObject({ code: 'INVALID_STATE', state: 'ask_closed', reason: 'closed' });
    expect(other.message).toContain('state closed');
  });

  it('an Ask that closed by itself (full): INVALID_STATE closed; nothing sent', async () => {
    const h = await harnesses.start();
    const { handle, askUrl } = await askOf(h, 1);
    const only = await h.sess.startRespondent(askUrl);
    await h.sess.submitAnswer(only.humanUrl as string, { action: 'submit', values: { day: 'Mon' } });
    expect((await h.ok('sess_response', { handle, revision: 1 })).state).toBe('closed');
    const error = await sendsNothing(h, () => h.fail('sess_withdraw', { handle, expected_revision: 1 }));
    expect(error).toMatchObject({ code: 'INVALID_STATE', state: 'ask_closed' });
  });

  it('a lost close keeps it saved; sess_response reads the answers meanwhile; the identical repeat closes it', async () => {
    const h = await harnesses.start();
    const { handle, askUrl } = await askOf(h);
    const first = await h.sess.startRespondent(askUrl);
    await h.sess.submitAnswer(first.humanUrl as string, { action: 'submit', values: { day: 'Tue' } });
    h.sess.faults.commitThenDrop('closeAsk');
    expect(await h.fail('sess_withdraw', { handle, expected_revision: 1 })).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
    });
    expect((await stateOf(h, handle)).kind).toBe('ask_close_pending');

    const read = await h.ok('sess_response', { handle, revision: 1 });
    expect(read.ask?.answers).toEqual([expect.objectContaining({ values: { day: 'Tue' } })]);
    // Reading does not settle the saved close: only its identical repeat does.
    expect((await stateOf(h, handle)).kind).toBe('ask_close_pending');
    expect(
      await sendsNothing(h, () => h.fail('sess_withdraw', { handle, expected_revision: 1, reason: 'x' })),
    ).toMatchObject({
      code: 'PENDING_MUTATION_DIFFERS',
      state: 'ask_close_pending',
    });
    expect(await h.ok('sess_withdraw', { handle, expected_revision: 1 })).toEqual({
      handle,
      revision: 1,
      state: 'closed',
    });
    expect(h.sess.stats.of().asksClosed).toBe(1);
    expect((await stateOf(h, handle)).kind).toBe('ask_closed');
  });

  it('a Sess without the close endpoint: WITHDRAW_UNAVAILABLE, the Ask stays open', async () => {
    const h = await harnesses.start();
    const { handle } = await askOf(h);
    const before = await stateOf(h, handle);
    h.sess.faults.fail('closeAsk', 405);
    const error = await h.fail('sess_withdraw', { handle, expected_revision: 1 });
    expect(error).toMatchObject({ code: 'WITHDRAW_UNAVAILABLE', state: 'ask_open' });
    expect(await stateOf(h, handle)).toEqual(before);
  });

  it('publish and complete refuse an Ask whose close is saved', async () => {
    const h = await harnesses.start();
    const { handle } = await askOf(h);
    h.sess.faults.drop('closeAsk');
    await h.fail('sess_withdraw', { handle, expected_revision: 1 });
    const error = await sendsNothing(h, () =>
      h.fail('sess_complete', { handle, expected_revision: 1, response_event_id: 'evt_x' }),
    );
    expect(error).toMatchObject({ code: 'INVALID_STATE', reason: 'ask_handle', state: 'ask_close_pending' });
  });
});

describe('a crash at every durable step of a withdraw', () => {
  it.each(STEP_NAMES)(
    'withdraw.%s: a fresh engine and the identical call end it once, and an answer given meanwhile is never lost',
    async (step) => {
      const h = await harnesses.start();
      const created = await h.request();
      const args = { handle: created.handle, expected_revision: 1, reason: REASON };
      const crashing = h.makeEngine({
        hooks: {
          onStep: (name) => {
            if (name === `withdraw.${step}`) throw new Error(`crash at ${name}`);
          },
        },
      });
      expect((await crashing.call('sess_withdraw', args)).isError).toBe(true);
      // The in-flight request of the crashed call may still land: let it.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const submitted = await answerStatus(h.sess, created.humanUrl, approveAnswer);
      const repeat = await h.call('sess_withdraw', args);
      const snapshot = h.sess.sessions.byUrl(created.humanUrl);
      if (repeat.ok) {
        expect(repeat.interaction.state).toBe('withdrawn');
        expect(submitted).toBe(410);
        expect(snapshot?.view.responses).toEqual([]);
        expect(h.sess.stats.of().sessionsWithdrawn).toBe(1);
        expect((await stateOf(h, created.handle)).kind).toBe('withdrawn');
      } else {
        expect(repeat.error.code).toBe('ANSWER_ARRIVED');
        expect(submitted).toBe(303);
        expect(h.sess.stats.of().sessionsWithdrawn).toBe(0);
        const read = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
        expect(read).toMatchObject({ state: 'answered', response: { values: approveAnswer.values } });
      }
      // Before the intent was saved nothing was sent: the person's answer came first.
      if (step === 'before_intent_saved' || step === 'after_intent_saved') expect(repeat.ok).toBe(false);
      // Once Sess confirmed, the answer was refused and the repeat only records it.
      if (step === 'after_response' || step === 'before_record_saved' || step === 'after_record_saved') {
        expect(repeat.ok).toBe(true);
      }
    },
  );
});

describe('on the file store, across a restart', () => {
  it('a saved withdraw survives the restart and its identical repeat reconciles; the withdrawn record reads as withdrawn', async () => {
    const { stores, reopen } = await harnesses.fileStore();
    const h = await harnesses.start({ stores });
    const created = await h.request();
    const args = { handle: created.handle, expected_revision: 1, reason: REASON };
    h.sess.faults.commitThenDrop('withdraw');
    expect(await h.fail('sess_withdraw', args)).toMatchObject({ code: 'OUTCOME_UNKNOWN' });
    h.stores = reopen();
    h.engine = h.makeEngine();
    expect((await stateOf(h, created.handle)).kind).toBe('withdraw_pending');
    expect(await h.ok('sess_withdraw', args)).toEqual({
      handle: created.handle,
      revision: 1,
      state: 'withdrawn',
    });
    h.stores = reopen();
    h.engine = h.makeEngine();
    expect(await h.ok('sess_response', { handle: created.handle, revision: 1 })).toEqual({
      handle: created.handle,
      revision: 1,
      state: 'withdrawn',
    });
    expect(await h.ok('sess_withdraw', args)).toEqual({
      handle: created.handle,
      revision: 1,
      state: 'withdrawn',
    });
    expect(h.sess.stats.of().sessionsWithdrawn).toBe(1);
    expect(await h.store().countUnfinished()).toBe(0);
  });
});

describe('what a withdraw never does', () => {
  it('puts no reason, link or handle in diagnostics', async () => {
    const h = await harnesses.start();
    const created = await h.request();
    h.sess.faults.fail('withdraw', 404);
    await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1, reason: REASON });
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    await h.fail('sess_withdraw', { handle: created.handle, expected_revision: 1, reason: REASON });
    const text = JSON.stringify(h.diagnostics);
    for (const secret of [REASON, created.handle, created.humanUrl]) expect(text).not.toContain(secret);
    expect(h.diagnostics.map((d) => d.event)).toEqual(
      expect.arrayContaining(['withdraw_not_offered', 'withdraw_refused']),
    );
  });
});
