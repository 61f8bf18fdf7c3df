/**
 * The event outbox port: what a store offers so the events its records hold are delivered at
 * least once to every sink (a host's `onEvent`, a webhook), with claims and delivery marks kept
 * apart from the records. A claim or a mark never changes a record or its version, so a tool
 * call's compare-and-set never races delivery.
 *
 * The events themselves are written by the engine into the record, in the same store write as the
 * state change (`src/core/model/events.ts`); a store makes each one it writes owed to every sink.
 * The rules every store applies to a delivery (when it is due, when a claim is live, what a
 * settlement does) are one module, `src/core/store-kit/outbox-rules.ts`.
 */
import type { Binding } from '../model/binding.js';
import type { InteractionEventType } from '../model/record.js';

/** One event as the outbox hands it to a sink. A reference only: no value, link or receipt. */
export interface OutboxEvent {
  /** Stable across retries, processes and restarts: the `webhook-id`. */
  eventId: string;
  type: InteractionEventType;
  handle: string;
  revision: number;
  /** Per handle: a receiver drops an event whose sequence is not newer than one it handled. */
  sequence: number;
  occurredAt: string;
  /** The record's binding, for routing (never sent as it is). */
  binding: Binding;
}

/**
 * An interaction event as a host receives it (`onEvent`, a webhook's body): a reference only. No
 * answer value, link, receipt, key or free text; the answer leaves only through `sess_response`
 * and its checks, so a duplicate or forged event cannot release one. No delivery order is
 * promised: drop an event whose `sequence` is not newer than one handled for its handle.
 */
export interface WakeEvent {
  /** Stable across retries, processes and restarts (`webhook-id`): deduplicate by it. */
  eventId: string;
  type: InteractionEventType;
  handle: string;
  revision: number;
  sequence: number;
  occurredAt: string;
  /** HTTP only: an opaque digest of the binding (principal, client, grant), for routing. */
  scope?: string;
}

/**
 * The reference fields of `event`, in the order {@link WakeEvent} declares them, and nothing else
 * (a field the given object has beyond them, such as an outbox event's binding, is left out);
 * `scope` only when one is given. What a sink receives and what a webhook's body carries.
 */
export function wakeEventReference(
  event: Omit<WakeEvent, 'scope'>,
  scope: string | undefined = undefined,
): WakeEvent {
  const out: WakeEvent = {
    eventId: event.eventId,
    type: event.type,
    handle: event.handle,
    revision: event.revision,
    sequence: event.sequence,
    occurredAt: event.occurredAt,
  };
  if (scope !== undefined) out.scope = scope;
  return out;
}

/** An event owed to a sink, with its delivery so far. */
export interface OwedEvent {
  event: OutboxEvent;
  /** Failed attempts so far. */
  attempts: number;
  /** When the first attempt was made (ms since the epoch), if one was. */
  firstAttemptAt?: number;
}

/** A claim of one event for one sink, held until it is settled or its time runs out. */
export interface OutboxClaim {
  sink: string;
  eventId: string;
  /** The claim's own token: a claim taken over after its time cannot settle. */
  token: string;
}

/** How one attempt ended. */
export type OutboxSettlement =
  /** The sink took it: never owed again to this sink. */
  | { kind: 'delivered' }
  /** Try again at `at` (ms since the epoch); `reason` is a fixed word. */
  | { kind: 'retry'; at: number; reason: string }
  /** No more attempts (the retry span ended, or no attempt can succeed); shown to the owner. */
  | { kind: 'dead'; reason: string };

/** Where one event stands for one sink. */
export type OutboxDeliveryState = 'owed' | 'delivered' | 'dead';

/** One event and where it stands for one sink (`sess-mcp records events`). */
export interface OutboxEntry {
  event: OutboxEvent;
  sink: string;
  state: OutboxDeliveryState;
  attempts: number;
  /** The fixed word of the last failed attempt. */
  reason?: string;
  /** When the next attempt is due (owed only). */
  nextAttemptAt?: number;
}

/** The query of {@link EventOutbox.due}. */
export interface DueQuery {
  /** Now, in ms since the epoch. */
  now: number;
  /** Events that occurred before this (ms since the epoch) and were never attempted are not owed. */
  since: number;
  /** At most this many. */
  limit: number;
}

/**
 * The outbox of a store. Every method is safe under concurrency: between processes and instances
 * on one medium, a live claim is held by one caller only, and a settlement under a claim that was
 * taken over writes nothing.
 */
export interface EventOutbox {
  /**
   * Events owed to `sink` and due now: never delivered or dead-lettered for it, with no live claim,
   * and due (`nextAttemptAt` passed, or never attempted), oldest first.
   */
  due(sink: string, query: DueQuery): Promise<OwedEvent[]>;
  /**
   * Claim `eventId` for `sink` until `now + holdMs`: the claim, or `undefined` when it is not owed
   * any more or another live claim holds it. A claim whose time ran out is taken over.
   */
  claim(sink: string, eventId: string, now: number, holdMs: number): Promise<OutboxClaim | undefined>;
  /** Settle an attempt under `claim`: false (nothing written) when the claim was taken over. */
  settle(claim: OutboxClaim, settlement: OutboxSettlement, now: number): Promise<boolean>;
  /** Every event the outbox knows for `sink` (owed, delivered, dead), newest first, at most `limit`. */
  entries(sink: string, limit: number): Promise<OutboxEntry[]>;
  /** Make `eventId` owed to `sink` again, due at `now` (a dead letter re-sent): false when unknown. */
  resend(sink: string, eventId: string, now: number): Promise<boolean>;
}
