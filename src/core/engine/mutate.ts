/**
 * `sess_publish`, `sess_complete` and `sess_withdraw`: the mutations that change a Session (or
 * close an Ask) with a saved request. All follow one write-ahead protocol — check the revision
 * (and answer), save the exact request, send it, check Sess's confirmation, save the next state —
 * so it is written once ({@link run}, {@link begin}, {@link dispatch}) and each tool only states
 * what differs: the state it starts from, its request, how a saved or confirmed request is
 * recognised when repeated, what Sess must confirm, and (withdraw) what a refusal leaves behind.
 *
 * Deliberately reads no answer (`response.ts`) and never abandons a saved request whose outcome is
 * unknown: it stays saved until the identical call is repeated. Only a withdraw that Sess certainly
 * did not apply is cleared, leaving the record as it was.
 */
import type { AskView, CompleteInput, SessionView } from '../contract/ports.js';
import type { InteractionResultState } from '../contract/result.js';
import type { InteractionState } from '../model/record.js';
import { type InteractionEvent, transition } from '../model/transitions.js';
import type { Call, Loaded } from './call.js';
import { jsonDigest, sameJson } from './identity.js';
import {
  answerArrived,
  checkResponse,
  checkRevision,
  completedAlready,
  isStuck,
  type MutationTool,
  noAnswerYet,
  type PendingState,
  pendingDiffers,
  protocolMismatch,
  refuseMutation,
  type State,
  stuckError,
  withdrawFinished,
  withdrawRefused,
  withdrawUnavailable,
} from './refusals.js';
import {
  classifyMutationFailure,
  classifyReadFailure,
  classifyWithdrawFailure,
  type MutationFailure,
} from './sess-errors.js';
import type { CompleteOperation, EngineResult, PublishOperation, WithdrawOperation } from './types.js';

type Kind = InteractionState['kind'];
type PendingKind = PendingState['kind'];
/** What every mutation call names: the handle and the revision it expects. */
type Target = { handle: string; expectedRevision: number };

/** What one mutation tool adds to the shared protocol. */
interface Mutation<F extends Kind, K extends PendingKind, Op extends Target, V> {
  tool: MutationTool;
  step: 'publish' | 'complete' | 'withdraw';
  /** The state a new request starts from. */
  from: F;
  pending: K;
  /** Refuses a call that does not fit the state it starts from (revision, answer). */
  check(state: State<F>, op: Op): void;
  /** The exact request a call asks for, with a fresh idempotency key. */
  request(call: Call, op: Op): State<K>['request'];
  /** The event that saves the request. */
  saved(request: State<K>['request']): InteractionEvent;
  /** True when a saved request is the one this call asks for (then it is sent again). */
  samePending(request: State<K>['request'], op: Op): Promise<boolean> | boolean;
  /**
   * A call over a state the mutation neither starts from nor has saved: the result of an
   * identical repeat of the confirmed request, or a refusal thrown.
   */
  otherwise(state: InteractionState, op: Op): Promise<EngineResult>;
  /** Send the saved request. */
  send(call: Call, state: State<K>): Promise<V>;
  /** What a failed send means. */
  classify(error: unknown): MutationFailure;
  /** True when Sess's answer is the confirmation of the saved request. */
  confirms(view: V, state: State<K>): boolean;
  /** The state after the confirmed request, and the revision the result reports. */
  next(view: V, state: State<K>): Promise<{ state: InteractionState; revision: number }>;
  /** The result state of a confirmed request. */
  result: InteractionResultState;
  /**
   * Withdraw only: the event that clears a saved request Sess certainly did not apply, and the
   * read that tells a Sess without the endpoint (`404`/`405`) from an unknown Session or Ask.
   */
  refusal?: {
    event: InteractionEvent;
    exists(call: Call, state: State<K>): Promise<void>;
  };
}

/** A `waiting` record that is no repeat of what made it: there is no answer to act on yet. */
function waitingRefusal(state: State<'waiting'>, op: PublishOperation | CompleteOperation): never {
  checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
  throw noAnswerYet(state.revision);
}

/** What every request after an answer names: that answer, and a fresh idempotency key. */
function afterAnswer(call: Call, op: PublishOperation | CompleteOperation): CompleteInput {
  return {
    expectedRevision: op.expectedRevision,
    responseEventId: op.responseEventId,
    idempotencyKey: call.settings.randomId(),
  };
}

/** The checks of a mutation after an answer: that revision and that answer. */
function checkAnswered(state: State<'answered'>, op: PublishOperation | CompleteOperation): void {
  checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
  checkResponse(op.responseEventId, state.response.eventId);
}

