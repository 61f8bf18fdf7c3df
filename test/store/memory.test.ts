/**
 * The memory store: the contract suite, plus what only an in-process store promises (views of
 * one backend share records; separate backends share nothing).
 */
import { describe, expect, it } from 'vitest';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { describeHandleStoreContract } from './contract.js';
import { makeRecord, stdioA } from './fixtures.js';
import { describeEventOutboxContract } from './outbox-contract.js';
import { describePruneContract } from './prune-contract.js';
import { describeReadyContract } from './ready-contract.js';
import { describeWaitingContract } from './waiting-contract.js';

describeHandleStoreContract('memory', async () => ({ factory: createMemoryHandleStore() }));

describe('memory store', () => {
  it('shares records between views of one backend and not between backends', async () => {
    const one = createMemoryHandleStore();
    const record = makeRecord(stdioA, 'waiting');
    await one.forBinding(stdioA).create(record);
    expect((await one.forBinding(stdioA).get(record.handle))?.version).toBe(1);
    expect(await createMemoryHandleStore().forBinding(stdioA).get(record.handle)).toBeUndefined();
  });

  it('keeps no reference to the record it was given', async () => {
    const store = createMemoryHandleStore().forBinding(stdioA);
    const record = makeRecord(stdioA, 'waiting');
    await store.create(record);
    record.updatedAt = 'changed after create';
    expect((await store.get(record.handle))?.record.updatedAt).not.toBe('changed after create');
  });
});

describeEventOutboxContract('memory', async () => ({ factory: createMemoryHandleStore() }));
describeWaitingContract('memory', async () => ({ factory: createMemoryHandleStore() }));
describeReadyContract('memory', async () => ({ factory: createMemoryHandleStore() }));
describePruneContract('memory', async () => ({ factory: createMemoryHandleStore() }));
