/**
 * The engine's refusals: every `SessMcpError` an operation throws because of where an
 * interaction is (wrong revision, another answer, a saved mutation, blocked, an Ask handle), and
 * the small checks that throw them. One place, so two operations refusing the same thing say it
 * the same way.
 *
 * Deliberately decides nothing: the operations choose which refusal applies. Messages never
 * repeat a value the caller sent or one Sess returned (no handle, link or answer).
 */
import { SessMcpError } from '../contract/errors.js';
import type { SessionView } from '../contract/ports.js';
import type { InteractionState } from '../model/record.js';
import { createOutcomeUnknown } from './sess-errors.js';

/** A state of one kind. */
export type State<K extends InteractionState['kind']> = Extract<InteractionState, { kind: K }>;

/** The tools that change a Session with a saved request: after its answer, or withdrawing it. */
export type MutationTool = 'sess_publish' | 'sess_complete' | 'sess_withdraw';

/** A state that holds a saved, unconfirmed request. */
export type PendingState = State<
  'publish_pending' | 'complete_pending' | 'withdraw_pending' | 'ask_close_pending'
>;

export function handleNotFound(): SessMcpError {
  return new SessMcpError(
    'HANDLE_NOT_FOUND',
    'No interaction with this handle exists for this profile, origin and key. Check the handle; it cannot be used here.',
  );
}

export function bindingMismatch(): SessMcpError {
  return new SessMcpError(
    'BINDING_MISMATCH',
    'This handle belongs to another credential generation (the API key or grant changed). It cannot be used with the current one.',
  );
}

/** Another call won the compare-and-set with a different change. */
export function staleVersion(): SessMcpError {
  return new SessMcpError(
    'INVALID_STATE',
    'Another call changed this interaction first; nothing was sent or released here. Call sess_response to see where it is now.',
    { reason: 'stale_version' },
  );
}

export function storeFailure(cause: unknown): SessMcpError {
  return new SessMcpError('STATE_STORE_ERROR', 'The state store failed unexpectedly; nothing was changed.', {
    retryable: false,
    reason: 'store_failure',
    cause,
  });
}

export function cancelledBeforeSaved(): SessMcpError {
  return new SessMcpError(
    'SESS_UNAVAILABLE',
    'The call was cancelled before anything was saved or sent; nothing changed. Call again if still needed.',
    { reason: 'cancelled' },
  );
}

export function checkRevision(given: number, current: number, state: string, name = 'revision'): void {
  if (given !== current) {
    throw new SessMcpError(
      'REVISION_MISMATCH',
      `${name} ${given} is not the current revision of this interaction: it is ${current}. Nothing was sent.`,
      { state },
    );
  }
}

export function checkResponse(given: string, current: string): void {
  if (given !== current) {
    throw new SessMcpError(
      'RESPONSE_MISMATCH',
      'response_event_id is not the answer this interaction holds at that revision. Use response.eventId from the answered sess_response; nothing was sent.',
    );
  }
}

export function noAnswerYet(revision: number): SessMcpError {
  return new SessMcpError(
    'INVALID_STATE',
    `There is no answer at revision ${revision} yet. Call sess_response until it returns answered; nothing was sent.`,
    { reason: 'no_answer_yet', state: 'waiting' },
  );
}

export function completedAlready(): SessMcpError {
  return new SessMcpError('INVALID_STATE', 'This interaction is already completed; nothing was sent.', {
    reason: 'completed',
    state: 'completed',
  });
}

const TOOL_OF: { readonly [K in PendingState['kind']]: MutationTool } = {
  publish_pending: 'sess_publish',
  complete_pending: 'sess_complete',
  withdraw_pending: 'sess_withdraw',
  ask_close_pending: 'sess_withdraw',
};

/** What a saved request is, in words ("A sess_publish after revision 1"). */
function savedRequest(state: PendingState): string {
  switch (state.kind) {
    case 'withdraw_pending':
      return `A sess_withdraw at revision ${state.request.expectedRevision}`;
    case 'ask_close_pending':
      return 'A sess_withdraw of this Ask';
    default:
      return `A ${TOOL_OF[state.kind]} after revision ${state.request.expectedRevision}`;
  }
}

