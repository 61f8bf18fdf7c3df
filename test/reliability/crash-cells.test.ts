/**
 * Crash matrix by (tool, durable step) cells over real processes: for each row of {@link CELLS} a
 * real `sess-mcp` child is started with `SESS_MCP_TEST_CRASH_AT=<step>`, driven by a real MCP
 * client through the row's tool until it dies by SIGKILL at that step, then restarted without the
 * hook and called as an agent would. The rows are every durable step of Ask creation (`sess_ask`
 * with `respondents`) and every durable step of `sess_withdraw`, of a Session and of an Ask's
 * close, plus the Session rows where the person answers while the server is down after a kill
 * before the withdraw was sent; `crash.test.ts` holds the Session create, publish and complete.
 *
 * After every cell: 0 duplicate Sessions or Asks (the cell's own, at the local runtime), 0 lost
 * answers (a respondent or person who answered, before or after the restart, is returned by
 * `sess_response`), 0 unparsable record files, and the handle in its documented state: for an
 * Ask's create `CREATE_OUTCOME_UNKNOWN` (sticky, sending nothing) while the create may have
 * reached Sess, `waiting` once the Ask is saved; for a withdraw, `withdrawn` (or `closed`) exactly
 * once after the identical repeat, with the person's page refusing a submit, or `ANSWER_ARRIVED`
 * and the answer returned when the person answered first.
 *
 * One runtime for the file; each cell has its own workspace (an Ask view carries no title, so a
 * cell's Asks are those of its workspace, and every respondent's Session is checked to carry the
 * cell's question), its own state directory and its own question, so cells run concurrently.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DurableStep } from '../../src/core/engine/types.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { startHarness } from '../engine/harness.js';
import { cleanBuilds, errorOf, interactionOf, type StdioSession } from '../stdio/harness.js';
import {
  type CrashCell,
  crashes,
  createCrashTally,
  noteSurface,
  openCrashCell,
  recordFilesParse,
  SENT_STEPS,
  settle,
} from '../support/crash-cell.js';
import { type CrashPoint, STEP_NAMES, type StepName } from '../support/durable-steps.js';
import { answerStatus } from '../support/local-sess.js';

/** The tools a row can drive; each has one scenario in {@link SCENARIOS}. */
type CrashTool = 'sess_ask' | 'sess_withdraw';

/**
 * What a `sess_withdraw` row withdraws: a waiting Session, the same with the person answering
 * while the server is down, or an open Ask (closed to new respondents).
 */
type WithdrawOf = 'session' | 'session_answered_while_down' | 'ask';

/** One row: the (tool, step) cell, and for `sess_withdraw` what it withdraws. */
interface CrashRow<T extends CrashTool = CrashTool> extends CrashPoint<T> {
  of?: WithdrawOf;
}

/**
 * The matrix, one row per cell. A new durable step is one more row; a new tool is its rows plus
 * its entry in {@link SCENARIOS}.
 */
const CELLS: readonly CrashRow[] = [
  { tool: 'sess_ask', step: 'create.before_intent_saved' },
  { tool: 'sess_ask', step: 'create.after_intent_saved' },
  { tool: 'sess_ask', step: 'create.after_request_sent' },
  { tool: 'sess_ask', step: 'create.after_response' },
  { tool: 'sess_ask', step: 'create.before_record_saved' },
  { tool: 'sess_ask', step: 'create.after_record_saved' },
  { tool: 'sess_withdraw', of: 'session', step: 'withdraw.before_intent_saved' },
  { tool: 'sess_withdraw', of: 'session', step: 'withdraw.after_intent_saved' },
  { tool: 'sess_withdraw', of: 'session', step: 'withdraw.after_request_sent' },
  { tool: 'sess_withdraw', of: 'session', step: 'withdraw.after_response' },
  { tool: 'sess_withdraw', of: 'session', step: 'withdraw.before_record_saved' },
  { tool: 'sess_withdraw', of: 'session', step: 'withdraw.after_record_saved' },
  // Killed before the withdraw was sent: an answer given meanwhile comes first and is returned.
  { tool: 'sess_withdraw', of: 'session_answered_while_down', step: 'withdraw.before_intent_saved' },
  { tool: 'sess_withdraw', of: 'session_answered_while_down', step: 'withdraw.after_intent_saved' },
  { tool: 'sess_withdraw', of: 'ask', step: 'withdraw.before_intent_saved' },
  { tool: 'sess_withdraw', of: 'ask', step: 'withdraw.after_intent_saved' },
  { tool: 'sess_withdraw', of: 'ask', step: 'withdraw.after_request_sent' },
  { tool: 'sess_withdraw', of: 'ask', step: 'withdraw.after_response' },
  { tool: 'sess_withdraw', of: 'ask', step: 'withdraw.before_record_saved' },
  { tool: 'sess_withdraw', of: 'ask', step: 'withdraw.after_record_saved' },
];

