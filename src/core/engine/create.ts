/**
 * `sess_request` and `sess_ask`: save the intent, create the Session (or Ask) at Sess, save what
 * Sess confirmed. The write-ahead order lives here: nothing is sent before the intent is saved,
 * and a create whose outcome is unknown is never repeated.
 *
 * Deliberately does not validate arguments (the contract's validators ran first) and does not
 * read answers (`response.ts`).
 */
import { SessMcpError } from '../contract/errors.js';
import type { AskView, SessionView } from '../contract/ports.js';
import {
  type CreateRequest,
  type InteractionRecord,
  type InteractionState,
  RECORD_FORMAT,
} from '../model/record.js';
import { type InteractionEvent, transition } from '../model/transitions.js';
import { type Call, type Loaded, nextRecord } from './call.js';
import { newHandle } from './identity.js';
import type { State } from './refusals.js';
import { classifyCreateFailure, createOutcomeUnknown } from './sess-errors.js';
import type { CreateOperation, EngineResult } from './types.js';

/** `sess_request` / `sess_ask`: save the intent, create, save the Session (or Ask). */
export async function create(call: Call, op: CreateOperation): Promise<EngineResult> {
  const { sess } = call.auth;
  const handle = newHandle(call.settings.randomId);
  const request: CreateRequest = { idempotencyKey: call.settings.randomId(), surface: op.surface };
  if (op.expiresIn !== undefined) request.expiresIn = op.expiresIn;
  if (op.respondents !== undefined) request.respondents = op.respondents;
  const now = call.nowIso();
  const intent: InteractionRecord = {
    format: RECORD_FORMAT,
    handle,
    binding: call.auth.binding,
    createdAt: now,
    updatedAt: now,
    title: request.surface.title,
    state: { kind: 'create_intent', request },
  };

  call.checkNotCancelled();
  await call.step('create.before_intent_saved');
  const saved = (await call.store(() =>
    call.auth.store.create(intent, call.settings.createLimits),
  )) as Loaded<State<'create_intent'>>;
  await call.step('create.after_intent_saved');

  // Mutations never take the caller's signal: a create already sent is not abandoned mid-flight.
  const base = { surface: request.surface, idempotencyKey: request.idempotencyKey };
  const expires = request.expiresIn === undefined ? {} : { expiresIn: request.expiresIn };
  const pending: Promise<SessionView | AskView> =
    request.respondents === undefined
      ? sess.createSession({ ...base, ...expires })
      : sess.createAsk({ ...base, ...expires, respondents: request.respondents });
  pending.catch(() => {});
  await call.step('create.after_request_sent');

  let view: SessionView | AskView;
  try {
    view = await pending;
  } catch (error) {
    const failure = classifyCreateFailure(error);
    if (failure.kind === 'not_created') {
      // Nothing exists at Sess: the intent goes. If that fails too, the intent stays for the
      // owner (every call on it answers CREATE_OUTCOME_UNKNOWN) and the caller still learns why.
      try {
        await call.auth.store.delete(handle, saved.version);
      } catch {
        call.emit({ event: 'create_intent_not_removed', code: 'STATE_STORE_ERROR' });
      }
      throw failure.error;
    }
    try {
      await call.apply(saved, { type: 'create_lost', reason: failure.reason });
    } catch {
      // The intent itself already answers CREATE_OUTCOME_UNKNOWN on every later call.
      call.emit({ event: 'create_unknown_not_saved', code: 'STATE_STORE_ERROR' });
    }
    call.emit({ event: 'create_outcome_unknown', code: 'CREATE_OUTCOME_UNKNOWN' });
    throw createOutcomeUnknown('create_unknown');
  }
  await call.step('create.after_response');

  const event: InteractionEvent =
    'askId' in view ? { type: 'ask_created', view } : { type: 'created', view: view as SessionView };
  let next: InteractionState;
  try {
    next = transition(saved.record.state, event);
  } catch {
    throw new SessMcpError(
      'SESS_PROTOCOL_ERROR',
      'Sess answered the create request with something else than was asked for. Do not repeat the request; ask the owner to check Sess.',
      { reason: 'create_other_object' },
    );
  }
  await call.step('create.before_record_saved');
  try {
    await call.auth.store.update(nextRecord(saved.record, next, call.nowIso()), saved.version);
  } catch (error) {
    // The link exists but this server cannot follow it. The intent stays (the owner finds it by
    // its creation time); repeating the call would create a second link, so it is not retried.
    call.emit({ event: 'created_not_saved', code: 'CREATED_NOT_SAVED' });
    throw new SessMcpError(
      'CREATED_NOT_SAVED',
      'Sess created the link, but this server could not save it, so it cannot follow the answer. Do not repeat the request: a link already exists. Ask the owner (owner procedure).',
      { cause: error },
    );
  }
  await call.step('create.after_record_saved');

  if (next.kind === 'ask_open') {
    const askView = view as AskView;
    return {
      handle,
      revision: 1,
      state: 'waiting',
      humanUrl: next.humanUrl,
      expiresAt: next.expiresAt,
      ask: {
        id: askView.askId,
        open: askView.status === 'open',
        max: askView.max,
        started: askView.started,
        answered: askView.answered,
        answers: [],
      },
    };
  }
  const waiting = next as State<'waiting'>;
  return {
    handle,
    revision: waiting.revision,
    state: 'waiting',
    humanUrl: waiting.session.humanUrl,
    expiresAt: waiting.session.expiresAt,
  };
}
