/**
 * The engine fault matrix of `sess_withdraw`: both wire calls it makes (a Session's withdraw, an
 * Ask's close) × every fault kind the local runtime injects, driven through the tool (real client,
 * memory store), plus a runtime that offers no withdrawal at all (`withdrawal: 'not_offered'` and
 * `'method_not_allowed'`). Each cell states what the tool answers (code, retryable), what the
 * record is after, and whether Sess made the change; then the identical call, repeated, ends it
 * withdrawn (or closed) exactly once, and the answer given before the withdraw is still returned.
 *
 * `test/engine/withdraw.test.ts` already holds some of these cells (a Session's withdraw under a
 * dropped connection, 503, 429, 500 after the commit, commit-then-drop, 404/405/410/422 statuses;
 * an Ask's close under commit-then-drop and 405); a row names them in `elsewhere` and is not run
 * again for that call. The wire level (what the client reports) is `faults.test.ts`'s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessApi } from '../../src/core/contract/ports.js';
import type { InteractionState } from '../../src/core/model/record.js';
import type { LocalWithdrawal } from '../../src/testing/index.js';
import {
  approveAnswer,
  type Harness,
  localClient,
  type Outcome,
  sessionIdOf,
  startForwardingHarness,
  startHarness,
} from '../engine/harness.js';
import {
  FAULT_KINDS,
  WITHDRAW_FAULTS,
  WITHDRAW_WIRE_CALLS,
  type WithdrawFault,
  type WithdrawFaultName,
  type WithdrawWireCall,
} from '../support/fault-kinds.js';

const WIRE_CALLS = WITHDRAW_WIRE_CALLS;
type WireCall = WithdrawWireCall;

/** What the tool answers under a fault: a result, or an error with its code and retry rule. */
type ToolAnswer = 'ok' | { code: string; retryable: boolean };

/** One row: a fault, what `sess_withdraw` answers, and what Sess and the record are after. */
interface Row extends WithdrawFault, ToolRow {}

/** What the tool answers under one fault, and where its cells are asserted instead. */
interface ToolRow {
  want: ToolAnswer;
  /** The calls whose cell `test/engine/withdraw.test.ts` already asserts (not run again here). */
  elsewhere?: readonly WireCall[];
}

const unknownOutcome = { code: 'OUTCOME_UNKNOWN', retryable: true } as const;
const unavailable = { code: 'SESS_UNAVAILABLE', retryable: true } as const;
const protocolError = { code: 'SESS_PROTOCOL_ERROR', retryable: false } as const;

/** What the tool answers under each fault of {@link WITHDRAW_FAULTS}. */
const TOOL_ROWS: Record<WithdrawFaultName, ToolRow> = {
  // `500 internal` does not say nothing was done: it may have taken effect.
  '500': { want: unknownOutcome },
  '503 unavailable': { want: unavailable, elsewhere: ['withdraw'] },
  '429 rate limited': { want: unavailable, elsewhere: ['withdraw'] },
  'transport error': { want: unknownOutcome, elsewhere: ['withdraw'] },
  'delay within the deadline': { want: 'ok' },
  'timeout (delay past the deadline)': { want: unknownOutcome },
  'commit-then-drop': { want: unknownOutcome, elsewhere: ['withdraw', 'closeAsk'] },
  'commit-then-500': { want: unknownOutcome, elsewhere: ['withdraw'] },
  'malformed body': { want: protocolError },
  'contradictory body': { want: protocolError },
  // A withdraw's answer carries no receipt; a close's receipts are not what confirms it (the
  // answers are read and verified afterwards through sess_response).
  'tampered receipts': { want: 'ok' },
  'held on arrival, released': { want: 'ok' },
  'held after the commit, released': { want: 'ok' },
};

const ROWS: readonly Row[] = WITHDRAW_FAULTS.map((row) => ({ ...row, ...TOOL_ROWS[row.name] }));

/** The cells run here: every row × every wire call it is not asserted for elsewhere. */
const CELLS = ROWS.flatMap((row) =>
  WIRE_CALLS.filter((call) => !row.elsewhere?.includes(call)).map((call) => ({ ...row, call })),
);

const REASON = 'Sorted out in chat.';
const tally = { cells: 0, repeats: 0, doubled: 0, lost: 0, notOffered: 0 };

/** The client the engine's calls go to now (swapped for the timeout row). */
let current: SessApi;
let h: Harness;