/** What a scenario gets: the cell (state directory, servers, audit) and what is its own. */
interface CellContext {
  c: CrashCell;
  /** The cell's workspace at the runtime. */
  workspaceId: string;
  /** The cell's question (an Ask) or title. */
  title: string;
}

/** One scenario per tool: crash at `point.step`, restart, call as an agent would, check. */
const SCENARIOS: { [T in CrashTool]: (cx: CellContext, point: CrashRow<T>) => Promise<void> } = {
  sess_ask: askCreate,
  sess_withdraw: (cx, point) => (point.of === 'ask' ? askClose(cx, point) : sessionWithdraw(cx, point)),
};

let sess: LocalSess;
const tally = createCrashTally();
/** What the withdraw cells end in. */
const withdrawTally = { cells: 0, withdrawn: 0, closed: 0, answerArrived: 0, doubled: 0 };

beforeAll(async () => {
  sess = await startLocalSess({ plan: { maxOpenSessions: 1_000 } });
});
afterAll(async () => {
  console.log(
    `[reliability] crash cells: ${tally.cells} (tool, step) cells tried over real processes (${withdrawTally.cells} sess_withdraw: ${withdrawTally.withdrawn} withdrawn, ${withdrawTally.closed} closed, ${withdrawTally.answerArrived} ANSWER_ARRIVED with the answer returned), ${tally.lost} answers lost, ${tally.duplicated} duplicated Sessions or Asks, ${withdrawTally.doubled} double withdrawals or closes, ${tally.unparsable} unparsable record files`,
  );
  await sess?.close();
  await cleanBuilds();
});

/** The step name after the operation's prefix (`create.after_response` → `after_response`). */
function stepOf(step: DurableStep): StepName {
  return step.slice(step.indexOf('.') + 1) as StepName;
}

/** Respondents of each Ask: two, so a cell sees the Ask both open and full (closed). */
const ASK_MAX = 2;
const askArgs = (question: string) => ({
  question,
  fields: [{ type: 'text', name: 'note', label: 'Note', max: 200 }],
  respondents: { max: ASK_MAX },
});

/** The cell's Asks at the runtime (read without a counted request). */
const asksOf = (cx: CellContext) => sess.asks.list(cx.workspaceId);

/**
 * One respondent starts on the Ask link and answers, as a person would. Their Session must carry
 * the cell's question: the Ask is this cell's.
 */
async function respond(cx: CellContext, askUrl: string, note: string) {
  const started = await sess.startRespondent(askUrl);
  expect(started.humanUrl, `start on the Ask link: ${started.status}`).toBeDefined();
  cx.c.audit.url(started.humanUrl!, 'respondent link');
  const session = sess.sessions.byUrl(started.humanUrl!);
  expect(session?.surfaces[0]?.title).toBe(cx.title);
  const values = { note };
  cx.c.audit.answer(values);
  const page = await sess.submitAnswer(started.humanUrl!, { action: 'submit', values });
  expect(page.status).toBeLessThan(400);
  return { respondentId: session!.ask!.respondentId, values };
}

