/**
 * The table of the PostgreSQL store and how `migrate()` brings any earlier shape of it to this
 * version, in three steps under one session advisory lock (so two instances migrating at once do
 * not trip over each other):
 *
 * 1. one transaction: the statements of {@link migrationStatements}, each safe to run again
 *    (the columns they add are nullable without a default, so adding one changes the catalogue
 *    only; its lock is waited for at most {@link DDL_LOCK_TIMEOUT}, else `migrate()` fails
 *    retryably), the fill of the listing columns of rows whose record is in `record_text` (only this
 *    package's decoder reads that text: it may hold escapes `jsonb` refuses), and the key table
 *    with its `sess_list` cursor key row, made once (`ON CONFLICT DO NOTHING`); the indexes too
 *    when the table is new (an empty table's index is built at once);
 * 2. on a table that existed, each index missing (or left invalid by an interrupted build) is
 *    built with `CREATE INDEX CONCURRENTLY`, outside a transaction, so writes go on meanwhile;
 * 3. the `generation` of rows that have none (written before the column existed, or by an
 *    earlier version since), filled a batch at a time, each batch its own short statement; the
 *    same for the `principal` of open HTTP rows and the `finished_ms` of finished rows.
 *
 * A new table and a populated earlier table end the same; no record is rewritten (0.1.0 rows stay
 * readable and take the new layout at their next update, see `encoding.ts`).
 *
 * It deliberately removes nothing: a column or index an earlier version reads stays, so an
 * instance of that version keeps working on a migrated table (0.1.0 fails closed on new rows).
 */
import { base64UrlEncode } from '../../core/codec/base64url.js';
import { bindingGeneration, LIST_CURSOR_KEY_BYTES } from '../../core/contract/ports.js';
import { finishedAtOf, INTERACTION_STATE_KINDS, listGroupOf } from '../../core/model/record.js';
import { principalOfScope } from '../../core/store-kit/kit.js';
import { decodeRecordRow, escapeToAscii } from './encoding.js';
import { outboxMigrationStatements, outboxTablesOf } from './outbox.js';
import type { PgClientLike, PgConnection, PgQueryableLike } from './pool.js';
import { eventHandleOf, FINISHED_ROWS, keyStatements, WATCHED_ROWS } from './statements.js';

/** The longest `migrate()` waits for the lock its `ALTER TABLE`s take (writes wait behind it). */
const DDL_LOCK_TIMEOUT = '5s';

/** How many rows one step of the fill pass reads. */
const FILL_BATCH = 500;

/** `record->'state'->>'kind'` mapped to its listing group, for rows in the 0.1.0 layout. */
const GROUP_OF_JSONB_KIND = `CASE record->'state'->>'kind' ${INTERACTION_STATE_KINDS.map(
  (kind) => `WHEN '${kind}' THEN ${listGroupOf(kind)}`,
).join(' ')} END`;

const KNOWN_KINDS = INTERACTION_STATE_KINDS.map((kind) => `'${kind}'`).join(', ');

/** The statements `migrate()` runs, in order, for the table `qualified` in schema `schema`. */
export function migrationStatements(schema: string, qualified: string): string[] {
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
    // Added to bound a listing by its generation (`sess_list` asks for the caller's only).
    `ALTER TABLE ${qualified} ADD COLUMN IF NOT EXISTS generation text`,
    // Added with the per-principal quota: the principal of an HTTP record (the open records of
    // each principal have an index, below). Rows written before it get theirs in `fillPrincipals`.
    `ALTER TABLE ${qualified} ADD COLUMN IF NOT EXISTS principal text`,
    // Added with retention: when a finished record finished (`finishedAtOf`, ms). Rows written
    // before it get theirs in `fillFinishTimes`.
    `ALTER TABLE ${qualified} ADD COLUMN IF NOT EXISTS finished_ms bigint`,
  ];
}

/**
 * The indexes: name suffix, the table they are on (the records table unless `on` names an outbox
 * table) and definition (what follows `ON table`).
 */
