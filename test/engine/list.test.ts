/**
 * `sess_list` end to end through the engine, over the memory, file and (with `DATABASE_URL`)
 * PostgreSQL stores: the default order and the state filter, `limit`, paging with the opaque
 * cursor while records change state, bad and foreign cursors, inspect, scoping, the fallback for a
 * store without `listPage`, no request to Sess, and never a link or an answer in a result. Also the
 * record-level fields the engine now writes (`title`, `expiresAt`, format 2).
 *
 * A store that has no `listPage` of its own yet is given one by a named double
 * ({@link withListPage}) that lists the handles created through it; a store with its own is used
 * as it is.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Binding,
  bindingScope,
  type HandleStore,
  type HandleStoreFactory,
  type ListPage,
  type ListPageQuery,
  type StdioBinding,
  type VersionedRecord,
} from '../../src/core/contract/ports.js';
import { type ListItem, type ListResult, listNext, type ToolResult } from '../../src/core/contract/result.js';
import { TOOL_NAMES } from '../../src/core/contract/schemas.js';
import { TOOL_DEFINITIONS } from '../../src/core/contract/tool-definitions.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  type InteractionStateKind,
  isUnfinished,
  kindsOfListState,
  LIST_STATES,
  listGroupOf,
  listStateOf,
  RECORD_FORMAT,
} from '../../src/core/model/record.js';
import { compareListKeys, listKeyOf } from '../../src/core/store-kit/kit.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { makeRecord, stateOf } from '../store/fixtures.js';
import { approveAnswer, approveSurface, type Harness, storeDouble, useHarnessLifecycle } from './harness.js';

const life = useHarnessLifecycle();
const url = process.env.DATABASE_URL;

type StoreKind = 'memory' | 'file' | 'postgres';
const STORE_KINDS: StoreKind[] = url ? ['memory', 'file', 'postgres'] : ['memory', 'file'];

if (!url) {
  if (process.env.CI) {
    describe('sess_list over PostgreSQL', () => {
      it('has a database in CI', () => {
        throw new Error('CI must not skip the PostgreSQL cases of sess_list: DATABASE_URL is unset');
      });
    });
  } else {
    process.stderr.write('sess_list over PostgreSQL skipped: DATABASE_URL is unset\n');
  }
}

const pgStores: { close(): Promise<void> }[] = [];
const pgTables: string[] = [];
afterAll(async () => {
  for (const store of pgStores.splice(0)) await store.close();
  if (url && pgTables.length > 0) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    for (const table of pgTables) await client.query(`DROP TABLE IF EXISTS "${table}", "${table}_keys"`);
    await client.end();
  }
});

async function storesOf(kind: StoreKind): Promise<HandleStoreFactory> {
  switch (kind) {
    case 'memory':
      return createMemoryHandleStore();
    case 'file':
      return (await life.fileStore()).stores;
    case 'postgres': {
      const table = `list_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      pgTables.push(table);
      const store = createPostgresHandleStore({ connectionString: url as string, table });
      pgStores.push(store);
      await store.migrate();
      return store;
    }
  }
}

/**
 * A named double: gives a store view that has no `listPage` of its own one over the real store,
 * listing the handles created through this factory (in listing order, every kind). A view with its
 * own `listPage` is returned as it is.
 */
function withListPage(stores: HandleStoreFactory): HandleStoreFactory {
  const handles = new Map<string, Set<string>>();
  return {
    forBinding(binding) {
      const view = stores.forBinding(binding);
      if (typeof view.listPage === 'function') return view;
      const scope = bindingScope(binding);
      const mine = handles.get(scope) ?? new Set<string>();
      handles.set(scope, mine);
      return {
        ...storeDouble(view, {
          async create(record) {
            const created = await view.create(record);
            mine.add(record.handle);
            return created;
          },
        }),
        async listPage(query: ListPageQuery): Promise<ListPage> {
          const all: VersionedRecord[] = [];
          for (const handle of mine) {
            const found = await view.get(handle);
            if (found !== undefined) all.push(found);
          }
          const kinds = query.kinds === undefined ? undefined : new Set(query.kinds);
          const after = query.after;
          const rows = all
            .filter((r) => kinds === undefined || kinds.has(r.record.state.kind))
            .filter((r) => after === undefined || compareListKeys(listKeyOf(r.record), after) > 0)
            .sort((a, b) => compareListKeys(listKeyOf(a.record), listKeyOf(b.record)));
          return { records: rows.slice(0, query.limit), more: rows.length > query.limit };
        },
      };
    },
  };
}

