/**
 * A rolling upgrade of the PostgreSQL store: a table the previous version made and filled (its
 * store code kept as a fixture, `postgres-previous/`), this version's `migrate()` run on it while
 * that version keeps writing, then both versions side by side on the migrated table.
 *
 * - `migrate()` builds its indexes without locking writes: while its concurrent index build waits
 *   for an older transaction to end, the previous version creates and updates records.
 * - Run twice, and from two instances at once, it changes nothing more; an index an interrupted
 *   build left invalid is built again.
 * - The previous version reads, writes, counts and lists on the migrated table; this version reads,
 *   updates and lists what it writes (its generation unknown until `migrate()` runs again, then
 *   filled), and the previous version reads and lists what this version writes.
 *
 * Without `DATABASE_URL` it is skipped and says why; under CI that is a failure.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Binding, HandleStore } from '../../src/core/contract/ports.js';
import type { ListResult } from '../../src/core/contract/result.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { createSessClient } from '../../src/sess/client.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { earlierGeneration, recordSeries } from '../support/bulk-records.js';
import { httpA, makeRecord } from './fixtures.js';
import { createPostgresHandleStore as createPreviousPostgresHandleStore } from './postgres-previous/store.js';

const url = process.env.DATABASE_URL;

if (!url) {
  if (process.env.CI) {
    describe('PostgreSQL rolling upgrade', () => {
      it('has a database in CI', () => {
        throw new Error('CI must not skip the PostgreSQL rolling upgrade: DATABASE_URL is unset');
      });
    });
  } else {
    process.stderr.write('PostgreSQL rolling upgrade skipped: DATABASE_URL is unset\n');
  }
}

describe.runIf(url)('PostgreSQL rolling upgrade from the previous version', () => {
  const admin = new pg.Pool({ connectionString: url, max: 3 });
  const table = `upgrade_${process.pid}`;
  const qualified = `"public"."${table}"`;
  const opened: { close(): Promise<void> }[] = [];
  const previous = () => {
    const store = createPreviousPostgresHandleStore({ connectionString: url as string, table });
    opened.push(store);
    return store;
  };
  const current = () => {
    const store = createPostgresHandleStore({ connectionString: url as string, table });
    opened.push(store);
    return store;
  };
  afterAll(async () => {
    for (const store of opened) await store.close();
    await admin.query(
      `DROP TABLE IF EXISTS ${qualified}, "public"."${table}_keys", "public"."${table}_events", "public"."${table}_deliveries"`,
    );
    await admin.end();
  });

  const binding: Binding = { ...httpA, grantId: 'grant_upgrade' };
  const handles = (records: readonly { record: InteractionRecord }[]) =>
    records.map((entry) => entry.record.handle);
  /** `sess_list` of `binding` through this version's engine over `view`: the handles listed. */
  const listed = async (view: HandleStore) => {
    const sess = createSessClient({ origin: 'https://api.sess.example', credential: () => 'unused' });
    const engine = createSessEngine({ authority: { resolve: async () => ({ binding, sess, store: view }) } });
    const body = (await engine.call('sess_list', { limit: 100 })).structuredContent as unknown as ListResult;
    expect(body.items, JSON.stringify(body)).toBeDefined();
    return body.items.map((item) => item.handle);
  };
  const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
    Promise.race([
      promise,
      new Promise<T>((_, reject) =>
        setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms),
      ),
    ]);

  it('migrate() builds its index while the previous version writes, without blocking it', async () => {
    const old = previous();
    await old.migrate();
    const oldView = old.forBinding(binding);
    for (const record of recordSeries(binding, 'waiting', 20, 'prev', '2026-01-01T00:00:00.000Z'))
      await oldView.create(record);
    for (const record of recordSeries(
      earlierGeneration(binding),
      'completed',
      20,
      'prev_old',
      '2026-02-01T00:00:00.000Z',
    ))
      await old.forBinding(record.binding).create(record);

    // An older transaction, on another table: a concurrent index build waits for it to end.
    const holder = await admin.connect();
    await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await holder.query('SELECT count(*) FROM pg_class');
    let settled = false;
    const migrating = current()
      .migrate()
      .finally(() => {
        settled = true;
      });
    try {
      // Until the build waits for that transaction.
      for (let i = 0; ; i++) {
        const { rows } = await admin.query(
          `SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%' AND wait_event_type = 'Lock'`,
        );
        if (rows.length > 0) break;
        expect(i, 'the concurrent index build never waited').toBeLessThan(200);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Meanwhile the previous version writes: a create and an update, each done in time.
      const late = makeRecord(binding, 'waiting', {
        handle: 'prev_during',
        createdAt: '2026-03-01T00:00:00.000Z',
      });
      await within(oldView.create(late), 5_000, 'a create of the previous version');
      const updated = { ...late, updatedAt: '2026-03-02T00:00:00.000Z' };
      await within(oldView.update(updated, 1), 5_000, 'an update of the previous version');
      expect(settled, 'migrate() waited for the older transaction').toBe(false);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    await migrating;
    const { rows: indexes } = await admin.query(
      `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indrelid = $1::regclass ORDER BY c.relname`,
      [qualified],
    );
    expect(indexes.map((row) => [row.relname, row.indisvalid])).toEqual(
      ['finished', 'generation_listing', 'listing', 'open_principal', 'pkey', 'unfinished', 'watched'].map(
        (suffix) => [`${table}_${suffix}`, true],
      ),
    );
    // Retention's indexes on the outbox tables: each handle's events and deliveries.
    const { rows: outboxIndexes } = await admin.query(
      `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE c.relname IN ($1, $2) ORDER BY c.relname`,
      [`${table}_deliveries_handle`, `${table}_events_handle`],
    );
    expect(outboxIndexes.map((row) => [row.relname, row.indisvalid])).toEqual([
      [`${table}_deliveries_handle`, true],
      [`${table}_events_handle`, true],
    ]);
  });

  it('fills the finish time of the finished rows the previous version wrote, so prune() removes them', async () => {
    const store = current();
    const finishedOf = async (handle: string) =>
      (await admin.query(`SELECT finished_ms FROM ${qualified} WHERE handle = $1`, [handle])).rows[0]
        ?.finished_ms;
    const old = recordSeries(
      earlierGeneration(binding),
      'completed',
      20,
      'prev_old',
      '2026-02-01T00:00:00.000Z',
    );
    expect(Number(await finishedOf(old[0]!.handle))).toBe(Date.parse(old[0]!.updatedAt));
    // A finished row the previous version writes now has none until migrate() runs again: kept.
    const late = makeRecord(binding, 'expired', {
      handle: 'prev_late_done',
      createdAt: '2026-01-15T00:00:00.000Z',
    });
    await previous().forBinding(binding).create(late);
    expect(await finishedOf(late.handle)).toBeNull();
    const cutoff = Date.parse('2026-03-01T00:00:00.000Z');
    let removed = 0;
    for (let more = true; more; ) {
      const result = await store.prune({ olderThan: cutoff, limit: 7 });
      removed += result.removed;
      more = result.more;
    }
    expect(removed).toBe(20);
    expect((await current().forBinding(late.binding).get(late.handle))?.version).toBe(1);
    await store.migrate();
    expect(await store.prune({ olderThan: cutoff })).toEqual({ removed: 1, more: false });
    // The waiting rows stay.
    expect((await store.waiting({ limit: 100 })).records.length).toBe(21);
  });

  it('waiting() lists the waiting rows the previous version wrote, before and during migrate()', async () => {
    const page = await current().waiting({ limit: 100 });
    expect(page.next).toBeUndefined();
    expect(page.records.map(({ record }) => record.handle)).toEqual(
      [
        ...recordSeries(binding, 'waiting', 20, 'prev', '2026-01-01T00:00:00.000Z').map((r) => r.handle),
        'prev_during',
      ].sort(),
    );
  });

  it('runs again, and from two instances at once, changing nothing', async () => {
    const snapshot = async () => ({
      rows: (await admin.query(`SELECT handle, version, generation FROM ${qualified} ORDER BY handle`)).rows,
      keys: (await admin.query(`SELECT name, key FROM "public"."${table}_keys"`)).rows,
    });
    const before = await snapshot();
    await Promise.all([current().migrate(), current().migrate(), previous().migrate()]);
    expect(await snapshot()).toEqual(before);
  });

  it('builds again an index an interrupted concurrent build left invalid', async () => {
    const index = `"public"."${table}_generation_listing"`;
    // What a cancelled CREATE INDEX CONCURRENTLY leaves: the index, marked invalid.
    await admin.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`, [index]);
    await current().migrate();
    const { rows } = await admin.query(`SELECT indisvalid FROM pg_index WHERE indexrelid = $1::regclass`, [
      index,
    ]);
    expect(rows).toEqual([{ indisvalid: true }]);
  });

  it('both versions work side by side on the migrated table', async () => {
    const oldView = previous().forBinding(binding);
    const newStore = current();
    const newView = newStore.forBinding(binding);
    const prevCurrent = [...recordSeries(binding, 'waiting', 20, 'prev', '2026-01-01T00:00:00.000Z')]
      .map((record) => record.handle)
      .reverse();

    // What the previous version wrote, this version reads and lists (not the earlier generation's).
    expect(await listed(newView)).toEqual(['prev_during', ...prevCurrent]);
    // The previous version keeps reading, counting and listing.
    expect(await oldView.countUnfinished()).toBe(21);
    expect((await oldView.get('prev_during'))?.version).toBe(2);

    // The previous version writes a record now: its generation is not known yet.
    const fromOld = makeRecord(binding, 'waiting', {
      handle: 'prev_after',
      createdAt: '2026-04-01T00:00:00.000Z',
    });
    await oldView.create(fromOld);
    const generationOf = async (handle: string) =>
      (await admin.query(`SELECT generation FROM ${qualified} WHERE handle = $1`, [handle])).rows[0]
        ?.generation;
    expect(await generationOf('prev_after')).toBeNull();
    // This version lists it at once (its engine checks the generation), and updates it.
    expect((await listed(newView))[0]).toBe('prev_after');
    const fromOldNext = { ...fromOld, updatedAt: '2026-04-02T00:00:00.000Z' };
    expect(await newView.update(fromOldNext, 1)).toEqual({ version: 2, record: fromOldNext });
    expect(await generationOf('prev_after')).toBe('g1');
    expect(await oldView.get('prev_after')).toEqual({ version: 2, record: fromOldNext });

    // An earlier generation's record the previous version writes now is not listed by this one.
    const stale = makeRecord(earlierGeneration(binding), 'waiting', {
      handle: 'prev_stale',
      createdAt: '2026-05-01T00:00:00.000Z',
    });
    await previous().forBinding(stale.binding).create(stale);
    expect(await listed(newView)).not.toContain('prev_stale');
    await newStore.migrate();
    expect(await generationOf('prev_stale')).toBe('gen-earlier');

    // What this version writes, the previous version reads, updates and lists.
    const fromNew = makeRecord(binding, 'completed', {
      handle: 'next_new',
      createdAt: '2026-06-01T00:00:00.000Z',
    });
    await newView.create(fromNew);
    expect(await oldView.get('next_new')).toEqual({ version: 1, record: fromNew });
    const oldList = await (oldView.listPage as NonNullable<HandleStore['listPage']>)({
      limit: 100,
      kinds: ['completed'],
    });
    expect(handles(oldList.records)).toContain('next_new');
    const fromNewNext = { ...fromNew, updatedAt: '2026-06-02T00:00:00.000Z' };
    expect((await oldView.update(fromNewNext, 1)).version).toBe(2);
    expect(await newView.get('next_new')).toEqual({ version: 2, record: fromNewNext });
    expect(await listed(newView)).toContain('next_new');
  });
});
