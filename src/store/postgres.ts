/**
 * `@sess.si/mcp/store/postgres`: a {@link HandleStore} on PostgreSQL (node-postgres), so several
 * HTTP handler instances behind a load balancer share their handle records.
 *
 * One row per handle: the binding `scope`, a `version` column, an `unfinished` flag and the record
 * as `jsonb`. Compare-and-set is one `UPDATE … WHERE handle AND scope AND version … RETURNING`.
 * The cap of unfinished records is exact: a create of an unfinished record takes a per-scope
 * advisory transaction lock, then counts and inserts in one statement under it.
 *
 * It deliberately does not create its table on its own (the host calls `migrate()` once), retry
 * failed statements (a transient failure is a retryable `STATE_STORE_ERROR` for the caller),
 * remove link and answer data (the engine hands it records without them), or log anything.
 * `pg` is loaded only here, and only when the store makes its own pool.
 */
import { SessMcpError } from '../core/errors.js';
import {
  checkRecordForScope,
  type HandleStoreFactory,
  handleExistsError,
  isStoreHandle,
  staleVersionError,
  storeError,
  storeFullError,
} from '../core/memory-store.js';
import {
  type Binding,
  bindingScope,
  type HandleStore,
  MAX_UNFINISHED,
  type VersionedRecord,
} from '../core/ports.js';
import { type InteractionRecord, isUnfinished, RECORD_FORMAT } from '../core/record.js';
import { decodeRecord, encodeRecord } from './record-codec.js';

/** The result of a query, as far as the store reads it. */
export interface PgResultLike {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** Something that runs a parameterised query (a `pg` `Pool` or `PoolClient`). */
export interface PgQueryableLike {
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
}

/** A client checked out of a pool (`pg` `PoolClient` fits). */
export interface PgClientLike extends PgQueryableLike {
  release(error?: Error | boolean): void;
}

/** A connection pool (`pg` `Pool` fits). */
export interface PoolLike extends PgQueryableLike {
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

/** Options of {@link createPostgresHandleStore}: exactly one of `pool` and `connectionString`. */
export interface PostgresHandleStoreOptions {
  /** A pool the host owns; `close()` leaves it open. */
  pool?: PoolLike;
  /** A connection string; the store makes (and `close()` ends) its own pool. */
  connectionString?: string;
  /**
   * The schema of the table: a lower-case SQL identifier.
   * @default 'public'
   */
  schema?: string;
  /**
   * The table name: a lower-case SQL identifier.
   * @default 'sess_mcp_handles'
   */
  table?: string;
}

/** A PostgreSQL store backend. */
export interface PostgresHandleStore extends HandleStoreFactory {
  /** The qualified, quoted table name. */
  readonly table: string;
  /** Create the schema, table and index when missing. Idempotent; safe to run from many instances. */
  migrate(): Promise<void>;
  /** End the pool the store made (a host's own pool is left open). */
  close(): Promise<void>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** SQLSTATE classes that a later retry may get past: connection, resources, conflicts, shutdown. */
const TRANSIENT_SQLSTATE = /^(08|40|53|55P03|57P|58|XX)/;

function pgErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A database failure as a `STATE_STORE_ERROR`. Connection failures and transient server states
 * are retryable; a missing table (run `migrate()`), a refused login or a bad statement are not.
 * The message names the SQLSTATE or errno only: server messages can quote values.
 */
function dbError(error: unknown): SessMcpError {
  if (error instanceof SessMcpError) return error;
  const code = pgErrorCode(error);
  if (code === '42P01' || code === '3F000') {
    return storeError(
      'The handle table does not exist: call migrate() once before using the store.',
      false,
      'not_migrated',
    );
  }
  // Five-character codes are SQLSTATEs from the server; anything else (ECONNREFUSED, a pool
  // timeout, a dropped connection) failed on the way to it.
  const sqlstate = code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  const retryable = sqlstate === undefined || TRANSIENT_SQLSTATE.test(sqlstate);
  return storeError(
    `The state store (PostgreSQL) failed (${code ?? 'no connection'}).${retryable ? ' Try again later.' : ' The owner must fix the database.'}`,
    retryable,
    retryable ? 'db_transient' : 'db_permanent',
  );
}

function checkOptions(options: PostgresHandleStoreOptions): { schema: string; table: string } {
  if (options === null || typeof options !== 'object') throw new TypeError('options must be an object');
  const { pool, connectionString, schema = 'public', table = 'sess_mcp_handles' } = options;
  if ((pool === undefined) === (connectionString === undefined)) {
    throw new TypeError('options must have exactly one of options.pool and options.connectionString');
  }
  if (pool !== undefined && (typeof pool.query !== 'function' || typeof pool.connect !== 'function')) {
    throw new TypeError('options.pool must be a pg Pool (query and connect)');
  }
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString === '')) {
    throw new TypeError('options.connectionString must be a non-empty string');
  }
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new TypeError('options.schema must be a lower-case SQL identifier (a-z, 0-9, _)');
  }
  if (typeof table !== 'string' || !IDENTIFIER.test(table)) {
    throw new TypeError('options.table must be a lower-case SQL identifier (a-z, 0-9, _)');
  }
  return { schema, table };
}

