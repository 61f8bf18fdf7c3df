/**
 * The contract suite of `HandleStoreFactory.ready` (`src/core/contract/ports.ts`), run against
 * every store (memory, file, PostgreSQL): a store that can serve answers `ready` within
 * `STORE_READY_TIMEOUT_MS`, never throws, answers every probe of a burst the same way, and, once
 * its medium cannot serve (a store that can have that), answers `not_ready` with the one reason
 * word the store names, never with anything else (no path, host or password).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  STORE_READY_TIMEOUT_MS,
  type StoreNotReadyReason,
  type StoreReadiness,
} from '../../src/core/contract/ports.js';
import type { ContractBackend } from './contract.js';
import { makeRecord, stdioA } from './fixtures.js';

/** A backend for the readiness suite. */
export interface ReadyBackend extends ContractBackend {
  /**
   * Make the store's medium unable to serve (a closed store, an unsafe directory) and return the
   * reason `ready()` must then give. Leave out for a store whose medium cannot fail (memory).
   */
  unready?(): Promise<StoreNotReadyReason>;
}

/** `ready()` of `backend`'s factory (every store of this package has one), timed. */
async function probe(backend: ReadyBackend): Promise<{ outcome: StoreReadiness; ms: number }> {
  const ready = backend.factory.ready;
  if (ready === undefined) throw new Error('the store has no ready()');
  const started = performance.now();
  const outcome = await ready.call(backend.factory);
  return { outcome, ms: performance.now() - started };
}

export function describeReadyContract(name: string, makeBackend: () => Promise<ReadyBackend>): void {
  describe(`HandleStoreFactory.ready contract: ${name}`, () => {
    let backend: ReadyBackend;
    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(async () => {
      await backend?.close?.();
    });

    it('answers ready within the bound, before and after records are written', async () => {
      const first = await probe(backend);
      expect(first.outcome).toEqual({ kind: 'ready' });
      expect(first.ms).toBeLessThan(STORE_READY_TIMEOUT_MS);
      await backend.factory.forBinding(stdioA).create(makeRecord(stdioA, 'waiting'));
      expect((await probe(backend)).outcome).toEqual({ kind: 'ready' });
    });

    it('answers every probe of a burst, each ready', async () => {
      const ready = backend.factory.ready!;
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => ready.call(backend.factory)));
      expect(outcomes).toEqual(outcomes.map(() => ({ kind: 'ready' })));
    });

    it('answers not_ready with the reason word once the medium cannot serve', async (ctx) => {
      if (backend.unready === undefined) {
        ctx.skip();
        return;
      }
      const reason = await backend.unready();
      const { outcome, ms } = await probe(backend);
      expect(outcome).toEqual({ kind: 'not_ready', reason });
      expect(Object.keys(outcome).sort()).toEqual(['kind', 'reason']);
      expect(ms).toBeLessThan(STORE_READY_TIMEOUT_MS + 250);
    });
  });
}
