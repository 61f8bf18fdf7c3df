/**
 * The outbox's rules, shared by every store: one delivery of one event to one sink as a value, and
 * the transitions `due`, `claim`, `settle` and `resend` apply to it, and whether it holds its
 * record back from retention. The memory and file stores
 * keep these values and call these functions; the PostgreSQL store states the same rules in SQL,
 * and the store contract suite holds the three to one verdict.
 *
 * Pure: no I/O, no clock, no randomness (the claim token is given).
 */
import type {
  OutboxClaim,
  OutboxDeliveryState,
  OutboxEntry,
  OutboxEvent,
  OutboxSettlement,
} from '../contract/outbox.js';
import { eventIdOf, eventsAddedBy } from '../model/events.js';
import type { InteractionRecord } from '../model/record.js';

/** One event's delivery to one sink, as a store keeps it. Absent: owed, never attempted. */
export interface Delivery {
  state: OutboxDeliveryState;
  attempts: number;
  firstAttemptAt?: number;
  /** When the next attempt is due (owed). */
  nextAttemptAt?: number;
  reason?: string;
  claim?: { token: string; until: number };
}

/** The outbox events a write of `record` adds: its events at its `updatedAt`. */
export function outboxEventsOf(record: InteractionRecord): OutboxEvent[] {
  return eventsAddedBy(record).map((event) => ({
    eventId: eventIdOf(record.handle, event.sequence),
    type: event.type,
    handle: record.handle,
    revision: event.revision,
    sequence: event.sequence,
    occurredAt: event.occurredAt,
    binding: record.binding,
  }));
}

/** True when an event with `delivery` (absent: never attempted) is due for its sink at `now`. */
export function isDue(
  event: OutboxEvent,
  delivery: Delivery | undefined,
  now: number,
  since: number,
): boolean {
  if (delivery === undefined) return Date.parse(event.occurredAt) >= since;
  if (delivery.state !== 'owed') return false;
  if (delivery.claim !== undefined && delivery.claim.until > now) return false;
  return (delivery.nextAttemptAt ?? 0) <= now;
}

/**
 * True when a delivery holds its event's record back from retention (`HandleStoreFactory.prune`):
 * a sink has it owed (claimed, attempted and to be tried again, or re-sent) and has neither
 * delivered nor dead-lettered it. A dead letter is not owed. An event no sink has attempted holds
 * nothing (a store does not know its sinks): with a retention at least as long as the delivery's
 * retry span, each sink has had the event's whole span by the time its record goes.
 */
export function holdsRecord(delivery: Delivery | undefined): boolean {
  return delivery?.state === 'owed';
}

/**
 * The delivery after a claim by `token` until `until`, or `undefined` when it cannot be claimed
 * (not owed, or a live claim holds it). Time not yet due does not stop a claim: `due` chose it.
 */
export function claimed(
  delivery: Delivery | undefined,
  token: string,
  now: number,
  until: number,
): Delivery | undefined {
  const current = delivery ?? { state: 'owed', attempts: 0 };
  if (current.state !== 'owed') return undefined;
  if (current.claim !== undefined && current.claim.until > now) return undefined;
  return { ...current, claim: { token, until } };
}

/** The delivery after `settlement` under `claim`, or `undefined` when the claim is not the one held. */
export function settled(
  delivery: Delivery | undefined,
  claim: OutboxClaim,
  settlement: OutboxSettlement,
  now: number,
): Delivery | undefined {
  if (delivery?.claim?.token !== claim.token) return undefined;
  const base: Delivery = {
    state: delivery.state,
    attempts: delivery.attempts,
    firstAttemptAt: delivery.firstAttemptAt ?? now,
  };
  switch (settlement.kind) {
    case 'delivered':
      return { ...base, state: 'delivered' };
    case 'retry':
      return {
        ...base,
        state: 'owed',
        attempts: base.attempts + 1,
        nextAttemptAt: settlement.at,
        reason: settlement.reason,
      };
    case 'dead':
      return { ...base, state: 'dead', attempts: base.attempts + 1, reason: settlement.reason };
  }
}

/** The delivery after a re-send: owed again, due at `now`, its attempts counted afresh. */
export function resent(now: number): Delivery {
  return { state: 'owed', attempts: 0, nextAttemptAt: now };
}

/** The key of one delivery in a map: the sink and the event id (neither holds a NUL). */
export function deliveryKey(sink: string, eventId: string): string {
  return `${sink}\u0000${eventId}`;
}

/** One event and its delivery to `sink`, as `entries` shows it. */
export function entryOf(sink: string, event: OutboxEvent, delivery: Delivery | undefined): OutboxEntry {
  const entry: OutboxEntry = {
    event: structuredClone(event),
    sink,
    state: delivery?.state ?? 'owed',
    attempts: delivery?.attempts ?? 0,
  };
  if (delivery?.reason !== undefined) entry.reason = delivery.reason;
  if (entry.state === 'owed' && delivery?.nextAttemptAt !== undefined)
    entry.nextAttemptAt = delivery.nextAttemptAt;
  return entry;
}
