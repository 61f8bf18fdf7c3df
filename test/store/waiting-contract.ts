/**
 * The contract suite of `HandleStoreFactory.waiting` (`src/core/contract/ports.ts`), run against
 * every store (memory, file, PostgreSQL): the records a watcher polls, over every scope and
 * generation, in handle order, paged by a keyset that sees each exactly once, kept deep-equal, and
 * leaving out what changed kind or cannot be read without failing the page.
 *
 * Each suite has a backend of its own (the listing spans every scope), and each test its own
 * handle prefix, so the tests of one suite do not see each other's records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Binding,
  type HandleStoreFactory,
  MAX_WAITING_PAGE_LIMIT,
  type VersionedRecord,
  type WaitingQuery,
} from '../../src/core/contract/ports.js';
import { nextRecord } from '../../src/core/engine/call.js';
import { type InteractionStateKind, isWatched, WATCHED_STATE_KINDS } from '../../src/core/model/record.js';
import type { ContractBackend } from './contract.js';
import {
  HOSTILE_STRINGS,
  hostileRecord,
  httpA,
  httpB,
  makeRecord,
  STATE_KINDS,
  stateOf,
  stdioA,
  stdioA2,
} from './fixtures.js';

type Waiting = NonNullable<HandleStoreFactory['waiting']>;

/** Every watched record of `factory` whose handle starts with `prefix`, paging `limit` at a time. */
export async function allWaiting(
  factory: HandleStoreFactory,
  prefix: string,
  limit = MAX_WAITING_PAGE_LIMIT,
): Promise<{ records: VersionedRecord[]; pages: number }> {
  const waiting = factory.waiting as Waiting;
  const records: VersionedRecord[] = [];
  let after: string | undefined = prefix;
  let pages = 0;
  for (;;) {
    const query: WaitingQuery = after === undefined ? { limit } : { limit, after };
    const page = await waiting.call(factory, query);
    pages += 1;
    records.push(...page.records.filter(({ record }) => record.handle.startsWith(prefix)));
    const last = page.records[page.records.length - 1]?.record.handle ?? page.next;
    if (page.next === undefined || (last !== undefined && !last.startsWith(prefix))) break;
    after = page.next;
  }
  return { records, pages };
}

