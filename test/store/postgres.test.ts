/**
 * The PostgreSQL store against a real PostgreSQL (`DATABASE_URL`; `scripts/ci-postgres.sh` starts
 * one): the contract suite, then the row layout, migration, connection failures, and two OS
 * processes (each with its own pool) racing compare-and-set writes and creates.
 *
 * Without `DATABASE_URL` the suite is skipped and says why; under CI (`CI` set) that is a failure.
 */
import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UNFINISHED } from '../../src/core/ports.js';
import { createPostgresHandleStore, type PoolLike } from '../../src/store/postgres.js';
import { describeHandleStoreContract, storeFailure } from './contract.js';
import { httpA, makeRecord, newHandle, stdioA } from './fixtures.js';
import { killAfterWrites, runWorkers, sumTallies } from './spawn-worker.js';

const url = process.env.DATABASE_URL;
const SKIP_REASON = 'DATABASE_URL is unset; run: eval "$(bash scripts/ci-postgres.sh)"';

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const tables: string[] = [];
/** A table name of its own for each use, dropped at the end. */
function freshTable(): string {
  const name = `h_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  tables.push(name);
  return name;
}

if (url === undefined || url === '') {
  if (process.env.CI) {
    describe('PostgreSQL store', () => {
      it('has a database in CI', () => {
        throw new Error(`CI must not skip the PostgreSQL suite: ${SKIP_REASON}`);
      });
    });
  } else {
    process.stderr.write(`PostgreSQL store suite skipped: ${SKIP_REASON}\n`);
    describe.skip(`PostgreSQL store (skipped: ${SKIP_REASON})`, () => {
      it('needs DATABASE_URL', () => {});
    });
  }
} else {
  const admin = new pg.Pool({ connectionString: url, max: 4 });

  afterAll(async () => {
    for (const table of tables) await admin.query(`DROP TABLE IF EXISTS "public"."${table}"`);
    await admin.end();
  });

  describeHandleStoreContract('postgres', async () => {
    const table = freshTable();
    const store = createPostgresHandleStore({ connectionString: url, table });
    await store.migrate();
    const brokenStores: ReturnType<typeof createPostgresHandleStore>[] = [];
    return {
      factory: store,
      async corrupt(binding, handle, kind) {
        const { bindingScope } = await import('../../src/core/ports.js');
        const record =
          kind === 'garbled'
            ? { oops: ['not', 'a', 'record'] }
            : { ...makeRecord(binding, 'waiting', { handle }), format: 2 };
        await admin.query(
          `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record)
           VALUES ($1, $2, 1, true, '2026-01-01', $3::jsonb)`,
          [handle, bindingScope(binding), JSON.stringify(record)],
        );
      },
      async broken(binding) {
        const broken = createPostgresHandleStore({
          connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/none`,
          table,
        });
        brokenStores.push(broken);
        return broken.forBinding(binding);
      },
      close: async () => {
        for (const broken of brokenStores) await broken.close();
        await store.close();
      },
    };
  });

  describe('PostgreSQL store', () => {
    let table: string;
    let store: ReturnType<typeof createPostgresHandleStore>;

    beforeAll(async () => {
      table = freshTable();
      store = createPostgresHandleStore({ connectionString: url, table });
      await store.migrate();
    });
    afterAll(async () => {
      await store.close();
    });

    it('keeps one row per handle: scope, version, unfinished flag and the record as jsonb', async () => {
      const view = store.forBinding(stdioA);
      const record = makeRecord(stdioA, 'waiting');
      await view.create(record);
      await view.update({ ...record, state: makeRecord(stdioA, 'completed').state }, 1);
      const { rows } = await admin.query(
        `SELECT scope, version, unfinished, jsonb_typeof(record) AS type, record FROM "public"."${table}" WHERE handle = $1`,
        [record.handle],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].scope).toBe(JSON.stringify(['stdio', 'default', stdioA.apiOrigin]));
      expect(rows[0].version).toBe(2);
      expect(rows[0].unfinished).toBe(false);
      expect(rows[0].type).toBe('object');
      expect(rows[0].record.state.kind).toBe('completed');
    });

    it('migrates idempotently, also from several instances at once', async () => {
      const shared = freshTable();
      const stores = [1, 2, 3].map(() => createPostgresHandleStore({ connectionString: url, table: shared }));
      await Promise.all(stores.map((s) => s.migrate()));
      await stores[0]!.migrate();
      const record = makeRecord(httpA, 'waiting');
      await stores[1]!.forBinding(httpA).create(record);
      await stores[2]!.migrate();
      expect((await stores[0]!.forBinding(httpA).get(record.handle))?.version).toBe(1);
      await Promise.all(stores.map((s) => s.close()));
    });

    it('says a table that was never migrated needs migrate(), and that it is not retryable', async () => {
      const unmigrated = createPostgresHandleStore({ connectionString: url, table: freshTable() });
      const error = await storeFailure(unmigrated.forBinding(stdioA).get(newHandle()));
      expect(error.code).toBe('STATE_STORE_ERROR');
      expect(error.retryable).toBe(false);
      expect(error.reason).toBe('not_migrated');
      expect(error.message).toContain('migrate()');
      await unmigrated.close();
    });

    it('reports a database it cannot reach as retryable, without the connection string', async () => {
      const port = await closedPort();
      const down = createPostgresHandleStore({
        connectionString: `postgres://user:s3cret-pw@127.0.0.1:${port}/x`,
      });
      const error = await storeFailure(down.forBinding(stdioA).countUnfinished());
      expect(error.code).toBe('STATE_STORE_ERROR');
      expect(error.retryable).toBe(true);
      expect(error.message).not.toContain('s3cret-pw');
      expect(error.message).not.toContain(String(port));
      await down.close();
    });

    it('uses a host pool and leaves it open on close; ends its own pool', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      const hosted = createPostgresHandleStore({ pool: pool as unknown as PoolLike, table });
      await hosted.forBinding(stdioA).countUnfinished();
      await hosted.close();
      expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
      await pool.end();
      const own = createPostgresHandleStore({ connectionString: url, table });
      await own.forBinding(stdioA).countUnfinished();
      await own.close();
      const closed = await storeFailure(own.forBinding(stdioA).countUnfinished());
      expect(closed.code).toBe('STATE_STORE_ERROR');
    });

    it('refuses bad options with a TypeError naming the option', () => {
      expect(() => createPostgresHandleStore({})).toThrow(/options\.pool and options\.connectionString/);
      expect(() =>
        createPostgresHandleStore({ connectionString: url, table: 'x"; DROP TABLE y; --' }),
      ).toThrow(/options\.table/);
      expect(() => createPostgresHandleStore({ connectionString: url, schema: 'Public' })).toThrow(
        /options\.schema/,
      );
      expect(() =>
        createPostgresHandleStore({ connectionString: url, pool: {} as unknown as PoolLike }),
      ).toThrow(TypeError);
    });

    it('two processes with their own pools race 200 compare-and-set writes: no lost update', async () => {
      const shared = freshTable();
      const setup = createPostgresHandleStore({ connectionString: url, table: shared });
      await setup.migrate();
      const record = makeRecord(httpA, 'waiting');
      await setup.forBinding(httpA).create(record);
      const job = {
        store: { kind: 'postgres' as const, connectionString: url, table: shared },
        job: 'cas' as const,
        binding: httpA,
        handle: record.handle,
        count: 100,
        concurrency: 4,
      };
      const tallies = await runWorkers([job, job]);
      const total = sumTallies(tallies);
      expect(Object.keys(total).sort()).toEqual(
        ['INVALID_STATE:stale_version', 'ok'].filter((k) => k in total),
      );
      expect((total.ok ?? 0) + (total['INVALID_STATE:stale_version'] ?? 0)).toBe(200);
      const final = await setup.forBinding(httpA).get(record.handle);
      expect(final!.version - 1).toBe(total.ok);
      // Both processes won some writes: they really raced.
      expect(tallies.every((t) => (t.ok ?? 0) > 0)).toBe(true);
      await setup.close();
    });

    it('a process killed in the middle of writing leaves the row whole and the table usable', async () => {
      const shared = freshTable();
      const setup = createPostgresHandleStore({ connectionString: url, table: shared });
      await setup.migrate();
      const record = makeRecord(httpA, 'waiting');
      await setup.forBinding(httpA).create(record);
      await killAfterWrites(
        {
          store: { kind: 'postgres', connectionString: url, table: shared },
          job: 'cas',
          binding: httpA,
          handle: record.handle,
          count: 1_000_000,
          concurrency: 3,
          progress: true,
        },
        20,
      );
      const view = setup.forBinding(httpA);
      const current = await view.get(record.handle);
      expect(current!.version).toBeGreaterThanOrEqual(21);
      expect((await view.update(current!.record, current!.version)).version).toBe(current!.version + 1);
      // The scope still takes creates (through its advisory lock) after the dead session.
      await view.create(makeRecord(httpA, 'waiting'));
      expect(await view.countUnfinished()).toBe(2);
      await setup.close();
    });

    it(`150 concurrent creates across two processes leave exactly ${MAX_UNFINISHED} unfinished`, async () => {
      const shared = freshTable();
      const setup = createPostgresHandleStore({ connectionString: url, table: shared });
      await setup.migrate();
      const job = {
        store: { kind: 'postgres' as const, connectionString: url, table: shared },
        job: 'create' as const,
        binding: httpA,
        count: 75,
      };
      const total = sumTallies(await runWorkers([job, job]));
      expect(total).toEqual({ ok: MAX_UNFINISHED, STATE_STORE_FULL: 50 });
      expect(await setup.forBinding(httpA).countUnfinished()).toBe(MAX_UNFINISHED);
      await setup.close();
    });
  });
}
