/**
 * The durable interaction record: one per handle, versioned, its state a tagged union keyed on
 * `state.kind`. This module names the states and states the facts read off a record: the record
 * formats written and read, whether a record is unfinished (`isUnfinished`, for the cap) and when it
 * finished (`finishedAtOf`, for retention), and the
 * public state, listing group and owner code `sess_list` shows for it (`listStateOf`,
 * `listGroupOf`, `ownerCodeOf`).
 *
 * It changes no state: every transition lives in one place, `transitions.ts`.
 *
 * A record may hold the Sess link and answer data until it is completed: stores keep it private.
 */
import type { ErrorCode } from '../contract/errors.js';
import type { Binding } from './binding.js';
import type {
  AskRespondentsOptions,
  CloseAskInput,
  CompleteInput,
  PublishInput,
  WithdrawInput,
} from './saved-requests.js';
import type { Answer, Surface } from './surface.js';

/**
 * The record format this package writes. Format 2 adds the record's `title` and `expiresAt` and the
 * withdraw states; stores read format 1 records (written by 0.1.0) as they are, so they list with
 * `title: null`. Any other value is `STATE_STORE_ERROR` (`unsupported_version`).
 */
export const RECORD_FORMAT = 2;

/** Every record format this package reads: format 1 (0.1.0) and {@link RECORD_FORMAT}. */
export const READABLE_RECORD_FORMATS: readonly RecordFormat[] = Object.freeze([1, 2] as const);

/** A record format this package reads. */
export type RecordFormat = 1 | 2;

/** A verified answer, kept until completion. */
export interface VerifiedResponse {
  eventId: string;
  revision: number;
  answer: Answer;
  submittedAt: string;
  receipt: string;
  keyId: string;
  verifiedAt: string;
}

/** The Session a record follows. `humanUrl` is a bearer capability and is dropped on completion. */
export interface SessionRef {
  sessionId: string;
  workspaceId: string;
  humanUrl: string;
  expiresAt: string;
}

/** The last confirmed publish or complete, kept so an identical repeat can be answered. */
export interface ConfirmedMutation {
  kind: 'publish' | 'complete';
  expectedRevision: number;
  responseEventId: string;
  /** Digest of the published Surface (publish only), to recognise an identical repeat. */
  surfaceDigest?: string;
}

/**
 * The confirmed withdraw of a Session (or close of an Ask), kept so an identical repeat succeeds.
 * Holds a digest of the reason, never the reason itself.
 */
export interface ConfirmedWithdrawal {
  /** The revision that was withdrawn (1 for an Ask). */
  expectedRevision: number;
  /** Digest of the reason given (of the empty string when none was given). */
  reasonDigest: string;
}

/** The create request, saved before it is sent. */
export interface CreateRequest {
  idempotencyKey: string;
  surface: Surface;
  expiresIn?: number;
  /** Present for an Ask (`sess_ask` with `respondents`). */
  respondents?: AskRespondentsOptions;
}