/** An answer a respondent gave: who, and what. */
interface Given {
  respondentId: string;
  values: Record<string, unknown>;
}

/**
 * `sess_response` on an Ask, at once; each given answer it does not return as given is counted
 * lost. Returns the result and its answers.
 */
async function readAskAnswers(server: StdioSession, handle: string, given: readonly Given[]) {
  const got = interactionOf(await server.callTool('sess_response', { handle, revision: 1, wait_ms: 0 }));
  const answers = got.ask?.answers ?? [];
  for (const g of given) {
    const found = answers.find((a) => a.respondentId === g.respondentId);
    if (JSON.stringify(found?.values) !== JSON.stringify(g.values)) tally.lost += 1;
  }
  return { got, answers };
}

/**
 * `sess_response` on an Ask returns exactly these answers, verified (a missing one is lost), and
 * the Ask open until its last respondent answered, then `closed`.
 */
async function expectAnswers(server: StdioSession, handle: string, given: Given[]) {
  const { got, answers } = await readAskAnswers(server, handle, given);
  const open = given.length < ASK_MAX;
  expect(got).toMatchObject({
    handle,
    revision: 1,
    state: open ? 'waiting' : 'closed',
    ask: { open, max: ASK_MAX, started: given.length },
  });
  expect(answers).toEqual(
    given.map((g) =>
      expect.objectContaining({
        respondentId: g.respondentId,
        action: 'submit',
        values: g.values,
        verified: true,
        actorAssurance: 'link_holder',
      }),
    ),
  );
  expect(got.ask?.answered).toBe(given.length);
}

async function askCreate(cx: CellContext, point: CrashPoint<'sess_ask'>): Promise<void> {
  const { c } = cx;
  const step = stepOf(point.step);
  const first = await c.start(point.step);
  await crashes(first, 'sess_ask', askArgs(cx.title));
  expect(first.stderr()).not.toMatch(/sk_local_/);

  // Killed right after the request was written: Sess may or may not have received it (both are
  // the documented unknown outcome). Give the runtime a moment to finish what it got.
  if (step === 'after_request_sent') await settle();
  const sent = asksOf(cx).length;
  if (SENT_STEPS.has(step) && step !== 'after_request_sent') expect(sent).toBe(1);
  if (!SENT_STEPS.has(step)) expect(sent).toBe(0);
  expect(sent).toBeLessThanOrEqual(1);
  tally.sentUnknown += step === 'after_request_sent' ? 1 : 0;
  const recs = await c.records();
  const expected =
    step === 'before_intent_saved' ? [] : [step === 'after_record_saved' ? 'ask_open' : 'create_intent'];
  expect(recs.map((r) => r.state)).toEqual(expected);
  expect(await recordFilesParse(c.dir, tally)).toBe(expected.length);

  // A respondent answers while the server is down (only reachable when Sess has the Ask).
  const orphan = asksOf(cx)[0];
  if (orphan !== undefined) c.audit.url(orphan.human_url, 'ask link');
  const late =
    orphan === undefined
      ? undefined
      : await respond(cx, orphan.human_url, `answered while the server was down, ${step}`);

  const server = await c.start();
  const handle = recs[0]?.handle;
  if (handle !== undefined) {
    if (step === 'after_record_saved') {
      // Saved as an open Ask before the crash: the answer given meanwhile is there, verified, and
      // so is one given after the restart.
      await expectAnswers(server, handle, [late!]);
      const after = await respond(cx, orphan!.human_url, `answered after the restart, ${step}`);
      await expectAnswers(server, handle, [late!, after]);
      expect((await c.records()).find((r) => r.handle === handle)?.state).toBe('ask_closed');
    } else {
      // The create may have reached Sess: never retried, never guessed (owner resolution).
      // (Cells run concurrently, so this counts the cell's own workspace, not requests.)
      const created = sess.stats.of(cx.workspaceId).asksCreated;
      const probe = await server.callTool('sess_response', { handle, revision: 1, wait_ms: 0 });
      expect(errorOf(probe)).toMatchObject({ code: 'CREATE_OUTCOME_UNKNOWN', retryable: false });
      const again = await server.callTool('sess_response', { handle, revision: 1, wait_ms: 0 });
      expect(errorOf(again).code).toBe('CREATE_OUTCOME_UNKNOWN');
      expect(sess.stats.of(cx.workspaceId).asksCreated).toBe(created);
      expect((await c.records()).find((r) => r.handle === handle)?.state).toMatch(
        /^create_(intent|unknown)$/,
      );
    }
  }
  // No call after the restart created an Ask for the old handle.
  if (asksOf(cx).length !== sent) tally.duplicated += 1;
  expect(asksOf(cx)).toHaveLength(sent);

  // The agent asks again: a new handle and exactly one new Ask, whose answers come back.
  const retried = interactionOf(await server.callTool('sess_ask', askArgs(cx.title)));
  c.audit.url(retried.humanUrl!, 'ask link');
  expect(retried.handle).not.toBe(handle);
  expect(retried).toMatchObject({
    revision: 1,
    state: 'waiting',
    ask: { open: true, max: ASK_MAX, started: 0, answered: 0, answers: [] },
  });
  if (asksOf(cx).length !== sent + 1) tally.duplicated += 1;
  expect(asksOf(cx)).toHaveLength(sent + 1);
  const answer = await respond(cx, retried.humanUrl!, `the retried ask, ${step}`);
  await expectAnswers(server, retried.handle, [answer]);

  // At most one Ask per handle: every Ask of the cell has a record.
  const final = await c.records();
  expect(final.length).toBeGreaterThanOrEqual(asksOf(cx).length);
  expect(final.find((r) => r.handle === retried.handle)?.state).toBe('ask_open');
  expect(await recordFilesParse(c.dir, tally)).toBe(final.length);
}

