/**
 * `sess_response`: one bounded wait through the {@link WaitGate}, then release only an answer
 * whose receipt verified and that one more read confirmed is still current. Also the Ask read
 * (every respondent's verified answer) and the progress notifications of a wait.
 *
 * A record whose withdraw is saved but unconfirmed is refused with `MUTATION_PENDING` (repeat the
 * identical `sess_withdraw`: only its outcome says whether an answer came first); a withdrawn one
 * reads as `withdrawn`, never with an answer; an Ask whose close is saved reads like an open one.
 *
 * Deliberately sends no mutation and refuses no publish or complete: those are `mutate.ts`. A
 * read that loses the compare-and-set to a call that recorded the same verified answer returns
 * that answer; only a different change is a conflict.
 */

import type {
  AskView,
  Binding,
  ResponseEvent,
  SessionStatus,
  SessionView,
  VerifiedReceipt,
} from '../contract/ports.js';
import { bindingGeneration, bindingPrincipal, bindingScope, SessApiError } from '../contract/ports.js';
import type { AskAnswerResult, AskResult, ResponseResult } from '../contract/result.js';
import type { InteractionState, VerifiedResponse } from '../model/record.js';
import type { Surface } from '../model/surface.js';
import { outcomeOf } from '../telemetry/telemetry.js';
import { type Call, type Loaded, WaitAborted } from './call.js';
import { sameJson } from './identity.js';
import {
  checkRevision,
  checkSameSession,
  isStuck,
  protocolMismatch,
  type State,
  stuckError,
} from './refusals.js';
import { classifyReadFailure } from './sess-errors.js';
import type { EngineResult, ResponseOperation } from './types.js';

/** A loaded record that waits for its answer. */
type Waiting = Loaded<State<'waiting'>>;

/** How many times one wait may re-arm after a lapsed/active status change (guards a spinning server). */
const MAX_WAIT_ROUNDS = 4;

/** `sess_response`: one bounded wait, then release only a verified, still-current answer. */
export async function response(call: Call, op: ResponseOperation): Promise<EngineResult> {
  const loaded = await call.load(op.handle);
  const { state } = loaded.record;
  try {
    if (isStuck(state)) throw stuckError(state);
    switch (state.kind) {
      case 'completed':
        checkRevision(op.revision, state.revision, state.kind);
        return { handle: op.handle, revision: state.revision, state: 'completed' };
      case 'expired':
        checkRevision(op.revision, state.revision, state.kind);
        return { handle: op.handle, revision: state.revision, state: 'expired' };
      case 'withdrawn':
        // Taken back before any answer: there is nothing to read, and never an answer.
        checkRevision(op.revision, state.revision, state.kind);
        return { handle: op.handle, revision: state.revision, state: 'withdrawn' };
      case 'ask_open':
      case 'ask_close_pending':
      case 'ask_closed':
        // A saved close does not hide the answers given so far: they are read as from an open Ask.
        checkRevision(op.revision, 1, state.kind);
        return await readAsk(call, loaded as Loaded<State<'ask_open' | 'ask_close_pending' | 'ask_closed'>>);
      case 'waiting':
        checkRevision(op.revision, state.revision, state.kind);
        return await wait(call, loaded as Waiting, op);
      case 'answered':
        checkRevision(op.revision, state.revision, state.kind);
        return await reconfirm(call, loaded as Loaded<State<'answered'>>);
    }
  } catch (error) {
    if (error instanceof WaitAborted) {
      const revision = 'revision' in state && typeof state.revision === 'number' ? state.revision : 1;
      return { handle: op.handle, revision, state: 'needs_resume' };
    }
    throw error;
  }
}

/** One wait of `sess_response`, counted while it runs and by how it ended. */
async function wait(call: Call, loaded: Waiting, op: ResponseOperation): Promise<EngineResult> {
  const end = call.settings.telemetry.waitStarted();
  try {
    const result = await waitRounds(call, loaded, op);
    end(result.state);
    return result;
  } catch (error) {
    end(error instanceof WaitAborted ? 'needs_resume' : outcomeOf(error));
    throw error;
  }
}

