/**
 * The one contract suite of the event outbox (`src/core/contract/outbox.ts`), run against every
 * store that has one (memory, file, PostgreSQL): an event a record write adds is owed to every
 * sink, a live claim is held by one caller, a settlement under a claim that was taken over writes
 * nothing, and claims and marks never change a record's version.
 *
 * Records change through the engine's own `nextRecord`, so each event is the one a tool call (or
 * the watcher) would write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventOutbox } from '../../src/core/contract/outbox.js';
import type { Binding, HandleStore, HandleStoreFactory } from '../../src/core/contract/ports.js';
import { nextRecord } from '../../src/core/engine/call.js';
import { eventIdOf } from '../../src/core/model/events.js';
import type { InteractionRecord, InteractionState } from '../../src/core/model/record.js';
import { httpA, makeRecord } from './fixtures.js';

/** One store backend under test, as the outbox suite needs it. */
export interface OutboxBackend {
  factory: HandleStoreFactory;
  /** Another backend over the same records and outbox (another instance or process). */
  reopen?(): Promise<HandleStoreFactory>;
  close?(): Promise<void>;
}

const T0 = Date.UTC(2026, 11, 3, 12, 0, 0);
const SINCE = T0 - 24 * 3600_000;

/** The `answered` state of a `waiting` record (the fixture's answer). */
function answeredOf(record: InteractionRecord): InteractionState {
  const waiting = record.state as Extract<InteractionState, { kind: 'waiting' }>;
  const answered = makeRecord(record.binding, 'answered').state as Extract<
    InteractionState,
    { kind: 'answered' }
  >;
  return { ...answered, session: waiting.session, revision: waiting.revision, surface: waiting.surface };
}

/** What {@link saveAnswered} saved: the view, the answered record and its version, its event. */
export interface SavedAnswer {
  view: HandleStore;
  record: InteractionRecord;
  version: number;
  eventId: string;
}

/**
 * A fresh `waiting` record of `binding`, then its answer saved over it at `at` (an ISO time)
 * through the engine's own `nextRecord`: the `answered` event a tool call would write.
 */
export async function saveAnswered(
  stores: HandleStoreFactory,
  binding: Binding,
  at: string,
): Promise<SavedAnswer> {
  const view = stores.forBinding(binding);
  const waiting = makeRecord(binding, 'waiting');
  await view.create(waiting);
  const saved = await view.update(nextRecord(waiting, answeredOf(waiting), at), 1);
  return { view, record: saved.record, version: saved.version, eventId: eventIdOf(waiting.handle, 1) };
}

