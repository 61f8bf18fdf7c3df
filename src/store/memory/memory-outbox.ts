/**
 * The in-memory store's event outbox: the events its record writes added, and each one's delivery
 * per sink, kept apart from the records (a claim or a mark never changes a record's version). The
 * rules are the store kit's (`outbox-rules.ts`); this module only keeps the values.
 *
 * It lives as long as its store: a process that ends takes its undelivered events with it, as it
 * takes the records. A pruned record's events go with it (`forget`).
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
  holdsRecord,
  isDue,
  resent,
  settled,
} from '../../core/store-kit/outbox-rules.js';

/** The outbox of one memory store. */
export class MemoryOutbox implements EventOutbox {
  /** Every event, in the order written. */
  private readonly events = new Map<string, OutboxEvent>();
  private readonly deliveries = new Map<string, Delivery>();
  /** The sinks each event has a delivery for, so an event's deliveries go with it. */
  private readonly sinksOf = new Map<string, Set<string>>();

  private setDelivery(sink: string, eventId: string, delivery: Delivery): void {
    this.deliveries.set(deliveryKey(sink, eventId), delivery);
    const sinks = this.sinksOf.get(eventId) ?? new Set<string>();
    sinks.add(sink);
    this.sinksOf.set(eventId, sinks);
  }

  /** True when one of `eventIds` is still owed to a sink (`holdsRecord`): its record is kept. */
  holds(eventIds: readonly string[]): boolean {
    for (const eventId of eventIds) {
      for (const sink of this.sinksOf.get(eventId) ?? []) {
        if (holdsRecord(this.deliveries.get(deliveryKey(sink, eventId)))) return true;
      }
    }
    return false;
  }

  /** Drop `eventIds` and their deliveries (their record was pruned). */
  forget(eventIds: readonly string[]): void {
    for (const eventId of eventIds) {
      this.events.delete(eventId);
      for (const sink of this.sinksOf.get(eventId) ?? []) this.deliveries.delete(deliveryKey(sink, eventId));
      this.sinksOf.delete(eventId);
    }
  }

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
    const token = globalThis.crypto.randomUUID();
    const next = claimed(this.deliveries.get(deliveryKey(sink, eventId)), token, now, now + holdMs);
    if (next === undefined) return undefined;
    this.setDelivery(sink, eventId, next);
    return { sink, eventId, token };
  }

  async settle(claim: OutboxClaim, settlement: OutboxSettlement, now: number): Promise<boolean> {
    const next = settled(this.deliveries.get(deliveryKey(claim.sink, claim.eventId)), claim, settlement, now);
    if (next === undefined) return false;
    this.setDelivery(claim.sink, claim.eventId, next);
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
    this.setDelivery(sink, eventId, resent(now));
    return true;
  }
}
