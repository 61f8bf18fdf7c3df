/**
 * `createPostgresHandleStore`: a {@link HandleStore} on PostgreSQL (node-postgres), so several
 * HTTP handler instances behind a load balancer share their handle records.
 *
 * One row per handle: the binding `scope`, a `version` column, an `unfinished` flag, the
 * `created_at` sort key, the `state_kind` and `list_group` a listing sorts and filters on, and the
 * record as ASCII JSON text (`encoding.ts`: any record is stored losslessly, U+0000 and
 * lone surrogates included). Compare-and-set is one
 * `UPDATE … WHERE handle AND scope AND version … RETURNING`. The cap of unfinished records is
 * exact: a create of an unfinished record takes a per-scope advisory transaction lock, then counts
 * and inserts in one statement under it.
 *
 * It deliberately does not create its table on its own (the host calls `migrate()` once,
 * `schema.ts`), retry failed statements (a transient failure is a retryable
 * `STATE_STORE_ERROR` for the caller, `errors.ts`), remove link and answer data (the
 * engine hands it records without them), or log anything.
 *
 * This module reads the options and puts the store together: the connection and pool are
 * `pool.ts` (`pg` is loaded only there, and only when the store makes its own pool), the
 * SQL `statements.ts`, one binding's view `view.ts`, the cache of decoded
 * versions `versions.ts`, the watched rows of every scope `waiting.ts`, the table and `migrate()`
 * `schema.ts`, the readiness check `ready.ts`.
 */

import { optionNames, readOptions } from '../../core/contract/options.js';
import type { EventOutbox } from '../../core/contract/outbox.js';
import type {
  HandleStoreFactory,
  PruneQuery,
  PruneResult,
  StoreReadiness,
  WaitingPage,
  WaitingQuery,
} from '../../core/contract/ports.js';
import type { ValueRule } from '../../core/contract/rules.js';
import { createReadiness } from '../../core/store-kit/readiness.js';
import { checkPruneQuery } from '../../core/store-kit/retention.js';
import { checkWaitingQuery } from '../../core/store-kit/waiting-index.js';
import { outboxTablesOf, PostgresOutbox } from './outbox.js';
import { openConnection, type PoolLike } from './pool.js';
import { readinessCheck } from './ready.js';
import { keyTableOf, migrate } from './schema.js';
import { keyStatements, tableStatements } from './statements.js';
import { createNotedVersions } from './versions.js';
import { type PgStoreContext, postgresView } from './view.js';
import { waitingPage } from './waiting.js';

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
   * (0.1.0 and later) to this version in place, keeping its rows: it adds the columns and
   * indexes `listPage` reads and fills them from each row's record, and makes the key table
   * (`<table>_keys`) with the key `sess_list` cursors are signed with, shared by every instance.
   * On a table that exists the indexes are built with `CREATE INDEX CONCURRENTLY`, so writes go
   * on meanwhile (it waits for transactions open on the table to end). Idempotent; safe to run
   * from many instances at once. Instances of the previous version keep working on a migrated
   * table; run it again after the last of them has stopped (rows such an instance writes are
   * listed by their state, or checked one by one for their generation, until it has run).
   */
  migrate(): Promise<void>;
  /** The event outbox of the store (`<table>_events`, `<table>_deliveries`; `HandleStoreFactory.outbox`). */
  outbox(): EventOutbox;
  /**
   * The watched records of every scope, a page at a time (`HandleStoreFactory.waiting`): one
   * range of the partial index `<table>_watched`.
   */
  waiting(query: WaitingQuery): Promise<WaitingPage>;
  /**
   * Whether the store can serve (`HandleStoreFactory.ready`): one statement, within 1 s
   * (`timeout`), that reaches the database (`db_transient` when it cannot) and finds the table,
   * its columns, its key row and its indexes as this version's `migrate()` leaves them
   * (`not_migrated` otherwise); `closed` after `close()`. It reads no record.
   */
  ready(): Promise<StoreReadiness>;
  /**
   * Remove finished rows that finished before `olderThan` (`HandleStoreFactory.prune`): one
   * statement over a range of the partial index `<table>_finished`, oldest first, that skips rows
   * other transactions hold (`FOR UPDATE SKIP LOCKED`) and locks only the rows it removes, with
   * their events and deliveries. A row an earlier version wrote has no finish time until
   * `migrate()` fills it, and is kept until then.
   */
  prune(query: PruneQuery): Promise<PruneResult>;
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

/** The option names of {@link PostgresHandleStoreOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<PostgresHandleStoreOptions>()(
  'pool',
  'connectionString',
  'schema',
  'table',
  'preparedStatements',
);

function checkOptions(options: PostgresHandleStoreOptions): {
  schema: string;
  table: string;
  prepared: boolean;
} {
  const read = readOptions(FACTORY, options, { known: KNOWN_OPTIONS });
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
  const { schema, table, prepared } = checkOptions(options);
  const qualified = `"${schema}"."${table}"`;
  const connection = openConnection(
    { pool: options.pool, connectionString: options.connectionString },
    prepared,
  );
  const outbox = new PostgresOutbox(connection, schema, table);
  const context: PgStoreContext = {
    connection,
    statements: tableStatements(qualified, outboxTablesOf(schema, table)),
    keyStatements: keyStatements(keyTableOf(schema, table)),
    versions: createNotedVersions(),
    qualified,
  };
  return {
    table: qualified,
    migrate: () => migrate(connection, schema, table, qualified),
    close: () => connection.close(),
    forBinding: (binding) => postgresView(context, binding),
    outbox: () => outbox,
    waiting: async (query) => waitingPage(context, checkWaitingQuery(query)),
    ready: createReadiness(readinessCheck(connection, schema, table)),
    async prune(query) {
      const { olderThan, limit } = checkPruneQuery(query);
      const { rows } = await connection.query(context.statements.prune, [olderThan, limit]);
      const removed = Number(rows[0]?.n ?? 0);
      // A batch that came back full may have left more behind.
      return { removed, more: removed === limit };
    },
  };
}
