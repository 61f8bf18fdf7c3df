/**
 * The lifecycle of `sess-mcp-tools/6`, end to end, as one scenario both faces run: an agent creates
 * two interactions, the server restarts, `sess_list` finds both (right states, no link), the person
 * answers one on the real page after the restart, `sess_response` on the listed handle returns the
 * verified answer, `sess_withdraw` on the other makes the person's open page show the withdrawn
 * state in place and refuse a submit, the record ends `withdrawn` and the cap of unfinished records counts
 * one fewer.
 *
 * A face (`lifecycle-stdio.test.ts`, `lifecycle-http.test.ts`) brings its real MCP client, its
 * restart, and its read of the durable store; the person is `person.ts`'s Chromium. Nothing here
 * is a double: the Sess side is the local runtime the face's server talks to.
 */
import { expect } from 'vitest';
import type { VersionedRecord } from '../../src/core/contract/ports.js';
import type { LocalSess } from '../../src/testing/index.js';
import type { SecretsAudit } from '../support/audit.js';
import { type Outcome, outcomeOf, type ToolResultLike } from '../support/outcome.js';
import { approvalSurface } from '../support/surfaces.js';
import { PAGE_TEXT, type Person } from './person.js';

/** What a face gives the scenario. */
export interface LifecycleFace {
  /** Names the face's screenshots (`stdio`, `http`). */
  readonly name: string;
  /** The Sess runtime the face's server talks to. */
  readonly sess: LocalSess;
  /** The test's secrets audit (the face watches its own stderr or diagnostics). */
  readonly audit: SecretsAudit;
  /** One tool call through the face's real MCP client, to the current server. */
  call(tool: string, args: Record<string, unknown>): Promise<ToolResultLike>;
  /** Stop the server and start a new one on the same durable store; later calls go to it. */
  restart(): Promise<void>;
  /** The store's `countUnfinished()` for the agent's binding, read beside the server. */
  unfinished(): Promise<number>;
  /** The stored record of `handle`, whatever its state, read beside the server. */
  record(handle: string): Promise<VersionedRecord | undefined>;
}

/** One `sess_list` item as the scenario reads it. */
export interface ListItem {
  handle: string;
  revision: number;
  state: string;
  kind: string;
  title: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt?: string;
  /** Only when inspecting one handle: the agent's own current Surface. */
  surface?: unknown;
}

/** The two questions: one the person answers, one the agent takes back. */
export const ANSWERED_TITLE = 'Approve this commit?';
export const WITHDRAWN_TITLE = 'Merge the release branch tonight?';
/** What the person types (distinctive: the audit looks for it everywhere). */
export const TYPED_MESSAGE = 'Greet by first name, heron at noon';
/** The reason the agent gives, shown to the person. */
export const WITHDRAW_REASON = 'We merged it another way, no need to answer.';

/** Code-unit order (the listing's "C" collation). */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A tool call that must succeed; fails the test with the tool's error code otherwise. */
async function ok(
  face: LifecycleFace,
  tool: string,
  args: Record<string, unknown>,
): Promise<Outcome & { ok: true }> {
  const outcome = outcomeOf(await face.call(tool, args));
  if (!outcome.ok) throw new Error(`${tool} failed: ${outcome.error.code}: ${outcome.error.message}`);
  return outcome;
}

/** The items of a `sess_list` result (`structuredContent` `{ items, next_cursor? }`). */
export function listItemsOf(result: ToolResultLike): ListItem[] {
  if (result.isError === true)
    throw new Error(`sess_list failed: ${JSON.stringify(result.structuredContent)}`);
  const content = result.structuredContent as { items?: ListItem[] };
  if (!Array.isArray(content.items)) throw new Error('sess_list result without structuredContent.items');
  return content.items;
}