// -----------------------------------------------------------------------------------------------
// sess_withdraw: a Session's withdraw and an Ask's close

const WITHDRAW_REASON = 'Sorted out in chat; no answer needed.';
const withdrawArgs = (handle: string) => ({ handle, expected_revision: 1, reason: WITHDRAW_REASON });

/** Steps before which the withdraw (or close) certainly did not reach Sess. */
const UNSENT = new Set<StepName>(['before_intent_saved', 'after_intent_saved']);

/**
 * Where Sess stands after the kill: certainly not applied before the request was sent, certainly
 * applied once its answer came back, either right after it was sent (the documented unknown).
 */
function expectAppliedAt(step: StepName, applied: boolean): void {
  if (UNSENT.has(step)) expect(applied).toBe(false);
  else if (step !== 'after_request_sent') expect(applied).toBe(true);
}

/** The record kinds of a withdraw: before it, while it is saved, and once it is confirmed. */
interface WithdrawKinds {
  from: string;
  pending: string;
  done: string;
}

/** The record kind a kill at `step` leaves: before, saved, or after the withdraw. */
function recordAfterKill(step: StepName, kinds: WithdrawKinds): string {
  if (step === 'before_intent_saved') return kinds.from;
  if (step === 'after_record_saved') return kinds.done;
  return kinds.pending;
}

/**
 * `sess_withdraw` of `handle` on `first`, which dies at `step`: whether it `landed` at Sess is what
 * the step allows, and the one record is in the kind the kill leaves. Returns the call's arguments
 * (for the identical repeat) and whether it landed.
 */