async function makePool(connectionString: string): Promise<PoolLike> {
  let pg: { Pool: new (config: Record<string, unknown>) => PoolLike };
  try {
    const loaded = (await import('pg')) as unknown as { default?: typeof pg } & typeof pg;
    pg = loaded.default ?? loaded;
  } catch (cause) {
    throw storeError(
      'The PostgreSQL store needs the `pg` package: npm install pg.',
      false,
      'pg_missing',
      cause,
    );
  }
  // Bounded waits: a tool call must not hang on an unreachable or stuck database.
  const pool = new pg.Pool({
    connectionString,
    connectionTimeoutMillis: 10_000,
    query_timeout: 20_000,
    max: 10,
  });
  // An idle client's connection dropping must not crash the host; the next query reports it.
  (pool as unknown as { on?: (event: string, listener: () => void) => void }).on?.('error', () => {});
  return pool;
}

/**
 * Create a PostgreSQL store backend. Bad options throw a `TypeError` naming the option. Call
 * `migrate()` once (at deploy or start-up) before the first operation.
 *
 * The cap is checked when an unfinished record is created (an update never refuses for it: the
 * engine never turns a finished record unfinished). A row that does not decode is reported when
 * its handle is read, is left out of `listUnfinished`, and still counts against the cap until the
 * owner deletes it. Pool errors are contained; the store's own pool uses a 10 s connect and 20 s
 * query timeout.
 *
 * @example
 * ```ts
 * const stores = createPostgresHandleStore({ connectionString: process.env.DATABASE_URL });
 * await stores.migrate();
 * const store = stores.forBinding(binding); // per request
 * ```
 */
