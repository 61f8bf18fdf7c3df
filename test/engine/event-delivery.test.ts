/**
 * The delivery loop over a store's outbox: every event reaches every sink at least once, a failed
 * attempt is retried on the schedule and dead-lettered after it, a claim whose holder died is
 * taken over, and two deliveries racing on one file profile deliver each event once with its
 * stable id. Records change through the engine's own `nextRecord`.
 */
import { describe, expect, it } from 'vitest';
import type { EventOutbox, WakeEvent } from '../../src/core/contract/outbox.js';
import type { Binding, HandleStoreFactory } from '../../src/core/contract/ports.js';
import {
  createEventDelivery,
  type EventSink,
  type SinkOutcome,
} from '../../src/core/engine/event-delivery.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { httpA, stdioA } from '../store/fixtures.js';
import { saveAnswered } from '../store/outbox-contract.js';
import { useTempDirs } from '../support/temp-dirs.js';

const tempDir = useTempDirs('sess-mcp-delivery-');

/** A clock a test moves by hand. */
function manualClock(start = Date.UTC(2026, 11, 3, 12)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** A sink that records what it received and answers with `outcome` (per call). */
function recordingSink(
  name: string,
  outcome: (n: number) => SinkOutcome | Promise<SinkOutcome> = () => ({ kind: 'delivered' }),
) {
  const received: WakeEvent[] = [];
  const sink: EventSink = {
    name,
    async deliver(event) {
      received.push(event);
      return outcome(received.length);
    },
  };
  return { sink, received };
}

/** Leave `waiting` for `answered` on a fresh record of `binding`: its event id. */
async function answer(stores: HandleStoreFactory, binding: Binding, at: number): Promise<string> {
  return (await saveAnswered(stores, binding, new Date(at).toISOString())).eventId;
}

const DAY = 24 * 3600_000;
const every = (ms: number) => () => ms;

describe('event delivery', () => {
  it('hands every event to every sink once, as a reference only', async () => {
    const clock = manualClock();
    const stores = createMemoryHandleStore();
    const id = await answer(stores, { ...httpA, grantId: 'g_delivery_1' }, clock.now());
    const hook = recordingSink('onEvent');
    const webhook = recordingSink('webhook');
    const delivery = createEventDelivery({
      outbox: stores.outbox!(),
      sinks: [hook.sink, webhook.sink],
      retryDelay: every(1_000),
      spanMs: DAY,
      clock,
    });
    expect(await delivery.deliverDue()).toBe(2);
    expect(await delivery.deliverDue()).toBe(0);
    for (const { received } of [hook, webhook]) {
      expect(received).toHaveLength(1);
      const [event] = received;
      expect(Object.keys(event!).sort()).toEqual(
        ['eventId', 'handle', 'occurredAt', 'revision', 'scope', 'sequence', 'type'].sort(),
      );
      expect(event).toMatchObject({ eventId: id, type: 'answered', revision: 1, sequence: 1 });
      expect(event!.scope).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
  });

  it('a stdio event carries no scope', async () => {
    const clock = manualClock();
    const stores = createMemoryHandleStore();
    await answer(stores, stdioA, clock.now());
    const hook = recordingSink('onEvent');
    await createEventDelivery({
      outbox: stores.outbox!(),
      sinks: [hook.sink],
      retryDelay: every(1),
      spanMs: DAY,
      clock,
    }).deliverDue();
    expect(hook.received[0]?.scope).toBeUndefined();
  });

  it('a rejection is retried on the schedule, then dead-lettered; a re-send delivers it', async () => {
    const clock = manualClock();
    const stores = createMemoryHandleStore();
    const outbox: EventOutbox = stores.outbox!();
    const id = await answer(stores, { ...httpA, grantId: 'g_delivery_2' }, clock.now());
    let failing = true;
    const hook: EventSink = {
      name: 'onEvent',
      async deliver() {
        if (failing) throw new Error('receiver down');
        return { kind: 'delivered' };
      },
    };
    const delays: number[] = [];
    const delivery = createEventDelivery({
      outbox,
      sinks: [hook],
      retryDelay: (attempts, first, now) => {
        delays.push(attempts);
        return now - first > 10_000 ? 'dead' : 5_000;
      },
      spanMs: DAY,
      clock,
    });
    expect(await delivery.deliverDue()).toBe(1);
    expect(await delivery.deliverDue()).toBe(0); // not due for 5 s
    clock.advance(5_000);
    expect(await delivery.deliverDue()).toBe(1);
    clock.advance(6_000);
    expect(await delivery.deliverDue()).toBe(1); // past 10 s since the first: dead
    clock.advance(10 ** 8);
    expect(await delivery.deliverDue()).toBe(0);
    expect(delays).toEqual([1, 2, 3]);
    const entry = (await outbox.entries('onEvent', 10)).find((e) => e.event.eventId === id);
    expect(entry).toMatchObject({ state: 'dead', attempts: 3, reason: 'sink_failed' });
    failing = false;
    expect(await outbox.resend('onEvent', id, clock.now())).toBe(true);
    expect(await delivery.deliverDue()).toBe(1);
    expect((await outbox.entries('onEvent', 10)).find((e) => e.event.eventId === id)?.state).toBe(
      'delivered',
    );
  });

  it('a claim whose holder died is taken over after its hold', async () => {
    const clock = manualClock();
    const stores = createMemoryHandleStore();
    const outbox = stores.outbox!();
    const id = await answer(stores, { ...httpA, grantId: 'g_delivery_3' }, clock.now());
    // A process claimed it and died before delivering.
    expect(await outbox.claim('onEvent', id, clock.now(), 60_000)).toBeDefined();
    const hook = recordingSink('onEvent');
    const delivery = createEventDelivery({
      outbox,
      sinks: [hook.sink],
      retryDelay: every(1),
      spanMs: DAY,
      clock,
    });
    expect(await delivery.deliverDue()).toBe(0);
    clock.advance(60_000);
    expect(await delivery.deliverDue()).toBe(1);
    expect(hook.received.map((e) => e.eventId)).toEqual([id]);
  });

  it('two processes on one file profile: each event delivered once, with its stable id, and marked once', async () => {
    const stateDir = await tempDir();
    const writer = createFileHandleStore({ stateDir });
    const clock = manualClock();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await answer(writer, { ...stdioA }, clock.now() + i));
    const received: string[] = [];
    const deliveries = [0, 1].map(() =>
      createEventDelivery({
        outbox: createFileHandleStore({ stateDir }).outbox!(),
        sinks: [
          {
            name: 'onEvent',
            async deliver(event) {
              received.push(event.eventId);
              await new Promise((r) => setTimeout(r, 5));
              return { kind: 'delivered' };
            },
          },
        ],
        retryDelay: every(1),
        spanMs: DAY,
        clock,
      }),
    );
    await Promise.all(deliveries.map((d) => d.deliverDue()));
    await Promise.all(deliveries.map((d) => d.deliverDue()));
    expect([...received].sort()).toEqual([...ids].sort());
    const entries = await createFileHandleStore({ stateDir }).outbox!().entries('onEvent', 100);
    expect(entries.map((e) => e.state)).toEqual(ids.map(() => 'delivered'));
  });
});