beforeAll(async () => {
  h = await startForwardingHarness(() => current);
  current = localClient(h.sess);
});
afterAll(async () => {
  console.log(
    `[reliability] withdraw fault matrix: ${tally.cells} fault cells (${WIRE_CALLS.length} wire calls × ${ROWS.length} fault rows, less the cells withdraw.test.ts holds) + ${tally.notOffered} cells without withdrawal, ${tally.repeats} identical repeats reconciled, ${tally.doubled} double withdrawals or closes, ${tally.lost} answers lost`,
  );
  await h?.close();
});

/** The state of a handle's record. */
async function stateOf(harness: Harness, handle: string): Promise<InteractionState> {
  const found = await harness.record(handle);
  if (found === undefined) throw new Error('no record');
  return found.record.state;
}

/** What a cell starts from and checks. */
interface Subject {
  handle: string;
  /** The record kind before the withdraw, while it is saved, and once it is confirmed. */
  kinds: { from: string; pending: string; done: string };
  /** The result state of a confirmed withdraw. */
  result: 'withdrawn' | 'closed';
  /** Whether Sess has the change now (read without a counted request). */
  changed(): boolean;
  /** How many withdrawals or closes the runtime counted. */
  count(): number;
  /** After the cell: the person's page refuses a submit, and no given answer is lost. */
  after(done: boolean): Promise<void>;
}

/** A waiting Session. */
async function sessionSubject(harness: Harness): Promise<Subject> {
  const created = await harness.request();
  const sessionId = sessionIdOf(harness.sess, created.humanUrl);
  return {
    handle: created.handle,
    kinds: { from: 'waiting', pending: 'withdraw_pending', done: 'withdrawn' },
    result: 'withdrawn',
    changed: () => harness.sess.sessions.get(sessionId)?.view.status === 'withdrawn',
    count: () => harness.sess.stats.of().sessionsWithdrawn,
    async after(done) {
      const submit = await harness.sess.submitAnswer(created.humanUrl, approveAnswer, {
        expectStatus: done ? 410 : 303,
      });
      if (done) {
        expect(submit.status).toBe(410);
        expect(harness.sess.sessions.get(sessionId)?.view.responses).toEqual([]);
      } else {
        // Still open: the person's answer is accepted and released as usual.
        expect(submit.status).toBe(303);
        const read = await harness.ok('sess_response', {
          handle: created.handle,
          revision: 1,
          wait_ms: 2_000,
        });
        if (read.state !== 'answered') tally.lost += 1;
        expect(read).toMatchObject({ state: 'answered', response: { values: approveAnswer.values } });
      }
    },
  };
}

/** An open Ask with one answered respondent and one whose page is still open. */
async function askSubject(harness: Harness): Promise<Subject> {
  const created = await harness.ok('sess_ask', {
    question: 'Which day suits you?',
    fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'], required: true }],
    respondents: { max: 3 },
  });
  const askUrl = created.humanUrl as string;
  const first = await harness.sess.startRespondent(askUrl);
  expect(
    (await harness.sess.submitAnswer(first.humanUrl!, { action: 'submit', values: { day: 'Mon' } })).status,
  ).toBe(303);
  const second = await harness.sess.startRespondent(askUrl);
  const askId = harness.sess.sessions.byUrl(first.humanUrl!)!.ask!.askId;
  return {
    handle: created.handle,
    kinds: { from: 'ask_open', pending: 'ask_close_pending', done: 'ask_closed' },
    result: 'closed',
    changed: () => harness.sess.asks.get(askId)?.status === 'closed',
    count: () => harness.sess.stats.of().asksClosed,
    async after(done) {
      const submit = await harness.sess.submitAnswer(
        second.humanUrl!,
        { action: 'submit', values: { day: 'Tue' } },
        { expectStatus: done ? 410 : 303 },
      );
      expect(submit.status).toBe(done ? 410 : 303);
      const read = await harness.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 0 });
      const want = done ? [{ day: 'Mon' }] : [{ day: 'Mon' }, { day: 'Tue' }];
      const answers = read.ask?.answers ?? [];
      if (answers.length !== want.length) tally.lost += 1;
      expect(answers).toEqual(
        want.map((values) => expect.objectContaining({ values, action: 'submit', verified: true })),
      );
      expect(read).toMatchObject({
        state: done ? 'closed' : 'waiting',
        ask: { open: !done, answered: want.length },
      });
    },
  };
}

const SUBJECTS: Record<WireCall, (harness: Harness) => Promise<Subject>> = {
  withdraw: sessionSubject,
  closeAsk: askSubject,
};

/** The error of an outcome, as code and retry rule (or `ok`). */
function answerOf(out: Outcome): ToolAnswer {
  return out.ok ? 'ok' : { code: out.error.code, retryable: out.error.retryable };
}