export function createPostgresHandleStore(options: PostgresHandleStoreOptions): PostgresHandleStore {
  const { schema, table } = checkOptions(options);
  const qualified = `"${schema}"."${table}"`;
  let poolPromise: Promise<PoolLike> | undefined =
    options.pool !== undefined ? Promise.resolve(options.pool) : undefined;
  const ownsPool = options.pool === undefined;
  let closed = false;

  const pool = (): Promise<PoolLike> => {
    if (closed) return Promise.reject(storeError('The PostgreSQL store is closed.', false, 'closed'));
    poolPromise ??= makePool(options.connectionString!);
    return poolPromise;
  };

  async function query(text: string, values: unknown[]): Promise<PgResultLike> {
    try {
      return await (await pool()).query(text, values);
    } catch (error) {
      throw dbError(error);
    }
  }

  /** Run `work` in one transaction on one client. */
  async function transaction<T>(work: (client: PgClientLike) => Promise<T>): Promise<T> {
    let client: PgClientLike;
    try {
      client = await (await pool()).connect();
    } catch (error) {
      throw dbError(error);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError instanceof Error ? rollbackError : new Error('rollback failed');
      }
      throw dbError(error);
    } finally {
      client.release(broken);
    }
  }

  /** Decode a row of `scope`; a row that is not exactly a record of that scope is corrupt. */
  function decodeRow(row: Record<string, unknown>, handle: string, scope: string): VersionedRecord {
    const version = row.version;
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
      throw storeError('A stored record has an invalid version. The owner must review it.', false, 'corrupt');
    }
    const record = decodeRecord(row.record, handle);
    if (bindingScope(record.binding) !== scope) {
      throw storeError('A stored record is filed under another binding than its own.', false, 'corrupt');
    }
    return { version, record };
  }

  return {
    table: qualified,

    async migrate() {
      await transaction(async (client) => {
        // Two instances migrating at once must not trip over each other's CREATE.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `sess-mcp migrate ${qualified}`,
        ]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${qualified} (
            handle text PRIMARY KEY,
            scope text NOT NULL,
            version integer NOT NULL CHECK (version >= 1),
            unfinished boolean NOT NULL,
            created_at text NOT NULL,
            record jsonb NOT NULL,
            written_at timestamptz NOT NULL DEFAULT now()
          )`,
        );
        await client.query(
          `CREATE INDEX IF NOT EXISTS "${table}_unfinished" ON ${qualified} (scope, created_at COLLATE "C", handle COLLATE "C") WHERE unfinished`,
        );
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      if (ownsPool && poolPromise !== undefined) {
        const owned = await poolPromise.catch(() => undefined);
        await owned?.end();
      }
    },

    forBinding(binding: Binding): HandleStore {
      const scope = bindingScope(binding);
      const lockKey = `sess-mcp cap ${qualified} ${scope}`;

      return {
        async get(handle) {
          if (!isStoreHandle(handle)) return undefined;
          const { rows } = await query(
            `SELECT version, record FROM ${qualified} WHERE handle = $1 AND scope = $2`,
            [handle, scope],
          );
          return rows[0] === undefined ? undefined : decodeRow(rows[0], handle, scope);
        },

        async create(record) {
          checkRecordForScope(record, scope);
          const json = encodeRecord(record);
          const unfinished = isUnfinished(record);
          const values = [record.handle, scope, unfinished, record.createdAt, json];
          const inserted = unfinished
            ? await transaction(async (client) => {
                // Creates of one scope queue here; the count below then sees every earlier one.
                await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
                const { rowCount } = await client.query(
                  `INSERT INTO ${qualified} (handle, scope, version, unfinished, created_at, record)
                   SELECT $1, $2, 1, $3, $4, $5::jsonb
                   WHERE (SELECT count(*) FROM ${qualified} WHERE scope = $2 AND unfinished) < ${MAX_UNFINISHED}
                   ON CONFLICT (handle) DO NOTHING`,
                  values,
                );
                if (rowCount === 1) return 'inserted';
                const { rows } = await client.query(`SELECT 1 FROM ${qualified} WHERE handle = $1`, [
                  record.handle,
                ]);
                return rows.length > 0 ? 'exists' : 'full';
              })
            : (
                  await query(
                    `INSERT INTO ${qualified} (handle, scope, version, unfinished, created_at, record)
                     VALUES ($1, $2, 1, $3, $4, $5::jsonb) ON CONFLICT (handle) DO NOTHING`,
                    values,
                  )
                ).rowCount === 1
              ? 'inserted'
              : 'exists';
          if (inserted === 'exists') throw handleExistsError();
          if (inserted === 'full') throw storeFullError();
          return { version: 1, record: JSON.parse(json) as InteractionRecord };
        },

        async update(record, expectedVersion) {
          checkRecordForScope(record, scope);
          const json = encodeRecord(record);
          if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1) throw staleVersionError();
          // The compare-and-set: one statement. It only overwrites a row that reads as a record
          // of this format; anything else is classified below and left as it is.
          const { rows } = await query(
            `UPDATE ${qualified} SET record = $3::jsonb, version = version + 1, unfinished = $4, written_at = now()
             WHERE handle = $1 AND scope = $2 AND version = $5
               AND jsonb_typeof(record) = 'object' AND record->'format' = to_jsonb($6::int) AND record->>'handle' = $1
             RETURNING version`,
            [record.handle, scope, json, isUnfinished(record), expectedVersion, RECORD_FORMAT],
          );
          const updated = rows[0];
          if (updated !== undefined)
            return { version: Number(updated.version), record: JSON.parse(json) as InteractionRecord };
          const current = await query(
            `SELECT version, record FROM ${qualified} WHERE handle = $1 AND scope = $2`,
            [record.handle, scope],
          );
          const row = current.rows[0];
          // A row at the expected version that was not updated is unreadable: say so.
          if (row !== undefined && row.version === expectedVersion) decodeRow(row, record.handle, scope);
          throw staleVersionError();
        },

        async delete(handle, expectedVersion) {
          if (!isStoreHandle(handle)) return false;
          if (expectedVersion !== undefined && !Number.isSafeInteger(expectedVersion)) return false;
          const { rowCount } =
            expectedVersion === undefined
              ? await query(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2`, [handle, scope])
              : await query(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2 AND version = $3`, [
                  handle,
                  scope,
                  expectedVersion,
                ]);
          return rowCount === 1;
        },

        async listUnfinished() {
          const { rows } = await query(
            `SELECT handle, version, record FROM ${qualified} WHERE scope = $1 AND unfinished
             ORDER BY created_at COLLATE "C", handle COLLATE "C"`,
            [scope],
          );
          const out: VersionedRecord[] = [];
          for (const row of rows) {
            try {
              out.push(decodeRow(row, String(row.handle), scope));
            } catch (error) {
              // One unreadable row must not hide the others; reading its handle names it.
              if (error instanceof SessMcpError && !error.retryable) continue;
              throw error;
            }
          }
          return out;
        },

        async countUnfinished() {
          const { rows } = await query(
            `SELECT count(*)::int AS n FROM ${qualified} WHERE scope = $1 AND unfinished`,
            [scope],
          );
          return Number(rows[0]?.n ?? 0);
        },
      };
    },
  };
}
