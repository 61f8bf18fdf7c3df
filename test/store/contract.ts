/**
 * The one contract suite every {@link HandleStore} passes (memory, file, PostgreSQL): the MUST
 * words of `HandleStore` in `src/core/ports.ts`, asserted through the port only. Each store's test
 * file calls {@link describeHandleStoreContract} and then adds its own cases.
 *
 * A store injects its own corruption and transient failures through the optional hooks of
 * {@link ContractBackend}; a store that cannot have them (memory) leaves them out and those
 * cases say they were skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSessMcpError, type SessMcpError } from '../../src/core/errors.js';
import {
  type Binding,
  type HandleStore,
  type HandleStoreFactory,
  MAX_UNFINISHED,
  type VersionedRecord,
} from '../../src/core/ports.js';
import { type InteractionRecord, isUnfinished } from '../../src/core/record.js';
import {
  HOSTILE_STRINGS,
  hostileBinding,
  hostileRecord,
  httpA,
  httpB,
  makeRecord,
  newHandle,
  STATE_KINDS,
  stdioA,
  stdioA2,
  stdioB,
} from './fixtures.js';

/** One store backend under test. */
export interface ContractBackend {
  factory: HandleStoreFactory;
  /**
   * Store something unreadable under `handle` in the scope of `binding`: `garbled` bytes/JSON, or
   * a well-formed record of an `unsupported_version`. Leave out if the store cannot hold such data.
   */
  corrupt?(binding: Binding, handle: string, kind: 'garbled' | 'unsupported_version'): Promise<void>;
  /** A view of `binding` whose every operation meets a transient failure of the medium. */
  broken?(binding: Binding): Promise<HandleStore>;
  /** Release everything (servers, pools, temp dirs). */
  close?(): Promise<void>;
}

/** Await a rejection and return the `SessMcpError` it carried (fails on anything else). */
export async function storeFailure(promise: Promise<unknown>): Promise<SessMcpError> {
  let failure: unknown;
  try {
    await promise;
  } catch (error) {
    failure = error;
  }
  expect(failure, 'the operation should have failed').toBeDefined();
  expect(isSessMcpError(failure), `expected a SessMcpError, got ${String(failure)}`).toBe(true);
  return failure as SessMcpError;
}