describe('sess_withdraw × every fault kind (engine, real client)', () => {
  it('has a row for every fault kind the runtime injects, each run here or asserted elsewhere for each call', () => {
    expect(new Set(ROWS.map((r) => r.fault.kind))).toEqual(new Set(Object.keys(FAULT_KINDS)));
    for (const call of WIRE_CALLS) {
      for (const kind of Object.keys(FAULT_KINDS)) {
        const here = CELLS.some((c) => c.call === call && c.fault.kind === kind);
        const there = ROWS.some((r) => r.fault.kind === kind && r.elsewhere?.includes(call));
        expect(here || there, `${call} × ${kind}`).toBe(true);
      }
    }
  });

  it.each(CELLS)('$call × $name', async (cell) => {
    tally.cells += 1;
    h.sess.faults.clear();
    current = localClient(h.sess);
    const subject = await SUBJECTS[cell.call](h);
    const before = await stateOf(h, subject.handle);
    expect(before.kind).toBe(subject.kinds.from);
    const counted = subject.count();
    const args = { handle: subject.handle, expected_revision: 1, reason: REASON };

    if (cell.requestTimeoutMs !== undefined) {
      current = localClient(h.sess, { requestTimeoutMs: cell.requestTimeoutMs });
    }
    h.sess.faults.inject(cell.call, cell.fault);
    const first = await h.call('sess_withdraw', args);
    current = localClient(h.sess);
    expect(h.sess.faults.pending(cell.call)).toBe(0);
    expect(answerOf(first)).toEqual(cell.want);
    if (!first.ok) {
      const { error } = first;
      expect(error.message).not.toContain(h.sess.apiKey);
      expect(error.message).not.toContain(subject.handle);
      expect(error.message).not.toContain(REASON);
      // A request that stays saved is never described as one that changed nothing.
      if (!cell.committed || error.code === 'SESS_PROTOCOL_ERROR') {
        expect(error.message).not.toMatch(/nothing was changed/);
      }
      if (error.code === 'SESS_PROTOCOL_ERROR') expect(error.message).toMatch(/stays saved/);
    }
    // Whether Sess made the change is exactly what the row says, and the record follows it:
    // confirmed, or the request stays saved for the identical repeat.
    expect(subject.changed()).toBe(cell.committed);
    expect(subject.count() - counted).toBe(cell.committed ? 1 : 0);
    const kind = (await stateOf(h, subject.handle)).kind;
    expect(kind).toBe(first.ok ? subject.kinds.done : subject.kinds.pending);
    if (first.ok)
      expect(first.interaction).toEqual({ handle: subject.handle, revision: 1, state: subject.result });

    // The identical call, repeated (twice): withdrawn exactly once.
    for (let i = 0; i < 2; i++) {
      expect(await h.ok('sess_withdraw', args)).toEqual({
        handle: subject.handle,
        revision: 1,
        state: subject.result,
      });
      tally.repeats += 1;
    }
    if (subject.count() - counted !== 1) tally.doubled += 1;
    expect(subject.count() - counted).toBe(1);
    expect((await stateOf(h, subject.handle)).kind).toBe(subject.kinds.done);
    await subject.after(true);
  });
});

describe('sess_withdraw against a Sess without withdrawal', () => {
  it.each<[LocalWithdrawal, WireCall]>([
    ['not_offered', 'withdraw'],
    ['not_offered', 'closeAsk'],
    ['method_not_allowed', 'withdraw'],
    ['method_not_allowed', 'closeAsk'],
  ])(
    'withdrawal %s, %s: WITHDRAW_UNAVAILABLE every time, the record as it was, the question still answerable',
    async (withdrawal, call) => {
      tally.notOffered += 1;
      const old = await startHarness({ sess: { withdrawal } });
      try {
        const subject = await SUBJECTS[call](old);
        const before = await stateOf(old, subject.handle);
        const args = { handle: subject.handle, expected_revision: 1, reason: REASON };
        for (let i = 0; i < 2; i++) {
          const error = await old.fail('sess_withdraw', args);
          expect(error).toMatchObject({
            code: 'WITHDRAW_UNAVAILABLE',
            retryable: false,
            reason: 'withdraw_not_offered',
            state: subject.kinds.from,
          });
          expect(await stateOf(old, subject.handle)).toEqual(before);
        }
        expect(subject.changed()).toBe(false);
        expect(subject.count()).toBe(0);
        await subject.after(false);
      } finally {
        await old.close();
      }
    },
  );
});
