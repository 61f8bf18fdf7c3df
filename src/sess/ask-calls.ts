/**
 * The Sess client's Ask operations: create, read and close an Ask — what each request carries and
 * what its answer must imply (a new Ask with no respondents and the cap asked for; a closed Ask
 * with no respondent page still open). A read remembers which Ask each respondent Session belongs
 * to (bounded), so a respondent's receipt can be verified against its Ask.
 *
 * Each is a function of the client's {@link ClientContext}; `client.ts` binds them into a
 * `SessApi`. Sessions are `session-calls.ts`'s, receipts `verify-call.ts`'s.
 */
import type { AskView, CloseAskInput, CreateAskInput, SessCallOptions } from '../core/contract/ports.js';
import { type ClientContext, sendCreate, sendGet } from './client-context.js';
import { decodeAsk } from './decode.js';
import { protocol, refuseToSend } from './errors.js';
import { learnKeyWorkspace } from './key-workspace.js';
import { checkExpiresIn, checkId, checkIdempotencyKey, isPositiveInt, reasonBody } from './request-checks.js';
import { HEADERS, PATHS } from './wire.js';

/** How many respondent Sessions the client remembers the Ask of (the oldest are forgotten first). */
const MAX_REMEMBERED_RESPONDENTS = 10_000;

/** The `respondents` body of a create, its options checked before anything is sent. */
function respondentsBody(input: CreateAskInput, what: string): Record<string, unknown> {
  const r = input.respondents;
  if (typeof r !== 'object' || r === null || !isPositiveInt(r.max)) {
    throw refuseToSend(what, 'respondents.max is not a positive integer');
  }
  checkExpiresIn(input.expiresIn, what, 'expiresIn');
  checkExpiresIn(r.expiresIn, what, 'respondents.expiresIn');
  checkExpiresIn(r.respondentExpiresIn, what, 'respondents.respondentExpiresIn');
  if (r.name !== undefined && typeof r.name !== 'boolean') {
    throw refuseToSend(what, 'respondents.name is not a boolean');
  }
  const body: Record<string, unknown> = { max: r.max };
  if (r.name !== undefined) body.name = r.name;
  if (r.expiresIn !== undefined) body.expires_in = r.expiresIn;
  if (r.respondentExpiresIn !== undefined) body.respondent_expires_in = r.respondentExpiresIn;
  return body;
}

/** `SessApi.createAsk`: a new Ask with no respondents and the cap asked for. */
export async function createAsk(
  ctx: ClientContext,
  input: CreateAskInput,
  callOptions?: SessCallOptions,
): Promise<AskView> {
  const what = 'create an Ask';
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
  const body: Record<string, unknown> = {
    interaction: input.surface,
    respondents: respondentsBody(input, what),
  };
  if (input.expiresIn !== undefined) body.expires_in = input.expiresIn;
  await learnKeyWorkspace(ctx, what, callOptions);
  const result = await sendCreate(ctx, PATHS.asks, body, idempotencyKey, what, callOptions);
  const view = decodeAsk(result, what, { workspaceId: ctx.expectedWorkspaceId });
  if (view.respondents.length > 0 || view.max !== input.respondents.max) {
    throw protocol(what, 'a new Ask that already has respondents or another cap', 'ask_not_new');
  }
  return view;
}

/** `SessApi.getAsk`, remembering the Ask (and name) of each respondent Session it names. */
export async function getAsk(
  ctx: ClientContext,
  askId: string,
  callOptions?: SessCallOptions,
): Promise<AskView> {
  const what = 'read an Ask';
  const id = checkId(askId, what, 'Ask id');
  const view = decodeAsk(await sendGet(ctx, PATHS.ask(id), what, callOptions), what, {
    id,
    workspaceId: ctx.expectedWorkspaceId,
  });
  const { respondents } = ctx;
  for (const r of view.respondents) {
    respondents.delete(r.sessionId);
    respondents.set(r.sessionId, { askId: view.askId, respondentName: r.name });
  }
  for (const oldest of respondents.keys()) {
    if (respondents.size <= MAX_REMEMBERED_RESPONDENTS) break;
    respondents.delete(oldest);
  }
  return view;
}

/** `SessApi.closeAsk`: the Ask closed, with no respondent page still open. */
export async function closeAsk(
  ctx: ClientContext,
  askId: string,
  input: CloseAskInput,
  callOptions?: SessCallOptions,
): Promise<AskView> {
  const what = 'close an Ask';
  const id = checkId(askId, what, 'Ask id');
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
  const result = await ctx.caller.send({
    method: 'POST',
    path: PATHS.closeAsk(id),
    body: reasonBody(input.reason, what),
    // An Ask has one revision; If-Match states it, as on every other mutation.
    headers: { [HEADERS.idempotencyKey]: idempotencyKey, [HEADERS.ifMatch]: '"1"' },
    mutation: true,
    what,
    expectStatus: 200,
    signal: callOptions?.signal,
  });
  const view = decodeAsk(result, what, { id, workspaceId: ctx.expectedWorkspaceId });
  if (view.status !== 'closed' || view.respondents.some((r) => r.status === 'started')) {
    throw protocol(what, 'the Ask is not closed, or a respondent page is still open', 'ask_not_closed');
  }
  return view;
}