async function waitRounds(call: Call, loaded: Waiting, op: ResponseOperation): Promise<EngineResult> {
  const { state } = loaded.record;
  const { sessionId } = state.session;
  const timeoutMs = Math.min(op.waitMs ?? call.settings.maxWaitMs, call.settings.maxWaitMs);
  const { clock } = call.settings;
  const started = clock.now();
  const stopProgress = startProgress(call, timeoutMs);
  try {
    let known: SessionStatus = 'active';
    for (let round = 0; ; round++) {
      const remaining = Math.max(0, timeoutMs - (clock.now() - started));
      let view: SessionView | undefined;
      try {
        view = await call.settings.waitGate.wait({
          sess: call.auth.sess,
          origin: sessOrigin(call.auth.binding),
          scope: bindingScope(call.auth.binding),
          principal: bindingPrincipal(call.auth.binding),
          generation: bindingGeneration(call.auth.binding),
          sessionId,
          revision: state.revision,
          status: known,
          timeoutMs: remaining,
          ...call.signalOptions(),
        });
      } catch (error) {
        return await call.readFailed(loaded, classifyReadFailure(error, 'waiting for the answer'));
      }
      // This waiter's time ran out before anything changed.
      if (view === undefined) return { handle: op.handle, revision: state.revision, state: 'waiting' };
      checkSameSession(view, sessionId);
      if (view.revision < state.revision) throw protocolMismatch('revision_behind_record');
      if (view.revision > state.revision)
        return await call.block(loaded, 'RECOVERY_BLOCKED', 'session_moved_on');
      const event = view.responses.find((r) => r.revision === state.revision);
      if (event !== undefined) return await release(call, loaded, event);
      switch (view.status) {
        case 'expired': {
          await call.settle(
            loaded,
            { type: 'expired' },
            (s) => s.kind === 'expired' && s.revision === state.revision,
          );
          return { handle: op.handle, revision: state.revision, state: 'expired' };
        }
        case 'completed':
        case 'withdrawn':
          // Not by this record's own request (that would have left it withdrawing): fail closed.
          return await call.block(loaded, 'RECOVERY_BLOCKED', 'session_moved_on');
        case 'answered':
          // An answered Session must list its answer; a client that let this through is wrong.
          throw protocolMismatch('answered_without_answer');
        case 'active':
        case 'lapsed': {
          // A lapsed link may still be extended: keep waiting on the new status while time remains.
          const more = clock.now() - started < timeoutMs;
          if (view.status !== known && more && round < MAX_WAIT_ROUNDS) {
            known = view.status;
            continue;
          }
          return { handle: op.handle, revision: state.revision, state: 'waiting' };
        }
      }
    }
  } finally {
    stopProgress();
  }
}

/** Verify the answer at the current revision, confirm it is still current, save and return it. */
async function release(call: Call, loaded: Waiting, event: ResponseEvent): Promise<EngineResult> {
  // The wait's own view never counts as the confirmation: verify, then one more read.
  const receipt = await verifyAndConfirm(call, loaded, event, false);
  const { state } = loaded.record;
  const response: VerifiedResponse = {
    eventId: event.eventId,
    revision: event.revision,
    answer: event.answer,
    submittedAt: event.submittedAt,
    receipt: event.receipt,
    keyId: receipt.keyId,
    verifiedAt: call.nowIso(),
  };
  // A concurrent wait that released the same verified answer first is not a conflict.
  const { mine } = await call.settle(loaded, { type: 'released', response }, (s) => sameAnswer(s, response));
  if (mine) call.emit({ event: 'answer_released', state: 'answered' });
  return {
    handle: loaded.record.handle,
    revision: state.revision,
    state: 'answered',
    response: resultResponse(response),
  };
}

/**
 * A saved `answered`: verify the saved receipt again (offline, against the workspace the record
 * learned from the authenticated create), then one confirming read; release nothing that moved on.
 */
async function reconfirm(call: Call, loaded: Loaded<State<'answered'>>): Promise<EngineResult> {
  const { state } = loaded.record;
  const event: ResponseEvent = {
    eventId: state.response.eventId,
    revision: state.response.revision,
    answer: state.response.answer,
    submittedAt: state.response.submittedAt,
    receipt: state.response.receipt,
  };
  await verifyAndConfirm(call, loaded, event, true);
  return {
    handle: loaded.record.handle,
    revision: state.revision,
    state: 'answered',
    response: resultResponse(state.response),
  };
}

/**
 * Verify `event`'s receipt for the record's Session, revision, Surface and workspace, THEN make
 * the one confirming read: the Session must still be at that revision with that answer, in that
 * workspace. A `saved` answer's receipt already verified against a trusted workspace once, so the
 * record's workspace is trusted for it and the client needs no read to learn one; a first release
 * trusts only what the client knows (`Sess-Workspace-Id` or the configured workspace).
 */
async function verifyAndConfirm(
  call: Call,
  loaded: Loaded<State<'waiting' | 'answered'>>,
  event: ResponseEvent,
  saved: boolean,
): Promise<VerifiedReceipt> {
  const { state } = loaded.record;
  const { sessionId, workspaceId } = state.session;
  const receipt = await verify(call, loaded, sessionId, workspaceId, state.surface, event, saved);
  await confirmCurrent(call, loaded, state.session, state.revision, event);
  return receipt;
}

/**
 * Receipt verification for that exact Session, revision, event, Surface and answer; with
 * `trustWorkspace`, against `workspaceId` without the client learning its own (a saved answer).
 */
