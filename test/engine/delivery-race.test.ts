/**
 * Tool calls racing delivery marks, on every store (memory, file and, with `DATABASE_URL`,
 * PostgreSQL): 1 000 tool calls through the real engine and the local Sess runtime, on 50
 * interactions, while a delivery loop over the same store claims and settles the events those
 * calls write: one sink takes every event after a yield, another fails every attempt and is
 * retried a millisecond later, so claims and marks are written all the time the calls run.
 *
 * A claim or a mark never changes a record or its version (`src/core/contract/outbox.ts`), so no
 * tool call may fail (`INVALID_STATE` `stale_version`, a store conflict, anything), every record's
 * version is the number of writes tool calls made to it, and every event reaches the good sink
 * once. On the file store marks and record writes take turns at the profile's lease, so the calls
 * take longer there than on the other stores (twice as long as with no delivery, or so).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { HandleStore, HandleStoreFactory } from '../../src/core/contract/ports.js';
import type { ToolName } from '../../src/core/contract/schemas.js';
import { createEventDelivery, type EventSink } from '../../src/core/engine/event-delivery.js';
import { eventIdOf } from '../../src/core/model/events.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { DATABASE_URL, reportPostgresSkipped, usePostgresTables } from '../support/postgres-tables.js';
import {
  approveAnswer,
  followUpSurface,
  type Harness,
  type Outcome,
  useHarnessLifecycle,
} from './harness.js';

const life = useHarnessLifecycle();
const pgTables = usePostgresTables('race');
if (pgTables === undefined) reportPostgresSkipped('The delivery race over PostgreSQL');

type StoreKind = 'memory' | 'file' | 'postgres';
const KINDS: StoreKind[] = DATABASE_URL ? ['memory', 'file', 'postgres'] : ['memory', 'file'];

/** Interactions; every fifth is withdrawn, the others answered twice and completed. */
const INTERACTIONS = 50;
/** Tool calls per interaction in the race: 50 × 20 = 1 000. */
const CALLS_EACH = 20;
/** Interactions whose calls run at once (each one's calls run one after another). */
const AT_ONCE = 10;

async function storesOf(kind: StoreKind): Promise<HandleStoreFactory> {
  if (kind === 'memory') return createMemoryHandleStore();
  if (kind === 'file') return (await life.fileStore()).stores;
  return pgTables!.open();
}

/**
 * A named double: `view` with every record write that succeeded counted per handle, so a test can
 * hold a record's version to the writes tool calls made. Everything else passes through.
 */
function countingWrites(view: HandleStore, writes: Map<string, number>): HandleStore {
  const count = <T>(handle: string, saved: T): T => {
    writes.set(handle, (writes.get(handle) ?? 0) + 1);
    return saved;
  };
  return new Proxy(view, {
    get(target, name) {
      if (name === 'create')
        return (record: Parameters<HandleStore['create']>[0], limits: Parameters<HandleStore['create']>[1]) =>
          target.create(record, limits).then((saved) => count(record.handle, saved));
      if (name === 'update')
        return (record: Parameters<HandleStore['update']>[0], version: number) =>
          target.update(record, version).then((saved) => count(record.handle, saved));
      const value = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** One interaction under test: its handle and link, and whether its question is withdrawn. */
interface Subject {
  handle: string;
  humanUrl: string;
  withdraw: boolean;
}

/** The calls of one interaction, one after another: {@link CALLS_EACH} of them through `run`. */
async function callsOf(
  h: Harness,
  subject: Subject,
  run: (tool: ToolName, args: Record<string, unknown>) => Promise<Outcome & { ok: true }>,
): Promise<void> {
  const { handle, humanUrl } = subject;
  let made = 0;
  const call = (tool: ToolName, args: Record<string, unknown>) => {
    made += 1;
    return run(tool, args);
  };
  let revision = 1;
  const first = await call('sess_response', { handle, revision, wait_ms: 0 }); // answered: an event
  await call('sess_list', {});
  if (subject.withdraw) {
    expect(first.interaction.state).toBe('waiting');
    await call('sess_withdraw', { handle, expected_revision: 1 }); // withdrawn: an event
  } else {
    expect(first.interaction.state).toBe('answered');
    await call('sess_response', { handle, revision, wait_ms: 0 });
    await call('sess_publish', {
      handle,
      expected_revision: 1,
      response_event_id: first.interaction.response!.eventId,
      interaction: followUpSurface,
    });
    revision = 2;
    await h.sess.submitAnswer(humanUrl, { action: 'push', values: {} });
    const second = await call('sess_response', { handle, revision, wait_ms: 5_000 }); // an event
    expect(second.interaction.state).toBe('answered');
    await call('sess_complete', {
      handle,
      expected_revision: revision,
      response_event_id: second.interaction.response!.eventId,
    });
  }
  while (made < CALLS_EACH) {
    if (made % 2 === 0) await call('sess_list', { limit: 5 });
    else await call('sess_response', { handle, revision, wait_ms: 0 });
  }
}

/** Run `work` over `items`, `limit` at a time. */
async function inTurns<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  const lane = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: limit }, lane));
}

