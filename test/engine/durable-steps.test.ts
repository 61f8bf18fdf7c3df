/**
 * The write-ahead order, step by step: the test hook is called at every named durable step in
 * order, and a "crash" at any step (the hook throws; a fresh engine over the same store and
 * runtime takes over) never creates a second Session, never applies a publish or complete twice,
 * and always leaves a record the next call can act on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DurableStep } from '../../src/core/engine/types.js';
import { STEP_NAMES } from '../support/durable-steps.js';
import { approveSurface, type Harness, sessionIdOf, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const STEPS = STEP_NAMES;

class Crash extends Error {}

function crashAt(step: DurableStep) {
  return {
    onStep: (name: DurableStep) => {
      if (name === step) throw new Crash(`crash at ${name}`);
    },
  };
}

describe('durable steps', () => {
  it('are reported in order for create, publish and complete', async () => {
    const steps: DurableStep[] = [];
    h = await startHarness({ engine: { hooks: { onStep: (s) => void steps.push(s) } } });
    const { created, publish } = await h.answered();
    await h.ok('sess_publish', publish);
    await h.sess.submitAnswer(created.humanUrl, { action: 'push', values: {} });
    const second = await h.ok('sess_response', { handle: created.handle, revision: 2, wait_ms: 5_000 });
    await h.ok('sess_complete', {
      handle: created.handle,
      expected_revision: 2,
      response_event_id: second.response?.eventId,
    });
    // Each verified answer saved (its `answered` event with it) is the event step, between them.
    const of = (op: 'create' | 'publish' | 'complete') => STEPS.map((s) => `${op}.${s}` as DurableStep);
    expect(steps).toEqual([
      ...of('create'),
      'event.after_state_saved',
      ...of('publish'),
      'event.after_state_saved',
      ...of('complete'),
    ]);
  });

  it.each(STEPS)('a crash at create.%s never leads to a second Session', async (step) => {
    h = await startHarness();
    const crashing = h.makeEngine({ hooks: crashAt(`create.${step}`) });
    const result = await crashing.call('sess_request', { interaction: approveSurface });
    expect(result.isError).toBe(true);
    const sent = step !== 'before_intent_saved' && step !== 'after_intent_saved';
    if (sent) await expect.poll(() => h?.sess.stats.of().sessionsCreated).toBe(1);
    const records = await h.store().listUnfinished();
    if (step === 'before_intent_saved') {
      expect(records).toHaveLength(0);
    } else {
      expect(records).toHaveLength(1);
      const record = records[0]?.record;
      // Until the record is saved as waiting, the handle answers CREATE_OUTCOME_UNKNOWN: never a retry.
      const expected = step === 'after_record_saved' ? 'waiting' : 'create_intent';
      expect(record?.state.kind).toBe(expected);
      const next = await h.call('sess_response', { handle: record?.handle, revision: 1, wait_ms: 0 });
      if (expected === 'waiting') expect(next.ok && next.interaction.state).toBe('waiting');
      else expect(!next.ok && next.error.code).toBe('CREATE_OUTCOME_UNKNOWN');
    }
    expect(h.sess.stats.requests.create ?? 0).toBe(sent ? 1 : 0);
  });

  it.each(STEPS)(
    'a crash at publish.%s is reconciled by the identical call, published once',
    async (step) => {
      h = await startHarness();
      const { created, publish } = await h.answered();
      const crashing = h.makeEngine({ hooks: crashAt(`publish.${step}`) });
      expect((await crashing.call('sess_publish', publish)).isError).toBe(true);
      const sid = sessionIdOf(h.sess, created.humanUrl);
      if (!['before_intent_saved', 'after_intent_saved'].includes(step)) {
        await expect.poll(() => h?.sess.sessions.get(sid)?.view.revision).toBe(2);
      }
      // A restarted server: the identical call finishes what the crashed one started.
      expect(await h.ok('sess_publish', publish)).toEqual({
        handle: created.handle,
        revision: 2,
        state: 'waiting',
      });
      expect(h.sess.stats.of().revisionsPublished).toBe(1);
      expect((await h.record(created.handle))?.record.state).toMatchObject({ kind: 'waiting', revision: 2 });
    },
  );

  it.each(STEPS)(
    'a crash at complete.%s is reconciled by the identical call, completed once',
    async (step) => {
      h = await startHarness();
      const { created, complete } = await h.answered();
      const crashing = h.makeEngine({ hooks: crashAt(`complete.${step}`) });
      expect((await crashing.call('sess_complete', complete)).isError).toBe(true);
      const sid = sessionIdOf(h.sess, created.humanUrl);
      if (!['before_intent_saved', 'after_intent_saved'].includes(step)) {
        await expect.poll(() => h?.sess.sessions.get(sid)?.view.status).toBe('completed');
      }
      expect(await h.ok('sess_complete', complete)).toEqual({
        handle: created.handle,
        revision: 1,
        state: 'completed',
      });
      expect(h.sess.stats.of().sessionsCompleted).toBe(1);
      expect((await h.record(created.handle))?.record.state.kind).toBe('completed');
    },
  );
});