/** Neither the link nor any of its parts appear anywhere in `value` (structured or text). */
export function expectNoLink(value: unknown, links: readonly string[]): void {
  const json = JSON.stringify(value);
  for (const link of links) {
    expect(json).not.toContain(link);
    // The token: the last path segment of a Sess link.
    const token = new URL(link).pathname.split('/').pop()!;
    expect(token.length).toBeGreaterThanOrEqual(12);
    expect(json).not.toContain(token);
  }
  expect(json).not.toMatch(/humanUrl|human_url/);
}

/** Run the whole lifecycle through `face`, with `person` answering in Chromium. */
export async function runLifecycle(face: LifecycleFace, person: Person): Promise<void> {
  const { sess, audit } = face;

  // 1. Two interactions.
  const first = await ok(face, 'sess_request', { interaction: approvalSurface(ANSWERED_TITLE) });
  const second = await ok(face, 'sess_request', { interaction: approvalSurface(WITHDRAWN_TITLE) });
  const links = [first.interaction.humanUrl!, second.interaction.humanUrl!];
  for (const link of links) audit.url(link, 'sess link');
  audit.answer({ message: TYPED_MESSAGE }, 'typed answer');
  expect(await face.unfinished()).toBe(2);

  // 2. The server restarts; the new one knows neither handle but through its records.
  await face.restart();

  // 3. sess_list finds both, waiting, without the link.
  const listed = await face.call('sess_list', {});
  expectNoLink(listed, links);
  const items = listItemsOf(listed);
  expect(items.map((i) => i.handle).sort()).toEqual(
    [first.interaction.handle, second.interaction.handle].sort(),
  );
  const byTitle = (title: string) => {
    const item = items.find((i) => i.title === title);
    if (item === undefined) throw new Error(`sess_list has no item titled ${JSON.stringify(title)}`);
    return item;
  };
  const toAnswer = byTitle(ANSWERED_TITLE);
  const toWithdraw = byTitle(WITHDRAWN_TITLE);
  for (const item of [toAnswer, toWithdraw]) {
    expect(item).toMatchObject({ revision: 1, state: 'waiting', kind: 'session' });
  }
  expect(toAnswer.handle).toBe(first.interaction.handle);
  expect(toWithdraw.handle).toBe(second.interaction.handle);
  // The expiry Sess confirmed at creation is kept in the record and listed.
  expect(toAnswer.expiresAt).toBe(first.interaction.expiresAt);
  expect(toWithdraw.expiresAt).toBe(second.interaction.expiresAt);
  // Newest first within the group (the handle breaks a tie of equal creation times), with the
  // creation times the records hold.
  const stored = await Promise.all(items.map(async (i) => (await face.record(i.handle))!.record));
  expect(items.map((i) => i.createdAt)).toEqual(stored.map((r) => r.createdAt));
  const newestFirst = [...stored]
    .sort((a, b) => (a.createdAt === b.createdAt ? cmp(b.handle, a.handle) : cmp(b.createdAt, a.createdAt)))
    .map((r) => r.handle);
  expect(items.map((i) => i.handle)).toEqual(newestFirst);
  // Inspect: the one item and the agent's own Surface, still without the link.
  const inspected = await face.call('sess_list', { handle: toWithdraw.handle });
  expectNoLink(inspected, links);
  expect(listItemsOf(inspected)).toEqual([{ ...toWithdraw, surface: approvalSurface(WITHDRAWN_TITLE) }]);

  // 4. The person opens both links they were shown; answers the first after the restart.
  const answerPage = await person.open(links[0]!);
  await answerPage.getByRole('heading', { level: 1, name: ANSWERED_TITLE }).waitFor();
  const withdrawPage = await person.open(links[1]!);
  await withdrawPage.getByRole('heading', { level: 1, name: WITHDRAWN_TITLE }).waitFor();
  // The person starts on the second form too, and leaves it open.
  await withdrawPage.getByLabel('Commit message').fill('Merge it after the tests, osprey');
  audit.secret('Merge it after the tests, osprey', 'unsent answer');

  expect(await person.answer(answerPage, { 'Commit message': TYPED_MESSAGE }, 'Approve')).toBe(303);
  await answerPage.getByRole('heading', { name: PAGE_TEXT.sent }).waitFor();
  await person.shot(answerPage, `${face.name}-answered`);

  // 5. sess_response on the listed handle returns the verified answer.
  const answered = await ok(face, 'sess_response', {
    handle: toAnswer.handle,
    revision: toAnswer.revision,
    wait_ms: 10_000,
  });
  expect(answered.interaction).toMatchObject({
    handle: toAnswer.handle,
    revision: 1,
    state: 'answered',
    response: {
      revision: 1,
      action: 'approve',
      values: { message: TYPED_MESSAGE },
      verified: true,
      actorAssurance: 'link_holder',
    },
  });

  // 6. sess_withdraw on the other, with a reason the person sees. The page stays open: mark its
  // document to prove the withdrawn state arrives in place, not by a reload.
  await withdrawPage.evaluate(() => {
    (window as { __samePage?: boolean }).__samePage = true;
  });
  const before = await face.unfinished();
  expect(before).toBe(2);
  const withdrawn = await ok(face, 'sess_withdraw', {
    handle: toWithdraw.handle,
    expected_revision: toWithdraw.revision,
    reason: WITHDRAW_REASON,
  });
  expect(withdrawn.interaction).toMatchObject({ handle: toWithdraw.handle, revision: 1, state: 'withdrawn' });
  expectNoLink(withdrawn, links);

  // 7. The open page shows the withdrawn state in place (its own watch), with the reason, and
  // refuses the submit of the form the person had started.
  await expectWithdrawnPage(withdrawPage, WITHDRAWN_TITLE, WITHDRAW_REASON);
  expect(await withdrawPage.evaluate(() => (window as { __samePage?: boolean }).__samePage)).toBe(true);
  const refused = await withdrawPage.request.post(links[1]!, {
    form: { _revision: '1', message: 'Merge it after the tests, osprey' },
    maxRedirects: 0,
  });
  expect(refused.status()).toBe(410);
  expect(await refused.text()).toContain(PAGE_TEXT.withdrawn);
  await person.shot(withdrawPage, `${face.name}-withdrawn`);
  // Opened again, the link shows the same and takes no answer.
  const reopened = await person.open(links[1]!, 410);
  await expectWithdrawnPage(reopened, WITHDRAWN_TITLE, WITHDRAW_REASON);
  // At Sess: withdrawn, no answer accepted.
  const session = sess.sessions.byUrl(links[1]!);
  expect(session?.view.status).toBe('withdrawn');
  expect(session?.view.responses).toEqual([]);

  // 8. The record is withdrawn (link and Surface gone) and the cap counts one fewer.
  const record = await face.record(toWithdraw.handle);
  expect(record?.record.state).toMatchObject({ kind: 'withdrawn', revision: 1 });
  expectNoLink(record, links);
  expect(await face.unfinished()).toBe(before - 1);
  // The answered one is untouched and still counts.
  expect((await face.record(toAnswer.handle))?.record.state.kind).toBe('answered');

  // 9. What the agent sees of it afterwards.
  const after = listItemsOf(await face.call('sess_list', { state: 'withdrawn' }));
  expect(after).toEqual([expect.objectContaining({ handle: toWithdraw.handle, state: 'withdrawn' })]);
  const read = await ok(face, 'sess_response', { handle: toWithdraw.handle, revision: 1 });
  expect(read.interaction).toMatchObject({ handle: toWithdraw.handle, state: 'withdrawn' });
  expect(read.interaction.response).toBeUndefined();
}

/** The page says, by its visible text, that the question was withdrawn, and offers no button. */
export async function expectWithdrawnPage(
  page: import('playwright-core').Page,
  title: string,
  reason: string | undefined,
): Promise<void> {
  await page.getByRole('heading', { level: 1, name: title }).waitFor();
  await page.getByRole('heading', { name: PAGE_TEXT.withdrawn }).waitFor();
  if (reason !== undefined) expect(await page.getByText(reason).count()).toBe(1);
  expect(await page.getByRole('button').count()).toBe(0);
  expect(await page.getByRole('textbox').count()).toBe(0);
}