describe.each(KINDS)('1 000 tool calls racing delivery marks: %s store', (kind) => {
  it('no tool error, versions moved by tool calls only, every event delivered once', async () => {
    const writes = new Map<string, number>();
    const stores = await storesOf(kind);
    const h = await life.start({ stores, wrapStore: (view) => countingWrites(view, writes) });
    const subjects: Subject[] = [];
    for (let i = 0; i < INTERACTIONS; i++) {
      const { handle, humanUrl } = await h.request();
      const withdraw = i % 5 === 4;
      if (!withdraw) await h.sess.submitAnswer(humanUrl, approveAnswer);
      subjects.push({ handle, humanUrl, withdraw });
    }

    // The good sink takes each event after a yield; the other fails every attempt, at once again.
    const received = new Map<string, number>();
    let failedAttempts = 0;
    const good: EventSink = {
      name: 'onEvent',
      async deliver(event) {
        await sleep(Math.floor(Math.random() * 3));
        received.set(event.eventId, (received.get(event.eventId) ?? 0) + 1);
        return { kind: 'delivered' };
      },
    };
    const failing: EventSink = {
      name: 'webhook',
      async deliver() {
        failedAttempts += 1;
        await sleep(0);
        throw new Error('receiver down');
      },
    };
    const outbox = stores.outbox!();
    const delivery = createEventDelivery({
      outbox,
      sinks: [good, failing],
      retryDelay: () => 1,
      spanMs: 86_400_000,
      batch: 1_000,
    });
    delivery.start(1);

    const errors: unknown[] = [];
    let calls = 0;
    const run = async (tool: ToolName, args: Record<string, unknown>) => {
      calls += 1;
      const outcome = await h.call(tool, args);
      if (!outcome.ok) {
        errors.push({ tool, error: outcome.error });
        throw new Error(`${tool}: ${outcome.error.code}`);
      }
      return outcome;
    };
    const failedBefore = failedAttempts;
    const chainFailures: unknown[] = [];
    await inTurns(subjects, AT_ONCE, (subject) =>
      callsOf(h, subject, run).catch((error: unknown) => {
        chainFailures.push(error);
      }),
    );
    const marksDuringCalls = failedAttempts - failedBefore;
    const deliveredDuringCalls = received.size;

    expect(errors).toEqual([]);
    expect(chainFailures).toEqual([]);
    expect(calls).toBe(INTERACTIONS * CALLS_EACH);

    // Every event the calls wrote: two answers of each answered interaction, one withdrawal.
    const events: string[] = [];
    for (const { handle, withdraw } of subjects) {
      const stored = await h.record(handle);
      expect(stored?.record.state.kind).toBe(withdraw ? 'withdrawn' : 'completed');
      // Created (1) and each later write by a tool call: nothing else moved the version.
      expect(stored?.version).toBe(writes.get(handle));
      for (const event of stored?.record.events ?? []) events.push(eventIdOf(handle, event.sequence));
    }
    expect(events).toHaveLength(INTERACTIONS * 2 - INTERACTIONS / 5);

    // The loop goes on until the good sink has every event, then stops (its pass settled).
    for (const deadline = Date.now() + 15_000; received.size < events.length; await sleep(10)) {
      if (Date.now() > deadline) break;
    }
    await delivery.stop();
    expect([...received.keys()].sort()).toEqual([...events].sort());
    expect([...received.values()].every((n) => n === 1)).toBe(true);
    const onEvent = await outbox.entries('onEvent', 1_000);
    expect(onEvent.map((e) => e.state)).toEqual(events.map(() => 'delivered'));
    // Every failed attempt left its mark (attempts counted once each), none was lost to a write.
    const webhook = await outbox.entries('webhook', 1_000);
    expect(webhook.every((e) => e.state === 'owed')).toBe(true);
    expect(webhook.reduce((sum, e) => sum + e.attempts, 0)).toBe(failedAttempts);
    // The race was real: marks were written and events delivered while the calls ran.
    expect(marksDuringCalls).toBeGreaterThan(INTERACTIONS);
    expect(deliveredDuringCalls).toBeGreaterThan(0);
  }, 120_000);
});
