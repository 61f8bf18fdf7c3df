/**
 * `@sess.si/mcp/store/postgres`: a {@link HandleStore} on PostgreSQL (node-postgres), so several
 * HTTP handler instances behind a load balancer share their handle records.
 *
 * One row per handle: the binding `scope`, a `version` column, an `unfinished` flag, the
 * `created_at` sort key, the `state_kind` and `list_group` a listing sorts and filters on, and the
 * record as ASCII JSON text (`postgres-encoding.ts`: any record is stored losslessly, U+0000 and
 * lone surrogates included). Compare-and-set is one
 * `UPDATE … WHERE handle AND scope AND version … RETURNING`. The cap of unfinished records is
 * exact: a create of an unfinished record takes a per-scope advisory transaction lock, then counts
 * and inserts in one statement under it.
 *
 * It deliberately does not create its table on its own (the host calls `migrate()` once,
 * `postgres-schema.ts`), retry failed statements (a transient failure is a retryable
 * `STATE_STORE_ERROR` for the caller, `postgres-errors.ts`), remove link and answer data (the
 * engine hands it records without them), or log anything. `pg` is loaded only here, and only when
 * the store makes its own pool.
 */
import { SessMcpError } from '../core/contract/errors.js';
import { readOptions } from '../core/contract/options.js';
import type { Binding, HandleStore, HandleStoreFactory, VersionedRecord } from '../core/contract/ports.js';
import { bindingScope, MAX_UNFINISHED } from '../core/contract/ports.js';
import type { ValueRule } from '../core/contract/rules.js';
import {
  type InteractionRecord,
  isUnfinished,
  type ListGroup,
  listGroupOf,
  READABLE_RECORD_FORMATS,
} from '../core/model/record.js';
import {
  checkRecordForScope,
  guardedView,
  handleExistsError,
  isStoreVersion,
  staleVersionError,
  storeError,
  storeFullError,
} from '../core/store-kit/kit.js';
import {
  decodeRecordRow,
  encodeRecordColumns,
  escapeToAscii,
  RECORD_TEXT_MARKER,
  RECORD_TEXT_MARKER_JSON,
  recordTextHead,
} from './postgres-encoding.js';
import { pgStoreError } from './postgres-errors.js';
import { fillListingColumns, migrationStatements } from './postgres-schema.js';

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
  /**
   * Send the statements of reads, updates, deletes and counts as named (prepared) statements, so
   * each connection parses and plans each of them once instead of at every call. Behind a
   * connection pooler in transaction mode that does not keep prepared statements (PgBouncer
   * before 1.21, or with `max_prepared_statements = 0`) a named statement can land on a server
   * connection that never parsed it: the store then sends that statement again unnamed, and
   * every statement after it (nothing ran the first time); pass `false` to skip that first
   * failure. With `pool`, the pool's `query` must also take a `{ name, text, values }` object,
   * as `pg`'s does.
   * @default true with `connectionString`, false with `pool`
   */
  preparedStatements?: boolean;
}

