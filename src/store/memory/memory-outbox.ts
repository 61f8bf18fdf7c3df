/**
 * The in-memory store's event outbox: the events its record writes added, and each one's delivery
 * per sink, kept apart from the records (a claim or a mark never changes a record's version). The
 * rules are the store kit's (`outbox-rules.ts`); this module only keeps the values.
 *
 * It lives as long as its store: a process that ends takes its undelivered events with it, as it
 * takes the records.
 */
import type {
  DueQuery,
  EventOutbox,
  OutboxClaim,
  OutboxEntry,
  OutboxEvent,
  OutboxSettlement,
  OwedEvent,
} from '../../core/contract/outbox.js';
import {
  claimed,
  type Delivery,
  deliveryKey,
  entryOf,
  isDue,
  resent,
  settled,
} from '../../core/store-kit/outbox-rules.js';

/** The outbox of one memory store. */
export class MemoryOutbox implements EventOutbox {
  /** Every event, in the order written. */
  private readonly events = new Map<string, OutboxEvent>();
  private readonly deliveries = new Map<string, Delivery>();

  /** Make `events` owed to every sink (called in the record write that added them). */
  add(events: readonly OutboxEvent[]): void {
    for (const event of events) if (!this.events.has(event.eventId)) this.events.set(event.eventId, event);
  }

  async due(sink: string, query: DueQuery): Promise<OwedEvent[]> {
    const out: OwedEvent[] = [];
    for (const event of this.events.values()) {
      if (out.length >= query.limit) break;
      const delivery = this.deliveries.get(deliveryKey(sink, event.eventId));
      if (!isDue(event, delivery, query.now, query.since)) continue;
      out.push({
        event: structuredClone(event),
        attempts: delivery?.attempts ?? 0,
        ...(delivery?.firstAttemptAt === undefined ? {} : { firstAttemptAt: delivery.firstAttemptAt }),
      });
    }
    return out;
  }

  async claim(sink: string, eventId: string, now: number, holdMs: number): Promise<OutboxClaim | undefined> {
    if (!this.events.has(eventId)) return undefined;
    const key = deliveryKey(sink, eventId);
    const token = globalThis.crypto.randomUUID();
    const next = claimed(this.deliveries.get(key), token, now, now + holdMs);
    if (next === undefined) return undefined;
    this.deliveries.set(key, next);
    return { sink, eventId, token };
  }

  async settle(claim: OutboxClaim, settlement: OutboxSettlement, now: number): Promise<boolean> {
    const key = deliveryKey(claim.sink, claim.eventId);
    const next = settled(this.deliveries.get(key), claim, settlement, now);
    if (next === undefined) return false;
    this.deliveries.set(key, next);
    return true;
  }

  async entries(sink: string, limit: number): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = [];
    for (const event of [...this.events.values()].reverse()) {
      if (out.length >= limit) break;
      out.push(entryOf(sink, event, this.deliveries.get(deliveryKey(sink, event.eventId))));
    }
    return out;
  }

  async resend(sink: string, eventId: string, now: number): Promise<boolean> {
    if (!this.events.has(eventId)) return false;
    this.deliveries.set(deliveryKey(sink, eventId), resent(now));
    return true;
  }
}