async function verify(
  call: Call,
  loaded: Loaded,
  sessionId: string,
  workspaceId: string,
  surface: Surface,
  event: ResponseEvent,
  trustWorkspace = false,
): Promise<VerifiedReceipt> {
  let receipt: VerifiedReceipt;
  try {
    receipt = await call.auth.sess.verifyResponse(
      {
        sessionId,
        revision: event.revision,
        eventId: event.eventId,
        surface,
        answer: event.answer,
        receipt: event.receipt,
        ...(trustWorkspace ? { workspaceId } : {}),
      },
      call.signalOptions(),
    );
  } catch (error) {
    call.settings.telemetry.receipt(
      'failed',
      error instanceof SessApiError ? (error.reason ?? error.kind) : outcomeOf(error),
    );
    return call.readFailed(loaded, classifyReadFailure(error, 'verifying the answer'));
  }
  if (
    receipt.sessionId !== sessionId ||
    receipt.revision !== event.revision ||
    receipt.eventId !== event.eventId ||
    receipt.workspaceId !== workspaceId ||
    receipt.actorAssurance !== 'link_holder'
  ) {
    call.settings.telemetry.receipt('rejected', 'claims_mismatch');
    return call.block(loaded, 'VERIFICATION_FAILED', 'claims_mismatch');
  }
  call.settings.telemetry.receipt('verified', undefined);
  return receipt;
}

/**
 * One more authenticated read: the Session must still be at `revision` with that answer. A view
 * of another workspace than the record's is a protocol error (nothing is released or changed).
 */
async function confirmCurrent(
  call: Call,
  loaded: Loaded,
  session: { sessionId: string; workspaceId: string },
  revision: number,
  event: ResponseEvent,
) {
  const { sessionId } = session;
  let view: SessionView;
  try {
    view = await call.auth.sess.getSession(sessionId, call.signalOptions());
  } catch (error) {
    return call.readFailed(loaded, classifyReadFailure(error, 'confirming the answer'));
  }
  checkSameSession(view, sessionId);
  if (view.workspaceId !== session.workspaceId) throw protocolMismatch('other_workspace');
  const listed = view.responses.find((r) => r.revision === revision);
  const current =
    view.revision === revision &&
    listed !== undefined &&
    listed.eventId === event.eventId &&
    sameJson(listed.answer, event.answer);
  if (!current) return call.block(loaded, 'RECOVERY_BLOCKED', 'session_moved_on');
}

async function readAsk(
  call: Call,
  loaded: Loaded<State<'ask_open' | 'ask_close_pending' | 'ask_closed'>>,
): Promise<EngineResult> {
  const { state } = loaded.record;
  let view: AskView;
  try {
    view = await call.auth.sess.getAsk(state.askId, call.signalOptions());
  } catch (error) {
    return call.readFailed(loaded, classifyReadFailure(error, 'reading the Ask'));
  }
  if (view.askId !== state.askId) throw protocolMismatch('other_ask');
  const { surface } = state;
  const workspaceId = state.workspaceId ?? view.workspaceId;
  const answers: AskAnswerResult[] = [];
  // A closed Ask from a store that dropped its Surface cannot have its answers verified: none is released.
  if (surface !== undefined) {
    for (const respondent of view.respondents) {
      const event = respondent.response;
      if (event === undefined) continue;
      await verify(call, loaded, respondent.sessionId, workspaceId, surface, event);
      const answer: AskAnswerResult = {
        respondentId: respondent.respondentId,
        action: event.answer.action,
        values: event.answer.values,
        submittedAt: event.submittedAt,
        verified: true,
        actorAssurance: 'link_holder',
      };
      if (respondent.name !== undefined) answer.name = respondent.name;
      answers.push(answer);
    }
  }
  const open = view.status === 'open';
  // A saved close stays saved until its identical sess_withdraw is repeated; only an open Ask is settled here.
  if (!open && state.kind === 'ask_open')
    await call.settle(loaded, { type: 'ask_closed' }, (s) => s.kind === 'ask_closed');
  const ask: AskResult = {
    id: view.askId,
    open,
    max: view.max,
    started: view.started,
    answered: view.answered,
    answers,
  };
  return { handle: loaded.record.handle, revision: 1, state: open ? 'waiting' : 'closed', ask };
}

function startProgress(call: Call, totalMs: number): () => void {
  const report = call.ctx.progress;
  const every = call.settings.progressIntervalMs;
  if (report === undefined || totalMs <= 0) return () => {};
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
    const progress = Math.min(ticks * every, totalMs);
    try {
      Promise.resolve(
        report({
          progress,
          total: totalMs,
          message: 'Waiting for the person to answer on their Sess link.',
        }),
      ).catch(() => {});
    } catch {
      // A failing progress sink never ends the wait.
    }
  }, every);
  return () => clearInterval(timer);
}

/** The Sess origin a binding's credential belongs to (HTTP bindings carry it in their origin). */
function sessOrigin(binding: Binding): string {
  return binding.kind === 'stdio' ? binding.apiOrigin : binding.origin;
}

/** True when `state` holds exactly this verified answer (another wait released it first). */
function sameAnswer(state: InteractionState, response: VerifiedResponse): boolean {
  return (
    state.kind === 'answered' &&
    state.response.revision === response.revision &&
    state.response.eventId === response.eventId &&
    state.response.receipt === response.receipt &&
    state.response.submittedAt === response.submittedAt &&
    sameJson(state.response.answer, response.answer)
  );
}

function resultResponse(response: VerifiedResponse): ResponseResult {
  return {
    eventId: response.eventId,
    revision: response.revision,
    action: response.answer.action,
    values: response.answer.values,
    submittedAt: response.submittedAt,
    verified: true,
    actorAssurance: 'link_holder',
  };
}