const PUBLISH: Mutation<'answered', 'publish_pending', PublishOperation, SessionView> = {
  tool: 'sess_publish',
  step: 'publish',
  from: 'answered',
  pending: 'publish_pending',
  check: checkAnswered,
  request: (call, op) => ({ ...afterAnswer(call, op), surface: op.surface }),
  saved: (request) => ({ type: 'publish_saved', request }),
  samePending: (request, op) =>
    request.expectedRevision === op.expectedRevision &&
    request.responseEventId === op.responseEventId &&
    sameJson(request.surface, op.surface),
  async otherwise(state, op) {
    if (state.kind !== 'waiting') return refuseMutation(state, 'sess_publish', op.expectedRevision);
    const last = state.lastMutation;
    if (
      last?.kind === 'publish' &&
      last.expectedRevision === op.expectedRevision &&
      last.responseEventId === op.responseEventId &&
      last.surfaceDigest === (await jsonDigest(op.surface)) &&
      state.revision === op.expectedRevision + 1
    ) {
      return { handle: op.handle, revision: state.revision, state: 'waiting' };
    }
    return waitingRefusal(state, op);
  },
  send: (call, state) => call.auth.sess.publish(state.session.sessionId, state.request),
  classify: (error) => classifyMutationFailure(error, 'sess_publish'),
  confirms: (view, state) =>
    view.sessionId === state.session.sessionId && view.revision === state.request.expectedRevision + 1,
  async next(view, state) {
    const surfaceDigest = await jsonDigest(state.request.surface);
    return { state: transition(state, { type: 'published', view, surfaceDigest }), revision: view.revision };
  },
  result: 'waiting',
};

const COMPLETE: Mutation<'answered', 'complete_pending', CompleteOperation, SessionView> = {
  tool: 'sess_complete',
  step: 'complete',
  from: 'answered',
  pending: 'complete_pending',
  check: checkAnswered,
  request: afterAnswer,
  saved: (request) => ({ type: 'complete_saved', request }),
  samePending: (request, op) =>
    request.expectedRevision === op.expectedRevision && request.responseEventId === op.responseEventId,
  async otherwise(state, op) {
    if (state.kind === 'waiting') return waitingRefusal(state, op);
    if (state.kind !== 'completed') return refuseMutation(state, 'sess_complete', op.expectedRevision);
    const last = state.lastMutation;
    if (last.kind === 'complete' && last.expectedRevision === op.expectedRevision) {
      checkResponse(op.responseEventId, last.responseEventId);
      return { handle: op.handle, revision: state.revision, state: 'completed' };
    }
    checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
    throw completedAlready();
  },
  send: (call, state) => call.auth.sess.complete(state.session.sessionId, state.request),
  classify: (error) => classifyMutationFailure(error, 'sess_complete'),
  confirms: (view, state) =>
    view.sessionId === state.session.sessionId &&
    view.status === 'completed' &&
    view.revision === state.request.expectedRevision,
  next: async (view, state) => ({
    state: transition(state, { type: 'completed', view }),
    revision: state.request.expectedRevision,
  }),
  result: 'completed',
};

/** The digest a confirmed withdraw keeps of its reason (of "" when none was given). */
function reasonDigest(reason: string | undefined): Promise<string> {
  return jsonDigest(reason ?? '');
}

/** The withdraw request a call asks for: its revision, its reason and a fresh idempotency key. */
function withdrawRequest(call: Call, op: WithdrawOperation) {
  return {
    expectedRevision: op.expectedRevision,
    ...(op.reason === undefined ? {} : { reason: op.reason }),
    idempotencyKey: call.settings.randomId(),
  };
}

/**
 * The states `sess_withdraw` refuses or answers without a request: a held answer is never
 * withdrawn, a saved mutation or an owner's record answers its own code, a finished record is
 * `INVALID_STATE` naming its state unless the call repeats the confirmed withdraw.
 */