async function killedWithdraw(
  cx: CellContext,
  first: StdioSession,
  handle: string,
  step: StepName,
  landed: () => boolean,
  kinds: WithdrawKinds,
): Promise<{ args: ReturnType<typeof withdrawArgs>; applied: boolean }> {
  const args = withdrawArgs(handle);
  await crashes(first, 'sess_withdraw', args);
  expect(first.stderr()).not.toMatch(/sk_local_/);

  if (step === 'after_request_sent') await settle();
  const applied = landed();
  expectAppliedAt(step, applied);
  tally.sentUnknown += step === 'after_request_sent' ? 1 : 0;
  expect((await cx.c.records()).map((r) => r.state)).toEqual([recordAfterKill(step, kinds)]);
  expect(await recordFilesParse(cx.c.dir, tally)).toBe(1);
  return { args, applied };
}

/** The cell's Sessions at the runtime (by the first revision's title). */
const sessionsOf = (cx: CellContext) =>
  sess.sessions.list(cx.workspaceId).filter((s) => s.surfaces[0]?.title === cx.title);

async function sessionWithdraw(cx: CellContext, point: CrashRow<'sess_withdraw'>): Promise<void> {
  const { c } = cx;
  const step = stepOf(point.step);
  const answersWhileDown = point.of === 'session_answered_while_down';
  withdrawTally.cells += 1;
  // The hook fires only at the withdraw's step, so the Session is created on the same child.
  const first = await c.start(point.step);
  const created = interactionOf(await first.callTool('sess_request', { interaction: noteSurface(cx.title) }));
  const humanUrl = created.humanUrl!;
  c.audit.url(humanUrl, 'sess link');
  const snapshot = () => sess.sessions.byUrl(humanUrl);
  const { args, applied } = await killedWithdraw(
    cx,
    first,
    created.handle,
    step,
    () => snapshot()?.view.status === 'withdrawn',
    { from: 'waiting', pending: 'withdraw_pending', done: 'withdrawn' },
  );

  // The person answers while the server is down: accepted exactly when the withdraw did not land.
  const values = { note: `answered while the server was down, ${step}` };
  let answered = false;
  if (answersWhileDown) {
    c.audit.answer(values);
    const page = await sess.submitAnswer(humanUrl, { action: 'yes', values });
    answered = page.status < 400;
    expect(answered).toBe(!applied);
  }

  // The agent repeats the identical call on a fresh server.
  const server = await c.start();
  const repeat = await server.callTool('sess_withdraw', args);
  if (answered) {
    // The answer came first: the withdraw is refused, the record is as it was, and
    // sess_response returns the answer, verified.
    expect(errorOf(repeat)).toMatchObject({ code: 'ANSWER_ARRIVED', retryable: false, state: 'waiting' });
    withdrawTally.answerArrived += 1;
    const got = interactionOf(
      await server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 }),
    );
    if (got.state !== 'answered' || JSON.stringify(got.response?.values) !== JSON.stringify(values))
      tally.lost += 1;
    expect(got).toMatchObject({
      handle: created.handle,
      revision: 1,
      state: 'answered',
      response: { action: 'yes', values, verified: true },
    });
    expect(sess.stats.of(cx.workspaceId).sessionsWithdrawn).toBe(0);
    expect(snapshot()?.view.status).toBe('answered');
    expect((await c.records()).map((r) => r.state)).toEqual(['answered']);
  } else {
    expect(interactionOf(repeat)).toEqual({ handle: created.handle, revision: 1, state: 'withdrawn' });
    // Once more: the same result, nothing sent again.
    const requests = sess.stats.of(cx.workspaceId).sessionsWithdrawn;
    expect(interactionOf(await server.callTool('sess_withdraw', args))).toEqual({
      handle: created.handle,
      revision: 1,
      state: 'withdrawn',
    });
    if (requests !== 1 || sess.stats.of(cx.workspaceId).sessionsWithdrawn !== 1) withdrawTally.doubled += 1;
    expect(sess.stats.of(cx.workspaceId).sessionsWithdrawn).toBe(1);
    withdrawTally.withdrawn += 1;
    // The person's page refuses a submit, and Sess holds no answer.
    const refused = { action: 'yes', values: { note: `too late, ${step}` } };
    c.audit.answer(refused.values);
    expect((await sess.submitAnswer(humanUrl, refused, { expectStatus: 410 })).status).toBe(410);
    expect(snapshot()?.view).toMatchObject({ status: 'withdrawn', responses: [] });
    expect(
      interactionOf(
        await server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 0 }),
      ),
    ).toEqual({ handle: created.handle, revision: 1, state: 'withdrawn' });
    expect((await c.records()).map((r) => r.state)).toEqual(['withdrawn']);
  }
  // One Session for the one handle.
  if (sessionsOf(cx).length !== 1) tally.duplicated += 1;
  expect(sessionsOf(cx)).toHaveLength(1);
  expect(await recordFilesParse(c.dir, tally)).toBe(1);
}