export function describeEventOutboxContract(name: string, makeBackend: () => Promise<OutboxBackend>): void {
  describe(`EventOutbox contract: ${name}`, () => {
    let backend: OutboxBackend;
    let outbox: EventOutbox;
    let grant = 0;
    const freshBinding = (): Binding => ({
      ...httpA,
      grantId: `grant_outbox_${name}_${Date.now()}_${++grant}`,
    });
    let clock = T0;
    const at = () => {
      clock += 1000;
      return new Date(clock).toISOString();
    };

    /** A waiting record, then its answer saved over it: the `answered` event, and the view. */
    const answered = () => saveAnswered(backend.factory, freshBinding(), at());

    const dueIds = async (sink: string, now = clock) =>
      (await outbox.due(sink, { now, since: SINCE, limit: 1000 })).map((owed) => owed.event.eventId);

    beforeAll(async () => {
      backend = await makeBackend();
      const made = backend.factory.outbox?.();
      if (made === undefined) throw new Error(`${name} has no outbox`);
      outbox = made;
    });
    afterAll(async () => {
      await backend?.close?.();
    });

    it('the write that leaves waiting adds one event, owed to every sink, a reference only', async () => {
      const { record, eventId } = await answered();
      expect(record.events).toEqual([
        { type: 'answered', revision: 1, sequence: 1, occurredAt: record.updatedAt },
      ]);
      for (const sink of ['webhook', 'onEvent']) {
        const owed = (await outbox.due(sink, { now: clock, since: SINCE, limit: 1000 })).find(
          (o) => o.event.eventId === eventId,
        );
        expect(owed).toEqual({
          event: {
            eventId,
            type: 'answered',
            handle: record.handle,
            revision: 1,
            sequence: 1,
            occurredAt: record.updatedAt,
            binding: record.binding,
          },
          attempts: 0,
        });
      }
    });

    it('a write that is no event adds none, and a later write does not add the event again', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const waiting = makeRecord(binding, 'waiting');
      await view.create(waiting);
      const before = await dueIds('webhook');
      const touched = await view.update(nextRecord(waiting, waiting.state, at()), 1);
      expect(touched.record.events).toBeUndefined();
      const answer = await view.update(nextRecord(touched.record, answeredOf(waiting), at()), 2);
      const eventId = eventIdOf(waiting.handle, 1);
      const claim = await outbox.claim('webhook', eventId, clock, 60_000);
      expect(await outbox.settle(claim!, { kind: 'delivered' }, clock)).toBe(true);
      // Saved again (a publish would), the record keeps its event; it is not owed again.
      await view.update(nextRecord(answer.record, answer.record.state, at()), 3);
      expect(await dueIds('webhook')).toEqual(before);
    });

    it('one live claim at a time; a claim taken over after its time cannot settle', async () => {
      const { eventId } = await answered();
      const first = await outbox.claim('webhook', eventId, clock, 5_000);
      expect(first).toMatchObject({ sink: 'webhook', eventId });
      expect(await outbox.claim('webhook', eventId, clock + 1_000, 5_000)).toBeUndefined();
      expect(await dueIds('webhook', clock + 1_000)).not.toContain(eventId);
      // Another sink is another delivery.
      expect(await dueIds('onEvent', clock + 1_000)).toContain(eventId);
      // The holder stood still past its claim: due again, and taken over.
      expect(await dueIds('webhook', clock + 6_000)).toContain(eventId);
      const second = await outbox.claim('webhook', eventId, clock + 6_000, 5_000);
      expect(second).toBeDefined();
      expect(second!.token).not.toBe(first!.token);
      expect(await outbox.settle(first!, { kind: 'delivered' }, clock + 7_000)).toBe(false);
      expect(await outbox.settle(second!, { kind: 'delivered' }, clock + 7_000)).toBe(true);
      expect(await dueIds('webhook', clock + 60_000)).not.toContain(eventId);
      expect(await dueIds('onEvent', clock + 60_000)).toContain(eventId);
      // Settled once: a second settlement under the same claim writes nothing.
      expect(await outbox.settle(second!, { kind: 'dead', reason: 'late' }, clock + 8_000)).toBe(false);
    });

    it('a retry is due at its time with its attempts counted; a dead letter is not owed until re-sent', async () => {
      const { eventId } = await answered();
      const claim = await outbox.claim('webhook', eventId, clock, 5_000);
      expect(
        await outbox.settle(claim!, { kind: 'retry', at: clock + 30_000, reason: 'timeout' }, clock),
      ).toBe(true);
      expect(await dueIds('webhook', clock + 29_000)).not.toContain(eventId);
      const owed = (await outbox.due('webhook', { now: clock + 30_000, since: SINCE, limit: 1000 })).find(
        (o) => o.event.eventId === eventId,
      );
      expect(owed).toMatchObject({ attempts: 1, firstAttemptAt: clock });
      const again = await outbox.claim('webhook', eventId, clock + 30_000, 5_000);
      expect(await outbox.settle(again!, { kind: 'dead', reason: 'span_ended' }, clock + 31_000)).toBe(true);
      expect(await dueIds('webhook', clock + 10 ** 9)).not.toContain(eventId);
      const entry = (await outbox.entries('webhook', 1000)).find((e) => e.event.eventId === eventId);
      expect(entry).toMatchObject({ state: 'dead', attempts: 2, reason: 'span_ended' });
      expect(await outbox.resend('webhook', eventId, clock + 40_000)).toBe(true);
      expect(await dueIds('webhook', clock + 40_000)).toContain(eventId);
      expect(await outbox.resend('webhook', 'evt_unknown_1', clock)).toBe(false);
    });

    it('an event older than `since` that was never attempted is not owed to a new sink', async () => {
      const { eventId } = await answered();
      const owed = await outbox.due('a-new-sink', { now: clock, since: clock + 1, limit: 1000 });
      expect(owed.map((o) => o.event.eventId)).not.toContain(eventId);
    });

    it('claims and marks never change the record or its version: 200 saves racing them all succeed', async () => {
      const { view, record, version, eventId } = await answered();
      let current = { record, version };
      let marks = 0;
      let saving = true;
      const marking = (async () => {
        while (saving) {
          const claim = await outbox.claim('race', eventId, clock, 1);
          if (claim !== undefined) {
            await outbox.settle(claim, { kind: 'retry', at: clock, reason: 'race' }, clock);
            marks += 1;
          }
          await new Promise((r) => setImmediate(r));
        }
      })();
      try {
        for (let i = 0; i < 200; i++) {
          const saved = await view.update(
            nextRecord(current.record, current.record.state, at()),
            current.version,
          );
          current = { record: saved.record, version: saved.version };
        }
      } finally {
        saving = false;
        await marking;
      }
      expect(current.version).toBe(version + 200);
      expect(marks).toBeGreaterThan(0);
    });

    it('another instance over the same medium sees the same outbox', async (ctx) => {
      if (backend.reopen === undefined) return ctx.skip();
      const { eventId } = await answered();
      const other = (await backend.reopen()).outbox!();
      const mine = await outbox.claim('shared', eventId, clock, 60_000);
      expect(mine).toBeDefined();
      expect(await other.claim('shared', eventId, clock, 60_000)).toBeUndefined();
      expect(await other.settle({ ...mine!, token: 'forged' }, { kind: 'delivered' }, clock)).toBe(false);
      expect(await outbox.settle(mine!, { kind: 'delivered' }, clock)).toBe(true);
      expect(
        (await other.due('shared', { now: clock, since: SINCE, limit: 1000 })).map((o) => o.event.eventId),
      ).not.toContain(eventId);
    });
  });
}