/** A named double: the same store views without `listPage` (a host's store that lacks it). */
function withoutListPage(stores: HandleStoreFactory): HandleStoreFactory {
  return { forBinding: (binding) => storeDouble(stores.forBinding(binding), {}) };
}

/** A clock one millisecond further on every read, so "after the listing started" is exact. */
function steppingClock(): { now(): number } {
  let t = Date.now();
  return { now: () => ++t };
}

async function start(kind: StoreKind, mode: 'listPage' | 'fallback' = 'listPage'): Promise<Harness> {
  const real = await storesOf(kind);
  const stores = mode === 'listPage' ? withListPage(real) : withoutListPage(real);
  return life.start({
    stores,
    engine: { clock: steppingClock(), maxWaitMs: 2_000 },
    sess: { plan: { maxOpenSessions: 1_000 } },
  });
}

/** A record of the harness's binding in state `kind`, created `ageSeconds` ago. */
function recordOf(h: Harness, kind: InteractionStateKind, ageSeconds: number, binding: Binding = h.binding) {
  const createdAt = new Date(Date.now() - ageSeconds * 1000).toISOString();
  return { ...makeRecord(binding, kind, { createdAt }), title: `T ${kind}` } as InteractionRecord;
}

/** Write `record` through the store view of its binding. */
async function put(h: Harness, record: InteractionRecord): Promise<InteractionRecord> {
  await h.stores.forBinding(record.binding).create(record);
  return record;
}

async function listRaw(h: Harness, args: unknown): Promise<ToolResult> {
  return h.engine.call('sess_list', args);
}

/** `sess_list` that must succeed: its structured result, checked against its text. */
async function list(h: Harness, args: unknown = {}): Promise<ListResult> {
  const result = await listRaw(h, args);
  if (result.isError === true) throw new Error(`sess_list failed: ${result.content[0]?.text}`);
  const { next, ...body } = result.structuredContent as Record<string, unknown>;
  expect(JSON.parse(result.content[0]!.text)).toEqual(body);
  expect(next).toBe(listNext(body.next_cursor !== undefined));
  return body as unknown as ListResult;
}

/** `sess_list` that must fail: the error object. */
async function refused(
  h: Harness,
  args: unknown,
): Promise<{ code: string; field?: string; message: string }> {
  const result = await listRaw(h, args);
  expect(result.isError).toBe(true);
  return (result.structuredContent as { error: { code: string; field?: string; message: string } }).error;
}

/** Every item of every page, following next_cursor. */
async function listAll(h: Harness, args: Record<string, unknown> = {}): Promise<ListItem[]> {
  const items: ListItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(h, cursor === undefined ? args : { ...args, cursor });
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== undefined);
  return items;
}

/** The handles of `records` in listing order (group, then newest first, then handle descending). */
function expectedOrder(records: InteractionRecord[]): string[] {
  return [...records]
    .sort((a, b) => {
      const ga = listGroupOf(a.state.kind);
      const gb = listGroupOf(b.state.kind);
      if (ga !== gb) return ga - gb;
      if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
      return a.handle < b.handle ? 1 : -1;
    })
    .map((r) => r.handle);
}

/** Every kind, in a scrambled creation order. */
const SCRAMBLED: InteractionStateKind[] = [...INTERACTION_STATE_KINDS]
  .reverse()
  .sort((a, b) =>
    (a.length * 7) % 5 === (b.length * 7) % 5
      ? a.localeCompare(b)
      : ((a.length * 7) % 5) - ((b.length * 7) % 5),
  );