/** A PostgreSQL store backend. */
export interface PostgresHandleStore extends HandleStoreFactory {
  /** The qualified, quoted table name. */
  readonly table: string;
  /**
   * Create the schema, table and indexes when missing, or bring a table of an earlier version
   * (0.1.0) to this version in place, keeping its rows: it adds the columns and index `listPage`
   * reads and fills them from each row's record. Idempotent; safe to run from many instances at
   * once. Run it again after the last 0.1.0 instance on the table has stopped (rows such an
   * instance writes are listed by their state only once it has run).
   */
  migrate(): Promise<void>;
  /** End the pool the store made (a host's own pool is left open). */
  close(): Promise<void>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema and table names: lower-case SQL identifiers, so they can be quoted without escaping. */
const SQL_IDENTIFIER_RULE: ValueRule<string> = {
  text: 'a lower-case SQL identifier: 1 to 63 of a-z, 0-9 and _, not starting with a digit',
  test: (value): value is string => typeof value === 'string' && IDENTIFIER.test(value),
};

const FACTORY = 'createPostgresHandleStore';

/** How many rows' decoded versions one store remembers (the oldest are forgotten first). */
const MAX_NOTED_VERSIONS = 10_000;

/** The first parameter of the `UPDATE` that carries a text head ({@link FORMAT_CHECK}). */
const FIRST_HEAD_PARAMETER = 10;

/**
 * The `UPDATE`'s check, from a version this store has not decoded, that it overwrites a record of
 * a format this version reads under that handle, in either layout: in `record_text` behind a
 * marker naming its format (`$10`… the text's head for each format), or a 0.1.0 row's `jsonb`.
 */
const FORMAT_CHECK = `
               AND (
                 (record_text IS NOT NULL AND record->>'format' = '${RECORD_TEXT_MARKER.format}' AND (${READABLE_RECORD_FORMATS.map(
                   (format, i) =>
                     `(record->'record_format' = '${format}'::jsonb AND left(record_text, length($${FIRST_HEAD_PARAMETER + i})) = $${FIRST_HEAD_PARAMETER + i})`,
                 ).join(' OR ')}))
                 OR (record_text IS NULL AND jsonb_typeof(record) = 'object'
                     AND record->'format' IN (${READABLE_RECORD_FORMATS.map((format) => `'${format}'::jsonb`).join(', ')})
                     AND record->>'handle' = $1)
               )`;

/** The listing groups, first to last. */
const LIST_GROUPS: readonly ListGroup[] = [0, 1, 2];

function checkOptions(options: PostgresHandleStoreOptions): {
  schema: string;
  table: string;
  prepared: boolean;
} {
  const read = readOptions(FACTORY, options);
  const { pool } = options;
  const connectionString = read.optionalString('connectionString', options.connectionString);
  if ((pool === undefined) === (connectionString === undefined)) {
    read.fail('pool', 'or option "connectionString" must be given: exactly one of the two');
  }
  if (
    pool !== undefined &&
    (pool === null ||
      typeof pool !== 'object' ||
      typeof pool.query !== 'function' ||
      typeof pool.connect !== 'function')
  ) {
    read.fail('pool', 'must be a pg Pool (with query and connect)');
  }
  return {
    schema: read.optionalRule('schema', options.schema, SQL_IDENTIFIER_RULE) ?? 'public',
    table: read.optionalRule('table', options.table, SQL_IDENTIFIER_RULE) ?? 'sess_mcp_handles',
    prepared: read.boolean('preparedStatements', options.preparedStatements, pool === undefined),
  };
}

/**
 * The SQLSTATEs of a named statement a server connection does not have (26000) or has already
 * (42P05): what a pooler that hands a client's statements to other server connections causes.
 * Both fail before the statement runs.
 */
const LOST_STATEMENT: ReadonlySet<string> = new Set(['26000', '42P05']);

/** A statement the store sends as it is, or by name when statements are prepared. */
interface Statement {
  /** `sess_mcp_` and a hash of the text: the same text always has the same name. */
  readonly name: string;
  readonly text: string;
}

/** A pool or client whose `query` also takes a named statement (`pg`'s does). */
interface NamedQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<PgResultLike>;
}

/**
 * A named statement of `text`. Its name is a hash of the text (53 bits, cyrb53), so two stores
 * on one pool with other tables never give one name to two texts, which `pg` refuses.
 */