export function pendingError(state: PendingState): SessMcpError {
  const tool = TOOL_OF[state.kind];
  return new SessMcpError(
    'MUTATION_PENDING',
    `${savedRequest(state)} is saved and its outcome is not confirmed. Repeat that identical ${tool} call first; nothing was sent.`,
    { state: state.kind },
  );
}

/** A repeat that differs from the saved, unconfirmed request of the same tool. */
export function pendingDiffers(state: PendingState): SessMcpError {
  let what: string;
  switch (state.kind) {
    case 'publish_pending':
      what = `A different sess_publish after revision ${state.request.expectedRevision}`;
      break;
    case 'complete_pending':
      what = `A sess_complete after revision ${state.request.expectedRevision} with another response_event_id`;
      break;
    default:
      what = `${savedRequest(state)} with another expected_revision or reason`;
  }
  return new SessMcpError(
    'PENDING_MUTATION_DIFFERS',
    `${what} is saved and its outcome is not confirmed. Repeat that identical call first; nothing was sent.`,
    { state: state.kind },
  );
}

const BLOCKED_MESSAGES = {
  MUTATION_REJECTED: 'Sess refused the saved publish or complete request, so the interaction is blocked.',
  VERIFICATION_FAILED:
    'An answer\u2019s receipt did not verify, so no answer was released and the interaction is blocked.',
  RECOVERY_BLOCKED:
    'The Session is no longer where this interaction expects it, so no answer was released and it is blocked.',
} as const;

/** The error a `blocked` record answers every call with. */
export function blockedError(state: State<'blocked'>): SessMcpError {
  return new SessMcpError(
    state.code,
    `${BLOCKED_MESSAGES[state.code]} Reason: ${state.reason}. The owner must resolve it (owner procedure); start a new interaction if needed.`,
    { reason: state.reason, state: 'blocked' },
  );
}

/**
 * A view of Sess that contradicts the record. `reason` is a fixed word naming the contradiction,
 * for diagnostics; it never carries data.
 */
export function protocolMismatch(reason: string, extra = 'nothing was changed'): SessMcpError {
  return new SessMcpError(
    'SESS_PROTOCOL_ERROR',
    `Sess reported a Session that contradicts this interaction's record; ${extra}. Ask the owner to check the Sess origin.`,
    { reason },
  );
}

export function checkSameSession(view: SessionView, sessionId: string): void {
  if (view.sessionId !== sessionId) throw protocolMismatch('other_session');
}

/** A state that waits for something else than this call: an unknown create, the owner, or a saved mutation. */
export type StuckState = State<
  'create_intent' | 'create_unknown' | 'blocked' | 'publish_pending' | 'complete_pending' | 'withdraw_pending'
>;

const STUCK_KINDS: ReadonlySet<InteractionState['kind']> = new Set([
  'create_intent',
  'create_unknown',
  'blocked',
  'publish_pending',
  'complete_pending',
  'withdraw_pending',
]);

/** True for a {@link StuckState}. */
export function isStuck(state: InteractionState): state is StuckState {
  return STUCK_KINDS.has(state.kind);
}

/** What every tool answers a {@link StuckState} with (unless it is the repeat that state waits for). */
export function stuckError(state: StuckState): SessMcpError {
  switch (state.kind) {
    case 'create_intent':
    case 'create_unknown':
      return createOutcomeUnknown(state.kind);
    case 'blocked':
      return blockedError(state);
    default:
      return pendingError(state);
  }
}

