/**
 * The one contract suite every {@link HandleStore} passes (memory, file, PostgreSQL): the MUST
 * words of `HandleStore` in `src/core/contract/ports.ts`, asserted through the port only. Each store's test
 * file calls {@link describeHandleStoreContract} and then adds its own cases.
 *
 * A store injects its own corruption and transient failures through the optional hooks of
 * {@link ContractBackend}; a store that cannot have them (memory) leaves them out and those
 * cases say they were skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSessMcpError, type SessMcpError } from '../../src/core/contract/errors.js';
import {
  type Binding,
  type HandleStore,
  type HandleStoreFactory,
  LIST_CURSOR_KEY_BYTES,
  type ListPage,
  type ListPageKey,
  type ListPageQuery,
  MAX_UNFINISHED,
  type VersionedRecord,
} from '../../src/core/contract/ports.js';
import {
  type InteractionRecord,
  type InteractionStateKind,
  isUnfinished,
  listGroupOf,
  RECORD_FORMAT,
} from '../../src/core/model/record.js';
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
  /**
   * Another backend over the same records, as another instance (process) or this one after a
   * restart has it. Leave out for a store whose records live in one backend object (memory).
   */
  reopen?(): Promise<HandleStoreFactory>;
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

/** The store's `listPage` (every store of this package has one; a store without it fails here). */
export function listPage(view: HandleStore, query: ListPageQuery): Promise<ListPage> {
  if (view.listPage === undefined) throw new Error('the store has no listPage');
  return view.listPage(query);
}

