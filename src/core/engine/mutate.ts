/**
 * `sess_publish` and `sess_complete`: the two mutations after a verified answer. Both follow one
 * write-ahead protocol — check the revision and answer, save the exact request, send it, check
 * Sess's confirmation, save the next state — so it is written once ({@link run}, {@link dispatch})
 * and each tool only states what differs: its request, how a saved or confirmed request is
 * recognised when repeated, and what Sess must confirm.
 *
 * Deliberately reads no answer (`response.ts`) and never abandons a saved request: a request
 * whose outcome is unknown stays saved until the identical call is repeated.
 */
import type { CompleteInput, PublishInput, SessionView } from '../ports.js';
import type { InteractionState } from '../record.js';
import type { Call, Loaded } from './call.js';
import { jsonDigest, sameJson } from './identity.js';
import {
  checkResponse,
  checkRevision,
  completedAlready,
  type MutationTool,
  noAnswerYet,
  pendingDiffers,
  protocolMismatch,
  refuseMutation,
  type State,
} from './refusals.js';
import { classifyMutationFailure } from './sess-errors.js';
import { transition } from './transitions.js';
import type { CompleteOperation, EngineResult, PublishOperation } from './types.js';

/** What one mutation tool adds to the shared protocol. */
interface Mutation<
  K extends 'publish_pending' | 'complete_pending',
  Op extends PublishOperation | CompleteOperation,
> {
  tool: MutationTool;
  step: 'publish' | 'complete';
  pending: K;
  /** The exact request a call asks for, with a fresh idempotency key. */
  request(call: Call, op: Op): State<K>['request'];
  /** True when a saved request is the one this call asks for (then it is sent again). */
  samePending(request: State<K>['request'], op: Op): Promise<boolean> | boolean;
  /**
   * A call over a state the mutation neither starts from nor has saved: the result of an
   * identical repeat of the confirmed request, a refusal thrown, or `undefined` for the common
   * refusal of that state.
   */
  settled(state: InteractionState, op: Op): Promise<EngineResult | undefined>;
  /** Send the saved request. */
  send(call: Call, state: State<K>): Promise<SessionView>;
  /** True when Sess's answer is the confirmation of the saved request. */
  confirms(view: SessionView, state: State<K>): boolean;
  /** The state after the confirmed request, and the revision the result reports. */
  next(view: SessionView, state: State<K>): Promise<{ state: InteractionState; revision: number }>;
  /** The result state of a confirmed request. */
  result: 'waiting' | 'completed';
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

const PUBLISH: Mutation<'publish_pending', PublishOperation> = {
  tool: 'sess_publish',
  step: 'publish',
  pending: 'publish_pending',
  request: (call, op) => ({ ...afterAnswer(call, op), surface: op.surface }),
  samePending: (request, op) =>
    request.expectedRevision === op.expectedRevision &&
    request.responseEventId === op.responseEventId &&
    sameJson(request.surface, op.surface),
  async settled(state, op) {
    if (state.kind !== 'waiting') return undefined;
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
  confirms: (view, state) =>
    view.sessionId === state.session.sessionId && view.revision === state.request.expectedRevision + 1,
  async next(view, state) {
    const surfaceDigest = await jsonDigest(state.request.surface);
    return { state: transition(state, { type: 'published', view, surfaceDigest }), revision: view.revision };
  },
  result: 'waiting',
};

const COMPLETE: Mutation<'complete_pending', CompleteOperation> = {
  tool: 'sess_complete',
  step: 'complete',
  pending: 'complete_pending',
  request: afterAnswer,
  samePending: (request, op) =>
    request.expectedRevision === op.expectedRevision && request.responseEventId === op.responseEventId,
  async settled(state, op) {
    if (state.kind === 'waiting') return waitingRefusal(state, op);
    if (state.kind !== 'completed') return undefined;
    const last = state.lastMutation;
    if (last.kind === 'complete' && last.expectedRevision === op.expectedRevision) {
      checkResponse(op.responseEventId, last.responseEventId);
      return { handle: op.handle, revision: state.revision, state: 'completed' };
    }
    checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
    throw completedAlready();
  },
  send: (call, state) => call.auth.sess.complete(state.session.sessionId, state.request),
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

/**
 * One mutation tool over the record of `op.handle`: an `answered` record saves and sends a new
 * request; the same tool's saved request is sent again when this call asks for exactly it (else
 * refused, nothing sent); any other state is the mutation's own repeat or refusal.
 */
async function run<
  K extends 'publish_pending' | 'complete_pending',
  Op extends PublishOperation | CompleteOperation,
>(call: Call, op: Op, mutation: Mutation<K, Op>): Promise<EngineResult> {
  const loaded = await call.load(op.handle);
  const { state } = loaded.record;
  if (state.kind === 'answered') {
    return begin(call, loaded as Loaded<State<'answered'>>, mutation, op, () => mutation.request(call, op));
  }
  if (state.kind === mutation.pending) {
    const pending = loaded as Loaded<State<K>>;
    const saved = (pending.record.state as { request: State<K>['request'] }).request;
    if (!(await mutation.samePending(saved, op))) throw pendingDiffers(state);
    return dispatch(call, pending, mutation);
  }
  return (await mutation.settled(state, op)) ?? refuseMutation(state, mutation.tool, op.expectedRevision);
}

/**
 * Save the exact request of a mutation over an `answered` record, then dispatch it. The revision
 * and answer must be the ones the record holds; a call already cancelled saves nothing.
 */
async function begin<
  K extends 'publish_pending' | 'complete_pending',
  Op extends PublishOperation | CompleteOperation,
>(
  call: Call,
  loaded: Loaded<State<'answered'>>,
  mutation: Mutation<K, Op>,
  op: { expectedRevision: number; responseEventId: string },
  request: () => State<K>['request'],
): Promise<EngineResult> {
  const { state } = loaded.record;
  checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
  checkResponse(op.responseEventId, state.response.eventId);
  const saved = request();
  call.checkNotCancelled();
  await call.step(`${mutation.step}.before_intent_saved`);
  const type = mutation.step === 'publish' ? 'publish_saved' : 'complete_saved';
  const pending = await call.apply(loaded, { type, request: saved } as
    | { type: 'publish_saved'; request: PublishInput }
    | { type: 'complete_saved'; request: CompleteInput });
  await call.step(`${mutation.step}.after_intent_saved`);
  return dispatch(call, pending as Loaded<State<K>>, mutation);
}

/** Send a saved request, check Sess's confirmation and save the next state. */
async function dispatch<
  K extends 'publish_pending' | 'complete_pending',
  Op extends PublishOperation | CompleteOperation,
>(call: Call, loaded: Loaded<State<K>>, mutation: Mutation<K, Op>): Promise<EngineResult> {
  const { state } = loaded.record;
  const sent = mutation.send(call, state);
  sent.catch(() => {});
  await call.step(`${mutation.step}.after_request_sent`);
  let view: SessionView;
  try {
    view = await sent;
  } catch (error) {
    const failure = classifyMutationFailure(error, mutation.tool);
    if (failure.kind === 'block') return call.block(loaded, 'MUTATION_REJECTED', failure.reason);
    call.emit({ event: 'mutation_not_confirmed', code: failure.error.code, tool: mutation.tool });
    throw failure.error;
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

/** `sess_publish`: the next revision after the verified answer. */
export function publish(call: Call, op: PublishOperation): Promise<EngineResult> {
  return run(call, op, PUBLISH);
}

/** `sess_complete`: close the Session after the verified answer. */
export function complete(call: Call, op: CompleteOperation): Promise<EngineResult> {
  return run(call, op, COMPLETE);
}
