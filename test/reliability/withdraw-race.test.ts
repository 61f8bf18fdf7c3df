/**
 * The withdraw race: the person answers while the agent withdraws. Both orders are forced through
 * the local runtime's `faults.hold` (the answer is committed just before the withdraw arrives, and
 * just after it was committed), 25 times each, plus runs where the withdraw's answer is lost (the
 * runtime drops the connection after the commit, or before anything happened) and then the person
 * answers. Every run must end in exactly one of two ways, judged from what Sess and the engine
 * report rather than from the order we forced:
 *
 * - `withdrawn`: the record is withdrawn, `sess_response` says so without an answer, Sess holds no
 *   answer and the person's submit was refused;
 * - refused: `sess_withdraw` answered `ANSWER_ARRIVED`, Sess accepted the person's submit, and
 *   `sess_response` returns exactly that answer.
 *
 * Never both, never neither; and a wait of the agent's own in progress during the race neither
 * releases an answer the record does not keep nor blocks the record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from '../../src/core/model/surface.js';
import { approveAnswer, type Harness, type Outcome, sessionIdOf, startHarness } from '../engine/harness.js';
import { answerStatus } from '../support/local-sess.js';

const RUNS = 25;
const LOST_RUNS = 10;

let h: Harness;
const tally = { runs: 0, withdrawn: 0, answered: 0, both: 0, neither: 0 };

beforeAll(async () => {
  h = await startHarness({ sess: { plan: { maxOpenSessions: 10_000 } } });
});
afterAll(async () => {
  console.log(
    `[reliability] withdraw race: ${tally.runs} runs (${RUNS} answer-before, ${RUNS} answer-after, ${LOST_RUNS} lost-after-commit, ${LOST_RUNS} lost-before-commit, ${2 * LOST_RUNS} with the agent's wait in progress); ${tally.withdrawn} withdrawn with no answer accepted, ${tally.answered} refused with the answer returned; ${tally.both} both, ${tally.neither} neither`,
  );
  await h?.close();
});

type Scenario = 'answer_before' | 'answer_after' | 'lost_after_commit' | 'lost_before_commit';

/** One run: a fresh Session, the withdraw and the person's submit in the forced order. */
async function race(scenario: Scenario, run: number, agentWaiting = false) {
  const created = await h.request();
  // A wait of the agent's own that is in progress while the race happens, when asked for.
  let concurrentWait: Promise<Outcome> | undefined;
  if (agentWaiting) {
    concurrentWait = h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 3_000 });
    await h.sess.whenWaiting(sessionIdOf(h.sess, created.humanUrl));
  }
  const answer: Answer = { ...approveAnswer, values: { message: `answer of run ${run}` } };
  const args = { handle: created.handle, expected_revision: 1, reason: 'No longer needed.' };
  let submitStatus: number;
  let withdraw: Outcome;
  switch (scenario) {
    case 'answer_before':
    case 'answer_after': {
      const held = h.sess.faults.hold('withdraw', scenario === 'answer_before' ? 'arrival' : 'commit');
      const pending = h.call('sess_withdraw', args);
      await held.reached;
      submitStatus = await answerStatus(h.sess, created.humanUrl, answer);
      held.release();
      withdraw = await pending;
      break;
    }
    case 'lost_after_commit':
    case 'lost_before_commit': {
      if (scenario === 'lost_after_commit') h.sess.faults.commitThenDrop('withdraw');
      else h.sess.faults.drop('withdraw');
      const lost = await h.call('sess_withdraw', args);
      expect(lost.ok ? undefined : lost.error.code).toBe('OUTCOME_UNKNOWN');
      submitStatus = await answerStatus(h.sess, created.humanUrl, answer);
      // While the outcome is unknown, sess_response waits for the identical repeat.
      const meanwhile = await h.call('sess_response', { handle: created.handle, revision: 1 });
      expect(meanwhile.ok ? undefined : meanwhile.error.code).toBe('MUTATION_PENDING');
      withdraw = await h.call('sess_withdraw', args);
      break;
    }
  }
  const concurrent = await concurrentWait;
  const read = await h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
  const snapshot = h.sess.sessions.byUrl(created.humanUrl);
  const record = (await h.record(created.handle))?.record.state;

  const withdrawn =
    withdraw.ok &&
    withdraw.interaction.state === 'withdrawn' &&
    read.ok &&
    read.interaction.state === 'withdrawn' &&
    read.interaction.response === undefined &&
    record?.kind === 'withdrawn' &&
    snapshot?.view.status === 'withdrawn' &&
    snapshot.view.responses.length === 0 &&
    submitStatus === 410;
  const answered =
    !withdraw.ok &&
    withdraw.error.code === 'ANSWER_ARRIVED' &&
    submitStatus === 303 &&
    read.ok &&
    read.interaction.state === 'answered' &&
    JSON.stringify(read.interaction.response?.values) === JSON.stringify(answer.values) &&
    read.interaction.response?.verified === true &&
    snapshot?.view.status === 'answered' &&
    record?.kind === 'answered';
  // Nothing half-done: no submit that Sess accepted on a withdrawn Session, and no answer lost.
  const answerAtSess = (snapshot?.view.responses.length ?? 0) > 0;
  // A concurrent wait never releases an answer the record does not keep, and never blocks it.
  if (concurrent?.ok === true && concurrent.interaction.state === 'answered') {
    expect(record?.kind).toBe('answered');
  }
  if (concurrent !== undefined && !concurrent.ok) {
    expect(concurrent.error, `run ${run}`).toMatchObject({ code: 'INVALID_STATE', reason: 'stale_version' });
  }
  tally.runs++;
  if (withdrawn) tally.withdrawn++;
  if (answered) tally.answered++;
  if (withdrawn && answered) tally.both++;
  if (!withdrawn && !answered) tally.neither++;
  return { withdrawn, answered, answerAtSess, withdraw, read, submitStatus };
}