describe.each(STORE_KINDS)('sess_list over the %s store', (storeKind) => {
  it('lists waiting, answered and pending first, then needs_owner, then finished, newest first in each', async () => {
    const h = await start(storeKind);
    const records: InteractionRecord[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [i, kind] of SCRAMBLED.entries()) {
        records.push(await put(h, recordOf(h, kind, 1_000 - round * 100 - i)));
      }
    }
    const page = await list(h, { limit: 100 });
    expect(page.next_cursor).toBeUndefined();
    expect(page.items.map((item) => item.handle)).toEqual(expectedOrder(records));
    const groups = page.items.map(
      (item) => ({ waiting: 0, answered: 0, pending: 0, needs_owner: 1 })[item.state as 'waiting'] ?? 2,
    );
    expect(groups).toEqual([...groups].sort());
    for (const item of page.items) {
      const record = records.find((r) => r.handle === item.handle)!;
      expect(item.state).toBe(listStateOf(record.state.kind));
      expect(item.title).toBe(`T ${record.state.kind}`);
      expect(item.createdAt).toBe(record.createdAt);
      expect(item.updatedAt).toBe(record.updatedAt);
      expect(item.kind).toBe(record.state.kind.startsWith('ask_') ? 'ask' : 'session');
      expect(LIST_STATES).toContain(item.state);
      if (item.state === 'needs_owner') {
        expect(item.code).toBe(
          record.state.kind === 'blocked' ? 'MUTATION_REJECTED' : 'CREATE_OUTCOME_UNKNOWN',
        );
      } else expect(item).not.toHaveProperty('code');
      if (record.state.kind === 'ask_open' || record.state.kind === 'ask_close_pending')
        expect(item.max).toBe(3);
      else expect(item).not.toHaveProperty('max');
      if (
        'session' in record.state ||
        record.state.kind === 'ask_open' ||
        record.state.kind === 'ask_close_pending'
      )
        expect(item.expiresAt).toBe('2026-12-01T00:00:00.000Z');
      expect(item).not.toHaveProperty('surface');
    }
  });

  it('the state filter lists exactly the records of that public state', async () => {
    const h = await start(storeKind);
    const records: InteractionRecord[] = [];
    for (const [i, kind] of SCRAMBLED.entries()) records.push(await put(h, recordOf(h, kind, 500 - i)));
    for (const state of LIST_STATES) {
      const kinds = kindsOfListState(state);
      const items = await listAll(h, { state, limit: 2 });
      expect(
        items.map((item) => item.handle),
        state,
      ).toEqual(expectedOrder(records.filter((r) => kinds.includes(r.state.kind))));
      for (const item of items) expect(item.state).toBe(state);
    }
    const bad = await refused(h, { state: 'publish_pending' });
    expect(bad).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/state' });
  });

  it('limit: 20 by default, 1 to 100 accepted, anything else refused at /limit', async () => {
    const h = await start(storeKind);
    for (let i = 0; i < 105; i++) await put(h, recordOf(h, i < 95 ? 'waiting' : 'completed', 2_000 - i));
    expect((await list(h)).items).toHaveLength(20);
    expect((await list(h)).next_cursor).toBeDefined();
    expect((await list(h, { limit: 1 })).items).toHaveLength(1);
    const hundred = await list(h, { limit: 100 });
    expect(hundred.items).toHaveLength(100);
    const rest = await list(h, { limit: 100, cursor: hundred.next_cursor });
    expect(rest.items).toHaveLength(5);
    expect(rest.next_cursor).toBeUndefined();
    for (const limit of [0, 101, -1, 1.5, '5', null]) {
      expect(await refused(h, { limit }), String(limit)).toMatchObject({
        code: 'INVALID_ARGUMENTS',
        field: '/limit',
      });
    }
  });

  it('pages through 250 records while some change state: nothing twice, no unchanged record skipped', async () => {
    const h = await start(storeKind);
    // At most 100 unfinished (the cap): 4 of every 11 records.
    const kinds: InteractionStateKind[] = [
      'waiting',
      'completed',
      'answered',
      'expired',
      'create_intent',
      'completed',
      'ask_open',
      'expired',
      'completed',
      'withdrawn',
      'ask_closed',
    ];
    const records: InteractionRecord[] = [];
    for (let i = 0; i < 250; i++)
      records.push(await put(h, recordOf(h, kinds[i % kinds.length]!, 10_000 - (i % 83) * 10 - i)));
    const store = h.store();
    const changed = new Set<string>();
    const NEXT: Partial<Record<InteractionStateKind, InteractionStateKind>> = {
      waiting: 'completed',
      answered: 'completed',
      create_intent: 'waiting',
      ask_open: 'ask_closed',
    };
    /** Move a not yet changed record to another group, as a completion, a create or a close would. */
    async function change(index: number): Promise<void> {
      const record = records[index]!;
      if (changed.has(record.handle)) return;
      const found = (await store.get(record.handle))!;
      const next = NEXT[found.record.state.kind];
      if (next === undefined) return;
      // After the listing started (the engine's clock is close to now).
      const updatedAt = new Date(Date.now() + 60_000).toISOString();
      await store.update({ ...found.record, updatedAt, state: stateOf(next) }, found.version);
      changed.add(record.handle);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await list(h, cursor === undefined ? { limit: 7 } : { limit: 7, cursor });
      seen.push(...page.items.map((item) => item.handle));
      cursor = page.next_cursor;
      pages += 1;
      // Between pages, records ahead and behind the cursor change group (0 → 2, 1 → 0).
      for (let k = 0; k < 3; k++) await change((pages * 37 + k * 101) % 250);
    } while (cursor !== undefined);
    expect(new Set(seen).size).toBe(seen.length);
    const unchanged = records.filter((r) => !changed.has(r.handle)).map((r) => r.handle);
    expect(changed.size).toBeGreaterThan(20);
    for (const handle of unchanged) expect(seen).toContain(handle);
    // What was listed came in listing order of the records as they were when the listing started.
    expect(seen).toEqual(expectedOrder(records).filter((handle) => seen.includes(handle)));
  });

  it('a bad, changed or foreign cursor, or one of another state filter, is INVALID_ARGUMENTS at /cursor', async () => {
    const h = await start(storeKind);
    for (let i = 0; i < 5; i++) await put(h, recordOf(h, 'waiting', 100 - i));
    const first = await list(h, { limit: 2 });
    const cursor = first.next_cursor!;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((await list(h, { limit: 2, cursor })).items).toHaveLength(2);

    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const reencode = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');
    const moved = [...decoded];
    moved[4] = 'sess_h_zzzzzzzzzzzzzzzzzzzzzz';
    const flipped = cursor.slice(0, -3) + (cursor.at(-3) === 'A' ? 'B' : 'A') + cursor.slice(-2);
    const bad = [
      'abc',
      'x'.repeat(1024),
      reencode({ v: 1 }),
      reencode([...decoded.slice(0, 6)]),
      `${cursor}A`,
    ];
    for (const value of [...bad, reencode(moved), flipped]) {
      const error = await refused(h, { limit: 2, cursor: value });
      expect(error, value).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/cursor' });
      expect(error.message).toMatch(
        /^\/cursor (is not a cursor sess_list returned|was not returned to this caller)/,
      );
    }
    expect(await refused(h, { cursor: 'a'.repeat(1025) })).toMatchObject({ field: '/cursor' });
    expect(await refused(h, { cursor: 'not+base64' })).toMatchObject({ field: '/cursor' });
    expect(await refused(h, { cursor: '' })).toMatchObject({ field: '/cursor' });

    const otherFilter = await refused(h, { state: 'answered', cursor });
    expect(otherFilter).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/cursor' });
    expect(otherFilter.message).toMatch(/another state filter/);

    // Another API origin (another scope), and the same scope after a key rotation (another generation).
    const original = h.binding;
    for (const other of [
      { ...original, apiOrigin: 'http://127.0.0.1:9' },
      { ...original, credentialGeneration: 'gen-2' },
    ] satisfies StdioBinding[]) {
      h.binding = other;
      const foreign = await refused(h, { limit: 2, cursor });
      expect(foreign).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/cursor' });
      expect(foreign.message).toMatch(/was not returned to this caller/);
    }
    h.binding = original;
  });

  it('inspect: handle alone gives that item and its Surface; the listing arguments are refused beside it', async () => {
    const h = await start(storeKind);
    const created = await h.request();
    const page = await list(h, { handle: created.handle });
    expect(page.next_cursor).toBeUndefined();
    expect(page.items).toEqual([
      {
        handle: created.handle,
        revision: 1,
        state: 'waiting',
        kind: 'session',
        title: approveSurface.title,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        expiresAt: created.expiresAt,
        surface: approveSurface,
      },
    ]);
    for (const [key, value] of [
      ['state', 'waiting'],
      ['limit', 5],
      ['cursor', 'abc'],
    ] as const) {
      const error = await refused(h, { handle: created.handle, [key]: value });
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS', field: `/${key}` });
    }
    expect(await refused(h, { limit: 5, handle: created.handle, state: 'waiting' })).toMatchObject({
      field: '/limit',
    });
    // A finished record holds no Surface; an unknown handle is not found.
    const done = await put(h, recordOf(h, 'completed', 10));
    const finished = await list(h, { handle: done.handle });
    expect(finished.items[0]).toMatchObject({ handle: done.handle, state: 'completed' });
    expect(finished.items[0]).not.toHaveProperty('surface');
    expect(await refused(h, { handle: 'sess_h_unknown' })).toMatchObject({ code: 'HANDLE_NOT_FOUND' });
  });

  it('never returns a link or an answer, in any state, listed or inspected', async () => {
    const h = await start(storeKind);
    // Real records from the local runtime: waiting with its link, answered with its answer.
    const waiting = await h.request();
    const answered = await h.answered();
    const secrets = [
      waiting.humanUrl,
      answered.created.humanUrl,
      new URL(waiting.humanUrl).pathname,
      String(approveAnswer.values.message),
      answered.answered.response!.eventId,
      'secret-link-token',
      'https://sess.example.test/a/secret',
      'secret answer text',
      'eyJhbGciOiJFZERTQSJ9',
      'idem-',
    ];
    for (const [i, kind] of INTERACTION_STATE_KINDS.entries()) await put(h, recordOf(h, kind, 50 - i));
    const results: ToolResult[] = [await listRaw(h, { limit: 100 })];
    for (const state of LIST_STATES) results.push(await listRaw(h, { state }));
    const all = await list(h, { limit: 100 });
    for (const item of all.items) results.push(await listRaw(h, { handle: item.handle }));
    expect(results.length).toBeGreaterThan(INTERACTION_STATE_KINDS.length + LIST_STATES.length);
    for (const result of results) {
      expect(result.isError).toBeUndefined();
      const json = JSON.stringify(result);
      for (const secret of secrets) expect(json, secret).not.toContain(secret);
    }
  });

  it("another binding's records are invisible; the same scope with another generation is left out", async () => {
    const h = await start(storeKind);
    const mine = await put(h, recordOf(h, 'waiting', 30));
    const otherScope = { ...h.binding, apiOrigin: 'http://127.0.0.1:9' } satisfies StdioBinding;
    const otherGeneration = { ...h.binding, credentialGeneration: 'gen-0' } satisfies StdioBinding;
    const foreign = await put(h, recordOf(h, 'waiting', 20, otherScope));
    const older = await put(h, recordOf(h, 'answered', 10, otherGeneration));
    expect((await list(h)).items.map((item) => item.handle)).toEqual([mine.handle]);
    for (const state of LIST_STATES) {
      for (const item of (await list(h, { state })).items) expect(item.handle).toBe(mine.handle);
    }
    expect(await refused(h, { handle: foreign.handle })).toMatchObject({ code: 'HANDLE_NOT_FOUND' });
    expect(await refused(h, { handle: older.handle })).toMatchObject({ code: 'BINDING_MISMATCH' });
    const original = h.binding;
    h.binding = otherScope;
    expect((await list(h)).items.map((item) => item.handle)).toEqual([foreign.handle]);
    h.binding = otherGeneration;
    expect((await list(h)).items.map((item) => item.handle)).toEqual([older.handle]);
    h.binding = original;
  });

  it('a store without listPage lists the unfinished records only, in the same order and pages', async () => {
    const h = await start(storeKind, 'fallback');
    expect(typeof h.store().listPage).toBe('undefined');
    const records: InteractionRecord[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, kind] of SCRAMBLED.entries())
        records.push(await put(h, recordOf(h, kind, 900 - round * 100 - i)));
    }
    const unfinished = records.filter(isUnfinished);
    const items = await listAll(h, { limit: 4 });
    expect(items.map((item) => item.handle)).toEqual(expectedOrder(unfinished));
    for (const state of ['completed', 'expired', 'withdrawn', 'closed'] as const) {
      expect((await list(h, { state })).items).toEqual([]);
    }
    const waiting = await listAll(h, { state: 'waiting', limit: 1 });
    expect(waiting.map((item) => item.handle)).toEqual(
      expectedOrder(records.filter((r) => r.state.kind === 'waiting' || r.state.kind === 'ask_open')),
    );
  });

  it('sends nothing to Sess, and works while Sess is down', async () => {
    const h = await start(storeKind);
    const created = await h.request();
    await put(h, recordOf(h, 'completed', 5));
    const before = { ...h.sess.stats.requests };
    const page = await list(h, { limit: 10 });
    await list(h, { handle: created.handle });
    await list(h, {
      state: 'waiting',
      limit: 1,
      cursor: (await list(h, { state: 'waiting', limit: 1 })).next_cursor,
    });
    expect(h.sess.stats.requests).toEqual(before);
    await h.sess.close();
    expect(await list(h, { limit: 10 })).toEqual(page);
    expect((await list(h, { handle: created.handle })).items[0]).toMatchObject({ state: 'waiting' });
  });
});

