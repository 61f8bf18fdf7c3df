/**
 * Every change of an interaction record's state, in one place: {@link transition} takes the
 * current state and one event and returns the next state, or throws when that event cannot
 * happen in that state (an engine bug, never a caller's mistake).
 *
 * Pure: no I/O, no clock, no randomness. The engine decides *which* event happened (from Sess's
 * answers and the caller's arguments) and persists the returned state with compare-and-set.
 *
 * ```
 * create_intent ─created──────▶ waiting(n) ─released─▶ answered(n) ─publish_saved─▶ publish_pending
 *       │        ─ask_created──▶ ask_open ─ask_closed─▶ ask_closed         │               │published
 *       └─create_lost─▶ create_unknown      waiting(n) ◀──────────────────────────────────┘ (n+1)
 *                      waiting ─expired─▶ expired     answered ─complete_saved─▶ complete_pending
 *   any unfinished ─blocked─▶ blocked                 complete_pending ─completed─▶ completed
 * ```
 */
import { SessMcpError } from '../errors.js';
import type { AskView, CompleteInput, PublishInput, SessionView } from '../ports.js';
import type { InteractionState, InteractionStateKind, VerifiedResponse } from '../record.js';

/** Something that happened to an interaction. */
export type InteractionEvent =
  /** Sess confirmed the Session the intent asked for. */
  | { type: 'created'; view: SessionView }
  /** Sess confirmed the Ask the intent asked for. */
  | { type: 'ask_created'; view: AskView }
  /** The create request was (or may have been) sent and its outcome is unknown. */
  | { type: 'create_lost'; reason: string }
  /** An answer at the current revision was verified and confirmed current. */
  | { type: 'released'; response: VerifiedResponse }
  /** The link closed for good with no answer at the current revision. */
  | { type: 'expired' }
  /** The exact publish request was saved before dispatch. */
  | { type: 'publish_saved'; request: PublishInput }
  /** The exact complete request was saved before dispatch. */
  | { type: 'complete_saved'; request: CompleteInput }
  /** Sess confirmed the saved publish. */
  | { type: 'published'; view: SessionView; surfaceDigest: string }
  /** Sess confirmed the saved complete. */
  | { type: 'completed'; view: SessionView }
  /** The Ask takes no more answers. */
  | { type: 'ask_closed' }
  /** The interaction needs its owner. */
  | {
      type: 'blocked';
      code: 'MUTATION_REJECTED' | 'VERIFICATION_FAILED' | 'RECOVERY_BLOCKED';
      reason: string;
    };

function illegal(state: InteractionState, event: InteractionEvent): never {
  throw new SessMcpError(
    'INVALID_STATE',
    `Internal error: the event ${event.type} cannot happen in state ${state.kind}.`,
    { reason: 'illegal_transition', state: state.kind },
  );
}

/** States from which nothing moves any more (`blocked` and `create_unknown` wait for the owner). */
const TERMINAL: ReadonlySet<InteractionStateKind> = new Set([
  'completed',
  'expired',
  'ask_closed',
  'blocked',
  'create_unknown',
]);

/**
 * The next state after `event` in `state`. Throws `SessMcpError` `INVALID_STATE` (reason
 * `illegal_transition`) for a pair that cannot happen.
 */
export function transition(state: InteractionState, event: InteractionEvent): InteractionState {
  switch (event.type) {
    case 'created': {
      if (state.kind !== 'create_intent' || state.request.respondents !== undefined) illegal(state, event);
      const { view } = event;
      return {
        kind: 'waiting',
        session: {
          sessionId: view.sessionId,
          workspaceId: view.workspaceId,
          humanUrl: view.humanUrl,
          expiresAt: view.expiresAt,
        },
        revision: view.revision,
        surface: state.request.surface,
      };
    }
    case 'ask_created': {
      if (state.kind !== 'create_intent' || state.request.respondents === undefined) illegal(state, event);
      const { view } = event;
      return {
        kind: 'ask_open',
        askId: view.askId,
        workspaceId: view.workspaceId,
        humanUrl: view.humanUrl,
        expiresAt: view.expiresAt,
        surface: state.request.surface,
        max: view.max,
      };
    }
    case 'create_lost':
      if (state.kind !== 'create_intent') illegal(state, event);
      return { kind: 'create_unknown', request: state.request, reason: event.reason };
    case 'released':
      if (state.kind !== 'waiting' || event.response.revision !== state.revision) illegal(state, event);
      return {
        kind: 'answered',
        session: state.session,
        revision: state.revision,
        surface: state.surface,
        response: event.response,
        ...(state.lastMutation === undefined ? {} : { lastMutation: state.lastMutation }),
      };
    case 'expired':
      if (state.kind !== 'waiting') illegal(state, event);
      return { kind: 'expired', sessionId: state.session.sessionId, revision: state.revision };
    case 'publish_saved':
    case 'complete_saved': {
      if (
        state.kind !== 'answered' ||
        event.request.expectedRevision !== state.revision ||
        event.request.responseEventId !== state.response.eventId
      ) {
        illegal(state, event);
      }
      const base = {
        session: state.session,
        revision: state.revision,
        surface: state.surface,
        response: state.response,
      };
      return event.type === 'publish_saved'
        ? { kind: 'publish_pending', ...base, request: event.request }
        : { kind: 'complete_pending', ...base, request: event.request };
    }
    case 'published': {
      if (state.kind !== 'publish_pending' || event.view.revision !== state.request.expectedRevision + 1) {
        illegal(state, event);
      }
      const { view } = event;
      // The answer data of the previous revision goes: the record keeps only what the next step needs.
      return {
        kind: 'waiting',
        session: { ...state.session, humanUrl: view.humanUrl, expiresAt: view.expiresAt },
        revision: view.revision,
        surface: state.request.surface,
        lastMutation: {
          kind: 'publish',
          expectedRevision: state.request.expectedRevision,
          responseEventId: state.request.responseEventId,
          surfaceDigest: event.surfaceDigest,
        },
      };
    }
    case 'completed':
      if (state.kind !== 'complete_pending') illegal(state, event);
      // Completion drops the link, the Surface and the answer: only what recognises a repeat stays.
      return {
        kind: 'completed',
        sessionId: state.session.sessionId,
        revision: state.request.expectedRevision,
        lastMutation: {
          kind: 'complete',
          expectedRevision: state.request.expectedRevision,
          responseEventId: state.request.responseEventId,
        },
      };
    case 'ask_closed':
      if (state.kind !== 'ask_open') illegal(state, event);
      // The link goes; the Surface and workspace stay so a later read can still verify answers.
      return {
        kind: 'ask_closed',
        askId: state.askId,
        workspaceId: state.workspaceId,
        surface: state.surface,
      };
    case 'blocked': {
      if (TERMINAL.has(state.kind) || state.kind === 'create_intent') illegal(state, event);
      const blocked: InteractionState = {
        kind: 'blocked',
        code: event.code,
        reason: event.reason,
        previous: state.kind,
      };
      if ('session' in state) {
        blocked.sessionId = state.session.sessionId;
        blocked.revision = state.revision;
      }
      return blocked;
    }
  }
}
