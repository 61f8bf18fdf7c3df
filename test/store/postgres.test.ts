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
import { SessMcpError } from '../../src/core/contract/errors.js';
import {
  type Binding,
  bindingPrincipal,
  bindingScope,
  MAX_UNFINISHED,
} from '../../src/core/contract/ports.js';
import {
  type InteractionRecord,
  isUnfinished,
  listGroupOf,
  RECORD_FORMAT,
} from '../../src/core/model/record.js';
import { compareListOrder } from '../../src/core/store-kit/kit.js';
import {
  escapeToAscii,
  RECORD_TEXT_MARKER,
  RECORD_TEXT_MARKER_JSON,
} from '../../src/store/postgres/encoding.js';
import { pgStoreError } from '../../src/store/postgres/errors.js';
import {
  createPostgresHandleStore,
  type PoolLike,
  type PostgresHandleStoreOptions,
} from '../../src/store/postgres/index.js';
import { decodeRecord } from '../../src/store/record-codec.js';
import { approveSurface, startHarness } from '../engine/harness.js';
import {
  type ContractBackend,
  describeHandleStoreContract,
  keyOf,
  listPage,
  storeFailure,
} from './contract.js';
import {
  as010,
  FORMAT_1_KINDS,
  hostileRecord,
  httpA,
  httpB,
  makeRecord,
  newHandle,
  stdioA,
} from './fixtures.js';
import { describeEventOutboxContract } from './outbox-contract.js';
import { describePruneContract } from './prune-contract.js';
import { describeReadyContract } from './ready-contract.js';
import { killAfterWrites, runWorkers, sumTallies } from './spawn-worker.js';
import { describeWaitingContract } from './waiting-contract.js';
import type { WorkerJob } from './worker.js';

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
    for (const table of tables)
      await admin.query(
        `DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys", "public"."${table}_events", "public"."${table}_deliveries"`,
      );
    await admin.end();
  });

  describeEventOutboxContract('postgres', async () => {
    const table = freshTable();
    const store = createPostgresHandleStore({ connectionString: url, table });
    await store.migrate();
    const others: ReturnType<typeof createPostgresHandleStore>[] = [];
    return {
      factory: store,
      async reopen() {
        const again = createPostgresHandleStore({ connectionString: url, table });
        others.push(again);
        return again;
      },
      close: async () => {
        for (const other of others) await other.close();
        await store.close();
      },
    };
  });

  /** A store of a fresh table for a contract suite, its statements prepared or sent unnamed. */
  const pgBackend = async (preparedStatements: boolean): Promise<ContractBackend> => {
    const table = freshTable();
    const store = createPostgresHandleStore({ connectionString: url, table, preparedStatements });
    await store.migrate();
    const brokenStores: ReturnType<typeof createPostgresHandleStore>[] = [];
    return {
      factory: store,
      async corrupt(binding, handle, kind) {
        // Rows in the layout this version writes: garbled JSON text, or a record of format 2.
        const [marker, text] =
          kind === 'garbled'
            ? [RECORD_TEXT_MARKER, '{"oops": ["not", "a", "rec']
            : [
                { ...RECORD_TEXT_MARKER, record_format: 3 },
                JSON.stringify({ ...makeRecord(binding, 'waiting', { handle }), format: 3 }),
              ];
        await admin.query(
          `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record, record_text)
           VALUES ($1, $2, 1, true, '2026-01-01', $3::jsonb, $4)`,
          [handle, bindingScope(binding), JSON.stringify(marker), text],
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
      async reopen() {
        const again = createPostgresHandleStore({ connectionString: url, table, preparedStatements });
        brokenStores.push(again);
        return again;
      },
      close: async () => {
        for (const broken of brokenStores) await broken.close();
        await store.close();
      },
    };
  };

  // The contract with the store's statements prepared (its own pool's default) and sent unnamed.
  for (const preparedStatements of [true, false])
    describeHandleStoreContract(preparedStatements ? 'postgres' : 'postgres, unprepared statements', () =>
      pgBackend(preparedStatements),
    );
  describeWaitingContract('postgres', () => pgBackend(true));
  describeReadyContract('postgres', async () => {
    const store = createPostgresHandleStore({ connectionString: url, table: freshTable() });
    await store.migrate();
    return {
      factory: store,
      unready: async () => {
        await store.close();
        return 'closed';
      },
      close: () => store.close(),
    };
  });

  describe('PostgreSQL store readiness', () => {
    /** A store on a fresh table, migrated unless `migrated` is false; closed after the suite. */
    const opened: ReturnType<typeof createPostgresHandleStore>[] = [];
    const open = async (options: { migrated?: boolean; connectionString?: string } = {}) => {
      const table = freshTable();
      const store = createPostgresHandleStore({ connectionString: options.connectionString ?? url, table });
      opened.push(store);
      if (options.migrated !== false) await store.migrate();
      return { store, table };
    };
    afterAll(async () => {
      for (const store of opened) await store.close();
    });

    it('is not_migrated until migrate() has run, and after a column or an index of this version is gone', async () => {
      const { store, table } = await open({ migrated: false });
      expect(await store.ready()).toEqual({ kind: 'not_ready', reason: 'not_migrated' });
      await store.migrate();
      expect(await store.ready()).toEqual({ kind: 'ready' });
      await admin.query(`DROP INDEX "public"."${table}_watched"`);
      expect(await store.ready()).toEqual({ kind: 'not_ready', reason: 'not_migrated' });
      await store.migrate();
      expect(await store.ready()).toEqual({ kind: 'ready' });
      await admin.query(`ALTER TABLE "public"."${table}" DROP COLUMN principal`);
      expect(await store.ready()).toEqual({ kind: 'not_ready', reason: 'not_migrated' });
      await admin.query(`ALTER TABLE "public"."${table}" ADD COLUMN principal text`);
      await admin.query(`DELETE FROM "public"."${table}_keys"`);
      expect(await store.ready()).toEqual({ kind: 'not_ready', reason: 'not_migrated' });
    });

    it('is db_transient when nothing listens where the database should be', async () => {
      const { store } = await open({
        migrated: false,
        connectionString: `postgres://postgres:secret-pw@127.0.0.1:${await closedPort()}/none`,
      });
      const outcome = await store.ready();
      expect(outcome).toEqual({ kind: 'not_ready', reason: 'db_transient' });
      expect(JSON.stringify(outcome)).not.toContain('secret-pw');
    });

    it('answers timeout within the bound when the database accepts and never answers, with one check in flight', async () => {
      const sockets = new Set<import('node:net').Socket>();
      const hung = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
      const { port } = hung.address() as { port: number };
      try {
        const { store } = await open({
          migrated: false,
          connectionString: `postgres://postgres@127.0.0.1:${port}/none`,
        });
        for (let probe = 0; probe < 2; probe++) {
          const started = performance.now();
          expect(await store.ready()).toEqual({ kind: 'not_ready', reason: 'timeout' });
          const ms = performance.now() - started;
          expect(ms).toBeGreaterThanOrEqual(900);
          expect(ms).toBeLessThan(1_500);
        }
        // The first check still waits on its connection; the later probes did not open more.
        expect(sockets.size).toBe(1);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => hung.close(() => resolve()));
      }
    });
  });
  describePruneContract('postgres', () => pgBackend(true));

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

    it('keeps one row per handle: scope, version, unfinished flag and the record as ASCII JSON text', async () => {
      const view = store.forBinding(stdioA);
      const record = hostileRecord(stdioA, 'answered', 'é\u0000😀\ud800');
      await view.create(record);
      const completed = { ...record, state: makeRecord(stdioA, 'completed').state };
      await view.update(completed, 1);
      const { rows } = await admin.query(
        `SELECT scope, version, unfinished, record, record_text FROM "public"."${table}" WHERE handle = $1`,
        [record.handle],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].scope).toBe(JSON.stringify(['stdio', 'default', stdioA.apiOrigin]));
      expect(rows[0].version).toBe(2);
      expect(rows[0].unfinished).toBe(false);
      expect(rows[0].record).toEqual(RECORD_TEXT_MARKER);
      expect(rows[0].record_text).toMatch(/^[\x01-\x7f]*$/);
      expect(JSON.parse(rows[0].record_text)).toEqual(completed);
      // The text is the record's JSON with every non-ASCII code unit escaped, nothing else.
      expect(rows[0].record_text).toBe(escapeToAscii(JSON.stringify(completed)));
    });

    it('waiting() reads a range of the partial index <table>_watched, and leaves out a watched row that does not decode or is filed under another scope', async () => {
      const db = await admin.connect();
      try {
        // The planner must be able to use the index: the query implies its predicate.
        await db.query('SET enable_seqscan = off');
        const { rows } = await db.query(
          `EXPLAIN SELECT handle FROM "public"."${table}" WHERE state_kind IN ('waiting', 'ask_open') AND handle COLLATE "C" > '' ORDER BY handle COLLATE "C" LIMIT 10`,
        );
        expect(rows.map((row) => String(row['QUERY PLAN'])).join('\n')).toContain(`${table}_watched`);
      } finally {
        await db.query('RESET enable_seqscan');
        db.release();
      }
      const good = makeRecord(httpA, 'waiting', { handle: 'sh_pgw_1' });
      await store.forBinding(httpA).create(good);
      await admin.query(
        `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group)
         VALUES ('sh_pgw_2', $1, 1, true, '2026-01-01', $2::jsonb, '{"oops": [', 'waiting', 0),
                ('sh_pgw_3', $3, 1, true, '2026-01-01', $2::jsonb, $4, 'waiting', 0)`,
        [
          bindingScope(httpA),
          JSON.stringify(RECORD_TEXT_MARKER),
          bindingScope(httpB),
          escapeToAscii(JSON.stringify(makeRecord(httpA, 'waiting', { handle: 'sh_pgw_3' }))),
        ],
      );
      // The page is of the rows read: the one that does not decode still moves the keyset on.
      const page = await store.waiting({ after: 'sh_pgw_', limit: 2 });
      expect(page.records.map(({ record }) => record.handle)).toEqual(['sh_pgw_1']);
      expect(page.next).toBe('sh_pgw_2');
      const rest = await store.waiting({ after: 'sh_pgw_2', limit: 1 });
      expect(rest.records.map(({ record }) => record.handle)).not.toContain('sh_pgw_3');
    });

    it('an update refuses, before writing, a record of another scope, a bad handle, a bad version or a value it cannot hold', async () => {
      const view = store.forBinding(stdioA);
      const record = makeRecord(stdioA, 'waiting');
      await view.create(record);
      const readRow = async () =>
        (
          await admin.query(`SELECT version, record_text FROM "public"."${table}" WHERE handle = $1`, [
            record.handle,
          ])
        ).rows;
      const before = await readRow();
      const refusals: Array<[InteractionRecord, number, string]> = [
        [{ ...record, binding: httpA }, 1, 'foreign_scope'],
        [{ ...record, handle: '../x' }, 1, 'invalid_handle'],
        [{ ...record, format: 3 } as unknown as InteractionRecord, 1, 'unsupported_version'],
        [{ ...record, updatedAt: undefined } as unknown as InteractionRecord, 1, 'invalid_record'],
        [{ ...record, state: { kind: 'nonsense' } } as unknown as InteractionRecord, 1, 'invalid_record'],
      ];
      for (const [bad, version, reason] of refusals) {
        const error = await storeFailure(view.update(bad, version));
        expect([error.code, error.reason, error.retryable], reason).toEqual([
          'STATE_STORE_ERROR',
          reason,
          false,
        ]);
      }
      // A version that is not a store version is stale, and changes nothing either.
      const stale = await storeFailure(view.update(record, 1.5));
      expect([stale.code, stale.reason, stale.retryable]).toEqual(['INVALID_STATE', 'stale_version', false]);
      expect(await readRow()).toEqual(before);
      // The view still updates the record it holds, from the version it noted.
      expect((await view.update({ ...record, updatedAt: '2026-12-01T00:00:00.000Z' }, 1)).version).toBe(2);
    });

    it('escapes U+0000 and every code unit outside ASCII, and returns an ASCII text as it is', () => {
      const cases: [string, string][] = [
        ['', ''],
        ['plain ~ ASCII \u007f', 'plain ~ ASCII \u007f'],
        ['a\u0000b', 'a\\u0000b'],
        ['\u0000', '\\u0000'],
        ['é', '\\u00e9'],
        ['\u0080', '\\u0080'],
        ['\ud800', '\\ud800'],
        ['x😀', 'x\\ud83d\\ude00'],
        ['\uffff', '\\uffff'],
      ];
      for (const [text, escaped] of cases) expect(escapeToAscii(text)).toBe(escaped);
    });

    it('reads a row whose state is not an object, or whose kind is a name every object has, as corrupt', async () => {
      const view = store.forBinding(httpA);
      for (const [state, where] of [
        ['waiting', 'state'],
        [{ kind: 'constructor' }, 'state.kind'],
        [{ kind: 'toString' }, 'state.kind'],
        [{ kind: '__proto__' }, 'state.kind'],
        [{ kind: 'hasOwnProperty' }, 'state.kind'],
      ] as const) {
        const { format, handle, ...rest } = makeRecord(httpA, 'waiting');
        await admin.query(
          `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record, record_text) VALUES ($1, $2, 1, true, '2026', $3::jsonb, $4)`,
          [
            handle,
            bindingScope(httpA),
            RECORD_TEXT_MARKER_JSON,
            JSON.stringify({ format, handle, ...rest, state }),
          ],
        );
        const error = await storeFailure(view.get(handle));
        expect([error.reason, error.retryable]).toEqual(['corrupt', false]);
        expect(error.message).toContain(`at ${where})`);
        await view.delete(handle);
      }
    });

    it('writes format and handle first whatever order the record’s keys come in; the other keys keep theirs', async () => {
      const view = store.forBinding(stdioA);
      const { format, handle, ...rest } = makeRecord(stdioA, 'waiting');
      const reordered = { ...rest, handle, format } as InteractionRecord;
      await view.create(reordered);
      const textOf = async () =>
        (await admin.query(`SELECT record_text FROM "public"."${table}" WHERE handle = $1`, [handle])).rows[0]
          .record_text as string;
      expect(await textOf()).toBe(JSON.stringify({ format, handle, ...rest }));
      // A store that never read the row updates it through the format check, which reads that head.
      const other = createPostgresHandleStore({ connectionString: url, table });
      try {
        const answered = { ...rest, state: makeRecord(stdioA, 'answered').state };
        const next = { ...answered, handle, format } as InteractionRecord;
        expect((await other.forBinding(stdioA).update(next, 1)).version).toBe(2);
        expect(await textOf()).toBe(JSON.stringify({ format, handle, ...answered }));
      } finally {
        await other.close();
      }
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

    it('migrate() gives open HTTP rows written without a principal (before it, or by an earlier version) theirs, so the quota counts them', async () => {
      const shared = freshTable();
      const setup = createPostgresHandleStore({ connectionString: url, table: shared });
      await setup.migrate();
      const alice: Binding = { ...httpA, principalId: 'alice-before-quota' };
      const otherClient: Binding = { ...alice, clientId: 'client_9', grantId: 'grant_9' };
      const records = [
        makeRecord(alice),
        makeRecord(otherClient, 'create_intent'),
        makeRecord(alice, 'completed'),
      ];
      for (const record of records) await setup.forBinding(record.binding).create(record);
      await setup.forBinding(stdioA).create(makeRecord(stdioA));
      // As a row of the previous version has it: no principal.
      await admin.query(`UPDATE "public"."${shared}" SET principal = NULL`);
      const limits = { maxOpenPerPrincipal: 2 };
      // Uncounted until migrate() fills them: a third open record gets in.
      const early = makeRecord(alice);
      await setup.forBinding(alice).create(early, limits);
      await setup.migrate();
      const { rows } = await admin.query(
        `SELECT handle, principal FROM "public"."${shared}" WHERE principal IS NOT NULL ORDER BY handle`,
      );
      expect(rows.map((row) => row.handle).sort()).toEqual(
        [records[0]!.handle, records[1]!.handle, early.handle].sort(),
      );
      expect(new Set(rows.map((row) => row.principal))).toEqual(new Set([bindingPrincipal(alice)]));
      const refused = await storeFailure(setup.forBinding(alice).create(makeRecord(alice), limits));
      expect(refused.code).toBe('PRINCIPAL_QUOTA_REACHED');
      await setup.close();
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

    /** The names of the statements prepared on the one connection of `pool` (max 1). */
    const preparedOn = async (pool: pg.Pool) =>
      (await pool.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
        (row: { name: string }) => row.name,
      );

    it('prepares its statements with its own pool or when told, and sends them unnamed otherwise', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        const record = makeRecord(stdioA, 'waiting');
        const plain = createPostgresHandleStore({ pool: pool as unknown as PoolLike, table });
        await plain.forBinding(stdioA).create(record);
        await plain.forBinding(stdioA).get(record.handle);
        expect(await preparedOn(pool)).toEqual([]);
        const named = createPostgresHandleStore({
          pool: pool as unknown as PoolLike,
          table,
          preparedStatements: true,
        });
        const view = named.forBinding(stdioA);
        const answered = { ...record, state: makeRecord(stdioA, 'answered').state };
        expect((await view.update(answered, 1)).version).toBe(2);
        expect((await view.update(answered, 2)).version).toBe(3);
        expect((await view.get(record.handle))?.version).toBe(3);
        const names = await preparedOn(pool);
        expect(names.length).toBeGreaterThanOrEqual(2);
        for (const name of names) expect(name).toMatch(/^sess_mcp_[0-9a-z]+$/);
        // Another table on the same connection: other texts, other names, no clash.
        const otherTable = freshTable();
        const other = createPostgresHandleStore({
          pool: pool as unknown as PoolLike,
          table: otherTable,
          preparedStatements: true,
        });
        await other.migrate();
        await other.forBinding(stdioA).create(makeRecord(stdioA, 'completed', { handle: record.handle }));
        expect((await other.forBinding(stdioA).get(record.handle))?.record.state.kind).toBe('completed');
        expect((await view.get(record.handle))?.record.state.kind).toBe('answered');
        expect((await preparedOn(pool)).length).toBeGreaterThan(names.length);
      } finally {
        await pool.end();
      }
    });

    it('sends a statement its connection lost again unnamed, once, and unnamed from then on', async () => {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        const stores = createPostgresHandleStore({
          pool: pool as unknown as PoolLike,
          table,
          preparedStatements: true,
        });
        const view = stores.forBinding(stdioA);
        const record = makeRecord(stdioA, 'waiting');
        await view.create(record);
        const answered = { ...record, state: makeRecord(stdioA, 'answered').state };
        expect((await view.update(answered, 1)).version).toBe(2);
        // What a pooler in transaction mode does: the next statement lands on a server
        // connection that never parsed it (pg still thinks this one did).
        await pool.query('DEALLOCATE ALL');
        expect((await view.update(answered, 2)).version).toBe(3);
        const versionOf = async () =>
          (await admin.query(`SELECT version FROM "public"."${table}" WHERE handle = $1`, [record.handle]))
            .rows[0].version;
        // Written once: the named statement failed before it ran.
        expect(await versionOf()).toBe(3);
        expect((await view.get(record.handle))?.version).toBe(3);
        expect((await view.update(answered, 3)).version).toBe(4);
        expect(await versionOf()).toBe(4);
        expect(await preparedOn(pool)).toEqual([]);
      } finally {
        await pool.end();
      }
    });

    it('says what to do when a statement is lost where it is sent unnamed too', () => {
      const error = pgStoreError(
        Object.assign(new Error('prepared statement "x" does not exist'), { code: '26000' }),
      );
      expect([error.code, error.reason, error.retryable]).toEqual([
        'STATE_STORE_ERROR',
        'db_permanent',
        false,
      ]);
      expect(error.message).toContain('preparedStatements: false');
    });

    it('refuses bad options with a TypeError naming the factory and the option', () => {
      const cases: [unknown, RegExp][] = [
        [undefined, /^createPostgresHandleStore: options must be an object\.$/],
        [{}, /^createPostgresHandleStore: option "pool" or option "connectionString" must be given/],
        [
          { connectionString: url, pool: {} },
          /^createPostgresHandleStore: option "pool" or option "connectionString" must be given/,
        ],
        [
          { connectionString: '' },
          /^createPostgresHandleStore: option "connectionString" must be a non-empty string\.$/,
        ],
        [{ pool: { query: 'x' } }, /^createPostgresHandleStore: option "pool" must be a pg Pool/],
        [
          { connectionString: url, table: 'x"; DROP TABLE y; --' },
          /^createPostgresHandleStore: option "table" must be a lower-case SQL identifier/,
        ],
        [
          { connectionString: url, schema: 'Public' },
          /^createPostgresHandleStore: option "schema" must be a lower-case SQL identifier/,
        ],
        [{ connectionString: url, table: 'a'.repeat(64) }, /option "table"/],
        [
          { connectionString: url, preparedStatements: 'yes' },
          /^createPostgresHandleStore: option "preparedStatements" must be a boolean\.$/,
        ],
      ];
      for (const [options, message] of cases) {
        expect(() => createPostgresHandleStore(options as PostgresHandleStoreOptions)).toThrow(TypeError);
        expect(() => createPostgresHandleStore(options as PostgresHandleStoreOptions)).toThrow(message);
      }
    });

    /** A migrated table of its own, a store on it, and what a worker process needs to open it. */
    async function migratedTable() {
      const shared = freshTable();
      const setup = createPostgresHandleStore({ connectionString: url, table: shared });
      await setup.migrate();
      const spec: WorkerJob['store'] = { kind: 'postgres', connectionString: url!, table: shared };
      return { setup, spec, view: setup.forBinding(httpA) };
    }

    /** A worker job of compare-and-set writes to `handle`. */
    const casJob = (spec: WorkerJob['store'], handle: string, extra: Partial<WorkerJob>): WorkerJob => ({
      store: spec,
      job: 'cas',
      binding: httpA,
      handle,
      count: 100,
      ...extra,
    });

    it('two processes with their own pools race 200 compare-and-set writes: no lost update', async () => {
      const { setup, spec, view } = await migratedTable();
      const record = makeRecord(httpA, 'waiting');
      await view.create(record);
      const job = casJob(spec, record.handle, { concurrency: 4 });
      const tallies = await runWorkers([job, job]);
      const total = sumTallies(tallies);
      expect(Object.keys(total).sort()).toEqual(
        ['INVALID_STATE:stale_version', 'ok'].filter((k) => k in total),
      );
      expect((total.ok ?? 0) + (total['INVALID_STATE:stale_version'] ?? 0)).toBe(200);
      expect((await view.get(record.handle))!.version - 1).toBe(total.ok);
      // Both processes won some writes: they really raced.
      expect(tallies.every((t) => (t.ok ?? 0) > 0)).toBe(true);
      await setup.close();
    });

    it('a process killed in the middle of writing leaves the row whole and the table usable', async () => {
      const { setup, spec, view } = await migratedTable();
      const record = makeRecord(httpA, 'waiting');
      await view.create(record);
      await killAfterWrites(
        casJob(spec, record.handle, { count: 1_000_000, concurrency: 3, progress: true }),
        20,
      );
      const current = await view.get(record.handle);
      expect(current!.version).toBeGreaterThanOrEqual(21);
      expect((await view.update(current!.record, current!.version)).version).toBe(current!.version + 1);
      // The scope still takes creates (through its advisory lock) after the dead session.
      await view.create(makeRecord(httpA, 'waiting'));
      expect(await view.countUnfinished()).toBe(2);
      await setup.close();
    });

    it(`150 concurrent creates across two processes leave exactly ${MAX_UNFINISHED} unfinished`, async () => {
      const { setup, spec, view } = await migratedTable();
      const job: WorkerJob = { store: spec, job: 'create', binding: httpA, count: 75 };
      const total = sumTallies(await runWorkers([job, job]));
      expect(total).toEqual({ ok: MAX_UNFINISHED, STATE_STORE_FULL: 50 });
      expect(await view.countUnfinished()).toBe(MAX_UNFINISHED);
      await setup.close();
    });
  });

  const handles = (page: { records: { record: InteractionRecord }[] }) =>
    page.records.map((entry) => entry.record.handle);
  const compareByKey = (a: InteractionRecord, b: InteractionRecord) =>
    compareListOrder({ version: 1, record: a }, { version: 1, record: b });

  /**
   * What a 0.1.0 instance runs against its table, copied from the 0.1.0 store: the table, the
   * statements of `create`, `get` and `update`, and its read (format 1 only, then the strict
   * codec, which reads format 1 as 0.1.0 did).
   */
  const release010 = {
    async createTable(table: string): Promise<void> {
      await admin.query(
        `CREATE TABLE "public"."${table}" (
          handle text PRIMARY KEY,
          scope text NOT NULL,
          version integer NOT NULL CHECK (version >= 1),
          unfinished boolean NOT NULL,
          created_at text NOT NULL,
          record jsonb NOT NULL,
          written_at timestamptz NOT NULL DEFAULT now()
        )`,
      );
      await admin.query(
        `CREATE INDEX "${table}_unfinished" ON "public"."${table}" (scope, created_at COLLATE "C", handle COLLATE "C") WHERE unfinished`,
      );
    },
    async create(table: string, record: InteractionRecord): Promise<number | null> {
      const { rowCount } = await admin.query(
        `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record)
         VALUES ($1, $2, 1, $3, $4, $5::jsonb) ON CONFLICT (handle) DO NOTHING`,
        [
          record.handle,
          bindingScope(record.binding),
          isUnfinished(record),
          record.createdAt,
          JSON.stringify(record),
        ],
      );
      return rowCount;
    },
    async get(table: string, binding: Binding, handle: string): Promise<InteractionRecord | undefined> {
      const { rows } = await admin.query(
        `SELECT version, record FROM "public"."${table}" WHERE handle = $1 AND scope = $2`,
        [handle, bindingScope(binding)],
      );
      if (rows[0] === undefined) return undefined;
      const value = rows[0].record;
      // 0.1.0 reads format 1 only: anything else that names a format is unsupported.
      if (value !== null && typeof value === 'object' && 'format' in value && value.format !== 1) {
        throw new SessMcpError('STATE_STORE_ERROR', 'A stored record has an unsupported format.', {
          reason: 'unsupported_version',
        });
      }
      return decodeRecord(value, handle);
    },
    async update(table: string, record: InteractionRecord, expectedVersion: number): Promise<number | null> {
      const { rowCount } = await admin.query(
        `UPDATE "public"."${table}" SET record = $3::jsonb, version = version + 1, unfinished = $4, written_at = now()
         WHERE handle = $1 AND scope = $2 AND version = $5
           AND jsonb_typeof(record) = 'object' AND record->'format' = to_jsonb($6::int) AND record->>'handle' = $1
         RETURNING version`,
        [
          record.handle,
          bindingScope(record.binding),
          JSON.stringify(record),
          isUnfinished(record),
          expectedVersion,
          // 0.1.0's RECORD_FORMAT.
          1,
        ],
      );
      return rowCount;
    },
  };

  describe('PostgreSQL store after 0.1.0', () => {
    it('migrate() upgrades a populated 0.1.0 table in place, safely twice; every row reads and updates', async () => {
      const shared = freshTable();
      await release010.createTable(shared);
      const records = [
        ...FORMAT_1_KINDS.map((kind) => as010(makeRecord(httpA, kind))),
        // What 0.1.0 could hold: text beyond ASCII, astral characters included.
        as010(hostileRecord(httpA, 'answered', 'é – 😀 𝄞')),
      ];
      for (const record of records) expect(await release010.create(shared, record)).toBe(1);
      const store = createPostgresHandleStore({ connectionString: url, table: shared });
      const view = store.forBinding(httpA);
      // This version on the 0.1.0 table before migrate(): says so, reads or lists nothing.
      const early = await storeFailure(view.get(records[0]!.handle));
      expect([early.reason, early.retryable]).toEqual(['not_migrated', false]);
      const earlyList = await storeFailure(listPage(view, { limit: 10 }));
      expect([earlyList.reason, earlyList.retryable]).toEqual(['not_migrated', false]);
      await store.migrate();
      await store.migrate();
      for (const record of records) expect(await view.get(record.handle)).toEqual({ version: 1, record });
      expect((await view.listUnfinished()).map((entry) => entry.record.handle).sort()).toEqual(
        records
          .filter(isUnfinished)
          .map((record) => record.handle)
          .sort(),
      );
      // Listed at once, from the listing columns migrate() filled from each row's JSON.
      const listed = await listPage(view, { limit: 100 });
      expect(listed.records).toEqual(
        [...records].sort(compareByKey).map((record) => ({ version: 1, record })),
      );
      const { rows: columns } = await admin.query(
        `SELECT handle, state_kind, list_group FROM "public"."${shared}"`,
      );
      for (const row of columns) {
        const record = records.find((r) => r.handle === row.handle)!;
        expect([row.state_kind, row.list_group]).toEqual([record.state.kind, listGroupOf(record.state.kind)]);
      }
      for (const record of records) {
        const next = { ...record, updatedAt: '2026-12-01T00:00:00.000Z' };
        const written = { ...next, format: RECORD_FORMAT };
        expect(await view.update(next, 1)).toEqual({ version: 2, record: written });
        expect(await view.get(record.handle)).toEqual({ version: 2, record: written });
      }
      const { rows } = await admin.query(`SELECT record, record_text FROM "public"."${shared}"`);
      expect(rows).toHaveLength(records.length);
      for (const row of rows) {
        expect([row.record, typeof row.record_text]).toEqual([RECORD_TEXT_MARKER, 'string']);
        expect(JSON.parse(row.record_text).format).toBe(RECORD_FORMAT);
      }
      // A 0.1.0 instance still running beside this one: what it creates, this version reads,
      // updates, and (once migrate() has run again) lists.
      const late = as010(makeRecord(httpA, 'waiting'));
      expect(await release010.create(shared, late)).toBe(1);
      expect(await view.get(late.handle)).toEqual({ version: 1, record: late });
      expect(handles(await listPage(view, { limit: 100, kinds: ['waiting'] }))).not.toContain(late.handle);
      await store.migrate();
      expect(handles(await listPage(view, { limit: 100, kinds: ['waiting'] }))).toContain(late.handle);
      // It changes a row's state: this version's listing columns lag until migrate() runs again,
      // and a kinds filter is still kept (the row is checked after it is read).
      const moved = as010({ ...late, state: makeRecord(httpA, 'expired').state });
      expect(await release010.update(shared, moved, 1)).toBe(1);
      expect(handles(await listPage(view, { limit: 100, kinds: ['waiting'] }))).not.toContain(late.handle);
      expect(handles(await listPage(view, { limit: 100, kinds: ['expired'] }))).not.toContain(late.handle);
      await store.migrate();
      expect(handles(await listPage(view, { limit: 100, kinds: ['expired'] }))).toContain(late.handle);
      expect((await view.update({ ...moved, updatedAt: '2026-12-02T00:00:00.000Z' }, 2)).version).toBe(3);
      await store.migrate();
      expect(await view.countUnfinished()).toBe(records.filter(isUnfinished).length);
      const { rows: indexes } = await admin.query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1`, [
        shared,
      ]);
      expect(indexes.map((row) => row.indexdef)).toContainEqual(
        expect.stringMatching(/\(scope, list_group, created_at COLLATE "C" DESC, handle COLLATE "C" DESC\)$/),
      );
      await store.close();
    });

    it('updates a 0.1.0 row from a store that never read it (the UPDATE checks the format in SQL)', async () => {
      const shared = freshTable();
      await release010.createTable(shared);
      const setup = createPostgresHandleStore({ connectionString: url, table: shared });
      await setup.migrate();
      await setup.close();
      // A row of each layout this version reads: 0.1.0's jsonb, and record_text of format 1.
      const legacy = as010(makeRecord(httpA, 'answered'));
      expect(await release010.create(shared, legacy)).toBe(1);
      const textRow = as010(makeRecord(httpA, 'waiting'));
      await admin.query(
        `INSERT INTO "public"."${shared}" (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group)
         VALUES ($1, $2, 3, true, $3, $4::jsonb, $5, 'waiting', 0)`,
        [
          textRow.handle,
          bindingScope(httpA),
          textRow.createdAt,
          JSON.stringify({ ...RECORD_TEXT_MARKER, record_format: 1 }),
          JSON.stringify(textRow),
        ],
      );
      for (const [record, version] of [
        [legacy, 1],
        [textRow, 3],
      ] as const) {
        const fresh = createPostgresHandleStore({ connectionString: url, table: shared });
        const next = { ...record, state: makeRecord(httpA, 'completed').state };
        expect(await fresh.forBinding(httpA).update(next, version)).toEqual({
          version: version + 1,
          record: { ...next, format: RECORD_FORMAT },
        });
        // Not at a stale version, and not over a row of a format this version does not read.
        const again = createPostgresHandleStore({ connectionString: url, table: shared });
        expect((await storeFailure(again.forBinding(httpA).update(next, version))).reason).toBe(
          'stale_version',
        );
        await fresh.close();
        await again.close();
      }
      const future = makeRecord(httpA, 'waiting');
      await admin.query(
        `INSERT INTO "public"."${shared}" (handle, scope, version, unfinished, created_at, record, record_text)
         VALUES ($1, $2, 1, true, $3, $4::jsonb, $5)`,
        [
          future.handle,
          bindingScope(httpA),
          future.createdAt,
          JSON.stringify({ ...RECORD_TEXT_MARKER, record_format: 3 }),
          JSON.stringify({ ...future, format: 3 }),
        ],
      );
      const fresh = createPostgresHandleStore({ connectionString: url, table: shared });
      const refused = await storeFailure(fresh.forBinding(httpA).update(future, 1));
      expect([refused.reason, refused.retryable]).toEqual(['unsupported_version', false]);
      await fresh.close();
    });

    it('migrate() fills the listing columns of rows it can only read in JS (escapes jsonb refuses), and leaves unreadable ones unlisted', async () => {
      const shared = freshTable();
      await release010.createTable(shared);
      // A table as the version before this one left it: record_text, no listing columns.
      await admin.query(`ALTER TABLE "public"."${shared}" ADD COLUMN record_text text`);
      const stale = createPostgresHandleStore({ connectionString: url, table: shared });
      const create = await storeFailure(stale.forBinding(httpA).create(makeRecord(httpA, 'waiting')));
      expect([create.reason, create.retryable]).toEqual(['not_migrated', false]);
      const hostile = as010(hostileRecord(httpA, 'blocked', 'ok\u0000\ud800'));
      const broken = newHandle();
      for (const [handle, text] of [
        [hostile.handle, escapeToAscii(JSON.stringify(hostile))],
        [broken, '{"format":1,"handle":"'],
      ]) {
        await admin.query(
          `INSERT INTO "public"."${shared}" (handle, scope, version, unfinished, created_at, record, record_text)
           VALUES ($1, $2, 1, true, $3, $4::jsonb, $5)`,
          [
            handle,
            bindingScope(httpA),
            escapeToAscii(hostile.createdAt),
            JSON.stringify({ ...RECORD_TEXT_MARKER, record_format: 1 }),
            text,
          ],
        );
      }
      await stale.migrate();
      const view = stale.forBinding(httpA);
      expect(await listPage(view, { limit: 10 })).toEqual({
        records: [{ version: 1, record: hostile }],
        more: false,
      });
      expect(await listPage(view, { limit: 10, kinds: ['blocked'] })).toEqual({
        records: [{ version: 1, record: hostile }],
        more: false,
      });
      expect((await storeFailure(view.get(broken))).reason).toBe('corrupt');
      await stale.migrate();
      await stale.close();
    });

    it('lists past unreadable rows: a page of unreadable rows never ends a listing early', async () => {
      const store = createPostgresHandleStore({ connectionString: url, table: freshTable() });
      await store.migrate();
      const binding = { ...httpA, grantId: 'grant_unreadable' };
      const view = store.forBinding(binding);
      const readable = [];
      for (let i = 0; i < 6; i++) {
        const record = makeRecord(binding, 'waiting', { createdAt: `2026-01-01T00:00:0${i}.000Z` });
        await view.create(record);
        readable.push(record);
      }
      // Five garbled rows that sort between them (listing columns set, record unreadable).
      for (let i = 0; i < 5; i++) {
        await admin.query(
          `INSERT INTO ${store.table} (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group)
           VALUES ($1, $2, 1, true, $3, $4::jsonb, 'garbled', 'waiting', 0)`,
          [newHandle(), bindingScope(binding), `2026-01-01T00:00:04.5${i}Z`, RECORD_TEXT_MARKER_JSON],
        );
      }
      const first = await listPage(view, { limit: 2 });
      expect(handles(first)).toEqual([readable[5]!.handle, readable[4]!.handle]);
      expect(first.more).toBe(true);
      const second = await listPage(view, { limit: 2, after: keyOf(first.records[1]!.record) });
      expect(handles(second)).toEqual([readable[3]!.handle, readable[2]!.handle]);
      await store.close();
    });

    it('a 0.1.0 instance meeting a row of this version fails closed: unsupported format, nothing overwritten', async () => {
      const shared = freshTable();
      await release010.createTable(shared);
      const store = createPostgresHandleStore({ connectionString: url, table: shared });
      await store.migrate();
      const record = hostileRecord(httpA, 'answered', 'ok\u0000\ud800');
      await store.forBinding(httpA).create(record);
      const read = await storeFailure(release010.get(shared, httpA, record.handle));
      expect([read.code, read.reason, read.retryable]).toEqual([
        'STATE_STORE_ERROR',
        'unsupported_version',
        false,
      ]);
      // Its compare-and-set refuses the row (then its read above reports it), its create finds it.
      const legacy = makeRecord(httpA, 'completed', { handle: record.handle });
      expect(await release010.update(shared, legacy, 1)).toBe(0);
      expect(await release010.create(shared, legacy)).toBe(0);
      expect(await store.forBinding(httpA).get(record.handle)).toEqual({ version: 1, record });
      await store.close();
    });

    it('reads a 0.1.0 row that is garbled or of another format as a non-retryable error, and leaves it', async () => {
      const view = createPostgresHandleStore({ connectionString: url, table: freshTable() });
      await view.migrate();
      const table = view.table;
      for (const [reason, value] of [
        ['corrupt', { oops: true }],
        ['unsupported_version', { ...makeRecord(httpA, 'waiting'), format: 3 }],
        ['corrupt', { ...RECORD_TEXT_MARKER }],
      ] as const) {
        const handle = newHandle();
        await admin.query(
          `INSERT INTO ${table} (handle, scope, version, unfinished, created_at, record) VALUES ($1, $2, 1, true, '2026', $3::jsonb)`,
          [handle, bindingScope(httpA), JSON.stringify({ ...value, handle })],
        );
        const error = await storeFailure(view.forBinding(httpA).get(handle));
        expect([error.reason, error.retryable]).toEqual([reason, false]);
        const write = await storeFailure(
          view.forBinding(httpA).update(makeRecord(httpA, 'waiting', { handle }), 1),
        );
        expect([write.reason, write.retryable]).toEqual([reason, false]);
      }
      await view.close();
    });
  });

  describe('PostgreSQL failures, classified by what failed', () => {
    it('0.1.0 lost these answers: jsonb refuses U+0000 and lone surrogates; that is a data error, not the database', async () => {
      const shared = freshTable();
      await release010.createTable(shared);
      const seen = new Set<string>();
      for (const text of ['ok\u0000', 'Approve \ud800?', '\udfff']) {
        const record = makeRecord(httpA, 'answered');
        if (record.state.kind === 'answered') record.state.response.answer.values = { message: text };
        let failure: unknown;
        await release010.create(shared, record).catch((error: unknown) => {
          failure = error;
        });
        const sqlstate = (failure as { code?: string } | undefined)?.code;
        expect(sqlstate, text).toMatch(/^22/);
        seen.add(sqlstate!);
        const error = pgStoreError(failure);
        expect([error.code, error.reason, error.retryable]).toEqual(['STATE_STORE_ERROR', 'db_data', false]);
        expect(error.message).not.toMatch(/fix the database/i);
      }
      expect([...seen].sort()).toEqual(['22P02', '22P05']);
    });

    it('a database that does not exist is the owner’s to fix; a table never migrated says migrate()', async () => {
      const missing = createPostgresHandleStore({
        connectionString: url.replace(/\/[^/?]+(\?|$)/, '/no_such_db$1'),
      });
      const error = await storeFailure(missing.forBinding(stdioA).countUnfinished());
      expect([error.reason, error.retryable]).toEqual(['db_permanent', false]);
      expect(error.message).toContain('3D000');
      await missing.close();
    });

    it.each([
      ['22P05', 'db_data', false],
      ['22P02', 'db_data', false],
      ['22021', 'db_data', false],
      ['22001', 'db_data', false],
      ['54000', 'db_data', false],
      ['42P01', 'not_migrated', false],
      ['3F000', 'not_migrated', false],
      ['42703', 'not_migrated', false],
      ['08006', 'db_transient', true],
      ['08001', 'db_transient', true],
      ['40001', 'db_transient', true],
      ['40P01', 'db_transient', true],
      ['53300', 'db_transient', true],
      ['55P03', 'db_transient', true],
      ['57014', 'db_transient', true],
      ['57P01', 'db_transient', true],
      ['57P03', 'db_transient', true],
      ['58030', 'db_transient', true],
      ['25006', 'db_transient', true],
      ['XX000', 'db_transient', true],
      ['28P01', 'db_permanent', false],
      ['28000', 'db_permanent', false],
      ['3D000', 'db_permanent', false],
      ['42501', 'db_permanent', false],
      ['26000', 'db_permanent', false],
      ['42P05', 'db_permanent', false],
      ['XX001', 'db_permanent', false],
      ['23505', 'db_permanent', false],
      ['42601', 'db_permanent', false],
      ['ECONNREFUSED', 'db_transient', true],
      [undefined, 'db_transient', true],
    ] as const)('%s is %s (retryable: %s)', (code, reason, retryable) => {
      const error = pgStoreError(
        Object.assign(new Error('server text that may quote a value: s3cret'), { code }),
      );
      expect([error.code, error.reason, error.retryable]).toEqual(['STATE_STORE_ERROR', reason, retryable]);
      expect(error.message).not.toContain('s3cret');
      if (code !== undefined) expect(error.message).toContain(code);
      // Only the owner's database problems say so; a data error never does.
      expect(/owner must/i.test(error.message)).toBe(reason === 'db_permanent');
    });
  });

  describe('PostgreSQL store under the engine', () => {
    // A lone surrogate in a tool argument is refused before anything is saved (test/core/hostile-strings);
    // the store's own lossless round trip of lone surrogates is in the contract suite.
    it('releases a verified answer holding U+0000 and a lone surrogate, with an astral title', async () => {
      const stores = createPostgresHandleStore({ connectionString: url, table: freshTable() });
      await stores.migrate();
      const harness = await startHarness({ stores });
      try {
        const created = await harness.request({ ...approveSurface, title: 'Approve 😀?' });
        await harness.sess.submitAnswer(created.humanUrl, {
          action: 'approve',
          values: { message: 'ok\u0000 \ud800 😀' },
        });
        // The answer as Sess recorded and signed it (the page sends UTF-8: a lone surrogate
        // arrives as U+FFFD); U+0000 is in it.
        const signed = harness.sess.sessions.byUrl(created.humanUrl)?.view.responses[0]?.answer;
        expect(signed?.values?.message).toContain('\u0000');
        for (let i = 0; i < 2; i++) {
          const answered = await harness.ok('sess_response', {
            handle: created.handle,
            revision: 1,
            wait_ms: 5_000,
          });
          expect(answered.state).toBe('answered');
          expect(answered.response).toMatchObject({ ...signed, verified: true });
        }
        const stored = await harness.record(created.handle);
        expect(stored?.record.state.kind).toBe('answered');
        expect(await harness.store().countUnfinished()).toBe(1);
      } finally {
        await harness.close();
        await stores.close();
      }
    });
  });
}
