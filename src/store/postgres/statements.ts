/**
 * The SQL of the PostgreSQL store: the statements built once per table (each named by a hash of
 * its text, for prepared statements), the format check an update from a version this store has
 * not decoded makes, the create of an unfinished record under the cap, and the listing query.
 *
 * Text only: it sends nothing (`pool.ts` does) and decides nothing about what a result
 * means (`view.ts` does). The table itself and `migrate()` are `schema.ts`'s.
 */

import type { OutboxEvent } from '../../core/contract/outbox.js';
import { MAX_UNFINISHED } from '../../core/contract/ports.js';
import { FINISHED, READABLE_RECORD_FORMATS, WATCHED_STATE_KINDS } from '../../core/model/record.js';
import { RECORD_TEXT_MARKER } from './encoding.js';

/** A statement the store sends as it is, or by name when statements are prepared. */
export interface Statement {
  /** `sess_mcp_` and a hash of the text: the same text always has the same name. */
  readonly name: string;
  readonly text: string;
}

/**
 * A named statement of `text`. Its name is a hash of the text (53 bits, cyrb53), so two stores
 * on one pool with other tables never give one name to two texts, which `pg` refuses.
 */
export function statement(text: string): Statement {
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

/** The first parameter of the `UPDATE` that carries a text head ({@link FORMAT_CHECK}). */
const FIRST_HEAD_PARAMETER = 12;

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

/** The columns a decoded row needs. */
const COLUMNS = `version, record, record_text`;

/** Sent at every update, so without the layout's runs of blanks: fewer bytes to encode and send. */
function compact(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The statements of one table, built once per store rather than once per call. */
export interface TableStatements {
  /** One row of a scope: `$1` handle, `$2` scope. */
  selectRow: Statement;
  /** The compare-and-set from a version this store decoded or wrote (`$1`…`$11`). */
  updateFromDecoded: Statement;
  /** The compare-and-set from any other version, with the format check (`$11`… the text heads). */
  updateChecked: Statement;
  /** {@link updateFromDecoded} adding the write's events in the same statement (`$12`–`$14`). */
  updateFromDecodedWithEvents: Statement;
  /** {@link updateChecked} adding the write's events in the same statement (after the text heads). */
  updateCheckedWithEvents: Statement;
  /** The create of a finished record (no cap): `$1`…`$11` (`$10` the principal, or null; `$11` the finish time). */
  insertFinished: Statement;
  /** The create of an unfinished record, inserted only while its scope is under the cap. */
  insertUnfinished: string;
  /** Whether any row (of any scope) holds the handle `$1`. */
  handleTaken: string;
  deleteAny: Statement;
  deleteAt: Statement;
  countUnfinished: Statement;
  /** The unfinished rows of the principal `$1` over all its scopes (the per-principal quota). */
  countOpenOfPrincipal: Statement;
  selectUnfinished: Statement;
  /**
   * The watched rows of every scope after the handle `$1`, in handle order, at most `$2`: a range
   * of the partial index `<table>_watched` ({@link WATCHED_ROWS} is its predicate, word for word,
   * so the planner can use it).
   */
  selectWatched: Statement;
  /**
   * Retention: remove at most `$2` finished rows that finished before `$1` (ms), oldest first, a
   * range of the partial index `<table>_finished`, skipping rows another transaction holds and
   * rows one of whose events is owed to a sink; their events and deliveries go in the same
   * statement. Returns the count removed (`n`).
   */
  prune: Statement;
}

/**
 * The handle part of an event id (`evt_<handle>_<sequence>`, `eventIdOf`) of the column `column`,
 * in SQL: between `evt_` and the last `_`. The outbox tables' handle indexes are on this
 * expression, word for word, so a prune finds a handle's events and deliveries through them.
 */
export function eventHandleOf(column: string): string {
  return `substr(${column}, 5, length(${column}) - 4 - strpos(reverse(${column}), '_'))`;
}

/** The finished state kinds, as an SQL list. */
const FINISHED_KINDS = [...FINISHED].map((kind) => `'${kind}'`).join(', ');

/** The rows retention may remove: the predicate of the `<table>_finished` index. */
export const FINISHED_ROWS = 'finished_ms IS NOT NULL';

/** The rows a watcher polls: the predicate of the `<table>_watched` index and of its query. */
export const WATCHED_ROWS = `state_kind IN (${WATCHED_STATE_KINDS.map((kind) => `'${kind}'`).join(', ')})`;

/** The statements of the table `qualified` (schema and table, quoted). */
export function tableStatements(
  qualified: string,
  { events, deliveries }: { events: string; deliveries: string },
): TableStatements {
  const updateSet = `UPDATE ${qualified}
             SET record = $3::jsonb, record_text = $4, version = version + 1, unfinished = $5, created_at = $7,
                 state_kind = $8, list_group = $9::smallint, generation = $10, finished_ms = $11::bigint,
                 written_at = now()
             WHERE handle = $1 AND scope = $2 AND version = $6`;
  const insert = `INSERT INTO ${qualified} (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group, generation, principal, finished_ms)`;
  return {
    selectRow: statement(`SELECT ${COLUMNS} FROM ${qualified} WHERE handle = $1 AND scope = $2`),
    updateFromDecoded: statement(compact(`${updateSet} RETURNING version`)),
    updateChecked: statement(compact(`${updateSet}${FORMAT_CHECK} RETURNING version`)),
    updateFromDecodedWithEvents: statement(
      compact(withEventsInsert(`${updateSet} RETURNING version`, events, FIRST_HEAD_PARAMETER)),
    ),
    updateCheckedWithEvents: statement(
      compact(
        withEventsInsert(
          `${updateSet}${FORMAT_CHECK} RETURNING version`,
          events,
          FIRST_HEAD_PARAMETER + READABLE_RECORD_FORMATS.length,
        ),
      ),
    ),
    insertFinished: statement(
      `${insert} VALUES ($1, $2, 1, $3, $4, $5::jsonb, $6, $7, $8::smallint, $9, $10, $11::bigint) ON CONFLICT (handle) DO NOTHING`,
    ),
    insertUnfinished: `${insert}
                   SELECT $1, $2, 1, $3, $4, $5::jsonb, $6, $7, $8::smallint, $9, $10, $11::bigint
                   WHERE (SELECT count(*) FROM ${qualified} WHERE scope = $2 AND unfinished) < ${MAX_UNFINISHED}
                   ON CONFLICT (handle) DO NOTHING`,
    handleTaken: `SELECT 1 FROM ${qualified} WHERE handle = $1`,
    deleteAny: statement(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2`),
    deleteAt: statement(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2 AND version = $3`),
    countUnfinished: statement(`SELECT count(*)::int AS n FROM ${qualified} WHERE scope = $1 AND unfinished`),
    countOpenOfPrincipal: statement(
      `SELECT count(*)::int AS n FROM ${qualified} WHERE principal = $1 AND unfinished`,
    ),
    selectUnfinished: statement(
      `SELECT handle, ${COLUMNS} FROM ${qualified} WHERE scope = $1 AND unfinished ORDER BY created_at COLLATE "C", handle COLLATE "C"`,
    ),
    selectWatched: statement(
      `SELECT handle, scope, ${COLUMNS} FROM ${qualified} WHERE ${WATCHED_ROWS} AND handle COLLATE "C" > $1 ORDER BY handle COLLATE "C" LIMIT $2`,
    ),
    prune: statement(
      compact(`WITH doomed AS (
        SELECT t.handle FROM ${qualified} t
        WHERE ${FINISHED_ROWS} AND t.finished_ms < $1::bigint AND NOT t.unfinished
          AND t.state_kind IN (${FINISHED_KINDS})
          AND NOT EXISTS (SELECT 1 FROM ${deliveries} d
                          WHERE ${eventHandleOf('d.event_id')} = t.handle AND d.state = 'owed')
        ORDER BY t.finished_ms, t.handle
        LIMIT $2
        FOR UPDATE OF t SKIP LOCKED),
      gone AS (DELETE FROM ${qualified} WHERE handle IN (SELECT handle FROM doomed) RETURNING handle),
      ev AS (DELETE FROM ${events} WHERE ${eventHandleOf('event_id')} IN (SELECT handle FROM gone)),
      dl AS (DELETE FROM ${deliveries} WHERE ${eventHandleOf('event_id')} IN (SELECT handle FROM gone))
      SELECT count(*)::int AS n FROM gone`),
    ),
  };
}

/** Where a listing query starts: after this row, in its group's order. */
export interface ListFrom {
  createdAt: string;
  handle: string;
}

/**
 * One step of a listing: at most `limit` rows of `scope` in listing group `group` (of `kinds`,
 * when given), after `from`, newest first; an index range of
 * (scope, list_group, created_at DESC, handle DESC).
 */
export function listQuery(
  qualified: string,
  scope: string,
  group: number,
  kinds: readonly string[] | undefined,
  from: ListFrom | undefined,
  limit: number,
): { text: string; values: unknown[] } {
  const values: unknown[] = [scope, group];
  const kindFilter = kinds === undefined ? '' : ` AND state_kind = ANY($${values.push(kinds)}::text[])`;
  const keyset =
    from === undefined
      ? ''
      : ` AND (created_at COLLATE "C", handle COLLATE "C") < ($${values.push(from.createdAt)}, $${values.push(from.handle)})`;
  const text = `SELECT handle, created_at, ${COLUMNS} FROM ${qualified}
                 WHERE scope = $1 AND list_group = $2${kindFilter}${keyset}
                 ORDER BY created_at COLLATE "C" DESC, handle COLLATE "C" DESC LIMIT ${limit}`;
  return { text, values };
}

/** What the statements of the key table read and write. */
export interface KeyStatements {
  /** The `sess_list` cursor key's row, made by `migrate()` unless it exists: `$1` the key. */
  insertCursorKey: string;
  selectCursorKey: Statement;
}

/** The name of the cursor key's row in the key table. */
const CURSOR_KEY_ROW = 'list_cursor';

/** The statements of the key table `keys` (schema and table, quoted). */
export function keyStatements(keys: string): KeyStatements {
  return {
    insertCursorKey: `INSERT INTO ${keys} (name, key) VALUES ('${CURSOR_KEY_ROW}', $1) ON CONFLICT (name) DO NOTHING`,
    selectCursorKey: statement(`SELECT key FROM ${keys} WHERE name = '${CURSOR_KEY_ROW}'`),
  };
}

/**
 * One step of a listing of one generation: at most `limit` rows of `scope` of generation
 * `generation` (or of none yet: a row an earlier version wrote, until `migrate()` fills it), of
 * the state kinds `kinds` (all of one listing group), after `from`, newest first. Each kind and
 * generation is its own range of the index (scope, generation, state_kind, created_at DESC,
 * handle DESC), read for at most `limit` rows, so the work is bounded by `limit` times the kinds,
 * however many rows other generations and kinds hold.
 */
export function generationListQuery(
  qualified: string,
  scope: string,
  generation: string,
  kinds: readonly string[],
  from: ListFrom | undefined,
  limit: number,
): { text: string; values: unknown[] } {
  const values: unknown[] = [scope, generation];
  const keyset =
    from === undefined
      ? ''
      : ` AND (created_at COLLATE "C", handle COLLATE "C") < ($${values.push(from.createdAt)}, $${values.push(from.handle)})`;
  const order = `ORDER BY created_at COLLATE "C" DESC, handle COLLATE "C" DESC LIMIT ${limit}`;
  const ranges: string[] = [];
  for (const kind of kinds) {
    const at = values.push(kind);
    for (const which of ['generation = $2', 'generation IS NULL']) {
      ranges.push(
        `(SELECT handle, created_at, ${COLUMNS} FROM ${qualified} WHERE scope = $1 AND ${which} AND state_kind = $${at}${keyset} ${order})`,
      );
    }
  }
  return { text: `SELECT * FROM (${ranges.join(' UNION ALL ')}) AS page ${order}`, values };
}

/**
 * The part of a record update that adds its events in the same statement: wrap the update
 * (`RETURNING version`) as `upd`, and insert the events given as three arrays at parameters
 * `first`, `first + 1`, `first + 2` (ids, texts, times) only when the update happened.
 */
export function withEventsInsert(update: string, events: string, first: number): string {
  return `WITH upd AS (${update}),
    ev AS (INSERT INTO ${events} (event_id, event_text, occurred_ms)
           SELECT id, body, at FROM unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::bigint[]) AS e(id, body, at)
           WHERE EXISTS (SELECT 1 FROM upd)
           ON CONFLICT (event_id) DO NOTHING)
    SELECT version FROM upd`;
}

/** The three arrays {@link withEventsInsert} takes, of `events`. */
export function eventsParameters(events: readonly OutboxEvent[]): [string[], string[], number[]] {
  return [
    events.map((e) => e.eventId),
    events.map((e) => JSON.stringify(e)),
    events.map((e) => Date.parse(e.occurredAt)),
  ];
}