const INDEXES: readonly { suffix: string; on?: 'events' | 'deliveries'; definition: string }[] = [
  {
    suffix: 'unfinished',
    definition: `(scope, created_at COLLATE "C", handle COLLATE "C") WHERE unfinished`,
  },
  // The listing of earlier versions (one range per listing group); they still read it.
  {
    suffix: 'listing',
    definition: `(scope, list_group, created_at COLLATE "C" DESC, handle COLLATE "C" DESC)`,
  },
  // One range per generation and state kind: a listing reads only what it lists.
  {
    suffix: 'generation_listing',
    definition: `(scope, generation, state_kind, created_at COLLATE "C" DESC, handle COLLATE "C" DESC)`,
  },
  // The open records of each principal: what a per-principal quota counts.
  { suffix: 'open_principal', definition: '(principal) WHERE unfinished' },
  // The records a watcher polls, over every scope, in handle order (`waiting()`).
  { suffix: 'watched', definition: `(handle COLLATE "C") WHERE ${WATCHED_ROWS}` },
  // The finished records by finish time: what retention removes, oldest first (`prune()`).
  { suffix: 'finished', definition: `(finished_ms, handle) WHERE ${FINISHED_ROWS}` },
  // Each handle's events and deliveries: what retention checks and removes with a record.
  { suffix: 'events_handle', on: 'events', definition: `((${eventHandleOf('event_id')}))` },
  { suffix: 'deliveries_handle', on: 'deliveries', definition: `((${eventHandleOf('event_id')}))` },
];

/**
 * The columns of the records table this version reads and writes: what {@link migrationStatements}
 * leaves (the readiness check names them all, so a table older than this version is
 * `not_migrated`).
 */
export const CURRENT_COLUMNS: readonly string[] = [
  'handle',
  'scope',
  'version',
  'unfinished',
  'created_at',
  'record',
  'record_text',
  'state_kind',
  'list_group',
  'generation',
  'principal',
  'finished_ms',
];

/** The names of the indexes `migrate()` builds for the records table `table` (and its outbox tables). */
export function indexNamesOf(table: string): string[] {
  return INDEXES.map(({ suffix }) => `${table}_${suffix}`);
}

/** The quoted table an index of {@link INDEXES} is on. */
function indexedTable(
  schema: string,
  table: string,
  qualified: string,
  on: 'events' | 'deliveries' | undefined,
) {
  return on === undefined ? qualified : outboxTablesOf(schema, table)[on];
}

/** The key table of the table `table` in `schema` (quoted): secrets the store's instances share. */
export function keyTableOf(schema: string, table: string): string {
  return `"${schema}"."${table}_keys"`;
}

/** The statement that makes the key table. */
function keyTableStatement(keys: string): string {
  return `CREATE TABLE IF NOT EXISTS ${keys} (
      name text PRIMARY KEY,
      key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`;
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
 * Fill `principal` of unfinished HTTP rows that have none (written before the column existed, or
 * by an earlier version since), from the scope they are filed under, a batch at a time: a
 * scope is the JSON array `["http", origin, workspace, principal, client, grant]`, and the
 * principal is its first four members ({@link principalOfScope}). Only unfinished rows count
 * toward a quota, so only they are filled. Runs in the migration's transaction, under its lock.
 */
export async function fillPrincipals(client: PgQueryableLike, qualified: string): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await client.query(
      `SELECT handle, scope FROM ${qualified}
       WHERE principal IS NULL AND unfinished AND left(scope, 8) = '["http",' AND handle > $1
       ORDER BY handle LIMIT ${FILL_BATCH}`,
      [after],
    );
    const handles: string[] = [];
    const principals: string[] = [];
    for (const row of rows) {
      const principal = principalOfScope(String(row.scope));
      if (principal === undefined) continue;
      handles.push(String(row.handle));
      principals.push(principal);
    }
    if (handles.length > 0) {
      await client.query(
        `UPDATE ${qualified} AS t SET principal = u.principal
         FROM unnest($1::text[], $2::text[]) AS u(handle, principal)
         WHERE t.handle = u.handle AND t.principal IS NULL`,
        [handles, principals],
      );
    }
    if (rows.length < FILL_BATCH) return;
    after = String(rows[rows.length - 1]?.handle);
  }
}

/**
 * Build each index of {@link INDEXES} that is missing or invalid (an interrupted concurrent build
 * leaves an invalid one behind, which `IF NOT EXISTS` would keep) without blocking writes.
 */