/** The listing key of a record, from the port's definition (group, createdAt, handle). */
export function keyOf(record: InteractionRecord): ListPageKey {
  return { group: listGroupOf(record.state.kind), createdAt: record.createdAt, handle: record.handle };
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

    describe('the per-principal quota (create limits)', () => {
      const QUOTA = 5;
      const limits = { maxOpenPerPrincipal: QUOTA };
      let principals = 0;
      /** Three bindings of one principal no other test uses: other clients and grants. */
      const principalBindings = (): Binding[] => {
        const principalId = `p_${name}_${Date.now()}_${++principals}`;
        return [1, 2, 3].map((n) => ({
          ...httpA,
          principalId,
          clientId: `client_${n}`,
          grantId: `grant_${n}`,
        }));
      };

      it(`counts the principal's unfinished records over all its scopes: the ${QUOTA + 1}th is refused, another principal is not`, async () => {
        const bindings = principalBindings();
        const records: InteractionRecord[] = [];
        for (let i = 0; i < QUOTA; i++) {
          const binding = bindings[i % bindings.length]!;
          const record = makeRecord(binding, i % 2 === 0 ? 'waiting' : 'create_intent');
          records.push(record);
          await backend.factory.forBinding(binding).create(record, limits);
        }
        const third = backend.factory.forBinding(bindings[2]!);
        const over = makeRecord(bindings[2]!, 'create_intent');
        const refused = await storeFailure(third.create(over, limits));
        expect([refused.code, refused.limit, refused.retryable]).toEqual([
          'PRINCIPAL_QUOTA_REACHED',
          QUOTA,
          false,
        ]);
        expect(await third.get(over.handle)).toBeUndefined();
        // A finished record is not open; another principal and a create without limits are not counted.
        await third.create(makeRecord(bindings[2]!, 'completed'), limits);
        const [other] = principalBindings();
        await backend.factory.forBinding(other!).create(makeRecord(other!, 'create_intent'), limits);
        // Finishing one (in another scope of the same principal) frees a place.
        const first = backend.factory.forBinding(bindings[0]!);
        await first.update({ ...records[0]!, state: makeRecord(bindings[0]!, 'withdrawn').state }, 1);
        await third.create(over, limits);
        expect(await storeFailure(third.create(makeRecord(bindings[2]!), limits))).toMatchObject({
          code: 'PRINCIPAL_QUOTA_REACHED',
        });
        // Deleting one frees a place too.
        expect(await first.delete(records[3]!.handle)).toBe(true);
        await first.create(makeRecord(bindings[0]!), limits);
      });

      it('applies no quota to a binding without a principal (stdio) or a create without limits', async () => {
        const stdio: Binding = { ...stdioA, credentialGeneration: `gen_${name}_${++principals}` };
        const view = backend.factory.forBinding(stdio);
        for (let i = 0; i < QUOTA + 1; i++) await view.create(makeRecord(stdio, 'create_intent'), limits);
        const [binding] = principalBindings();
        const http = backend.factory.forBinding(binding!);
        for (let i = 0; i < QUOTA + 1; i++) await http.create(makeRecord(binding!, 'create_intent'));
        expect(await http.countUnfinished()).toBe(QUOTA + 1);
        for (const view of [stdio, binding!].map((b) => backend.factory.forBinding(b))) {
          for (const { record, version } of await view.listUnfinished())
            await view.delete(record.handle, version);
        }
      });

      it(`stays exact under concurrency: 40 concurrent creates over three scopes of one principal, ${QUOTA} succeed`, async () => {
        const bindings = principalBindings();
        const creates = Array.from({ length: 40 }, (_, i) => {
          const binding = bindings[i % bindings.length]!;
          return backend.factory.forBinding(binding).create(makeRecord(binding, 'create_intent'), limits);
        });
        expect(await tally(creates)).toEqual({ ok: QUOTA, PRINCIPAL_QUOTA_REACHED: 40 - QUOTA });
        let open = 0;
        for (const binding of bindings) open += await backend.factory.forBinding(binding).countUnfinished();
        expect(open).toBe(QUOTA);
      });

      it('refuses a limit that is not a whole number from 1, writing nothing', async () => {
        const [binding] = principalBindings();
        const view = backend.factory.forBinding(binding!);
        for (const bad of [0, -1, 1.5, Number.NaN]) {
          const record = makeRecord(binding!, 'create_intent');
          const refused = await storeFailure(view.create(record, { maxOpenPerPrincipal: bad }));
          expect([refused.code, refused.reason]).toEqual(['STATE_STORE_ERROR', 'invalid_record']);
          expect(await view.get(record.handle)).toBeUndefined();
        }
      });
    });

    it('writes format 2: a record read at format 1 (0.1.0) and handed back is stored as format 2', async () => {
      const binding = freshBinding();
      const view = backend.factory.forBinding(binding);
      const { title: _title, expiresAt: _expiresAt, ...rest } = makeRecord(binding, 'answered');
      const format1 = { ...rest, format: 1 } as InteractionRecord;
      const stored = { ...format1, format: RECORD_FORMAT };
      expect(await view.create(format1)).toEqual({ version: 1, record: stored });
      expect(await view.get(format1.handle)).toEqual({ version: 1, record: stored });
      const next = { ...format1, updatedAt: '2026-12-01T00:00:00.000Z' };
      expect(await view.update(next, 1)).toEqual({ version: 2, record: { ...next, format: RECORD_FORMAT } });
      expect((await view.get(format1.handle))?.record.format).toBe(RECORD_FORMAT);
      const other = { ...makeRecord(binding, 'waiting'), format: 3 } as unknown as InteractionRecord;
      const refused = await storeFailure(view.create(other));
      expect([refused.code, refused.reason, refused.retryable]).toEqual([
        'STATE_STORE_ERROR',
        'unsupported_version',
        false,
      ]);
    });

    describe('listPage', () => {
      /** Records of `binding` created at second `at` of 2026-01-01, in state `kind`. */
      const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
      const create = async (
        view: HandleStore,
        binding: Binding,
        kind: InteractionStateKind,
        second: number,
        handle?: string,
      ) => {
        const record = makeRecord(binding, kind, { createdAt: at(second), ...(handle ? { handle } : {}) });
        await view.create(record);
        return record;
      };
      const handles = (page: ListPage) => page.records.map((entry) => entry.record.handle);
      /** Every page from the first, `limit` at a time. */
      const allPages = async (view: HandleStore, query: Omit<ListPageQuery, 'limit'>, limit: number) => {
        const pages: ListPage[] = [];
        let after: ListPageKey | undefined;
        for (;;) {
          const page = await listPage(view, { ...query, limit, ...(after ? { after } : {}) });
          pages.push(page);
          const last = page.records.at(-1);
          if (!page.more || last === undefined) return pages;
          after = keyOf(last.record);
        }
      };

      it('is offered', () => {
        expect(typeof backend.factory.forBinding(freshBinding()).listPage).toBe('function');
      });

      it('lists groups first to last, newest first in each, a tie broken by handle (descending)', async () => {
        const binding = freshBinding();
        const view = backend.factory.forBinding(binding);
        const tie = newHandle();
        const waiting = await create(view, binding, 'waiting', 5);
        const completedA = await create(view, binding, 'completed', 9, `${tie}_a`);
        const blocked = await create(view, binding, 'blocked', 7);
        const answered = await create(view, binding, 'answered', 6);
        const intent = await create(view, binding, 'create_intent', 8);
        const expiredB = await create(view, binding, 'expired', 9, `${tie}_b`);
        const withdrawing = await create(view, binding, 'withdraw_pending', 1);
        const withdrawn = await create(view, binding, 'withdrawn', 2);
        const ask = await create(view, binding, 'ask_open', 3);
        const page = await listPage(view, { limit: 100 });
        expect(page.more).toBe(false);
        expect(page.records).toEqual(
          [answered, waiting, ask, withdrawing, intent, blocked, expiredB, completedA, withdrawn].map(
            (record) => ({ version: 1, record }),
          ),
        );
        // Every state kind lists, finished ones included, in its group.
        const everyKind = freshBinding();
        const all = backend.factory.forBinding(everyKind);
        for (const [i, kind] of STATE_KINDS.entries()) await create(all, everyKind, kind, i);
        const listed = (await listPage(all, { limit: 100 })).records.map((entry) => entry.record.state.kind);
        expect([...listed].sort()).toEqual([...STATE_KINDS].sort());
        const groups = listed.map((kind) => listGroupOf(kind));
        expect(groups).toEqual([...groups].sort());
      });

      it('pages with a keyset: every record once and in order, `more` true exactly while records follow', async () => {
        const binding = freshBinding();
        const view = backend.factory.forBinding(binding);
        const kinds: InteractionStateKind[] = ['waiting', 'completed', 'blocked', 'answered', 'expired'];
        for (let i = 0; i < 23; i++) await create(view, binding, kinds[i % kinds.length]!, i % 11);
        const whole = await listPage(view, { limit: 100 });
        expect(whole.records).toHaveLength(23);
        const pages = await allPages(view, {}, 7);
        expect(pages.map((page) => [page.records.length, page.more])).toEqual([
          [7, true],
          [7, true],
          [7, true],
          [2, false],
        ]);
        expect(pages.flatMap(handles)).toEqual(handles(whole));
        // A limit that ends exactly at the last record: nothing follows.
        expect((await listPage(view, { limit: 23 })).more).toBe(false);
        expect((await listPage(view, { limit: 22 })).more).toBe(true);
        // After the last record: an empty page.
        const last = whole.records.at(-1)!.record;
        expect(await listPage(view, { limit: 5, after: keyOf(last) })).toEqual({ records: [], more: false });
        // An empty scope.
        expect(await listPage(backend.factory.forBinding(freshBinding()), { limit: 1 })).toEqual({
          records: [],
          more: false,
        });
      });

      it('stays stable while records change state between pages: no unchanged record is repeated or skipped', async () => {
        const binding = freshBinding();
        const view = backend.factory.forBinding(binding);
        const records: InteractionRecord[] = [];
        for (let i = 0; i < 9; i++) records.push(await create(view, binding, 'waiting', 20 - i));
        for (let i = 0; i < 3; i++) records.push(await create(view, binding, 'create_unknown', 10 - i));
        for (let i = 0; i < 3; i++) records.push(await create(view, binding, 'completed', 30 - i));
        const before = handles(await listPage(view, { limit: 100 }));
        const first = await listPage(view, { limit: 4 });
        expect(handles(first)).toEqual(before.slice(0, 4));
        // Between pages: one already listed is answered then completed (it moves to a later group),
        // one not yet listed is blocked (moves from group 0 to 1), one only has its time of change moved.
        const seen = records.find((r) => r.handle === before[1])!;
        const ahead = records.find((r) => r.handle === before[6])!;
        const touched = records.find((r) => r.handle === before[7])!;
        await view.update({ ...seen, state: makeRecord(binding, 'completed').state }, 1);
        await view.update({ ...ahead, state: makeRecord(binding, 'blocked').state }, 1);
        await view.update({ ...touched, updatedAt: '2026-12-01T00:00:00.000Z' }, 1);
        const rest: string[] = [];
        let after = keyOf(first.records.at(-1)!.record);
        for (;;) {
          const page = await listPage(view, { limit: 4, after });
          rest.push(...handles(page));
          if (!page.more) break;
          after = keyOf(page.records.at(-1)!.record);
        }
        const listed = [...handles(first), ...rest];
        const changed = new Set([seen.handle, ahead.handle]);
        const unchanged = before.filter((handle) => !changed.has(handle));
        expect(listed.filter((handle) => !changed.has(handle))).toEqual(unchanged);
        // The moved records are listed in their new place: the blocked one once, after group 0.
        expect(listed.filter((handle) => handle === ahead.handle)).toHaveLength(1);
        expect(listed.indexOf(ahead.handle)).toBeGreaterThan(listed.indexOf(before[8]!));
        expect(listed.filter((handle) => handle === seen.handle)).toHaveLength(2);
      });

      it('filters by state kinds, keeping the listing order', async () => {
        const binding = freshBinding();
        const view = backend.factory.forBinding(binding);
        const waiting = await create(view, binding, 'waiting', 1);
        const ask = await create(view, binding, 'ask_open', 2);
        const completed = await create(view, binding, 'completed', 3);
        const withdrawn = await create(view, binding, 'withdrawn', 4);
        await create(view, binding, 'blocked', 5);
        await create(view, binding, 'answered', 6);
        const waitingKinds = await listPage(view, { limit: 10, kinds: ['waiting', 'ask_open'] });
        expect(waitingKinds).toEqual({
          records: [ask, waiting].map((record) => ({ version: 1, record })),
          more: false,
        });
        const finished = await allPages(view, { kinds: ['withdrawn', 'completed', 'expired'] }, 1);
        expect(finished.flatMap(handles)).toEqual([withdrawn.handle, completed.handle]);
        expect(finished.map((page) => page.more)).toEqual([true, false]);
        // From a key in an earlier group: the filter still applies.
        const fromGroup0 = await listPage(view, { limit: 10, kinds: ['completed'], after: keyOf(ask) });
        expect(handles(fromGroup0)).toEqual([completed.handle]);
        expect(await listPage(view, { limit: 10, kinds: [] })).toEqual({ records: [], more: false });
        expect(await listPage(view, { limit: 10, kinds: ['ask_closed'] })).toEqual({
          records: [],
          more: false,
        });
      });

      it('never lists another scope’s records; the same scope with another generation sees them', async () => {
        const a = freshBinding();
        const b = { ...a, principalId: 'user_other' } as Binding;
        const viewA = backend.factory.forBinding(a);
        const record = await create(viewA, a, 'waiting', 1);
        const finished = await create(viewA, a, 'completed', 2);
        const viewB = backend.factory.forBinding(b);
        await create(viewB, b, 'waiting', 3);
        const listedB = handles(await listPage(viewB, { limit: 100 }));
        expect(listedB).not.toContain(record.handle);
        expect(listedB).not.toContain(finished.handle);
        expect(listedB).toHaveLength(1);
        const same = backend.factory.forBinding({ ...a, grantGeneration: 'g-next' } as Binding);
        expect(handles(await listPage(same, { limit: 100 }))).toEqual([record.handle, finished.handle]);
      });

      it('filters by generation: only that generation’s records, in listing order, with kinds and the keyset', async () => {
        const a = freshBinding();
        const earlier = { ...a, grantGeneration: 'g-earlier' } as Binding;
        const view = backend.factory.forBinding(a);
        const mine: InteractionRecord[] = [];
        const theirs: InteractionRecord[] = [];
        // Interleaved in time and kinds, so a store that filters after ordering would still show it.
        for (let i = 0; i < 12; i++) {
          const kind = (['waiting', 'completed', 'blocked'] as const)[i % 3] as InteractionStateKind;
          theirs.push(await create(backend.factory.forBinding(earlier), earlier, kind, 2 * i));
          mine.push(await create(view, a, kind, 2 * i + 1));
        }
        // Listing order as the port defines it: group up, then createdAt and handle down.
        const order = (records: InteractionRecord[]) =>
          records
            .map(keyOf)
            .sort(
              (x, y) =>
                x.group - y.group ||
                (x.createdAt < y.createdAt ? 1 : x.createdAt > y.createdAt ? -1 : 0) ||
                (x.handle < y.handle ? 1 : -1),
            )
            .map((key) => key.handle);
        const generation = (binding: Binding) => (binding as { grantGeneration: string }).grantGeneration;
        expect(handles(await listPage(view, { limit: 100, generation: generation(a) }))).toEqual(order(mine));
        expect(handles(await listPage(view, { limit: 100, generation: 'g-earlier' }))).toEqual(order(theirs));
        expect(await listPage(view, { limit: 100, generation: 'g-none' })).toEqual({
          records: [],
          more: false,
        });
        const paged = (await allPages(view, { generation: generation(a) }, 5)).flatMap(handles);
        expect(paged).toEqual(order(mine));
        const finished = await listPage(view, {
          limit: 100,
          generation: generation(a),
          kinds: ['completed'],
        });
        expect(handles(finished)).toEqual(order(mine.filter((record) => record.state.kind === 'completed')));
        const firstTwo = await listPage(view, {
          limit: 2,
          generation: 'g-earlier',
          kinds: ['waiting', 'blocked'],
        });
        expect(firstTwo.more).toBe(true);
        expect(handles(firstTwo)).toEqual(
          order(theirs.filter((record) => record.state.kind !== 'completed')).slice(0, 2),
        );
      });

      it('refuses a query out of bounds with a TypeError that names the field, before reading anything', async () => {
        const view = backend.factory.forBinding(freshBinding());
        const bad: [unknown, RegExp][] = [
          [{ limit: 0 }, /limit must be a whole number from 1 to 100/],
          [{ limit: 101 }, /limit must be a whole number from 1 to 100/],
          [{ limit: 2.5 }, /limit/],
          [{ limit: -1 }, /limit/],
          [{ limit: Number.NaN }, /limit/],
          [{ limit: '10' }, /limit/],
          [{}, /limit/],
          [null, /query must be an object/],
          [{ limit: 10, kinds: ['paused'] }, /kinds must be a list of record state kinds/],
          [{ limit: 10, kinds: 'waiting' }, /kinds/],
          [{ limit: 10, after: { group: 3, createdAt: at(1), handle: 'h' } }, /after must be a listing key/],
          [{ limit: 10, after: { group: 0, createdAt: 5, handle: 'h' } }, /after/],
          [{ limit: 10, generation: 7 }, /generation must be a string/],
        ];
        for (const [query, message] of bad) {
          let failure: unknown;
          await listPage(view, query as ListPageQuery).catch((error: unknown) => {
            failure = error;
          });
          expect(failure, JSON.stringify(query)).toBeInstanceOf(TypeError);
          expect((failure as Error).message).toMatch(/^listPage: /);
          expect((failure as Error).message, JSON.stringify(query)).toMatch(message);
        }
        expect((await listPage(view, { limit: 1 })).records).toEqual([]);
        expect((await listPage(view, { limit: 100 })).records).toEqual([]);
      });

      it('returns copies: changing a listed record or the query changes nothing stored', async () => {
        const binding = freshBinding();
        const view = backend.factory.forBinding(binding);
        const record = await create(view, binding, 'answered', 1);
        const kinds: InteractionStateKind[] = ['answered'];
        const page = await listPage(view, { limit: 10, kinds });
        const listed = page.records[0]!;
        listed.record.state = makeRecord(binding, 'blocked').state;
        listed.record.title = 'changed';
        listed.version = 99;
        kinds.push('blocked');
        expect(await listPage(view, { limit: 10, kinds: ['answered'] })).toEqual({
          records: [{ version: 1, record }],
          more: false,
        });
        expect(await view.get(record.handle)).toEqual({ version: 1, record });
      });
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
      // One unreadable record does not stop a listing; reading its handle names it.
      const readable = makeRecord(binding, 'waiting');
      await view.create(readable);
      expect(await listPage(view, { limit: 100 })).toEqual({
        records: [{ version: 1, record: readable }],
        more: false,
      });
    });

    it('has a cursor key: at least 32 bytes, the same from every view and every instance over the same records', async () => {
      const one = backend.factory.forBinding(freshBinding());
      const other = backend.factory.forBinding({ ...freshBinding(), principalId: 'user_key' } as Binding);
      expect(typeof one.listCursorKey).toBe('function');
      const key = await (one.listCursorKey as () => Promise<Uint8Array>)();
      expect(key).toBeInstanceOf(Uint8Array);
      expect(key.length).toBeGreaterThanOrEqual(LIST_CURSOR_KEY_BYTES);
      expect(new Set(key).size, 'random bytes, not a constant').toBeGreaterThan(8);
      expect(await (other.listCursorKey as () => Promise<Uint8Array>)()).toEqual(key);
      if (backend.reopen !== undefined) {
        const again = (await backend.reopen()).forBinding(freshBinding());
        expect(await (again.listCursorKey as () => Promise<Uint8Array>)()).toEqual(key);
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
        ['listPage', () => listPage(view, { limit: 10 })],
        ['listCursorKey', () => (view.listCursorKey as () => Promise<Uint8Array>)()],
      ];
      for (const [method, call] of calls) {
        const error = await storeFailure(call());
        expect(error.code, method).toBe('STATE_STORE_ERROR');
        expect(error.retryable, method).toBe(true);
      }
    });
  });
}
