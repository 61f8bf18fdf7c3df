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
 *
 * waiting ─withdraw_saved─▶ withdraw_pending ─withdrawn─▶ withdrawn
 *    ▲                             │
 *    └──────withdraw_refused───────┘   (Sess refused: the record is as it was)
 * ask_open ─ask_close_saved─▶ ask_close_pending ─ask_withdrawn─▶ ask_closed
 *    ▲                               │
 *    └────────ask_close_refused──────┘
 * ```
 */
import { SessMcpError } from '../contract/errors.js';
import type {
  AskView,
  CloseAskInput,
  CompleteInput,
  PublishInput,
  SessionView,
  WithdrawInput,
} from '../contract/ports.js';
import { type InteractionState, TERMINAL, type VerifiedResponse } from './record.js';

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
  /** The exact withdraw request of a waiting Session was saved before dispatch. */
  | { type: 'withdraw_saved'; request: WithdrawInput }
  /** Sess confirmed the saved withdraw; `reasonDigest` is the digest of its reason (of "" when none). */
  | { type: 'withdrawn'; view: SessionView; reasonDigest: string }
  /** Sess certainly did not apply the saved withdraw (an answer came first, or no withdrawal offered). */
  | { type: 'withdraw_refused' }
  /** The exact close request of an open Ask was saved before dispatch. */
  | { type: 'ask_close_saved'; request: CloseAskInput }
  /** Sess confirmed the saved close of the Ask. */
  | { type: 'ask_withdrawn'; reasonDigest: string }
  /** Sess certainly did not apply the saved close. */
  | { type: 'ask_close_refused' }
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

/** The events of one kind. */
type EventOf<T extends InteractionEvent['type']> = Extract<InteractionEvent, { type: T }>;

/**
 * The next state after `event` in `state`. Throws `SessMcpError` `INVALID_STATE` (reason
 * `illegal_transition`) for a pair that cannot happen.
 */
export function transition(state: InteractionState, event: InteractionEvent): InteractionState {
  switch (event.type) {
    case 'created':
    case 'ask_created':
    case 'create_lost':
      return afterCreate(state, event);
    case 'released':
    case 'expired':
      return afterWait(state, event);
    case 'publish_saved':
    case 'complete_saved':
      return mutationSaved(state, event);
    case 'published':
    case 'completed':
      return mutationConfirmed(state, event);
    case 'withdraw_saved':
    case 'withdrawn':
    case 'withdraw_refused':
      return afterWithdraw(state, event);
    case 'ask_closed':
    case 'ask_close_saved':
    case 'ask_close_refused':
    case 'ask_withdrawn':
      return afterAskClose(state, event);
    case 'blocked':
      return blockedFrom(state, event);
  }
}

/** What the create request's outcome makes of an intent: a waiting Session, an open Ask, or unknown. */
function afterCreate(
  state: InteractionState,
  event: EventOf<'created' | 'ask_created' | 'create_lost'>,
): InteractionState {
  if (state.kind !== 'create_intent') illegal(state, event);
  switch (event.type) {
    case 'created': {
      if (state.request.respondents !== undefined) illegal(state, event);
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
      if (state.request.respondents === undefined) illegal(state, event);
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
      return { kind: 'create_unknown', request: state.request, reason: event.reason };
  }
}

/** How a wait on a Session ends: an answer at its revision, or the link closing without one. */
function afterWait(state: InteractionState, event: EventOf<'released' | 'expired'>): InteractionState {
  if (state.kind !== 'waiting') illegal(state, event);
  if (event.type === 'expired') {
    return { kind: 'expired', sessionId: state.session.sessionId, revision: state.revision };
  }
  if (event.response.revision !== state.revision) illegal(state, event);
  return {
    kind: 'answered',
    session: state.session,
    revision: state.revision,
    surface: state.surface,
    response: event.response,
    ...(state.lastMutation === undefined ? {} : { lastMutation: state.lastMutation }),
  };
}

/** An answered Session with its publish or complete request saved before dispatch. */
function mutationSaved(
  state: InteractionState,
  event: EventOf<'publish_saved' | 'complete_saved'>,
): InteractionState {
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

/** What Sess's confirmation of a saved publish or complete leaves of the record. */
function mutationConfirmed(
  state: InteractionState,
  event: EventOf<'published' | 'completed'>,
): InteractionState {
  if (event.type === 'completed') {
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
  }
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

/** A waiting Session's withdraw: saved, confirmed, or refused by Sess. */
function afterWithdraw(
  state: InteractionState,
  event: EventOf<'withdraw_saved' | 'withdrawn' | 'withdraw_refused'>,
): InteractionState {
  switch (event.type) {
    case 'withdraw_saved':
      if (state.kind !== 'waiting' || event.request.expectedRevision !== state.revision)
        illegal(state, event);
      return {
        kind: 'withdraw_pending',
        session: state.session,
        revision: state.revision,
        surface: state.surface,
        request: event.request,
        ...(state.lastMutation === undefined ? {} : { lastMutation: state.lastMutation }),
      };
    case 'withdrawn':
      if (
        state.kind !== 'withdraw_pending' ||
        event.view.sessionId !== state.session.sessionId ||
        event.view.revision !== state.request.expectedRevision
      ) {
        illegal(state, event);
      }
      // As on completion, the link, the Surface and any answer data go: only what recognises a repeat stays.
      return {
        kind: 'withdrawn',
        sessionId: state.session.sessionId,
        revision: state.request.expectedRevision,
        withdrawal: { expectedRevision: state.request.expectedRevision, reasonDigest: event.reasonDigest },
      };
    case 'withdraw_refused':
      if (state.kind !== 'withdraw_pending') illegal(state, event);
      // Exactly as it was before the withdraw was saved, its last confirmed mutation included.
      return {
        kind: 'waiting',
        session: state.session,
        revision: state.revision,
        surface: state.surface,
        ...(state.lastMutation === undefined ? {} : { lastMutation: state.lastMutation }),
      };
  }
}

/** An open Ask closing: by itself, or through a close request saved, confirmed or refused. */
function afterAskClose(
  state: InteractionState,
  event: EventOf<'ask_closed' | 'ask_close_saved' | 'ask_close_refused' | 'ask_withdrawn'>,
): InteractionState {
  switch (event.type) {
    case 'ask_closed':
      if (state.kind !== 'ask_open') illegal(state, event);
      // The link goes; the Surface and workspace stay so a later read can still verify answers.
      return {
        kind: 'ask_closed',
        askId: state.askId,
        workspaceId: state.workspaceId,
        surface: state.surface,
      };
    case 'ask_close_saved':
    case 'ask_close_refused': {
      const from = event.type === 'ask_close_saved' ? 'ask_open' : 'ask_close_pending';
      if (state.kind !== from) illegal(state, event);
      const { askId, workspaceId, humanUrl, expiresAt, surface, max } = state as Extract<
        InteractionState,
        { kind: 'ask_open' | 'ask_close_pending' }
      >;
      const open = { askId, workspaceId, humanUrl, expiresAt, surface, max };
      return event.type === 'ask_close_saved'
        ? { kind: 'ask_close_pending', ...open, request: event.request }
        : { kind: 'ask_open', ...open };
    }
    case 'ask_withdrawn':
      if (state.kind !== 'ask_close_pending') illegal(state, event);
      // The link goes; the Surface and workspace stay so the answers given before stay readable.
      return {
        kind: 'ask_closed',
        askId: state.askId,
        workspaceId: state.workspaceId,
        surface: state.surface,
        withdrawal: { expectedRevision: 1, reasonDigest: event.reasonDigest },
      };
  }
}

/** Any unfinished interaction handed to its owner, keeping the Session's id and revision when it has them. */
function blockedFrom(state: InteractionState, event: EventOf<'blocked'>): InteractionState {
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