async function withdrawOtherwise(state: InteractionState, op: WithdrawOperation): Promise<EngineResult> {
  if (isStuck(state)) throw stuckError(state);
  switch (state.kind) {
    case 'answered':
      checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
      throw answerArrived(state.revision, true, state.kind);
    case 'withdrawn':
      if (
        state.withdrawal.expectedRevision === op.expectedRevision &&
        state.withdrawal.reasonDigest === (await reasonDigest(op.reason))
      ) {
        return { handle: op.handle, revision: state.revision, state: 'withdrawn' };
      }
      throw withdrawFinished('withdrawn');
    case 'ask_closed':
      if (
        state.withdrawal !== undefined &&
        state.withdrawal.expectedRevision === op.expectedRevision &&
        state.withdrawal.reasonDigest === (await reasonDigest(op.reason))
      ) {
        return { handle: op.handle, revision: 1, state: 'closed' };
      }
      throw withdrawFinished('ask_closed');
    case 'completed':
    case 'expired':
      throw withdrawFinished(state.kind);
    default:
      // The Session and Ask states that start or hold a withdraw never get here.
      throw protocolMismatch('mutation_contradicts_record');
  }
}

const WITHDRAW: Mutation<'waiting', 'withdraw_pending', WithdrawOperation, SessionView> = {
  tool: 'sess_withdraw',
  step: 'withdraw',
  from: 'waiting',
  pending: 'withdraw_pending',
  check: (state, op) => checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision'),
  request: withdrawRequest,
  saved: (request) => ({ type: 'withdraw_saved', request }),
  samePending: (request, op) =>
    request.expectedRevision === op.expectedRevision && request.reason === op.reason,
  otherwise: withdrawOtherwise,
  send: (call, state) => call.auth.sess.withdrawSession(state.session.sessionId, state.request),
  classify: classifyWithdrawFailure,
  confirms: (view, state) =>
    view.sessionId === state.session.sessionId &&
    view.status === 'withdrawn' &&
    view.revision === state.request.expectedRevision,
  next: async (view, state) => ({
    state: transition(state, {
      type: 'withdrawn',
      view,
      reasonDigest: await reasonDigest(state.request.reason),
    }),
    revision: state.request.expectedRevision,
  }),
  result: 'withdrawn',
  refusal: {
    event: { type: 'withdraw_refused' },
    async exists(call, state) {
      const view = await call.auth.sess.getSession(state.session.sessionId, call.signalOptions());
      if (view.sessionId !== state.session.sessionId) throw protocolMismatch('other_session');
    },
  },
};

const CLOSE_ASK: Mutation<'ask_open', 'ask_close_pending', WithdrawOperation, AskView> = {
  tool: 'sess_withdraw',
  step: 'withdraw',
  from: 'ask_open',
  pending: 'ask_close_pending',
  // An Ask has one revision.
  check: (state, op) => checkRevision(op.expectedRevision, 1, state.kind, 'expected_revision'),
  request: (call, op) => {
    const { expectedRevision: _, ...request } = withdrawRequest(call, op);
    return request;
  },
  saved: (request) => ({ type: 'ask_close_saved', request }),
  samePending: (request, op) => op.expectedRevision === 1 && request.reason === op.reason,
  otherwise: withdrawOtherwise,
  send: (call, state) => call.auth.sess.closeAsk(state.askId, state.request),
  classify: classifyWithdrawFailure,
  confirms: (view, state) => view.askId === state.askId && view.status === 'closed',
  next: async (_view, state) => ({
    state: transition(state, {
      type: 'ask_withdrawn',
      reasonDigest: await reasonDigest(state.request.reason),
    }),
    revision: 1,
  }),
  result: 'closed',
  refusal: {
    event: { type: 'ask_close_refused' },
    async exists(call, state) {
      const view = await call.auth.sess.getAsk(state.askId, call.signalOptions());
      if (view.askId !== state.askId) throw protocolMismatch('other_ask');
    },
  },
};

/**
 * One mutation over a loaded record: its starting state saves and sends a new request; the same
 * mutation's saved request is sent again when this call asks for exactly it (else refused, nothing
 * sent); any other state is the mutation's own repeat or refusal.
 */
async function run<F extends Kind, K extends PendingKind, Op extends Target, V>(
  call: Call,
  loaded: Loaded,
  op: Op,
  mutation: Mutation<F, K, Op, V>,
): Promise<EngineResult> {
  const { state } = loaded.record;
  if (state.kind === mutation.from) return begin(call, loaded as Loaded<State<F>>, mutation, op);
  if (state.kind === mutation.pending) {
    const pending = loaded as Loaded<State<K>>;
    const saved = (pending.record.state as PendingState).request as State<K>['request'];
    if (!(await mutation.samePending(saved, op))) throw pendingDiffers(pending.record.state as PendingState);
    return dispatch(call, pending, mutation);
  }
  return mutation.otherwise(state, op);
}

/**
 * Save the exact request of a mutation over the state it starts from, then dispatch it. The
 * mutation's checks come first; a call already cancelled saves nothing.
 */
