/**
 * The table of the PostgreSQL store and how `migrate()` brings any earlier shape of it to this
 * version: a list of statements, each safe to run again, applied in order under one advisory lock,
 * then one pass that fills the listing columns of rows whose record is in `record_text` (only
 * this package's decoder reads that text: it may hold escapes `jsonb` refuses). A new table and a
 * populated 0.1.0 table end the same; no record is rewritten (0.1.0 rows stay readable and take
 * the new layout at their next update, see `encoding.ts`).
 *
 * It deliberately removes nothing: a column an earlier version reads stays, so an instance of
 * that version meeting a migrated table fails closed on new rows instead of on every query.
 */
import { INTERACTION_STATE_KINDS, listGroupOf } from '../../../src/core/model/record.js';
import { decodeRecordRow } from '../../../src/store/postgres/encoding.js';
import type { PgConnection, PgQueryableLike } from '../../../src/store/postgres/pool.js';

/** How many rows one step of the fill pass reads. */
const FILL_BATCH = 500;

/** `record->'state'->>'kind'` mapped to its listing group, for rows in the 0.1.0 layout. */
const GROUP_OF_JSONB_KIND = `CASE record->'state'->>'kind' ${INTERACTION_STATE_KINDS.map(
  (kind) => `WHEN '${kind}' THEN ${listGroupOf(kind)}`,
).join(' ')} END`;

const KNOWN_KINDS = INTERACTION_STATE_KINDS.map((kind) => `'${kind}'`).join(', ');

/** The statements `migrate()` runs, in order, for the table `qualified` in schema `schema`. */
export function migrationStatements(schema: string, table: string, qualified: string): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS "${schema}"`,
    // The 0.1.0 table, as 0.1.0 created it.
    `CREATE TABLE IF NOT EXISTS ${qualified} (
      handle text PRIMARY KEY,
      scope text NOT NULL,
      version integer NOT NULL CHECK (version >= 1),
      unfinished boolean NOT NULL,
      created_at text NOT NULL,
      record jsonb NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now()
    )`,
    // Added after 0.1.0: the record as ASCII JSON text (`record` then holds a marker).
    `ALTER TABLE ${qualified} ADD COLUMN IF NOT EXISTS record_text text`,
    `CREATE INDEX IF NOT EXISTS "${table}_unfinished" ON ${qualified} (scope, created_at COLLATE "C", handle COLLATE "C") WHERE unfinished`,
    // Added with record format 2: what `listPage` sorts and filters on.
    `ALTER TABLE ${qualified} ADD COLUMN IF NOT EXISTS state_kind text`,
    `ALTER TABLE ${qualified} ADD COLUMN IF NOT EXISTS list_group smallint`,
    // Rows in the 0.1.0 layout: the kind is in the `jsonb` record. Also corrects a row a 0.1.0
    // instance changed after an earlier migrate() (it does not know these columns).
    `UPDATE ${qualified}
     SET state_kind = record->'state'->>'kind', list_group = ${GROUP_OF_JSONB_KIND}
     WHERE record_text IS NULL AND jsonb_typeof(record) = 'object'
       AND jsonb_typeof(record->'state') = 'object' AND record->'state'->>'kind' IN (${KNOWN_KINDS})
       AND state_kind IS DISTINCT FROM record->'state'->>'kind'`,
    `CREATE INDEX IF NOT EXISTS "${table}_listing" ON ${qualified} (scope, list_group, created_at COLLATE "C" DESC, handle COLLATE "C" DESC)`,
  ];
}

/**
 * Fill `state_kind` and `list_group` of rows in the `record_text` layout that have none (written
 * before these columns existed), from the decoded record, a batch at a time. A row that does not
 * decode keeps none: it is not listed (reading its handle names the problem). Runs in the
 * migration's transaction, under its lock.
 */
export async function fillListingColumns(client: PgQueryableLike, qualified: string): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await client.query(
      `SELECT handle, version, record, record_text FROM ${qualified}
       WHERE record_text IS NOT NULL AND state_kind IS NULL AND handle > $1
       ORDER BY handle LIMIT ${FILL_BATCH}`,
      [after],
    );
    const handles: string[] = [];
    const versions: number[] = [];
    const kinds: string[] = [];
    const groups: number[] = [];
    for (const row of rows) {
      const handle = String(row.handle);
      try {
        const { version, record } = decodeRecordRow(row, handle);
        handles.push(handle);
        versions.push(version);
        kinds.push(record.state.kind);
        groups.push(listGroupOf(record.state.kind));
      } catch {
        // Unreadable: left without listing columns, and not listed.
      }
    }
    if (handles.length > 0) {
      await client.query(
        `UPDATE ${qualified} AS t SET state_kind = u.kind, list_group = u.grp
         FROM unnest($1::text[], $2::int[], $3::text[], $4::smallint[]) AS u(handle, version, kind, grp)
         WHERE t.handle = u.handle AND t.version = u.version AND t.state_kind IS NULL`,
        [handles, versions, kinds, groups],
      );
    }
    if (rows.length < FILL_BATCH) return;
    after = String(rows[rows.length - 1]?.handle);
  }
}

/**
 * `migrate()`: the statements in order, then the fill pass, in one transaction under an advisory
 * lock, so two instances migrating at once do not trip over each other's statements.
 */
export function migrate(
  connection: PgConnection,
  schema: string,
  table: string,
  qualified: string,
): Promise<void> {
  return connection.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `sess-mcp migrate ${qualified}`,
    ]);
    for (const statement of migrationStatements(schema, table, qualified)) await client.query(statement);
    await fillListingColumns(client, qualified);
  });
}
