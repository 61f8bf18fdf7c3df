/**
 * The Sess client's Session operations: create, read, wait, publish, complete and withdraw — what
 * each request carries and what its answer must imply (a new Session at revision 1, a wait that
 * never goes back, the revision a publish must produce, the answer a completion follows).
 *
 * Each is a function of the client's {@link ClientContext}; `client.ts` binds them into a
 * `SessApi`. The HTTP plumbing is `calls.ts`, decoding `decode.ts`, the checks before sending
 * `request-checks.ts`. Asks are `ask-calls.ts`'s, receipts `verify-call.ts`'s.
 */
import type {
  CompleteInput,
  CreateSessionInput,
  PublishInput,
  SessCallOptions,
  SessionStatus,
  SessionView,
  WithdrawInput,
} from '../core/contract/ports.js';
import { WAIT_MS_RULE } from '../core/contract/rules.js';
import type { CallResult } from './calls.js';
import { type ClientContext, sendCreate, sendGet } from './client-context.js';
import { decodeSession, regression, toSessionView } from './decode.js';
import { protocol, refuseToSend } from './errors.js';
import { learnKeyWorkspace } from './key-workspace.js';
import { checkExpiresIn, checkId, checkIdempotencyKey, isPositiveInt, reasonBody } from './request-checks.js';
import { HEADERS, PATHS, SESSION_STATUSES } from './wire.js';
import type { WireSessionView } from './wire-reader.js';

/** What a publish and a complete share: the Session, the answer they follow, and the key. */
interface AfterAnswerInput {
  expectedRevision: number;
  responseEventId: string;
  idempotencyKey: string;
}

/** One of the two calls after an answer, and what its answer must show. */
interface AfterAnswerCall {
  what: string;
  path: (id: string) => string;
  body: Record<string, unknown>;
  /** The revision the answer must be at: the expected one plus `step`. */
  step: 0 | 1;
  /** The status the answer must have. */
  status: 'active' | 'completed';
  /** What a wrong revision or status is called. */
  notThere: string;
  /** What another answer than the given one at the expected revision is called. */
  otherAnswer: string;
}

/** The Session an answer carries, of `sessionId` when given and of the trusted workspace. */
function sessionOf(
  ctx: ClientContext,
  result: CallResult,
  what: string,
  sessionId?: string,
): WireSessionView {
  return decodeSession(result, what, {
    ...(sessionId === undefined ? {} : { id: sessionId }),
    workspaceId: ctx.expectedWorkspaceId,
  });
}

function responseAt(wire: WireSessionView, revision: number) {
  return wire.responses.find((r) => r.revision === revision);
}

/**
 * A Session mutation under `If-Match: "<expectedRevision>"` that must answer 200 with the
 * Session: the id, idempotency key and revision are checked first, then `body()` (which may
 * refuse too), all before anything is sent. Returns the Session the server answered.
 */
async function atRevision(
  ctx: ClientContext,
  sessionId: string,
  input: { idempotencyKey: string; expectedRevision: number },
  what: string,
  path: (id: string) => string,
  callOptions: SessCallOptions | undefined,
  body: () => Record<string, unknown>,
): Promise<WireSessionView> {
  const id = checkId(sessionId, what, 'Session id');
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
  if (!isPositiveInt(input.expectedRevision)) {
    throw refuseToSend(what, 'the expected revision is not a positive integer');
  }
  const result = await ctx.caller.send({
    method: 'POST',
    path: path(id),
    body: body(),
    headers: {
      [HEADERS.idempotencyKey]: idempotencyKey,
      [HEADERS.ifMatch]: `"${input.expectedRevision}"`,
    },
    mutation: true,
    what,
    expectStatus: 200,
    signal: callOptions?.signal,
  });
  return sessionOf(ctx, result, what, id);
}

/**
 * Publish and complete: both follow the answer at `expectedRevision`, under `If-Match`, and
 * must answer with the Session at the revision and status `call` names, after that answer.
 */
async function afterAnswer(
  ctx: ClientContext,
  sessionId: string,
  input: AfterAnswerInput,
  call: AfterAnswerCall,
  callOptions: SessCallOptions | undefined,
): Promise<SessionView> {
  const { what } = call;
  let eventId = '';
  const wire = await atRevision(ctx, sessionId, input, what, call.path, callOptions, () => {
    eventId = checkId(input.responseEventId, what, 'response event id');
    return { response_event_id: eventId, ...call.body };
  });
  if (wire.revision !== input.expectedRevision + call.step || wire.status !== call.status) {
    throw protocol(what, call.notThere, 'mutation_not_applied');
  }
  if (responseAt(wire, input.expectedRevision)?.event_id !== eventId) {
    throw protocol(what, call.otherAnswer, 'mutation_other_answer');
  }
  return toSessionView(wire);
}