async function begin<F extends Kind, K extends PendingKind, Op extends Target, V>(
  call: Call,
  loaded: Loaded<State<F>>,
  mutation: Mutation<F, K, Op, V>,
  op: Op,
): Promise<EngineResult> {
  mutation.check(loaded.record.state, op);
  const saved = mutation.request(call, op);
  call.checkNotCancelled();
  await call.step(`${mutation.step}.before_intent_saved`);
  const pending = await call.apply(loaded, mutation.saved(saved));
  await call.step(`${mutation.step}.after_intent_saved`);
  return dispatch(call, pending as Loaded<State<K>>, mutation);
}

/** Send a saved request, check Sess's confirmation and save the next state. */
async function dispatch<F extends Kind, K extends PendingKind, Op extends Target, V>(
  call: Call,
  loaded: Loaded<State<K>>,
  mutation: Mutation<F, K, Op, V>,
): Promise<EngineResult> {
  const { state } = loaded.record;
  const sent = mutation.send(call, state);
  sent.catch(() => {});
  await call.step(`${mutation.step}.after_request_sent`);
  let view: V;
  try {
    view = await sent;
  } catch (error) {
    return failed(call, loaded, mutation, mutation.classify(error));
  }
  await call.step(`${mutation.step}.after_response`);
  if (!mutation.confirms(view, state)) {
    throw protocolMismatch(
      'mutation_contradicts_record',
      'the request stays saved; repeat the identical call after the owner checked Sess',
    );
  }
  const next = await mutation.next(view, state);
  await call.step(`${mutation.step}.before_record_saved`);
  await call.save(loaded, next.state);
  await call.step(`${mutation.step}.after_record_saved`);
  return { handle: loaded.record.handle, revision: next.revision, state: mutation.result };
}

/**
 * Act on a failed send: keep the request saved and report, block, or (withdraw) clear the request
 * Sess certainly did not apply so the record is as it was, then report why.
 */
async function failed<F extends Kind, K extends PendingKind, Op extends Target, V>(
  call: Call,
  loaded: Loaded<State<K>>,
  mutation: Mutation<F, K, Op, V>,
  failure: MutationFailure,
): Promise<never> {
  const { state } = loaded.record;
  const { refusal } = mutation;
  if (failure.kind === 'block') return call.block(loaded, 'MUTATION_REJECTED', failure.reason);
  if (failure.kind === 'pending' || refusal === undefined) {
    const error = failure.kind === 'pending' ? failure.error : protocolMismatch('the request stays saved');
    call.emit({ event: 'mutation_not_confirmed', code: error.code, tool: mutation.tool });
    throw error;
  }
  // The record goes back to the state the withdraw started from, exactly as it was.
  const from = mutation.from;
  if (failure.kind === 'not_offered') {
    try {
      await refusal.exists(call, state);
    } catch (error) {
      // The Session or Ask is unknown (blocked), or the read failed: the request stays saved.
      return call.readFailed(loaded, classifyReadFailure(error, 'checking whether Sess offers withdrawal'));
    }
    await call.apply(loaded, refusal.event);
    call.emit({ event: 'withdraw_not_offered', code: 'WITHDRAW_UNAVAILABLE', tool: mutation.tool });
    throw withdrawUnavailable(from);
  }
  await call.apply(loaded, refusal.event);
  call.emit({ event: 'withdraw_refused', tool: mutation.tool, state: from });
  if (failure.status === 409 && 'session' in state) throw answerArrived(state.revision, false, from);
  throw withdrawRefused(failure.status, failure.apiCode, from);
}

/** `sess_publish`: the next revision after the verified answer. */
export async function publish(call: Call, op: PublishOperation): Promise<EngineResult> {
  return run(call, await call.load(op.handle), op, PUBLISH);
}

/** `sess_complete`: close the Session after the verified answer. */
export async function complete(call: Call, op: CompleteOperation): Promise<EngineResult> {
  return run(call, await call.load(op.handle), op, COMPLETE);
}

/**
 * `sess_withdraw`: take back a Session's question at its current revision, or close an Ask to new
 * respondents (its answers stay readable). An answer is never withdrawn.
 */
export async function withdraw(call: Call, op: WithdrawOperation): Promise<EngineResult> {
  const loaded = await call.load(op.handle);
  const { kind } = loaded.record.state;
  return kind === 'ask_open' || kind === 'ask_close_pending'
    ? run(call, loaded, op, CLOSE_ASK)
    : run(call, loaded, op, WITHDRAW);
}
