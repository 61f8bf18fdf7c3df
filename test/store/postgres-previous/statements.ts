/**
 * The SQL of the PostgreSQL store: the statements built once per table (each named by a hash of
 * its text, for prepared statements), the format check an update from a version this store has
 * not decoded makes, the create of an unfinished record under the cap, and the listing query.
 *
 * Text only: it sends nothing (`pool.ts` does) and decides nothing about what a result
 * means (`view.ts` does). The table itself and `migrate()` are `schema.ts`'s.
 */
import { MAX_UNFINISHED } from '../../../src/core/contract/ports.js';
import { READABLE_RECORD_FORMATS } from '../../../src/core/model/record.js';
import { RECORD_TEXT_MARKER } from '../../../src/store/postgres/encoding.js';

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
  /** The compare-and-set from a version this store decoded or wrote (`$1`…`$9`). */
  updateFromDecoded: Statement;
  /** The compare-and-set from any other version, with the format check (`$10`… the text heads). */
  updateChecked: Statement;
  /** The create of a finished record (no cap): `$1`…`$8`. */
  insertFinished: Statement;
  /** The create of an unfinished record, inserted only while its scope is under the cap. */
  insertUnfinished: string;
  /** Whether any row (of any scope) holds the handle `$1`. */
  handleTaken: string;
  deleteAny: Statement;
  deleteAt: Statement;
  countUnfinished: Statement;
  selectUnfinished: Statement;
}

/** The statements of the table `qualified` (schema and table, quoted). */
export function tableStatements(qualified: string): TableStatements {
  const updateSet = `UPDATE ${qualified}
             SET record = $3::jsonb, record_text = $4, version = version + 1, unfinished = $5, created_at = $7,
                 state_kind = $8, list_group = $9::smallint, written_at = now()
             WHERE handle = $1 AND scope = $2 AND version = $6`;
  const insert = `INSERT INTO ${qualified} (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group)`;
  return {
    selectRow: statement(`SELECT ${COLUMNS} FROM ${qualified} WHERE handle = $1 AND scope = $2`),
    updateFromDecoded: statement(compact(`${updateSet} RETURNING version`)),
    updateChecked: statement(compact(`${updateSet}${FORMAT_CHECK} RETURNING version`)),
    insertFinished: statement(
      `${insert} VALUES ($1, $2, 1, $3, $4, $5::jsonb, $6, $7, $8::smallint) ON CONFLICT (handle) DO NOTHING`,
    ),
    insertUnfinished: `${insert}
                   SELECT $1, $2, 1, $3, $4, $5::jsonb, $6, $7, $8::smallint
                   WHERE (SELECT count(*) FROM ${qualified} WHERE scope = $2 AND unfinished) < ${MAX_UNFINISHED}
                   ON CONFLICT (handle) DO NOTHING`,
    handleTaken: `SELECT 1 FROM ${qualified} WHERE handle = $1`,
    deleteAny: statement(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2`),
    deleteAt: statement(`DELETE FROM ${qualified} WHERE handle = $1 AND scope = $2 AND version = $3`),
    countUnfinished: statement(`SELECT count(*)::int AS n FROM ${qualified} WHERE scope = $1 AND unfinished`),
    selectUnfinished: statement(
      `SELECT handle, ${COLUMNS} FROM ${qualified} WHERE scope = $1 AND unfinished ORDER BY created_at COLLATE "C", handle COLLATE "C"`,
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
