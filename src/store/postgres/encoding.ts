/**
 * How the PostgreSQL store lays a record out in its row, and reads it back (see "PostgreSQL
 * encoding" in `docs/stores.md`).
 *
 * A record is kept as its JSON text in the `text` column `record_text`, with every character
 * outside ASCII written as a JSON `\uXXXX` escape. The text is therefore pure ASCII: U+0000 is
 * the six characters `\u0000` (which neither `jsonb` nor `text` could hold raw), a lone surrogate
 * is its escape (which `jsonb` refuses), and no value depends on the database's encoding.
 * `JSON.parse` gives back exactly the strings that went in.
 *
 * The `jsonb` column `record` of rows written so holds {@link RECORD_TEXT_MARKER}, a format a
 * 0.1.0 instance refuses as an unsupported format: it fails closed on such a row, never reads it
 * as a record. Rows a 0.1.0 instance wrote (`record_text` empty, the record in `record`, format 1)
 * are read as they are, and take the new layout (and format 2) at their next update. Beside the
 * record, a row keeps its state kind, listing group and binding generation for `listPage`, and
 * a finished record's finish time for `prune` ({@link RecordColumns}).
 *
 * It deliberately knows no SQL and no connection: it maps a record to column values and a row's
 * columns to a checked record.
 */
import { Buffer } from 'node:buffer';
import { bindingGeneration, type VersionedRecord } from '../../core/contract/ports.js';
import {
  finishedAtOf,
  type InteractionRecord,
  type InteractionStateKind,
  type ListGroup,
  listGroupOf,
  RECORD_FORMAT,
  type RecordFormat,
} from '../../core/model/record.js';
import { storeError } from '../../core/store-kit/kit.js';
import { decodeRecord, encodeRecord, isReadableFormat, unsupportedFormatError } from '../record-codec.js';

/**
 * What the `record` column holds when the record is in `record_text`. `record_format` is the
 * format of the record in the text, so an update never overwrites a row of a format this version
 * does not read.
 */
export const RECORD_TEXT_MARKER = { format: 'record_text', record_format: RECORD_FORMAT } as const;

/** {@link RECORD_TEXT_MARKER} as the JSON a `$n::jsonb` parameter takes. */
export const RECORD_TEXT_MARKER_JSON = JSON.stringify(RECORD_TEXT_MARKER);

/** Characters a stored text never holds raw: U+0000 and everything outside ASCII. */
const NOT_PLAIN_ASCII = /[\u0000\u0080-\uffff]/g;

function unitEscape(unit: string): string {
  return `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with U+0000 and every character outside ASCII written as a `\uXXXX` escape (a UTF-16
 * code unit each, so an astral character is two escapes and a lone surrogate one). Applied to
 * JSON text it gives JSON text of the same value: outside strings, JSON text is ASCII already.
 */
export function escapeToAscii(text: string): string {
  // A text of ASCII only (its UTF-8 is one byte a character, found without a scan in JavaScript)
  // and without U+0000, as most are, is returned as it is.
  return Buffer.byteLength(text, 'utf8') === text.length && !text.includes('\u0000')
    ? text
    : text.replace(NOT_PLAIN_ASCII, unitEscape);
}

/**
 * How the text of a record of `format` stored under `handle` begins: the store writes `format`
 * and `handle` first, so an update can check in SQL, without parsing, that it overwrites a record
 * of a format it reads under that handle (handles are ASCII and need no escape).
 */
export function recordTextHead(handle: string, format: RecordFormat = RECORD_FORMAT): string {
  return `{"format":${format},"handle":${JSON.stringify(handle)},`;
}

/** The column values of one record. */
export interface RecordColumns {
  /** The record's JSON text, pure ASCII, beginning with {@link recordTextHead} (`record_text`). */
  text: string;
  /** `createdAt` as the ASCII sort key of the `created_at` column (equal to it for ISO times). */
  createdAt: string;
  /** The state kind (`state_kind`) and its listing group (`list_group`). */
  kind: InteractionStateKind;
  group: ListGroup;
  /** The binding's generation, ASCII as `createdAt` (`generation`). */
  generation: string;
  /** When a finished record finished, ms since the epoch (`finished_ms`, retention); else null. */
  finishedAt: number | null;
  /** The record as `JSON.parse` gives it back, parsed when first read: what a create returns. */
  readonly copy: InteractionRecord;
}

/** {@link RecordColumns} with the copy parsed only when a caller reads it (a create does). */
class EncodedColumns implements RecordColumns {
  readonly text: string;
  readonly createdAt: string;
  readonly kind: InteractionStateKind;
  readonly group: ListGroup;
  readonly generation: string;
  readonly finishedAt: number | null;
  readonly #json: string;

  constructor(json: string, record: InteractionRecord) {
    this.#json = json;
    this.text = escapeToAscii(json);
    this.createdAt = escapeToAscii(record.createdAt);
    this.kind = record.state.kind;
    this.group = listGroupOf(record.state.kind);
    this.generation = escapeToAscii(bindingGeneration(record.binding));
    this.finishedAt = finishedAtOf(record) ?? null;
  }

  get copy(): InteractionRecord {
    return JSON.parse(this.#json) as InteractionRecord;
  }
}

/**
 * Check `record` with the strict codec and return its column values. Throws a non-retryable
 * `STATE_STORE_ERROR` (reason `invalid_record`) for a record the codec refuses.
 */
export function encodeRecordColumns(record: InteractionRecord): RecordColumns {
  // `format` and `handle` first (see recordTextHead). The engine's records already begin so, and
  // then their text is used as it is; any other is written again with those two keys moved to the
  // front, the other keys keeping their order.
  let json = encodeRecord(record);
  if (!json.startsWith(recordTextHead(record.handle, record.format))) {
    const { format, handle, ...rest } = record;
    json = encodeRecord({ format, handle, ...rest });
  }
  return new EncodedColumns(json, record);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record a row holds, from its `record` and `record_text` columns, not yet checked. */
function storedValue(record: unknown, recordText: unknown): unknown {
  const marked = isObject(record) && record.format === RECORD_TEXT_MARKER.format;
  // A 0.1.0 row: the record is the `jsonb` value itself.
  if ((recordText === null || recordText === undefined) && !marked) return record;
  if (!marked || typeof recordText !== 'string') {
    throw storeError(
      'A stored record is inconsistent (its row layout is mixed). The owner must review it.',
      false,
      'corrupt',
    );
  }
  const format = (record as Record<string, unknown>).record_format;
  if (!isReadableFormat(format)) throw unsupportedFormatError();
  let value: unknown;
  try {
    value = JSON.parse(recordText);
  } catch {
    throw storeError('A stored record is not valid JSON. The owner must review it.', false, 'corrupt');
  }
  if (!isObject(value) || value.format !== format) {
    throw storeError(
      'A stored record is inconsistent (its format is not the one its row names). The owner must review it.',
      false,
      'corrupt',
    );
  }
  return value;
}

/**
 * Decode a row (`version`, `record`, `record_text`) stored under `handle`, of either layout, of
 * format 1 or 2. Anything that is not exactly a record of a format this version reads under that
 * handle throws a non-retryable `STATE_STORE_ERROR` (`corrupt` or `unsupported_version`).
 */
export function decodeRecordRow(row: Record<string, unknown>, handle: string): VersionedRecord {
  const version = row.version;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    throw storeError('A stored record has an invalid version. The owner must review it.', false, 'corrupt');
  }
  return { version, record: decodeRecord(storedValue(row.record, row.record_text), handle) };
}