/** The state of an interaction. One doc line per variant. */
export type InteractionState =
  /** The create request is saved and may be in flight. */
  | { kind: 'create_intent'; request: CreateRequest }
  /** The create was sent and its outcome was lost; needs the owner. */
  | { kind: 'create_unknown'; request: CreateRequest; reason: string }
  /** A Session waits for the person's answer at `revision`. */
  | {
      kind: 'waiting';
      session: SessionRef;
      revision: number;
      surface: Surface;
      lastMutation?: ConfirmedMutation;
    }
  /** A verified answer at `revision` waits for the agent's next step. */
  | {
      kind: 'answered';
      session: SessionRef;
      revision: number;
      surface: Surface;
      response: VerifiedResponse;
      lastMutation?: ConfirmedMutation;
    }
  /** A publish is saved and may be in flight; repeat the identical call to reconcile. */
  | {
      kind: 'publish_pending';
      session: SessionRef;
      revision: number;
      surface: Surface;
      response: VerifiedResponse;
      request: PublishInput;
    }
  /** A complete is saved and may be in flight; repeat the identical call to reconcile. */
  | {
      kind: 'complete_pending';
      session: SessionRef;
      revision: number;
      surface: Surface;
      response: VerifiedResponse;
      request: CompleteInput;
    }
  /** A withdraw is saved and may be in flight; repeat the identical call to reconcile. */
  | {
      kind: 'withdraw_pending';
      session: SessionRef;
      revision: number;
      surface: Surface;
      request: WithdrawInput;
      lastMutation?: ConfirmedMutation;
    }
  /** Withdrawn at `revision` before any answer there. Final; link and Surface are removed. */
  | { kind: 'withdrawn'; sessionId: string; revision: number; withdrawal: ConfirmedWithdrawal }
  /** Completed. The link and answer data have been removed from the record. */
  | { kind: 'completed'; sessionId: string; revision: number; lastMutation: ConfirmedMutation }
  /** The link closed for good with no answer at `revision`. Final. */
  | { kind: 'expired'; sessionId: string; revision: number }
  /** Needs the owner: a rejected mutation, a failed verification or a Session that moved on. */
  | {
      kind: 'blocked';
      /** The code the tools report for this record. */
      code: 'MUTATION_REJECTED' | 'VERIFICATION_FAILED' | 'RECOVERY_BLOCKED';
      /** A fixed word, never user data. */
      reason: string;
      sessionId?: string;
      revision?: number;
      /** The state the record was in when it was blocked, for the owner. */
      previous: string;
    }
  /** An Ask that may still take answers. */
  | {
      kind: 'ask_open';
      askId: string;
      workspaceId: string;
      humanUrl: string;
      expiresAt: string;
      surface: Surface;
      max: number;
    }
  /** A close of an open Ask (`sess_withdraw`) is saved and may be in flight. */
  | {
      kind: 'ask_close_pending';
      askId: string;
      workspaceId: string;
      humanUrl: string;
      expiresAt: string;
      surface: Surface;
      max: number;
      request: CloseAskInput;
    }
  /** An Ask that takes no more answers. Final; the link is removed. */
  | {
      kind: 'ask_closed';
      askId: string;
      /** Kept (not a secret) so later reads can still verify the answers; absent in older records. */
      workspaceId?: string;
      surface?: Surface;
      /** Set when the agent closed it with `sess_withdraw`. */
      withdrawal?: ConfirmedWithdrawal;
    };

/** The kind of a state. */
export type InteractionStateKind = InteractionState['kind'];

/** Every state kind, in lifecycle order (for owner tools and tests that enumerate states). */
export const INTERACTION_STATE_KINDS = [
  'create_intent',
  'create_unknown',
  'waiting',
  'answered',
  'publish_pending',
  'complete_pending',
  'withdraw_pending',
  'withdrawn',
  'completed',
  'expired',
  'blocked',
  'ask_open',
  'ask_close_pending',
  'ask_closed',
] as const satisfies readonly InteractionStateKind[];

// A compile-time check that the list names every kind of the union.
const everyKindListed: Exclude<InteractionStateKind, (typeof INTERACTION_STATE_KINDS)[number]> extends never
  ? true
  : never = true;
void everyKindListed;

/** A handle's durable record. */
export interface InteractionRecord {
  /** {@link RECORD_FORMAT} when written by this version; 1 for a record 0.1.0 wrote. */
  format: RecordFormat;
  handle: string;
  binding: Binding;
  createdAt: string;
  updatedAt: string;
  /**
   * The Surface's title, kept in every state so a listing can name the interaction; absent in
   * records written by 0.1.0.
   */
  title?: string;
  /** When the link (or Ask) expires as last confirmed by Sess; absent before creation and in 0.1.0 records. */
  expiresAt?: string;
  state: InteractionState;
  /**
   * The interaction's events (`events.ts`), oldest first, the last {@link MAX_RECORD_EVENTS} kept:
   * each written in the same store write as the state change it reports. Absent until the first.
   */
  events?: RecordEvent[];
}

/** What made an interaction leave `waiting` (or need its owner), as its event names it. */
export type InteractionEventType = 'answered' | 'ask.closed' | 'withdrawn' | 'expired' | 'blocked';

/** Every event type, for tests and docs that enumerate them. */
export const INTERACTION_EVENT_TYPES: readonly InteractionEventType[] = Object.freeze([
  'answered',
  'ask.closed',
  'withdrawn',
  'expired',
  'blocked',
] as const);

/**
 * One event of a record: a reference only (no answer value, link, receipt or free text). Its id is
 * derived from the handle and `sequence` (`eventIdOf`), the same across retries and processes.
 */
export interface RecordEvent {
  type: InteractionEventType;
  /** The revision the interaction was at. */
  revision: number;
  /** 1 for the handle's first event, then up by 1: a receiver drops one not newer than it handled. */
  sequence: number;
  /** When the state change was saved: the record's `updatedAt` of that write. */
  occurredAt: string;
}

/** How many events a record keeps (older ones are long delivered: a handle has a handful). */
export const MAX_RECORD_EVENTS = 8;

