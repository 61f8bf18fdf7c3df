/**
 * The file store's event outbox: `handles.outbox` in the profile directory, beside `handles/`. It
 * holds the events record writes added and each one's delivery per sink, apart from the record
 * files, so a claim or a mark never changes a record's version.
 *
 * - An event is added in the record write that made it, under the same lease, just before the
 *   record file is renamed into place: a crash in between leaves an event whose state change the
 *   next read learns again from Sess (with the same event id, so it is not owed twice), never a
 *   saved state change without its event.
 * - Claims, settlements and re-sends are read-modify-writes under the profile lease (never a
 *   network call while it is held), each fenced like a record commit: a holder that stood still
 *   past its lease writes nothing.
 * - Reads (`due`, `entries`) read the file as the last rename left it, without the lease.
 *
 * It keeps the newest {@link MAX_OUTBOX_EVENTS} events; an older one is dropped with its deliveries,
 * and a pruned record's events go with it (`forgetOutboxEvents`).
 * The rules are the store kit's (`outbox-rules.ts`).
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
import { storeError } from '../../core/store-kit/kit.js';
import {
  claimed,
  type Delivery,
  entryOf,
  holdsRecord,
  isDue,
  resent,
  settled,
} from '../../core/store-kit/outbox-rules.js';
import type { ProfileIo } from './io.js';

/** The format of `handles.outbox`. */
const OUTBOX_FORMAT = 1;
/** How many events the file keeps, newest last. */
export const MAX_OUTBOX_EVENTS = 2_000;

/** One event and its deliveries per sink. */
interface StoredEvent {
  event: OutboxEvent;
  deliveries: Record<string, Delivery>;
}

/** What the outbox needs of the profile: its files, its lease, and the lease's fence. */
export interface OutboxProfile {
  readonly io: ProfileIo;
  /** Run `work` under the profile's lease. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** The commit step's check that the lease is still held (throws when it is not). */
  fence(): Promise<void>;
}

async function readEvents(io: ProfileIo): Promise<StoredEvent[]> {
  const read = await io.readSmallFile(io.outboxPath, 'read the event outbox');
  if (read === undefined) return [];
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    throw storeError('The event outbox is not valid JSON. The owner must review it.', false, 'corrupt');
  }
  const { format, events } = (body ?? {}) as { format?: unknown; events?: unknown };
  if (format !== OUTBOX_FORMAT || !Array.isArray(events)) {
    throw storeError(
      'The event outbox has an unsupported format. The owner must review it.',
      false,
      'corrupt',
    );
  }
  return events as StoredEvent[];
}

async function writeEvents(profile: OutboxProfile, events: StoredEvent[], durable: boolean): Promise<void> {
  const kept = events.slice(-MAX_OUTBOX_EVENTS);
  await profile.io.writeProfileFile(
    profile.io.outboxPath,
    JSON.stringify({ format: OUTBOX_FORMAT, events: kept }),
    () => profile.fence(),
    { durable, doing: 'write the event outbox' },
  );
}

/**
 * Add `events` (under the lease, before the record write that made them): durable, since a lost
 * addition would be a lost event. Events already there are left as they are.
 */
export async function addOutboxEvents(profile: OutboxProfile, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const stored = await readEvents(profile.io);
  const known = new Set(stored.map((s) => s.event.eventId));
  const added = events.filter((event) => !known.has(event.eventId));
  if (added.length === 0) return;
  await writeEvents(profile, [...stored, ...added.map((event) => ({ event, deliveries: {} }))], true);
}

/** The handles one of whose events is still owed to a sink (`holdsRecord`): retention keeps them. */
export async function handlesHeldByOutbox(io: ProfileIo): Promise<Set<string>> {
  const held = new Set<string>();
  for (const { event, deliveries } of await readEvents(io)) {
    if (Object.values(deliveries).some(holdsRecord)) held.add(event.handle);
  }
  return held;
}

/** Drop the events of `handles` and their deliveries (under the lease: their records were pruned). */
export async function forgetOutboxEvents(
  profile: OutboxProfile,
  handles: ReadonlySet<string>,
): Promise<void> {
  if (handles.size === 0) return;
  const stored = await readEvents(profile.io);
  const kept = stored.filter(({ event }) => !handles.has(event.handle));
  if (kept.length === stored.length) return;
  // A lost removal only leaves events no sink is owed (the records were not held): no sync.
  await writeEvents(profile, kept, false);
}

/** The outbox of one file profile. */
export class FileOutbox implements EventOutbox {
  constructor(private readonly profile: OutboxProfile) {}

  /** Change one event's delivery to `sink` under the lease: `change` returns the new one or `undefined` (no write). */
  private change(
    sink: string,
    eventId: string,
    change: (delivery: Delivery | undefined) => Delivery | undefined,
  ): Promise<boolean> {
    return this.profile.exclusive(async () => {
      const stored = await readEvents(this.profile.io);
      const found = stored.find((s) => s.event.eventId === eventId);
      if (found === undefined) return false;
      const next = change(Object.hasOwn(found.deliveries, sink) ? found.deliveries[sink] : undefined);
      if (next === undefined) return false;
      found.deliveries[sink] = next;
      // A lost mark only means one more delivery (at least once): no directory sync.
      await writeEvents(this.profile, stored, false);
      return true;
    });
  }

  async due(sink: string, query: DueQuery): Promise<OwedEvent[]> {
    const out: OwedEvent[] = [];
    for (const { event, deliveries } of await readEvents(this.profile.io)) {
      if (out.length >= query.limit) break;
      const delivery = Object.hasOwn(deliveries, sink) ? deliveries[sink] : undefined;
      if (!isDue(event, delivery, query.now, query.since)) continue;
      out.push({
        event,
        attempts: delivery?.attempts ?? 0,
        ...(delivery?.firstAttemptAt === undefined ? {} : { firstAttemptAt: delivery.firstAttemptAt }),
      });
    }
    return out;
  }

  async claim(sink: string, eventId: string, now: number, holdMs: number): Promise<OutboxClaim | undefined> {
    const token = globalThis.crypto.randomUUID();
    const taken = await this.change(sink, eventId, (delivery) => claimed(delivery, token, now, now + holdMs));
    return taken ? { sink, eventId, token } : undefined;
  }

  settle(claim: OutboxClaim, settlement: OutboxSettlement, now: number): Promise<boolean> {
    return this.change(claim.sink, claim.eventId, (delivery) => settled(delivery, claim, settlement, now));
  }

  async entries(sink: string, limit: number): Promise<OutboxEntry[]> {
    const stored = await readEvents(this.profile.io);
    return stored
      .slice(-limit)
      .reverse()
      .map(({ event, deliveries }) =>
        entryOf(sink, event, Object.hasOwn(deliveries, sink) ? deliveries[sink] : undefined),
      );
  }

  resend(sink: string, eventId: string, now: number): Promise<boolean> {
    return this.change(sink, eventId, () => resent(now));
  }
}