/** Respondents of an Ask that is closed: room for more than start, so it never fills by itself. */
const CLOSE_MAX = 4;

async function askClose(cx: CellContext, point: CrashRow<'sess_withdraw'>): Promise<void> {
  const { c } = cx;
  const step = stepOf(point.step);
  withdrawTally.cells += 1;
  const first = await c.start(point.step);
  const created = interactionOf(
    await first.callTool('sess_ask', { ...askArgs(cx.title), respondents: { max: CLOSE_MAX } }),
  );
  const askUrl = created.humanUrl!;
  c.audit.url(askUrl, 'ask link');
  // One respondent answered before the close; two more have their pages open.
  const given = [await respond(cx, askUrl, `answered before the close, ${step}`)];
  const open: string[] = [];
  for (let i = 0; i < 2; i++) {
    const started = await sess.startRespondent(askUrl);
    expect(started.humanUrl).toBeDefined();
    c.audit.url(started.humanUrl!, 'respondent link');
    open.push(started.humanUrl!);
  }
  const askNow = () => asksOf(cx)[0];
  const { args, applied } = await killedWithdraw(
    cx,
    first,
    created.handle,
    step,
    () => askNow()?.status === 'closed',
    { from: 'ask_open', pending: 'ask_close_pending', done: 'ask_closed' },
  );

  // A respondent answers while the server is down: accepted exactly when the close did not land.
  const values = { note: `answered while the server was down, ${step}` };
  c.audit.answer(values);
  const late = { status: await answerStatus(sess, open[0]!, { action: 'submit', values }) };
  const accepted = late.status < 400;
  // Right after the send the close may still be landing: the submit's own status says which came
  // first, and the answer must then be returned exactly when it was accepted.
  if (step === 'after_request_sent') expect([303, 410]).toContain(late.status);
  else expect(accepted).toBe(!applied);
  if (accepted) given.push({ respondentId: sess.sessions.byUrl(open[0]!)!.ask!.respondentId, values });

  // The agent repeats the identical call on a fresh server: closed, once.
  const server = await c.start();
  for (let i = 0; i < 2; i++) {
    expect(interactionOf(await server.callTool('sess_withdraw', args))).toEqual({
      handle: created.handle,
      revision: 1,
      state: 'closed',
    });
  }
  if (sess.stats.of(cx.workspaceId).asksClosed !== 1) withdrawTally.doubled += 1;
  expect(sess.stats.of(cx.workspaceId).asksClosed).toBe(1);
  withdrawTally.closed += 1;
  expect(askNow()?.status).toBe('closed');

  // The still open page refuses a submit, no one new starts, and every answer given is returned.
  const refused = { note: `too late, ${step}` };
  c.audit.answer(refused);
  expect(
    (await sess.submitAnswer(open[1]!, { action: 'submit', values: refused }, { expectStatus: 410 })).status,
  ).toBe(410);
  expect((await sess.startRespondent(askUrl)).humanUrl).toBeUndefined();
  const { got, answers } = await readAskAnswers(server, created.handle, given);
  expect(got).toMatchObject({
    handle: created.handle,
    revision: 1,
    state: 'closed',
    ask: { open: false, max: CLOSE_MAX, answered: given.length },
  });
  expect(answers).toEqual(
    given.map((g) =>
      expect.objectContaining({ respondentId: g.respondentId, values: g.values, verified: true }),
    ),
  );
  expect((await c.records()).map((r) => r.state)).toEqual(['ask_closed']);
  // One Ask for the one handle.
  if (asksOf(cx).length !== 1) tally.duplicated += 1;
  expect(asksOf(cx)).toHaveLength(1);
  expect(await recordFilesParse(c.dir, tally)).toBe(1);
}

