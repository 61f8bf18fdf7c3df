/**
 * The HTTP watcher's retention (`createSessMcpWatcher({ retention })`): a sweep removes the
 * finished records older than the retention (30 days unless told) with the budget it has left,
 * and never a record that waits on anyone; `retention: false` removes nothing; a bad value is a
 * `TypeError` naming the option. The store's own rules are the prune contract suite's
 * (`test/store/prune-contract.ts`); here only the watcher's part.
 */
import { describe, expect, it } from 'vitest';
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { createSessMcpWatcher } from '../../src/http/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { httpA } from '../store/fixtures.js';
import { finishedRecord } from '../store/prune-contract.js';

const credentialFor = () => undefined;

/** A memory store with a completed and a blocked record finished in 2001, and one completed now. */
async function storeWithOldRecords() {
  const stores = createMemoryHandleStore();
  const view = stores.forBinding(httpA);
  const old = finishedRecord(httpA, 'completed', 1);
  const blocked = finishedRecord(httpA, 'blocked', 1);
  const fresh = finishedRecord(httpA, 'completed', 1);
  fresh.updatedAt = new Date().toISOString();
  for (const record of [old, blocked, fresh]) await view.create(record);
  const present = async () =>
    (await Promise.all([old, blocked, fresh].map((r) => view.get(r.handle)))).map((r) => r !== undefined);
  return { stores, present };
}

describe('createSessMcpWatcher retention', () => {
  it('a sweep removes finished records older than 30 days by default, never the others', async () => {
    const { stores, present } = await storeWithOldRecords();
    const watcher = createSessMcpWatcher({ handleStores: stores, credentialFor });
    const result = await watcher.sweep({ budgetMs: 5_000 });
    expect(result.pruned).toBe(1);
    expect(await present()).toEqual([false, true, true]);
  });

  it('takes a retention in milliseconds, and false keeps every record', async () => {
    const short = await storeWithOldRecords();
    const events: DiagnosticEvent[] = [];
    const watcher = createSessMcpWatcher({
      handleStores: short.stores,
      credentialFor,
      retention: 1_000,
      diagnostics: (event) => events.push(event),
    });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await watcher.sweep({ budgetMs: 5_000 })).pruned).toBe(2);
    expect(await short.present()).toEqual([false, true, false]);
    expect(events.map((e) => e.event)).not.toContain('watcher.prune_failed');

    const kept = await storeWithOldRecords();
    const off = createSessMcpWatcher({ handleStores: kept.stores, credentialFor, retention: false });
    expect((await off.sweep({ budgetMs: 5_000 })).pruned).toBe(0);
    expect(await kept.present()).toEqual([true, true, true]);
  });

  it('refuses a retention out of range, or one a store without prune() cannot keep, naming the option', () => {
    const stores = createMemoryHandleStore();
    for (const retention of [0, 999, 1.5, Number.NaN, '30d', true, 3651 * 86_400_000]) {
      expect(() =>
        createSessMcpWatcher({ handleStores: stores, credentialFor, retention: retention as number }),
      ).toThrow(/createSessMcpWatcher: option "retention" must be a whole number of milliseconds/);
    }
    const { prune: _prune, ...withoutPrune } = stores;
    expect(() =>
      createSessMcpWatcher({ handleStores: withoutPrune, credentialFor, retention: 60_000 }),
    ).toThrow(/option "retention" needs a store with prune\(\)/);
    expect(() => createSessMcpWatcher({ handleStores: withoutPrune, credentialFor })).not.toThrow();
  });

  it('refuses a retention shorter than the delivery retry span while events are delivered', () => {
    const stores = createMemoryHandleStore();
    const onEvent = () => {};
    expect(() =>
      createSessMcpWatcher({ handleStores: stores, credentialFor, onEvent, retention: 23 * 3_600_000 }),
    ).toThrow(/option "retention" must be at least 24 hours while events are delivered/);
    expect(() =>
      createSessMcpWatcher({ handleStores: stores, credentialFor, onEvent, retention: 24 * 3_600_000 }),
    ).not.toThrow();
    expect(() => createSessMcpWatcher({ handleStores: stores, credentialFor, onEvent })).not.toThrow();
  });
});