/** `SessApi.createSession`: a new Session, active at revision 1 with no answer. */
export async function createSession(
  ctx: ClientContext,
  input: CreateSessionInput,
  callOptions?: SessCallOptions,
): Promise<SessionView> {
  const what = 'create a Session';
  const idempotencyKey = checkIdempotencyKey(input.idempotencyKey, what);
  checkExpiresIn(input.expiresIn, what, 'expiresIn');
  const body: Record<string, unknown> = { interaction: input.surface };
  if (input.expiresIn !== undefined) body.expires_in = input.expiresIn;
  await learnKeyWorkspace(ctx, what, callOptions);
  const result = await sendCreate(ctx, PATHS.sessions, body, idempotencyKey, what, callOptions);
  const wire = sessionOf(ctx, result, what);
  if (wire.revision !== 1 || wire.status !== 'active' || wire.responses.length > 0) {
    throw protocol(what, 'a new Session that is not active at revision 1', 'create_not_new');
  }
  return toSessionView(wire);
}

/** `SessApi.getSession`. */
export async function getSession(
  ctx: ClientContext,
  sessionId: string,
  callOptions?: SessCallOptions,
): Promise<SessionView> {
  const what = 'read a Session';
  const id = checkId(sessionId, what, 'Session id');
  return toSessionView(sessionOf(ctx, await sendGet(ctx, PATHS.session(id), what, callOptions), what, id));
}

/** `SessApi.waitSession`: a long-poll whose answer never goes back from what the caller knows. */
export async function waitSession(
  ctx: ClientContext,
  sessionId: string,
  known: { revision: number; status: SessionStatus; timeoutMs: number },
  callOptions?: SessCallOptions,
): Promise<SessionView> {
  const what = 'wait for a Session';
  const id = checkId(sessionId, what, 'Session id');
  if (!isPositiveInt(known.revision))
    throw refuseToSend(what, 'the known revision is not a positive integer');
  if (!(SESSION_STATUSES as readonly string[]).includes(known.status)) {
    throw refuseToSend(what, 'the known status is not a Session status');
  }
  const waitMs = known.timeoutMs;
  if (!WAIT_MS_RULE.test(waitMs)) throw refuseToSend(what, `the wait is not ${WAIT_MS_RULE.text}`);
  const query = new URLSearchParams({
    revision: String(known.revision),
    status: known.status,
    timeout_ms: String(waitMs),
  });
  const path = `${PATHS.wait(id)}?${query.toString()}`;
  const result = await sendGet(ctx, path, what, callOptions, waitMs + ctx.connection.requestTimeoutMs);
  const wire = sessionOf(ctx, result, what, id);
  const problem = regression(known, wire.revision, wire.status);
  if (problem !== undefined) throw protocol(what, problem, 'wait_regressed');
  return toSessionView(wire);
}

/** `SessApi.publish`: the next revision, active, after the given answer. */
export function publish(
  ctx: ClientContext,
  sessionId: string,
  input: PublishInput,
  callOptions?: SessCallOptions,
): Promise<SessionView> {
  const call: AfterAnswerCall = {
    what: 'publish the next revision',
    path: PATHS.revisions,
    body: { interaction: input.surface },
    step: 1,
    status: 'active',
    notThere: 'the Session is not active at the next revision',
    otherAnswer: 'the published revision does not follow the given answer',
  };
  return afterAnswer(ctx, sessionId, input, call, callOptions);
}

/** `SessApi.complete`: the Session completed at the expected revision, after the given answer. */
export function complete(
  ctx: ClientContext,
  sessionId: string,
  input: CompleteInput,
  callOptions?: SessCallOptions,
): Promise<SessionView> {
  const call: AfterAnswerCall = {
    what: 'complete a Session',
    path: PATHS.complete,
    body: {},
    step: 0,
    status: 'completed',
    notThere: 'the Session is not completed at the expected revision',
    otherAnswer: 'the Session was completed after another answer',
  };
  return afterAnswer(ctx, sessionId, input, call, callOptions);
}

/** `SessApi.withdrawSession`: the Session withdrawn at the expected revision. */
export async function withdrawSession(
  ctx: ClientContext,
  sessionId: string,
  input: WithdrawInput,
  callOptions?: SessCallOptions,
): Promise<SessionView> {
  const what = 'withdraw a Session';
  const wire = await atRevision(ctx, sessionId, input, what, PATHS.withdraw, callOptions, () =>
    reasonBody(input.reason, what),
  );
  if (wire.status !== 'withdrawn' || wire.revision !== input.expectedRevision) {
    throw protocol(what, 'the Session is not withdrawn at the expected revision', 'withdraw_not_applied');
  }
  return toSessionView(wire);
}