async function buildIndexesConcurrently(
  client: PgQueryableLike,
  schema: string,
  table: string,
  qualified: string,
): Promise<void> {
  for (const { suffix, on, definition } of INDEXES) {
    const name = `${table}_${suffix}`;
    const target = indexedTable(schema, table, qualified, on);
    const { rows } = await client.query(
      `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, name],
    );
    if (rows[0]?.indisvalid === true) continue;
    if (rows[0] !== undefined) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS "${schema}"."${name}"`);
    await client.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "${name}" ON ${target} ${definition}`);
  }
}

/**
 * Fill `generation` of rows that have none, from the decoded record, a batch at a time, each
 * batch its own statement (no lock is held across batches). A row changed meanwhile (its version
 * moved) or that does not decode keeps none: the listing returns such a row for the engine to
 * check, and the next `migrate()` tries it again.
 */
async function fillGenerations(client: PgQueryableLike, qualified: string): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await client.query(
      `SELECT handle, version, record, record_text FROM ${qualified}
       WHERE generation IS NULL AND handle > $1 ORDER BY handle LIMIT ${FILL_BATCH}`,
      [after],
    );
    const handles: string[] = [];
    const versions: number[] = [];
    const generations: string[] = [];
    for (const row of rows) {
      const handle = String(row.handle);
      try {
        const { version, record } = decodeRecordRow(row, handle);
        const generation = escapeToAscii(bindingGeneration(record.binding));
        handles.push(handle);
        versions.push(version);
        generations.push(generation);
      } catch {
        // Unreadable: left without a generation.
      }
    }
    if (handles.length > 0) {
      await client.query(
        `UPDATE ${qualified} AS t SET generation = u.generation
         FROM unnest($1::text[], $2::int[], $3::text[]) AS u(handle, version, generation)
         WHERE t.handle = u.handle AND t.version = u.version AND t.generation IS NULL`,
        [handles, versions, generations],
      );
    }
    if (rows.length < FILL_BATCH) return;
    after = String(rows[rows.length - 1]?.handle);
  }
}

/**
 * Fill `finished_ms` of finished rows that have none (written before the column existed, or by
 * an earlier version since), from the decoded record (`finishedAtOf`), a batch at a time, each
 * batch its own statement. A row that does not decode, or whose `updatedAt` is not a time, keeps
 * none: retention never removes it.
 */
async function fillFinishTimes(client: PgQueryableLike, qualified: string): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await client.query(
      `SELECT handle, version, record, record_text FROM ${qualified}
       WHERE finished_ms IS NULL AND NOT unfinished AND handle > $1 ORDER BY handle LIMIT ${FILL_BATCH}`,
      [after],
    );
    const handles: string[] = [];
    const versions: number[] = [];
    const times: number[] = [];
    for (const row of rows) {
      const handle = String(row.handle);
      try {
        const { version, record } = decodeRecordRow(row, handle);
        const at = finishedAtOf(record);
        if (at === undefined) continue;
        handles.push(handle);
        versions.push(version);
        times.push(at);
      } catch {
        // Unreadable: left without a finish time.
      }
    }
    if (handles.length > 0) {
      await client.query(
        `UPDATE ${qualified} AS t SET finished_ms = u.at
         FROM unnest($1::text[], $2::int[], $3::bigint[]) AS u(handle, version, at)
         WHERE t.handle = u.handle AND t.version = u.version AND t.finished_ms IS NULL`,
        [handles, versions, times],
      );
    }
    if (rows.length < FILL_BATCH) return;
    after = String(rows[rows.length - 1]?.handle);
  }
}

/** Run `work` in a transaction on `client` (already checked out). */
async function inTransaction<T>(client: PgClientLike, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** `migrate()`: the three steps of the module header, under one session advisory lock. */
export function migrate(
  connection: PgConnection,
  schema: string,
  table: string,
  qualified: string,
): Promise<void> {
  const keys = keyTableOf(schema, table);
  return connection.session(async (client) => {
    // The same lock an earlier version's migrate() takes (as a transaction lock).
    const lock = `sess-mcp migrate ${qualified}`;
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [lock]);
    const fresh = await inTransaction(client, async () => {
      // Adding a column waits for the transactions on the table, and writes queue behind it
      // meanwhile: give up (retryably, 55P03) rather than hold them up for longer than this.
      await client.query(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
      const { rows } = await client.query('SELECT to_regclass($1) IS NULL AS fresh', [qualified]);
      for (const statement of migrationStatements(schema, qualified)) await client.query(statement);
      await fillListingColumns(client, qualified);
      await client.query(keyTableStatement(keys));
      for (const statement of outboxMigrationStatements(schema, table)) await client.query(statement);
      const key = base64UrlEncode(globalThis.crypto.getRandomValues(new Uint8Array(LIST_CURSOR_KEY_BYTES)));
      await client.query(keyStatements(keys).insertCursorKey, [key]);
      const isFresh = rows[0]?.fresh === true;
      if (isFresh) {
        for (const { suffix, on, definition } of INDEXES) {
          const target = indexedTable(schema, table, qualified, on);
          await client.query(`CREATE INDEX IF NOT EXISTS "${table}_${suffix}" ON ${target} ${definition}`);
        }
      }
      return isFresh;
    });
    if (!fresh) await buildIndexesConcurrently(client, schema, table, qualified);
    await fillGenerations(client, qualified);
    await fillPrincipals(client, qualified);
    await fillFinishTimes(client, qualified);
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lock]);
  });
}