function statement(text: string): Statement {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hash = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return { name: `sess_mcp_${hash.toString(36)}`, text };
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
 * its handle is read, is left out of `listUnfinished` and `listPage`, and still counts against the
 * cap until the owner deletes it. Rows 0.1.0 wrote are read as they are (format 1) and written in
 * this version's layout, as format 2, at their next update. Pool errors are contained; the
 * store's own pool uses a 10 s connect and 20 s query timeout.
 *
 * @example
 * ```ts source="examples/snippets/stores.examples.ts#createPostgresHandleStore"
 * const stores = createPostgresHandleStore({ connectionString: process.env.DATABASE_URL ?? '' });
 * await stores.migrate();
 * const store = stores.forBinding(binding); // per request
 * ```
 */
export function createPostgresHandleStore(options: PostgresHandleStoreOptions): PostgresHandleStore {
  const checked = checkOptions(options);
  const { schema, table } = checked;
  /** Whether statements are sent by name; false for good once a connection lost one. */
  let prepared = checked.prepared;
  const qualified = `"${schema}"."${table}"`;
  let poolPromise: Promise<PoolLike> | undefined =
    options.pool !== undefined ? Promise.resolve(options.pool) : undefined;
  /** The pool once there is one, so a query need not wait on {@link poolPromise}. */
  let ready: PoolLike | undefined = options.pool;
  const ownsPool = options.pool === undefined;
  let closed = false;

  const pool = (): Promise<PoolLike> => {
    if (closed) return Promise.reject(storeError('The PostgreSQL store is closed.', false, 'closed'));
    poolPromise ??= makePool(options.connectionString!).then((made) => {
      ready = made;
      return made;
    });
    return poolPromise;
  };

  const failed = (error: unknown): never => {
    throw pgStoreError(error);
  };

  /**
   * Run `sent` on `on`: by name when statements are prepared and it has one. A named statement
   * the server connection does not have (26000) or already has under another client (42P05)
   * failed before it ran: it is sent again unnamed, and so is every statement after it.
   */
  const run = (on: PoolLike, sent: string | Statement, values: unknown[]): Promise<PgResultLike> => {
    if (typeof sent === 'string') return on.query(sent, values);
    if (!prepared) return on.query(sent.text, values);
    return (on as unknown as NamedQueryable)
      .query({ name: sent.name, text: sent.text, values })
      .then(undefined, (error: unknown) => {
        if (!LOST_STATEMENT.has(String((error as { code?: unknown } | null)?.code))) throw error;
        prepared = false;
        return on.query(sent.text, values);
      });
  };

  function query(sent: string | Statement, values: unknown[]): Promise<PgResultLike> {
    if (ready === undefined || closed)
      return pool()
        .then((made) => run(made, sent, values))
        .then(undefined, failed);
    try {
      return Promise.resolve(run(ready, sent, values)).then(undefined, failed);
    } catch (error) {
      return Promise.reject(pgStoreError(error));
    }
  }

  /** Run `work` in one transaction on one client. */
  async function transaction<T>(work: (client: PgClientLike) => Promise<T>): Promise<T> {
    let client: PgClientLike;
    try {
      client = await (await pool()).connect();
    } catch (error) {
      throw pgStoreError(error);
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
      throw pgStoreError(error);
    } finally {
      client.release(broken);
    }
  }

  /**
   * The version of each row this store decoded or wrote, by scope, then handle (at most
   * {@link MAX_NOTED_VERSIONS}; the rows noted first, of the scope noted first, are forgotten
   * first). Every write moves the version, so the row at a version noted here is a record of
   * this format: an update from it needs no format check in its `UPDATE`. Keyed by the scope
   * string a view keeps, so a look-up makes no key of its own.
   */
  const notedVersions = new Map<string, Map<string, number>>();
  let notedCount = 0;
  const notedVersion = (scope: string, handle: string) => notedVersions.get(scope)?.get(handle);
  /** Note the version of the row of `scope` under `handle`, or forget it (`undefined`). */
  function noteDecoded(scope: string, handle: string, version: number | undefined): void {
    let noted = notedVersions.get(scope);
    if (version === undefined) {
      if (noted?.delete(handle) !== true) return;
      notedCount -= 1;
      if (noted.size === 0) notedVersions.delete(scope);
      return;
    }
    if (noted === undefined) {
      noted = new Map();
      notedVersions.set(scope, noted);
    }
    const before = noted.size;
    noted.set(handle, version);
    if (noted.size === before) return;
    notedCount += 1;
    if (notedCount <= MAX_NOTED_VERSIONS) return;
    const [firstScope, first] = notedVersions.entries().next().value as [string, Map<string, number>];
    first.delete(first.keys().next().value as string);
    notedCount -= 1;
    if (first.size === 0) notedVersions.delete(firstScope);
  }

  /** Decode a row of `scope`; a row that is not exactly a record of that scope is corrupt. */
  function decodeRow(row: Record<string, unknown>, handle: string, scope: string): VersionedRecord {
    const decoded = decodeRecordRow(row, handle);
    if (bindingScope(decoded.record.binding) !== scope) {
      throw storeError('A stored record is filed under another binding than its own.', false, 'corrupt');
    }
    noteDecoded(scope, handle, decoded.version);
    return decoded;
  }

  const columns = `version, record, record_text`;
  // The statements an update runs, built once per store rather than once per update.
  const selectRow = statement(`SELECT ${columns} FROM ${qualified} WHERE handle = $1 AND scope = $2`);
  // Sent at every update, so without the layout's runs of blanks: fewer bytes to encode and send.
  const compact = (statement: string) => statement.replace(/\s+/g, ' ').trim();
  const updateSet = `UPDATE ${qualified}
             SET record = $3::jsonb, record_text = $4, version = version + 1, unfinished = $5, created_at = $7,
                 state_kind = $8, list_group = $9::smallint, written_at = now()
             WHERE handle = $1 AND scope = $2 AND version = $6`;
  const updateFromDecoded = statement(compact(`${updateSet} RETURNING version`));
  const updateChecked = statement(compact(`${updateSet}${FORMAT_CHECK} RETURNING version`));
  const insert = `INSERT INTO ${qualified} (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group)`;
  const insertFinished = statement(
    `${insert} VALUES ($1, $2, 1, $3, $4, $5::jsonb, $6, $7, $8::smallint) ON CONFLICT (handle) DO NOTHING`,
  );
  const deleteAny = statement(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2`);
  const deleteAt = statement(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2 AND version = $3`);
  const countUnfinished = statement(
    `SELECT count(*)::int AS n FROM ${qualified} WHERE scope = $1 AND unfinished`,
  );
  const selectUnfinished = statement(
    `SELECT handle, ${columns} FROM ${qualified} WHERE scope = $1 AND unfinished ORDER BY created_at COLLATE "C", handle COLLATE "C"`,
  );

  return {
    table: qualified,

    async migrate() {
      await transaction(async (client) => {
        // Two instances migrating at once must not trip over each other's statements.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `sess-mcp migrate ${qualified}`,
        ]);
        for (const statement of migrationStatements(schema, table, qualified)) await client.query(statement);
        await fillListingColumns(client, qualified);
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

      /**
       * The compare-and-set. It makes the guarded view's checks itself (`checkRecordForScope`,
       * before anything else), so a view's `update` is this function: one promise fewer per
       * update than through the view's wrapper.
       */
      async function update(given: InteractionRecord, expectedVersion: number): Promise<VersionedRecord> {
        const record = checkRecordForScope(given, scope);
        const row = encodeRecordColumns(record);
        if (!isStoreVersion(expectedVersion)) throw staleVersionError();
        // One statement. From a version this store decoded or wrote the row is known to be a
        // record of this format; from any other it only overwrites a row that reads as one, in
        // either layout. A miss is classified below and left as it is.
        const known = notedVersion(scope, record.handle) === expectedVersion;
        const values: unknown[] = [
          record.handle,
          scope,
          RECORD_TEXT_MARKER_JSON,
          row.text,
          isUnfinished(record),
          expectedVersion,
          // The listing order follows the record as written, as in every other store.
          row.createdAt,
          row.kind,
          row.group,
        ];
        if (!known) {
          for (const format of READABLE_RECORD_FORMATS) values.push(recordTextHead(record.handle, format));
        }
        const { rows } = await query(known ? updateFromDecoded : updateChecked, values);
        const updated = rows[0];
        if (updated !== undefined) {
          const version = Number(updated.version);
          noteDecoded(scope, record.handle, version);
          // The record checked and written is the caller's: nothing is parsed back.
          return { version, record };
        }
        noteDecoded(scope, record.handle, undefined);
        const current = await query(selectRow, [record.handle, scope]);
        const stored = current.rows[0];
        // A row at the expected version that was not updated is unreadable: say so.
        if (stored !== undefined && stored.version === expectedVersion)
          decodeRow(stored, record.handle, scope);
        throw staleVersionError();
      }

      const view = guardedView(scope, {
        update,

        async get(handle) {
          const { rows } = await query(selectRow, [handle, scope]);
          return rows[0] === undefined ? undefined : decodeRow(rows[0], handle, scope);
        },

        async create(record) {
          const row = encodeRecordColumns(record);
          const unfinished = isUnfinished(record);
          const values = [
            record.handle,
            scope,
            unfinished,
            row.createdAt,
            RECORD_TEXT_MARKER_JSON,
            row.text,
            row.kind,
            row.group,
          ];
          const inserted = unfinished
            ? await transaction(async (client) => {
                // Creates of one scope queue here; the count below then sees every earlier one.
                await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
                const { rowCount } = await client.query(
                  `${insert}
                   SELECT $1, $2, 1, $3, $4, $5::jsonb, $6, $7, $8::smallint
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
            : (await query(insertFinished, values)).rowCount === 1
              ? 'inserted'
              : 'exists';
          if (inserted === 'exists') throw handleExistsError();
          if (inserted === 'full') throw storeFullError();
          noteDecoded(scope, record.handle, 1);
          return { version: 1, record: row.copy };
        },

        async delete(handle, expectedVersion) {
          noteDecoded(scope, handle, undefined);
          const { rowCount } =
            expectedVersion === undefined
              ? await query(deleteAny, [handle, scope])
              : await query(deleteAt, [handle, scope, expectedVersion]);
          return rowCount === 1;
        },

        async listUnfinished() {
          const { rows } = await query(selectUnfinished, [scope]);
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
          const { rows } = await query(countUnfinished, [scope]);
          return Number(rows[0]?.n ?? 0);
        },

        async listPage(page) {
          // One query per listing group from where the page starts, each an index range of
          // (scope, list_group, created_at DESC, handle DESC), until one record more than the
          // page is found: that one only says whether more follow.
          const want = page.limit + 1;
          const found: VersionedRecord[] = [];
          const kinds = page.kinds;
          const groups = LIST_GROUPS.filter(
            (group) =>
              (page.after === undefined || group >= page.after.group) &&
              (kinds === undefined || kinds.some((kind) => listGroupOf(kind) === group)),
          );
          for (const group of groups) {
            let from =
              page.after?.group === group
                ? { createdAt: escapeToAscii(page.after.createdAt), handle: page.after.handle }
                : undefined;
            while (found.length < want) {
              const batch = want - found.length;
              const values: unknown[] = [scope, group];
              const kindFilter =
                kinds === undefined ? '' : ` AND state_kind = ANY($${values.push(kinds)}::text[])`;
              const keyset =
                from === undefined
                  ? ''
                  : ` AND (created_at COLLATE "C", handle COLLATE "C") < ($${values.push(from.createdAt)}, $${values.push(from.handle)})`;
              const { rows } = await query(
                `SELECT handle, created_at, ${columns} FROM ${qualified}
                 WHERE scope = $1 AND list_group = $2${kindFilter}${keyset}
                 ORDER BY created_at COLLATE "C" DESC, handle COLLATE "C" DESC LIMIT ${batch}`,
                values,
              );
              for (const row of rows) {
                let decoded: VersionedRecord;
                try {
                  decoded = decodeRow(row, String(row.handle), scope);
                } catch (error) {
                  // One unreadable row must not hide the others; reading its handle names it.
                  if (error instanceof SessMcpError && !error.retryable) continue;
                  throw error;
                }
                // A row a 0.1.0 instance changed after migrate() may name a kind it is no longer in.
                if (kinds === undefined || kinds.includes(decoded.record.state.kind)) found.push(decoded);
              }
              const last = rows[rows.length - 1];
              if (rows.length < batch || last === undefined) break;
              from = { createdAt: String(last.created_at), handle: String(last.handle) };
            }
            if (found.length >= want) break;
          }
          return { records: found.slice(0, page.limit), more: found.length > page.limit };
        },
      });
      return { ...view, update };
    },
  };
}