/** The refusals publish and complete share, for states neither can act on. */
export function refuseMutation(state: InteractionState, tool: MutationTool, expectedRevision: number): never {
  if (isStuck(state)) throw stuckError(state);
  switch (state.kind) {
    case 'ask_open':
    case 'ask_close_pending':
    case 'ask_closed':
      throw new SessMcpError(
        'INVALID_STATE',
        `This handle is an Ask (many respondents): ${tool} does not apply to it. Read its answers with sess_response.`,
        { reason: 'ask_handle', state: state.kind },
      );
    case 'expired':
      checkRevision(expectedRevision, state.revision, state.kind, 'expected_revision');
      throw new SessMcpError(
        'INVALID_STATE',
        'The link expired with no answer; there is nothing to continue. Start a new interaction if needed.',
        { reason: 'expired', state: state.kind },
      );
    case 'completed':
      throw completedAlready();
    case 'withdrawn':
      throw withdrawnAlready();
    default:
      throw new SessMcpError('INVALID_STATE', `${tool} cannot run in state ${state.kind}.`, {
        state: state.kind,
      });
  }
}

// ---------------------------------------------------------------------------------------------
// sess_withdraw

export function withdrawnAlready(): SessMcpError {
  return new SessMcpError(
    'INVALID_STATE',
    'This interaction was withdrawn: the person can no longer answer it; nothing was sent. Start a new interaction if needed.',
    { reason: 'withdrawn', state: 'withdrawn' },
  );
}

/**
 * A withdraw over a record that holds a verified answer, or one Sess refused because an answer at
 * that revision came first: an answer is never withdrawn.
 */
export function answerArrived(revision: number, local: boolean, state: string): SessMcpError {
  const where = local
    ? `This interaction already holds a verified answer at revision ${revision}; nothing was sent.`
    : `Sess refused the withdraw: the person answered at revision ${revision} first. The interaction is as it was.`;
  return new SessMcpError(
    'ANSWER_ARRIVED',
    `${where} An answer is never withdrawn: call sess_response, which returns it, then sess_complete (or sess_publish a follow-up).`,
    { reason: 'answer_arrived', state },
  );
}

/** Sess does not offer withdrawal (`404`/`405` on the endpoint while the Session or Ask exists). */
export function withdrawUnavailable(state: string): SessMcpError {
  return new SessMcpError(
    'WITHDRAW_UNAVAILABLE',
    'This Sess does not offer withdrawal, so the question stays open; the interaction is as it was. Tell the person in chat that you no longer need an answer, or keep waiting with sess_response.',
    { reason: 'withdraw_not_offered', state },
  );
}

/** Sess refused a withdraw it does not explain by an answer (`410` expired, another `4xx`). */
export function withdrawRefused(status: number, apiCode: string | undefined, state: string): SessMcpError {
  if (status === 409 && state === 'ask_open') {
    return new SessMcpError(
      'INVALID_STATE',
      'Sess reports this Ask already closed; nothing changed here. Call sess_response to read its answers.',
      { reason: 'closed', state },
    );
  }
  if (status === 410) {
    return new SessMcpError(
      'INVALID_STATE',
      'The link expired with no answer before the withdraw; the person can no longer answer. Call sess_response to record it.',
      { reason: 'expired', state },
    );
  }
  return new SessMcpError(
    'MUTATION_REJECTED',
    `Sess refused the withdraw (HTTP ${status}${apiCode === undefined ? '' : ` ${apiCode}`}); nothing changed and the interaction is as it was. Ask the owner to check the Sess origin and version.`,
    { reason: apiCode ?? `http_${status}`, state },
  );
}

const FINISHED_WORDS = {
  completed: 'completed',
  expired: 'expired with no answer',
  withdrawn: 'withdrawn (with another expected_revision or reason)',
  ask_closed: 'a closed Ask',
} as const;

/** A withdraw over a finished record that is no repeat of the confirmed withdraw. */
export function withdrawFinished(kind: keyof typeof FINISHED_WORDS): SessMcpError {
  const state = kind === 'ask_closed' ? 'closed' : kind;
  return new SessMcpError(
    'INVALID_STATE',
    `sess_withdraw does not apply: this interaction is ${FINISHED_WORDS[kind]} (state ${state}); nothing was sent.`,
    { reason: state, state: kind },
  );
}
