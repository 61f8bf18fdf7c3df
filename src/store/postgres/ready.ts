/**
 * The PostgreSQL store's readiness (`HandleStoreFactory.ready`): one statement that reaches the
 * database and proves the layout is this version's: it names every column of the records table
 * ({@link CURRENT_COLUMNS}; a missing one fails as `not_migrated`, as any statement of the store
 * would), the outbox tables, the cursor key row and the indexes `migrate()` builds (valid ones
 * only: an interrupted concurrent build is not current).
 *
 * It reads no row (`LIMIT 0`, a count of the key row) and changes nothing; the 1 s bound and the
 * one check in flight are `core/store-kit/readiness.ts`'s.
 */
import { storeError } from '../../core/store-kit/kit.js';
import { outboxTablesOf } from './outbox.js';
import type { PgConnection } from './pool.js';
import { CURRENT_COLUMNS, indexNamesOf, keyTableOf } from './schema.js';
import { keyStatements } from './statements.js';

/** The readiness statement of `table` in `schema`: `$1` the schema, `$2` the index names. */
export function readinessStatement(schema: string, table: string): string {
  const qualified = `"${schema}"."${table}"`;
  const { events, deliveries } = outboxTablesOf(schema, table);
  const cursorKey = keyStatements(keyTableOf(schema, table)).selectCursorKey.text;
  return `SELECT
      (SELECT count(*) FROM (SELECT ${CURRENT_COLUMNS.join(', ')} FROM ${qualified} LIMIT 0) AS r)::int AS records,
      (SELECT count(*) FROM (SELECT 1 FROM ${events} LIMIT 0) AS e)::int AS events,
      (SELECT count(*) FROM (SELECT 1 FROM ${deliveries} LIMIT 0) AS d)::int AS deliveries,
      (SELECT count(*) FROM (${cursorKey}) AS k)::int AS cursor_keys,
      (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND i.indisvalid)::int AS indexes`;
}

/**
 * The check `createReadiness` runs: resolves when the database answered and the layout is
 * current, throws the store's `STATE_STORE_ERROR` otherwise (`db_transient` when it cannot be
 * reached, `not_migrated` when `migrate()` has not run to its end, `closed` after `close()`).
 */
export function readinessCheck(connection: PgConnection, schema: string, table: string): () => Promise<void> {
  const text = readinessStatement(schema, table);
  const indexes = indexNamesOf(table);
  return async () => {
    const { rows } = await connection.query(text, [schema, indexes]);
    const row = rows[0];
    if (row?.cursor_keys !== 1 || row.indexes !== indexes.length) {
      throw storeError(
        'The handle table is older than this version (a key row or an index is missing): call migrate() once.',
        false,
        'not_migrated',
      );
    }
  };
}