describe('the matrix', () => {
  it('has a row for every durable step of Ask creation, in order, and the engine reaches each one on the Ask path', async () => {
    const creates = STEP_NAMES.map((s) => `create.${s}` as DurableStep);
    expect(CELLS.filter((p) => p.tool === 'sess_ask').map((p) => p.step)).toEqual(creates);
    // A step the Ask path skipped would never kill the child; check the order in process first.
    const steps: DurableStep[] = [];
    const h = await startHarness({ engine: { hooks: { onStep: (s) => void steps.push(s) } } });
    try {
      const out = await h.ok('sess_ask', askArgs('Which steps does an Ask pass?'));
      expect(out.ask).toMatchObject({ open: true, max: ASK_MAX });
      expect(steps).toEqual(creates);
    } finally {
      await h.close();
    }
  });

  it('has a row for every durable step of sess_withdraw, of a Session and of an Ask, and the engine reaches each one on both paths', async () => {
    const withdraws = STEP_NAMES.map((s) => `withdraw.${s}` as DurableStep);
    for (const of of ['session', 'ask'] as const) {
      expect(CELLS.filter((p) => p.tool === 'sess_withdraw' && p.of === of).map((p) => p.step)).toEqual(
        withdraws,
      );
    }
    // The answered-while-down rows are the steps before the withdraw was sent.
    expect(CELLS.filter((p) => p.of === 'session_answered_while_down').map((p) => stepOf(p.step))).toEqual(
      STEP_NAMES.filter((s) => UNSENT.has(s)),
    );
    const steps: DurableStep[] = [];
    const h = await startHarness({ engine: { hooks: { onStep: (s) => void steps.push(s) } } });
    try {
      const session = await h.request();
      const ask = await h.ok('sess_ask', askArgs('Which steps does a close pass?'));
      for (const handle of [session.handle, ask.handle]) {
        steps.length = 0;
        await h.ok('sess_withdraw', withdrawArgs(handle));
        // The `withdrawn` event saved with the record has a crash cell of its own
        // (`event.after_state_saved`, test/stdio/wake-webhook.test.ts).
        expect(steps.filter((s) => !s.startsWith('event.'))).toEqual(withdraws);
        expect(steps.filter((s) => s.startsWith('event.'))).toEqual(['event.after_state_saved']);
      }
    } finally {
      await h.close();
    }
  });
});

/** A row's name: its tool and step, and what a withdraw row withdraws. */
const cellName = (p: CrashRow) => `${p.tool} at ${p.step}${p.of === undefined ? '' : ` (${p.of})`}`;

/** Run a row's scenario (the table holds rows of every tool). */
const runScenario = SCENARIOS as unknown as Record<
  CrashTool,
  (cx: CellContext, point: CrashRow) => Promise<void>
>;

describe.concurrent('crash cells over real stdio processes', () => {
  it.each(CELLS.map((point) => [cellName(point), point] as const))(
    '%s',
    async (_name, point) => {
      tally.cells += 1;
      const workspace = await sess.createWorkspace();
      const c = await openCrashCell(sess, { apiKey: workspace.apiKey });
      // At most 80 characters (a Surface's title).
      const title = `crash ${point.of ?? point.tool} ${point.step}`;
      try {
        await runScenario[point.tool]({ c, workspaceId: workspace.workspaceId, title }, point);
      } finally {
        await c.done();
      }
    },
    120_000,
  );
});
