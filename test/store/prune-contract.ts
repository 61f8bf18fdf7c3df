/**
 * The contract suite of `HandleStoreFactory.prune` (`src/core/contract/ports.ts`), run against
 * every store (memory, file, PostgreSQL): retention removes only finished records that finished
 * before the cutoff, oldest first, at most `limit` a call; keeps a record whose event is still
 * owed to a sink (and removes its events with it once it is not); a pruned handle is not found
 * (the engine says `HANDLE_NOT_FOUND`); reads and other prunes running meanwhile see each record
 * whole or not at all, and each record is removed once.
 *
 * Prune spans every scope, so each test has a backend of its own.
 */
import { describe, expect, it } from 'vitest';
import {
  type Binding,
  type HandleStoreFactory,
  MAX_PRUNE_LIMIT,
  type PruneQuery,
  type PruneResult,
} from '../../src/core/contract/ports.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { eventIdOf } from '../../src/core/model/events.js';
import { FINISHED, type InteractionRecord, type InteractionStateKind } from '../../src/core/model/record.js';
import { createSessClient } from '../../src/sess/client.js';
import type { ContractBackend } from './contract.js';
import { httpA, makeRecord, STATE_KINDS, stdioA } from './fixtures.js';

type Prune = (query: PruneQuery) => Promise<PruneResult>;

/** A time `n` minutes after 2001-01-01, as a record's `updatedAt` and in ms. */
const at = (minutes: number) => Date.UTC(2001, 0, 1) + minutes * 60_000;
const iso = (minutes: number) => new Date(at(minutes)).toISOString();

/** A record of `kind` that last changed (finished) at minute `minutes`, with one event then. */
export function finishedRecord(
  binding: Binding,
  kind: InteractionStateKind,
  minutes: number,
  handle?: string,
): InteractionRecord {
  const record = makeRecord(binding, kind, {
    ...(handle === undefined ? {} : { handle }),
    createdAt: iso(minutes - 1),
  });
  record.updatedAt = iso(minutes);
  record.events = [{ type: 'answered', revision: 1, sequence: 1, occurredAt: record.updatedAt }];
  return record;
}

/** Prune until `more` is false (at most 50 calls), summing what was removed. */
export async function pruneAll(prune: Prune, olderThan: number, limit = MAX_PRUNE_LIMIT): Promise<number> {
  let removed = 0;
  for (let call = 0; call < 50; call++) {
    const result = await prune({ olderThan, limit });
    removed += result.removed;
    if (!result.more) return removed;
  }
  throw new Error('prune kept saying more');
}