describe('the withdraw race', () => {
  it(`an answer committed just before the withdraw arrives wins, ${RUNS} times: ANSWER_ARRIVED and sess_response returns it`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const out = await race('answer_before', run);
      expect(out, `run ${run}`).toMatchObject({ withdrawn: false, answered: true, answerAtSess: true });
    }
  });

  it(`an answer just after the withdraw was committed is refused, ${RUNS} times: withdrawn, no answer at Sess`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const out = await race('answer_after', run);
      expect(out, `run ${run}`).toMatchObject({ withdrawn: true, answered: false, answerAtSess: false });
    }
  });

  it(`a lost withdraw answer after the commit, then the person answers, ${LOST_RUNS} times: withdrawn on the identical repeat`, async () => {
    for (let run = 0; run < LOST_RUNS; run++) {
      const out = await race('lost_after_commit', run);
      expect(out, `run ${run}`).toMatchObject({ withdrawn: true, answered: false, answerAtSess: false });
    }
  });

  it(`a withdraw lost before the commit, then the person answers, ${LOST_RUNS} times: the repeat is refused and the answer returned`, async () => {
    for (let run = 0; run < LOST_RUNS; run++) {
      const out = await race('lost_before_commit', run);
      expect(out, `run ${run}`).toMatchObject({ withdrawn: false, answered: true, answerAtSess: true });
    }
  });

  it(`both orders while the agent's own wait is in progress, ${LOST_RUNS} times each`, async () => {
    for (let run = 0; run < LOST_RUNS; run++) {
      const before = await race('answer_before', run, true);
      expect(before, `run ${run}`).toMatchObject({ withdrawn: false, answered: true, answerAtSess: true });
      const after = await race('answer_after', run, true);
      expect(after, `run ${run}`).toMatchObject({ withdrawn: true, answered: false, answerAtSess: false });
    }
  });

  it('never both, never neither', () => {
    expect(tally.runs).toBe(2 * RUNS + 4 * LOST_RUNS);
    expect(tally.both).toBe(0);
    expect(tally.neither).toBe(0);
    expect(tally.withdrawn + tally.answered).toBe(tally.runs);
  });
});
