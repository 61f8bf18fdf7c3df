/**
 * The engine's refusals: every `SessMcpError` an operation throws because of where an
 * interaction is (wrong revision, another answer, a saved mutation, blocked, an Ask handle), and
 * the small checks that throw them. One place, so two operations refusing the same thing say it
 * the same way.
 *
 * Deliberately decides nothing: the operations choose which refusal applies. Messages never
 * repeat a value the caller sent or one Sess returned (no handle, link or answer).
 */
import { SessMcpError } from '../errors.js';
import type { SessionView } from '../ports.js';
import type { InteractionState } from '../record.js';
import { createOutcomeUnknown } from './sess-errors.js';

/** A state of one kind. */
export type State<K extends InteractionState['kind']> = Extract<InteractionState, { kind: K }>;

/** The tools that change a Session after its answer. */
export type MutationTool = 'sess_publish' | 'sess_complete';

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

function toolOf(state: State<'publish_pending'> | State<'complete_pending'>): MutationTool {
  return state.kind === 'publish_pending' ? 'sess_publish' : 'sess_complete';
}

export function pendingError(state: State<'publish_pending'> | State<'complete_pending'>): SessMcpError {
  const tool = toolOf(state);
  return new SessMcpError(
    'MUTATION_PENDING',
    `A ${tool} after revision ${state.request.expectedRevision} is saved and its outcome is not confirmed. Repeat that identical ${tool} call first; nothing was sent.`,
    { state: state.kind },
  );
}

/** A repeat that differs from the saved, unconfirmed request of the same tool. */
export function pendingDiffers(state: State<'publish_pending'> | State<'complete_pending'>): SessMcpError {
  const what =
    state.kind === 'publish_pending'
      ? `A different sess_publish after revision ${state.request.expectedRevision}`
      : `A sess_complete after revision ${state.request.expectedRevision} with another response_event_id`;
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
  'create_intent' | 'create_unknown' | 'blocked' | 'publish_pending' | 'complete_pending'
>;

const STUCK_KINDS: ReadonlySet<InteractionState['kind']> = new Set([
  'create_intent',
  'create_unknown',
  'blocked',
  'publish_pending',
  'complete_pending',
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
    default:
      throw new SessMcpError('INVALID_STATE', `${tool} cannot run in state ${state.kind}.`, {
        state: state.kind,
      });
  }
}