describe('the sess_list contract', () => {
  it('is read-only in tools/list, and engine.list is the typed form of the same call', async () => {
    expect(TOOL_DEFINITIONS.sess_list.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
    });
    expect(TOOL_NAMES.indexOf('sess_list')).toBe(TOOL_NAMES.indexOf('sess_ask') + 1);
    const h = await start('memory');
    const created = await h.request();
    const typed = await h.engine.list({ limit: 5 });
    expect(typed).toEqual(await list(h, { limit: 5 }));
    expect(typed.items.map((item) => item.handle)).toEqual([created.handle]);
    await expect(h.engine.list({ limit: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      field: '/limit',
    });
    expect(h.diagnostics).toContainEqual(
      expect.objectContaining({ event: 'tool_result', tool: 'sess_list' }),
    );
  });
});

describe('the record-level fields the engine writes', () => {
  it('title and expiresAt from create on, kept through completion; every save is format 2', async () => {
    const h = await start('memory');
    const { created, complete } = await h.answered();
    const answered = (await h.record(created.handle))!.record;
    expect(answered).toMatchObject({
      format: RECORD_FORMAT,
      title: approveSurface.title,
      expiresAt: created.expiresAt,
    });
    await h.ok('sess_complete', complete);
    const completed = (await h.record(created.handle))!.record;
    expect(completed.state.kind).toBe('completed');
    expect(completed).toMatchObject({
      format: RECORD_FORMAT,
      title: approveSurface.title,
      expiresAt: created.expiresAt,
    });
    expect((await list(h, { handle: created.handle })).items[0]).toMatchObject({
      state: 'completed',
      title: approveSurface.title,
      expiresAt: created.expiresAt,
    });
    // An Ask keeps its title and expiry too.
    const ask = await h.ok('sess_ask', {
      question: 'Pick a day?',
      fields: [{ name: 'd', label: 'Day', type: 'text' }],
      respondents: { max: 2 },
    });
    expect((await h.record(ask.handle))!.record).toMatchObject({
      title: 'Pick a day?',
      expiresAt: ask.expiresAt,
    });
    expect((await list(h, { handle: ask.handle })).items[0]).toMatchObject({
      kind: 'ask',
      max: 2,
      state: 'waiting',
    });
  });

  it('a record read as format 1 (0.1.0) lists title null and is saved as format 2 with its expiry', async () => {
    const writes: InteractionRecord[] = [];
    let legacy: string | undefined;
    /** A named double: the record of `legacy` reads as 0.1.0 wrote it (format 1, no title or expiry). */
    const asLegacy = (view: HandleStore): HandleStore =>
      storeDouble(view, {
        async get(handle) {
          const found = await view.get(handle);
          if (found === undefined || handle !== legacy) return found;
          const { title: _t, expiresAt: _e, ...rest } = found.record;
          return { ...found, record: { ...rest, format: 1 } as unknown as InteractionRecord };
        },
        async update(record, version) {
          writes.push(record);
          return view.update(record, version);
        },
      });
    const h = await life.start({ wrapStore: asLegacy, engine: { maxWaitMs: 2_000 } });
    const { created, response } = await h.submitted();
    legacy = created.handle;
    const inspected = await list(h, { handle: created.handle });
    expect(inspected.items[0]).toMatchObject({ title: null, state: 'waiting', expiresAt: created.expiresAt });
    writes.length = 0;
    await h.ok('sess_response', response);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({ format: RECORD_FORMAT, expiresAt: created.expiresAt });
    expect(writes[0]!.state.kind).toBe('answered');
    expect(writes[0]).not.toHaveProperty('title');
  });
});
