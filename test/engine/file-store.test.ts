/**
 * The engine on the durable file store, with a "restart" (a fresh store instance over the same
 * state directory) between every step: every record the engine writes passes the strict record
 * codec, and the flow continues on one Session from what was saved.
 */
import { describe, expect, it } from 'vitest';
import { approveAnswer, followUpSurface, type Harness, useHarnessLifecycle } from './harness.js';

const lifecycle = useHarnessLifecycle();

async function withFileStore(): Promise<{ harness: Harness; restart: () => void }> {
  const { stores, reopen } = await lifecycle.fileStore();
  const harness = await lifecycle.start({ stores });
  const restart = (): void => {
    harness.stores = reopen();
  };
  return { harness, restart };
}

describe('engine on the file store', () => {
  it('runs request → answer → publish → answer → complete with a restart between every step', async () => {
    const { harness, restart } = await withFileStore();
    const created = await harness.request();
    restart();
    expect(
      (await harness.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 0 })).state,
    ).toBe('waiting');
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    restart();
    const answered = await harness.ok('sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(answered.response?.verified).toBe(true);
    restart();
    expect(await harness.ok('sess_response', { handle: created.handle, revision: 1 })).toEqual(answered);
    restart();
    const publish = {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: answered.response?.eventId,
      interaction: followUpSurface,
    };
    harness.sess.faults.commitThenDrop('publish');
    expect((await harness.fail('sess_publish', publish)).code).toBe('OUTCOME_UNKNOWN');
    restart();
    expect((await harness.record(created.handle))?.record.state.kind).toBe('publish_pending');
    expect((await harness.ok('sess_publish', publish)).revision).toBe(2);
    restart();
    await harness.sess.submitAnswer(created.humanUrl, { action: 'push', values: {} });
    const second = await harness.ok('sess_response', { handle: created.handle, revision: 2, wait_ms: 5_000 });
    restart();
    const complete = {
      handle: created.handle,
      expected_revision: 2,
      response_event_id: second.response?.eventId,
    };
    expect((await harness.ok('sess_complete', complete)).state).toBe('completed');
    restart();
    expect((await harness.ok('sess_complete', complete)).state).toBe('completed');
    expect(await harness.store().countUnfinished()).toBe(0);
    expect(harness.sess.stats.of()).toMatchObject({
      sessionsCreated: 1,
      revisionsPublished: 1,
      sessionsCompleted: 1,
    });
  });

  it('keeps a closed Ask readable with its verified answers after a restart', async () => {
    const { harness, restart } = await withFileStore();
    const created = await harness.ok('sess_ask', {
      question: 'Which day?',
      fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'], required: true }],
      respondents: { max: 1 },
    });
    const started = await harness.sess.startRespondent(created.humanUrl as string);
    await harness.sess.submitAnswer(started.humanUrl as string, { action: 'submit', values: { day: 'Tue' } });
    restart();
    expect((await harness.ok('sess_response', { handle: created.handle, revision: 1 })).state).toBe('closed');
    restart();
    const again = await harness.ok('sess_response', { handle: created.handle, revision: 1 });
    expect(again.ask?.answers).toEqual([expect.objectContaining({ values: { day: 'Tue' }, verified: true })]);
  });

  it('writes blocked and create_unknown records the codec reads back', async () => {
    const { harness, restart } = await withFileStore();
    harness.sess.faults.commitThenDrop('create');
    expect((await harness.fail('sess_request', { interaction: followUpSurface })).code).toBe(
      'CREATE_OUTCOME_UNKNOWN',
    );
    const created = await harness.request();
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    harness.sess.faults.tamperReceipt('wait', { mode: 'unknown_key' });
    expect(
      (await harness.fail('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 })).code,
    ).toBe('VERIFICATION_FAILED');
    restart();
    const kinds = (await harness.store().listUnfinished()).map((r) => r.record.state.kind).sort();
    expect(kinds).toEqual(['blocked', 'create_unknown']);
  });
});
