/**
 * The table of the PostgreSQL store and how `migrate()` brings any earlier shape of it to this
 * version: a list of statements, each safe to run again, applied in order under one advisory lock.
 * A new table and a populated 0.1.0 table end the same; no row is rewritten (0.1.0 rows stay
 * readable and take the new layout at their next update, see `postgres-encoding.ts`).
 *
 * It deliberately removes nothing: a column an earlier version reads stays, so an instance of
 * that version meeting a migrated table fails closed on new rows instead of on every query.
 */

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
  ];
}
