/**
 * The durable interaction record: one per handle, versioned, its state a tagged union keyed on
 * `state.kind`. Transitions live in the engine (`engine.ts`), in one place; this module only
 * names the states and the few facts stores need (`isUnfinished`, the format version).
 *
 * A record may hold the Sess link and answer data until it is completed: stores keep it private.
 */
import type { AskRespondentsOptions, Binding, CompleteInput, PublishInput } from './ports.js';
import type { Answer, Surface } from './surface.js';

/** The record format this package writes and reads. Any other value is `STATE_STORE_ERROR`. */
export const RECORD_FORMAT = 1;

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
  /** An Ask that takes no more answers. Final; the link is removed. */
  | {
      kind: 'ask_closed';
      askId: string;
      /** Kept (not a secret) so later reads can still verify the answers; absent in older records. */
      workspaceId?: string;
      surface?: Surface;
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
  'completed',
  'expired',
  'blocked',
  'ask_open',
  'ask_closed',
] as const satisfies readonly InteractionStateKind[];

// A compile-time check that the list names every kind of the union.
const everyKindListed: Exclude<InteractionStateKind, (typeof INTERACTION_STATE_KINDS)[number]> extends never
  ? true
  : never = true;
void everyKindListed;

/** A handle's durable record. */
export interface InteractionRecord {
  format: typeof RECORD_FORMAT;
  handle: string;
  binding: Binding;
  createdAt: string;
  updatedAt: string;
  state: InteractionState;
}

const FINISHED: ReadonlySet<InteractionStateKind> = new Set(['completed', 'expired', 'ask_closed']);

/** True while a record counts against the cap of unfinished interactions. */
export function isUnfinished(record: InteractionRecord): boolean {
  return !FINISHED.has(record.state.kind);
}
