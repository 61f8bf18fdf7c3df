/**
 * Crash matrix by (tool, durable step) cells over real processes: for each row of {@link CELLS} a
 * real `sess-mcp` child is started with `SESS_MCP_TEST_CRASH_AT=<step>`, driven by a real MCP
 * client through the row's tool until it dies by SIGKILL at that step, then restarted without the
 * hook and called as an agent would. Today the rows are every durable step of Ask creation
 * (`sess_ask` with `respondents`); `crash.test.ts` holds the Session create, publish and complete.
 *
 * After every cell: 0 duplicate Asks (the cell's own Asks at the local runtime), 0 lost answers
 * (a respondent who answered, before or after the restart, is returned by `sess_response`), 0
 * unparsable record files, and the handle in its documented state (`CREATE_OUTCOME_UNKNOWN`,
 * sticky and sending nothing, while the create may have reached Sess; `waiting` once the Ask is
 * saved).
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
  openCrashCell,
  recordFilesParse,
  SENT_STEPS,
  settle,
} from '../support/crash-cell.js';
import { type CrashPoint, STEP_NAMES, type StepName } from '../support/durable-steps.js';

/** The tools a row can drive; each has one scenario in {@link SCENARIOS}. */
type CrashTool = 'sess_ask';

/**
 * The matrix, one row per cell. A new durable step is one more row; a new tool (`sess_withdraw`
 * with its `withdraw.*` steps) is its rows plus its entry in {@link SCENARIOS}.
 */
const CELLS: readonly CrashPoint<CrashTool>[] = [
  { tool: 'sess_ask', step: 'create.before_intent_saved' },
  { tool: 'sess_ask', step: 'create.after_intent_saved' },
  { tool: 'sess_ask', step: 'create.after_request_sent' },
  { tool: 'sess_ask', step: 'create.after_response' },
  { tool: 'sess_ask', step: 'create.before_record_saved' },
  { tool: 'sess_ask', step: 'create.after_record_saved' },
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
const SCENARIOS: { [T in CrashTool]: (cx: CellContext, point: CrashPoint<T>) => Promise<void> } = {
  sess_ask: askCreate,
};

let sess: LocalSess;
const tally = createCrashTally();

beforeAll(async () => {
  sess = await startLocalSess({ plan: { maxOpenSessions: 1_000 } });
});
afterAll(async () => {
  console.log(
    `[reliability] crash cells: ${tally.cells} (tool, step) cells tried over real processes, ${tally.lost} answers lost, ${tally.duplicated} duplicated Asks, ${tally.unparsable} unparsable record files`,
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

/**
 * `sess_response` on an Ask returns exactly these answers, verified (a missing one is lost), and
 * the Ask open until its last respondent answered, then `closed`.
 */
async function expectAnswers(
  server: StdioSession,
  handle: string,
  given: Array<{ respondentId: string; values: Record<string, unknown> }>,
) {
  const got = interactionOf(await server.callTool('sess_response', { handle, revision: 1, wait_ms: 0 }));
  const answers = got.ask?.answers ?? [];
  for (const g of given) {
    const found = answers.find((a) => a.respondentId === g.respondentId);
    if (JSON.stringify(found?.values) !== JSON.stringify(g.values)) tally.lost += 1;
  }
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
});

describe.concurrent('crash cells over real stdio processes', () => {
  it.each(CELLS)(
    '$tool at $step',
    async (point) => {
      tally.cells += 1;
      const workspace = await sess.createWorkspace();
      const c = await openCrashCell(sess, { apiKey: workspace.apiKey });
      try {
        await SCENARIOS[point.tool](
          { c, workspaceId: workspace.workspaceId, title: `crash ${point.tool} ${point.step}` },
          point,
        );
      } finally {
        await c.done();
      }
    },
    120_000,
  );
});