export function describePruneContract(name: string, makeBackend: () => Promise<ContractBackend>): void {
  describe(`HandleStoreFactory.prune contract: ${name}`, () => {
    /** Run `test` on a backend of its own. */
    const withBackend = (test: (factory: HandleStoreFactory, prune: Prune) => Promise<void>) => async () => {
      const backend = await makeBackend();
      try {
        expect(typeof backend.factory.prune).toBe('function');
        const prune: Prune = (query) => (backend.factory.prune as Prune).call(backend.factory, query);
        await test(backend.factory, prune);
      } finally {
        await backend.close?.();
      }
    };
    const create = (factory: HandleStoreFactory, record: InteractionRecord) =>
      factory.forBinding(record.binding).create(record);
    const exists = async (factory: HandleStoreFactory, record: InteractionRecord) =>
      (await factory.forBinding(record.binding).get(record.handle)) !== undefined;

    it(
      'removes only finished kinds that finished before the cutoff, in every scope',
      withBackend(async (factory, prune) => {
        const old: InteractionRecord[] = [];
        const kept: InteractionRecord[] = [];
        for (const binding of [stdioA, httpA]) {
          for (const kind of STATE_KINDS) {
            const before = finishedRecord(binding, kind, 10);
            (FINISHED.has(kind) ? old : kept).push(before);
            // Finished at the cutoff or after it: kept.
            kept.push(finishedRecord(binding, kind, 20), finishedRecord(binding, kind, 30));
          }
        }
        for (const record of [...old, ...kept]) await create(factory, record);
        expect(await pruneAll(prune, at(20))).toBe(old.length);
        for (const record of old) expect(await exists(factory, record), record.state.kind).toBe(false);
        for (const record of kept) expect(await exists(factory, record), record.state.kind).toBe(true);
        expect(await prune({ olderThan: at(20) })).toEqual({ removed: 0, more: false });
      }),
    );

    it(
      'removes the oldest first, at most `limit` a call, and says when more may be left',
      withBackend(async (factory, prune) => {
        const records = [5, 1, 4, 2, 7, 3, 6].map((m) => finishedRecord(httpA, 'completed', m));
        for (const record of records) await create(factory, record);
        const byAge = [...records].sort((a, b) => a.updatedAt.localeCompare(b.updatedAt));
        expect(await prune({ olderThan: at(100), limit: 3 })).toEqual({ removed: 3, more: true });
        for (const [i, record] of byAge.entries()) expect(await exists(factory, record)).toBe(i >= 3);
        expect(await prune({ olderThan: at(100), limit: 3 })).toEqual({ removed: 3, more: true });
        expect(await prune({ olderThan: at(100), limit: 3 })).toEqual({ removed: 1, more: false });
        for (const record of records) expect(await exists(factory, record)).toBe(false);
      }),
    );

    it(
      'keeps a record whose event is owed to a sink, and removes it with its events once it is not',
      withBackend(async (factory, prune) => {
        const outbox = factory.outbox?.();
        expect(outbox).toBeDefined();
        if (outbox === undefined) return;
        const [claimedR, retried, dead, delivered, untouched] = [1, 2, 3, 4, 5].map((m) =>
          finishedRecord(stdioA, 'completed', m),
        ) as [InteractionRecord, InteractionRecord, InteractionRecord, InteractionRecord, InteractionRecord];
        for (const record of [claimedR, retried, dead, delivered, untouched]) {
          // An update adds a write's events to the outbox in every store (a create, in some).
          await create(factory, record);
          await factory.forBinding(record.binding).update(record, 1);
        }
        const id = (record: InteractionRecord) => eventIdOf(record.handle, 1);
        const now = at(100);
        const claim = async (record: InteractionRecord, sink = 'webhook') => {
          const taken = await outbox.claim(sink, id(record), now, 60_000);
          if (taken === undefined) throw new Error('not claimed');
          return taken;
        };
        await claim(claimedR);
        await outbox.settle(
          await claim(retried),
          { kind: 'retry', at: now + 60_000, reason: 'status_503' },
          now,
        );
        await outbox.settle(await claim(dead), { kind: 'dead', reason: 'gone' }, now);
        await outbox.settle(await claim(delivered), { kind: 'delivered' }, now);
        // Delivered to one sink, still owed to another: held.
        await outbox.settle(await claim(delivered, 'onEvent'), { kind: 'retry', at: now, reason: 'x' }, now);

        expect(await pruneAll(prune, at(50))).toBe(2);
        expect(await exists(factory, dead)).toBe(false);
        expect(await exists(factory, untouched)).toBe(false);
        for (const record of [claimedR, retried, delivered]) expect(await exists(factory, record)).toBe(true);
        const ids = async (sink: string) => (await outbox.entries(sink, 100)).map((e) => e.event.eventId);
        expect(await ids('webhook')).not.toContain(id(dead));
        expect(await ids('webhook')).not.toContain(id(untouched));

        // Now delivered everywhere, or dead-lettered: nothing is owed, all go.
        const again = async (record: InteractionRecord, sink: string, kind: 'delivered' | 'dead') => {
          const taken = await outbox.claim(sink, id(record), now + 120_000, 60_000);
          if (taken === undefined) throw new Error('not claimed again');
          await outbox.settle(taken, kind === 'dead' ? { kind, reason: 'gone' } : { kind }, now);
        };
        await again(claimedR, 'webhook', 'delivered');
        await again(retried, 'webhook', 'dead');
        await again(delivered, 'onEvent', 'delivered');
        expect(await pruneAll(prune, at(50))).toBe(3);
        for (const sink of ['webhook', 'onEvent']) expect(await ids(sink)).toEqual([]);
      }),
    );

    it(
      'leaves a pruned handle not found: read, listed, and through the engine (HANDLE_NOT_FOUND)',
      withBackend(async (factory, prune) => {
        const handle = `sess_h_${'p'.repeat(12)}${Math.random().toString(36).slice(2, 14).padEnd(12, 'q')}`;
        const record = finishedRecord(stdioA, 'completed', 1, handle);
        await create(factory, record);
        const view = factory.forBinding(stdioA);
        expect(await pruneAll(prune, at(2))).toBe(1);
        expect(await view.get(handle)).toBeUndefined();
        const page = await view.listPage?.({ limit: 100, kinds: ['completed'] });
        expect(page?.records.map((r) => r.record.handle)).not.toContain(handle);
        const sess = createSessClient({ origin: 'https://api.sess.example', credential: () => 'unused' });
        const engine = createSessEngine({
          authority: { resolve: async () => ({ binding: stdioA, sess, store: view }) },
        });
        const result = await engine.call('sess_response', { handle, revision: 1 });
        expect(JSON.stringify(result.structuredContent)).toContain('HANDLE_NOT_FOUND');
      }),
    );

    it(
      'under concurrent reads and prunes: every read sees a record whole or not at all, each is removed once',
      withBackend(async (factory, prune) => {
        const records = Array.from({ length: 120 }, (_, i) => finishedRecord(httpA, 'expired', i + 1));
        for (const record of records) await create(factory, record);
        const view = factory.forBinding(httpA);
        let reading = true;
        const reads = (async () => {
          let seen = 0;
          while (reading) {
            for (const record of records.slice(seen % 100, (seen % 100) + 20)) {
              const got = await view.get(record.handle);
              if (got !== undefined) expect(got.record).toEqual(record);
            }
            const page = await view.listPage?.({ limit: 50, kinds: ['expired'] });
            for (const listed of page?.records ?? []) expect(listed.record.state.kind).toBe('expired');
            seen += 20;
            // Let the prunes' I/O in: a store may answer a read without any (a cached status).
            await new Promise((resolve) => setImmediate(resolve));
          }
        })();
        const removed = await Promise.all([
          pruneAll(prune, at(1000), 10),
          pruneAll(prune, at(1000), 7),
          pruneAll(prune, at(1000), 13),
        ]);
        reading = false;
        await reads;
        expect(removed.reduce((a, b) => a + b, 0)).toBe(records.length);
        for (const record of records) expect(await view.get(record.handle)).toBeUndefined();
      }),
    );

    it(
      'refuses a query out of bounds or with an unknown field: a TypeError naming it, removing nothing',
      withBackend(async (factory, prune) => {
        const record = finishedRecord(stdioA, 'completed', 1);
        await create(factory, record);
        const bad: [unknown, RegExp][] = [
          [undefined, /query must be an object/],
          [{}, /query\.olderThan/],
          [{ olderThan: new Date(at(5)) }, /query\.olderThan/],
          [{ olderThan: String(at(5)) }, /query\.olderThan/],
          [{ olderThan: Number.NaN }, /query\.olderThan/],
          [{ olderThan: -1 }, /query\.olderThan/],
          [{ olderThan: at(5) + 0.5 }, /query\.olderThan/],
          [{ olderThan: at(5), limit: 0 }, /query\.limit/],
          [{ olderThan: at(5), limit: MAX_PRUNE_LIMIT + 1 }, /query\.limit/],
          [{ olderThan: at(5), limit: 2.5 }, /query\.limit/],
          [{ olderThan: at(5), before: at(5) }, /query\.before is not a field/],
        ];
        for (const [query, message] of bad) {
          await expect(prune(query as PruneQuery), JSON.stringify(query)).rejects.toThrow(TypeError);
          await expect(prune(query as PruneQuery)).rejects.toThrow(message);
        }
        expect(await exists(factory, record)).toBe(true);
      }),
    );
  });
}