/** Finished: completed, expired, withdrawn, or a closed Ask (no longer counts against the cap). */
export const FINISHED: ReadonlySet<InteractionStateKind> = new Set([
  'completed',
  'expired',
  'withdrawn',
  'ask_closed',
]);

/**
 * Terminal: nothing moves any more. The finished kinds, and the two that wait for the owner
 * (`blocked`, `create_unknown`). `transitions.ts` refuses every event in these.
 */
export const TERMINAL: ReadonlySet<InteractionStateKind> = new Set([
  ...FINISHED,
  'blocked',
  'create_unknown',
]);

/**
 * The kinds whose answer may arrive at Sess while no tool call waits: a Session `waiting` for its
 * answer and an `ask_open` Ask. A watcher polls these (`HandleStoreFactory.waiting` lists them).
 */
export const WATCHED_STATE_KINDS = ['waiting', 'ask_open'] as const satisfies readonly InteractionStateKind[];

/** True for a record a watcher polls: of a {@link WATCHED_STATE_KINDS} kind. */
export function isWatched(record: InteractionRecord): boolean {
  return record.state.kind === 'waiting' || record.state.kind === 'ask_open';
}

/**
 * When `record` finished, in ms since the epoch: its `updatedAt`, the time of its last change,
 * which for a {@link FINISHED} record is when it became finished (no transition leaves a finished
 * kind). `undefined` for a record that is not finished, or whose `updatedAt` is not a time: such
 * a record is never pruned. Every store's retention reads this, and only this.
 */
export function finishedAtOf(record: InteractionRecord): number | undefined {
  if (!FINISHED.has(record.state.kind)) return undefined;
  const at = Date.parse(record.updatedAt);
  return Number.isFinite(at) ? at : undefined;
}

/** True while a record counts against the cap of unfinished interactions. */
export function isUnfinished(record: InteractionRecord): boolean {
  return !FINISHED.has(record.state.kind);
}

/**
 * The states `sess_list` shows, a fixed public set (never the internal kinds):
 * - `waiting`: waiting for the person (a Session or an open Ask);
 * - `answered`: a verified answer waits for the agent;
 * - `pending`: a saved publish, complete or withdraw may be in flight;
 * - `needs_owner`: blocked, or a create whose outcome is unknown (with its code);
 * - `completed`, `expired`, `withdrawn`: a Session that is finished;
 * - `closed`: an Ask that takes no more answers.
 */
export const LIST_STATES = [
  'waiting',
  'answered',
  'pending',
  'needs_owner',
  'completed',
  'expired',
  'withdrawn',
  'closed',
] as const;

/** One of {@link LIST_STATES}. */
export type ListState = (typeof LIST_STATES)[number];

const LIST_STATE_OF: { readonly [K in InteractionStateKind]: ListState } = {
  create_intent: 'needs_owner',
  create_unknown: 'needs_owner',
  waiting: 'waiting',
  answered: 'answered',
  publish_pending: 'pending',
  complete_pending: 'pending',
  withdraw_pending: 'pending',
  withdrawn: 'withdrawn',
  completed: 'completed',
  expired: 'expired',
  blocked: 'needs_owner',
  ask_open: 'waiting',
  ask_close_pending: 'pending',
  ask_closed: 'closed',
};

/** The public state `sess_list` shows for a record state kind. */
export function listStateOf(kind: InteractionStateKind): ListState {
  return LIST_STATE_OF[kind];
}

/** The internal kinds behind one public state, in {@link INTERACTION_STATE_KINDS} order. */
export function kindsOfListState(state: ListState): InteractionStateKind[] {
  return INTERACTION_STATE_KINDS.filter((kind) => LIST_STATE_OF[kind] === state);
}

/**
 * The group a listing sorts a record into, first to last: 0 for what waits on the person or the
 * agent (`waiting`, `answered`, `pending`), 1 for `needs_owner`, 2 for finished records. Within a
 * group, newest first (`createdAt` descending, then `handle` descending).
 */
export type ListGroup = 0 | 1 | 2;

/** The {@link ListGroup} of a record state kind. */
export function listGroupOf(kind: InteractionStateKind): ListGroup {
  const state = LIST_STATE_OF[kind];
  if (state === 'waiting' || state === 'answered' || state === 'pending') return 0;
  return state === 'needs_owner' ? 1 : 2;
}

/** The code `sess_list` reports for a `needs_owner` record. */
export function ownerCodeOf(state: InteractionState): ErrorCode | undefined {
  if (state.kind === 'create_intent' || state.kind === 'create_unknown') return 'CREATE_OUTCOME_UNKNOWN';
  return state.kind === 'blocked' ? state.code : undefined;
}