export function describeWaitingContract(name: string, makeBackend: () => Promise<ContractBackend>): void {
  describe(`HandleStoreFactory.waiting contract: ${name}`, () => {
    let backend: ContractBackend;
    let test = 0;
    /** A handle prefix of this test's own (handles are `sh_…`, store keys). */
    const prefix = () => `sh_w${name.replace(/[^a-z]/g, '')}${++test}_`;

    beforeAll(async () => {
      backend = await makeBackend();
      expect(typeof backend.factory.waiting).toBe('function');
    });
    afterAll(async () => {
      await backend?.close?.();
    });

    it('lists the waiting and ask_open records of every scope and generation, in handle order, each once', async () => {
      const p = prefix();
      const bindings: Binding[] = [stdioA, stdioA2, httpA, httpB];
      const made: string[] = [];
      let n = 0;
      for (const binding of bindings) {
        for (const kind of STATE_KINDS) {
          const handle = `${p}${String(n++).padStart(3, '0')}`;
          await backend.factory.forBinding(binding).create(makeRecord(binding, kind, { handle }));
          if ((WATCHED_STATE_KINDS as readonly InteractionStateKind[]).includes(kind)) made.push(handle);
        }
      }
      for (const limit of [1, 3, MAX_WAITING_PAGE_LIMIT]) {
        const { records, pages } = await allWaiting(backend.factory, p, limit);
        expect(records.map(({ record }) => record.handle)).toEqual(made);
        expect(records.every(({ record }) => isWatched(record))).toBe(true);
        if (limit === 1) expect(pages).toBeGreaterThanOrEqual(made.length);
      }
    });

    it('sets next while more follow and leaves it out at the end', async () => {
      const p = prefix();
      for (const i of [0, 1, 2]) {
        await backend.factory.forBinding(httpA).create(makeRecord(httpA, 'waiting', { handle: `${p}${i}` }));
      }
      const waiting = backend.factory.waiting as Waiting;
      const first = await waiting.call(backend.factory, { after: p, limit: 2 });
      expect(first.records.map(({ record }) => record.handle)).toEqual([`${p}0`, `${p}1`]);
      expect(first.next).toBe(`${p}1`);
      const second = await waiting.call(backend.factory, { after: `${p}1`, limit: 1 });
      expect(second.records.map(({ record }) => record.handle)).toEqual([`${p}2`]);
      // Nothing of a later test exists yet: the end of the listing.
      const end = await waiting.call(backend.factory, { after: `${p}2`, limit: 5 });
      expect(end.records.filter(({ record }) => record.handle.startsWith(p))).toEqual([]);
    });

    it('follows every change: an answered record leaves, a new one and an Ask opened join, a deleted one leaves', async () => {
      const p = prefix();
      const view = backend.factory.forBinding(httpA);
      const a = makeRecord(httpA, 'waiting', { handle: `${p}a` });
      const b = makeRecord(httpA, 'waiting', { handle: `${p}b` });
      const c = makeRecord(httpA, 'create_intent', { handle: `${p}c` });
      for (const record of [a, b, c]) await view.create(record);
      expect((await allWaiting(backend.factory, p)).records.map(({ record }) => record.handle)).toEqual([
        `${p}a`,
        `${p}b`,
      ]);
      await view.update(nextRecord(a, stateOf('answered'), '2026-12-03T00:00:01.000Z'), 1);
      await view.update(nextRecord(c, stateOf('ask_open'), '2026-12-03T00:00:02.000Z'), 1);
      const d = makeRecord(httpA, 'waiting', { handle: `${p}d` });
      await view.create(d);
      expect((await allWaiting(backend.factory, p)).records.map(({ record }) => record.handle)).toEqual([
        `${p}b`,
        `${p}c`,
        `${p}d`,
      ]);
      expect(await view.delete(`${p}b`)).toBe(true);
      const after = (await allWaiting(backend.factory, p)).records;
      expect(after.map(({ record }) => record.handle)).toEqual([`${p}c`, `${p}d`]);
      expect(after.map(({ version }) => version)).toEqual([2, 1]);
    });

    it('returns every record deep-equal, hostile strings included', async () => {
      const p = prefix();
      const written: VersionedRecord[] = [];
      for (const [i, text] of HOSTILE_STRINGS.entries()) {
        const record = hostileRecord(httpB, i % 2 === 0 ? 'waiting' : 'ask_open', text, {
          handle: `${p}${String(i).padStart(2, '0')}`,
        });
        written.push(await backend.factory.forBinding(httpB).create(record));
      }
      const { records } = await allWaiting(backend.factory, p);
      expect(records).toEqual(written);
    });

    it('leaves out a record that cannot be read, without failing the page', async (context) => {
      if (backend.corrupt === undefined) {
        context.skip(`${name} cannot hold a corrupt record`);
        return;
      }
      const p = prefix();
      await backend.factory.forBinding(httpA).create(makeRecord(httpA, 'waiting', { handle: `${p}1` }));
      await backend.corrupt(httpA, `${p}2`, 'garbled');
      await backend.corrupt(httpA, `${p}3`, 'unsupported_version');
      await backend.factory.forBinding(httpA).create(makeRecord(httpA, 'waiting', { handle: `${p}4` }));
      const { records } = await allWaiting(backend.factory, p, 1);
      expect(records.map(({ record }) => record.handle)).toEqual([`${p}1`, `${p}4`]);
    });

    it('lists what another instance over the same records wrote', async (context) => {
      if (backend.reopen === undefined) {
        context.skip(`${name} keeps its records in one backend object`);
        return;
      }
      const p = prefix();
      const other = await backend.reopen();
      const written = await other
        .forBinding(stdioA)
        .create(makeRecord(stdioA, 'waiting', { handle: `${p}x` }));
      expect((await allWaiting(backend.factory, p)).records).toEqual([written]);
    });

    it('refuses a query out of bounds with a TypeError naming the field', async () => {
      const waiting = backend.factory.waiting as Waiting;
      const bad: unknown[] = [
        { limit: 0 },
        { limit: MAX_WAITING_PAGE_LIMIT + 1 },
        { limit: 1.5 },
        { limit: '1' },
        { limit: 1, after: 5 },
        null,
      ];
      for (const query of bad) {
        const error = await waiting.call(backend.factory, query as WaitingQuery).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, JSON.stringify(query)).toBeInstanceOf(TypeError);
        expect(String((error as Error).message)).toMatch(/^waiting: query/);
      }
    });
  });
}