/** Outcomes of many concurrent calls, counted by code (`ok` for success). */
export async function tally(calls: Promise<unknown>[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const result of await Promise.allSettled(calls)) {
    const key =
      result.status === 'fulfilled'
        ? 'ok'
        : isSessMcpError(result.reason)
          ? `${result.reason.code}${result.reason.reason ? `:${result.reason.reason}` : ''}`
          : `other:${String(result.reason)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * Run the store contract against the backend `makeBackend` builds. Every test works on bindings
 * of its own (a fresh HTTP grant per test), so one backend serves the whole suite.
 */
export function describeHandleStoreContract(name: string, makeBackend: () => Promise<ContractBackend>): void {
  describe(`HandleStore contract: ${name}`, () => {
    let backend: ContractBackend;
    let grant = 0;
    /** A binding no other test uses: a fresh scope per call. */
    const freshBinding = (): Binding => ({ ...httpA, grantId: `grant_${name}_${Date.now()}_${++grant}` });
    /** A view of a fresh binding holding one record of state `kind`, at version 1. */
    const withRecord = async (kind: InteractionRecord['state']['kind']) => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const record = makeRecord(binding, kind);
      await view.create(record);
      return { binding, view, record };
    };

    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(async () => {
      await backend?.close?.();
    });

    it('creates at version 1 and reads back an equal copy', async () => {
      const store = backend.factory.forBinding(freshBinding());
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const record = makeRecord(binding, 'waiting');
      const created = await view.create(record);
      expect(created).toEqual({ version: 1, record });
      const read = await view.get(record.handle);
      expect(read).toEqual({ version: 1, record });
      // A caller's copy is not the stored one.
      read!.record.state = { kind: 'expired', sessionId: 'x', revision: 9 };
      expect((await view.get(record.handle))?.record).toEqual(record);
      expect(await store.get(record.handle)).toBeUndefined();
    });

    it('stores every state kind', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      for (const kind of STATE_KINDS) {
        const record = makeRecord(binding, kind);
        await view.create(record);
        expect(await view.get(record.handle)).toEqual({ version: 1, record });
      }
    });

    it(`keeps every string as it came: ${HOSTILE_STRINGS.length} hostile values in every string position`, async () => {
      for (const text of HOSTILE_STRINGS) {
        const binding = hostileBinding(freshBinding(), text);
        const view = backend.factory.forBinding(binding);
        const stored: VersionedRecord[] = [];
        for (const kind of STATE_KINDS) {
          const record = hostileRecord(binding, kind, text);
          expect(await view.create(record)).toEqual({ version: 1, record });
          expect(await view.get(record.handle)).toEqual({ version: 1, record });
          const next = { ...record, updatedAt: `${text}${record.updatedAt}${text}` };
          expect(await view.update(next, 1)).toEqual({ version: 2, record: next });
          const read = await view.get(record.handle);
          expect(read).toEqual({ version: 2, record: next });
          // Equal, not merely alike: the exact code units and every own key came back.
          expect(JSON.stringify(read?.record)).toBe(JSON.stringify(next));
          stored.push({ version: 2, record: next });
        }
        expect(await view.listUnfinished()).toEqual(stored.filter((entry) => isUnfinished(entry.record)));
      }
    });

    it('refuses to create an existing handle and changes nothing', async () => {
      const { binding, view, record } = await withRecord('waiting');
      const again = { ...record, state: makeRecord(binding, 'expired').state };
      const error = await storeFailure(view.create(again));
      expect(error.code).toBe('INVALID_STATE');
      expect(error.reason).toBe('exists');
      expect(await view.get(record.handle)).toEqual({ version: 1, record });
    });

    it('updates by compare-and-set: each success adds exactly 1 to the version', async () => {
      const { binding, view, record } = await withRecord('create_intent');
      const waiting = {
        ...record,
        updatedAt: '2026-11-30T01:00:00.000Z',
        state: makeRecord(binding, 'waiting').state,
      };
      expect(await view.update(waiting, 1)).toEqual({ version: 2, record: waiting });
      const answered = { ...waiting, state: makeRecord(binding, 'answered').state };
      expect(await view.update(answered, 2)).toEqual({ version: 3, record: answered });
      expect(await view.get(record.handle)).toEqual({ version: 3, record: answered });
    });

    it('an update returns the record written; changing it (or the record passed in) changes nothing stored', async () => {
      const { binding, view, record } = await withRecord('create_intent');
      const waiting = { ...record, state: makeRecord(binding, 'waiting').state };
      const written = structuredClone(waiting);
      const returned = await view.update(waiting, 1);
      expect(returned).toEqual({ version: 2, record: written });
      returned.record.updatedAt = '2099-01-01T00:00:00.000Z';
      returned.record.state = makeRecord(binding, 'blocked').state;
      waiting.createdAt = '2099-01-01T00:00:00.000Z';
      expect(await view.get(record.handle)).toEqual({ version: 2, record: written });
      // The next update moves on from the version the update returned.
      const answered = { ...written, state: makeRecord(binding, 'answered').state };
      expect((await view.update(answered, 2)).version).toBe(3);
      expect(await view.get(record.handle)).toEqual({ version: 3, record: answered });
    });

    it('refuses a stale version and changes nothing', async () => {
      const { binding, view, record } = await withRecord('waiting');
      const answered = { ...record, state: makeRecord(binding, 'answered').state };
      await view.update(answered, 1);
      for (const stale of [1, 3, 0]) {
        const error = await storeFailure(
          view.update({ ...record, state: makeRecord(binding, 'blocked').state }, stale),
        );
        expect(error.code).toBe('INVALID_STATE');
        expect(error.reason).toBe('stale_version');
        expect(error.retryable).toBe(false);
      }
      expect(await view.get(record.handle)).toEqual({ version: 2, record: answered });
    });

    it('refuses to update a record that does not exist, without creating it', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const record = makeRecord(binding, 'waiting');
      const error = await storeFailure(view.update(record, 1));
      expect(error.code).toBe('INVALID_STATE');
      expect(error.reason).toBe('stale_version');
      expect(await view.get(record.handle)).toBeUndefined();
    });

    it('lets exactly one of many concurrent updates at one version win', async () => {
      const { view, record } = await withRecord('waiting');
      const writes = Array.from({ length: 20 }, (_, i) =>
        view.update({ ...record, updatedAt: `2026-11-30T02:00:${String(i).padStart(2, '0')}.000Z` }, 1),
      );
      expect(await tally(writes)).toEqual({ ok: 1, 'INVALID_STATE:stale_version': 19 });
      expect((await view.get(record.handle))?.version).toBe(2);
    });

    it('deletes, and with an expected version only at that version', async () => {
      const { binding, view, record } = await withRecord('completed');
      await view.update({ ...record, updatedAt: '2026-11-30T03:00:00.000Z' }, 1);
      expect(await view.delete(record.handle, 1)).toBe(false);
      expect((await view.get(record.handle))?.version).toBe(2);
      expect(await view.delete(record.handle, 2)).toBe(true);
      expect(await view.get(record.handle)).toBeUndefined();
      expect(await view.delete(record.handle)).toBe(false);
      const other = makeRecord(binding, 'waiting');
      await view.create(other);
      expect(await view.delete(other.handle)).toBe(true);
      expect(await view.get(other.handle)).toBeUndefined();
      // A deleted handle can be created again, at version 1.
      expect((await view.create(other)).version).toBe(1);
    });

    it('treats a handle that is not a store key as not found and refuses to create it', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      for (const handle of [
        '',
        '.',
        '..',
        '../x',
        'a/b',
        '/etc/passwd',
        '.hidden',
        'a\\b',
        'a b',
        'x'.repeat(201),
      ]) {
        expect(await view.get(handle)).toBeUndefined();
        expect(await view.delete(handle)).toBe(false);
        const error = await storeFailure(view.create(makeRecord(binding, 'waiting', { handle })));
        expect(error.code).toBe('STATE_STORE_ERROR');
        expect(error.retryable).toBe(false);
      }
      expect(await view.countUnfinished()).toBe(0);
    });

    it('refuses to write a record of another binding scope through a view', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const foreign = makeRecord(freshBinding(), 'waiting');
      const error = await storeFailure(view.create(foreign));
      expect(error.code).toBe('STATE_STORE_ERROR');
      expect(error.retryable).toBe(false);
      expect(await view.get(foreign.handle)).toBeUndefined();
      expect(await view.countUnfinished()).toBe(0);
    });

    it('lists and counts the unfinished records of its scope, oldest first', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const kinds = [
        'ask_open',
        'completed',
        'waiting',
        'expired',
        'blocked',
        'ask_closed',
        'create_unknown',
      ] as const;
      const records = kinds.map((kind, i) =>
        makeRecord(binding, kind, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 10 - i)).toISOString() }),
      );
      for (const record of records) await view.create(record);
      const unfinished = records.filter(isUnfinished).reverse();
      expect(await view.countUnfinished()).toBe(4);
      expect(await view.listUnfinished()).toEqual(unfinished.map((record) => ({ version: 1, record })));
      // Finishing one takes it off the list.
      const first = unfinished[0]!;
      await view.update({ ...first, state: makeRecord(binding, 'expired').state }, 1);
      expect(await view.countUnfinished()).toBe(3);
      expect((await view.listUnfinished()).map((r) => r.record.handle)).toEqual(
        unfinished.slice(1).map((r) => r.handle),
      );
    });

    it('never shows a record to another scope, and lets the same scope with a new generation see it', async () => {
      for (const [a, b, same] of [
        [stdioA, stdioB, stdioA2],
        [httpA, httpB, { ...httpA, grantGeneration: 'g2' }],
      ] as [Binding, Binding, Binding][]) {
        const viewA = backend.factory.forBinding(a);
        const viewB = backend.factory.forBinding(b);
        const record = makeRecord(a, 'waiting');
        const countB = await viewB.countUnfinished();
        await viewA.create(record);
        expect(await viewB.get(record.handle)).toBeUndefined();
        expect(await viewB.countUnfinished()).toBe(countB);
        expect((await viewB.listUnfinished()).some((r) => r.record.handle === record.handle)).toBe(false);
        expect(await viewB.delete(record.handle)).toBe(false);
        const foreignWrite = await storeFailure(viewB.update({ ...record, binding: b }, 1));
        expect(foreignWrite.code).toBe('INVALID_STATE');
        // Handles are one namespace: the other scope cannot take this handle over.
        expect((await storeFailure(viewB.create({ ...record, binding: b }))).code).toBe('INVALID_STATE');
        expect(await viewA.get(record.handle)).toEqual({ version: 1, record });
        // Same identity, another credential/grant generation: the record is returned (the
        // engine reports BINDING_MISMATCH) and counts against the same cap.
        const viewSame = backend.factory.forBinding(same);
        expect(await viewSame.get(record.handle)).toEqual({ version: 1, record });
        expect((await viewSame.listUnfinished()).some((r) => r.record.handle === record.handle)).toBe(true);
        expect(await viewSame.delete(record.handle, 1)).toBe(true);
      }
    });

    it(`caps unfinished records at ${MAX_UNFINISHED} per scope; finished ones do not count`, async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const records: InteractionRecord[] = [];
      for (let i = 0; i < MAX_UNFINISHED; i++) {
        const record = makeRecord(binding, i % 2 === 0 ? 'waiting' : 'create_intent');
        records.push(record);
        await view.create(record);
      }
      const over = makeRecord(binding, 'waiting');
      const full = await storeFailure(view.create(over));
      expect(full.code).toBe('STATE_STORE_FULL');
      expect(full.limit).toBe(MAX_UNFINISHED);
      expect(await view.get(over.handle)).toBeUndefined();
      // A finished record can still be stored, and other scopes are not affected.
      await view.create(makeRecord(binding, 'completed'));
      const other = freshBinding();
      await backend.factory.forBinding(other).create(makeRecord(other, 'waiting'));
      expect(await view.countUnfinished()).toBe(MAX_UNFINISHED);
      // Finishing one frees a place.
      await view.update({ ...records[0]!, state: makeRecord(binding, 'completed').state }, 1);
      await view.create(over);
      expect(await view.countUnfinished()).toBe(MAX_UNFINISHED);
    });

    it(`keeps the cap exact under concurrency: 150 concurrent creates, ${MAX_UNFINISHED} succeed`, async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const creates = Array.from({ length: 150 }, () => view.create(makeRecord(binding, 'create_intent')));
      expect(await tally(creates)).toEqual({ ok: MAX_UNFINISHED, STATE_STORE_FULL: 50 });
      expect(await view.countUnfinished()).toBe(MAX_UNFINISHED);
      expect(await view.listUnfinished()).toHaveLength(MAX_UNFINISHED);
    });

    it('reports a corrupt or unsupported-version record as a non-retryable STATE_STORE_ERROR', async (context) => {
      if (backend.corrupt === undefined) {
        context.skip(`${name} cannot hold a corrupt record`);
        return;
      }
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      for (const kind of ['garbled', 'unsupported_version'] as const) {
        const handle = newHandle();
        await backend.corrupt(binding, handle, kind);
        const read = await storeFailure(view.get(handle));
        expect(read.code).toBe('STATE_STORE_ERROR');
        expect(read.retryable).toBe(false);
        expect(read.reason).toBe(kind === 'garbled' ? 'corrupt' : 'unsupported_version');
        const write = await storeFailure(view.update(makeRecord(binding, 'waiting', { handle }), 1));
        expect(write.code).toBe('STATE_STORE_ERROR');
        expect(write.retryable).toBe(false);
        const create = await storeFailure(view.create(makeRecord(binding, 'waiting', { handle })));
        expect(['INVALID_STATE', 'STATE_STORE_ERROR']).toContain(create.code);
      }
    });

    it('reports a transient failure as a retryable STATE_STORE_ERROR', async (context) => {
      if (backend.broken === undefined) {
        context.skip(`${name} has no medium that can fail`);
        return;
      }
      const binding = freshBinding();
      const view = await backend.broken(binding);
      const record = makeRecord(binding, 'waiting');
      const calls: [string, () => Promise<unknown>][] = [
        ['get', () => view.get(record.handle)],
        ['create', () => view.create(record)],
        ['update', () => view.update(record, 1)],
        ['delete', () => view.delete(record.handle, 1)],
        ['listUnfinished', () => view.listUnfinished()],
        ['countUnfinished', () => view.countUnfinished()],
      ];
      for (const [method, call] of calls) {
        const error = await storeFailure(call());
        expect(error.code, method).toBe('STATE_STORE_ERROR');
        expect(error.retryable, method).toBe(true);
      }
    });
  });
}
