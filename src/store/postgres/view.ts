/**
 * One binding's view of the PostgreSQL store: the compare-and-set `update` (one `UPDATE … WHERE
 * handle AND scope AND version … RETURNING`), `get`, `create` (an unfinished record under a
 * per-scope advisory transaction lock, so the cap is exact), `delete`, and the listings. Each is
 * a function of the store's {@link PgStoreContext} and the view's scope.
 *
 * It holds no SQL text (`statements.ts`), no pool (`pool.ts`) and no record
 * layout (`encoding.ts`); the write-side checks every store shares are `core/store-kit/kit.ts`'s.
 */

import { base64UrlDecode } from '../../core/codec/base64url.js';
import { SessMcpError } from '../../core/contract/errors.js';
import type {
  Binding,
  CreateLimits,
  HandleStore,
  ListPage,
  ListPageQuery,
  VersionedRecord,
} from '../../core/contract/ports.js';
import { bindingScope, LIST_CURSOR_KEY_BYTES, MAX_UNFINISHED } from '../../core/contract/ports.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  isUnfinished,
  type ListGroup,
  listGroupOf,
  READABLE_RECORD_FORMATS,
} from '../../core/model/record.js';
import {
  checkRecordForScope,
  guardedView,
  handleExistsError,
  isStoreVersion,
  principalQuotaError,
  principalQuotaOf,
  quotaPrincipalOf,
  staleVersionError,
  storeError,
  storeFullError,
} from '../../core/store-kit/kit.js';
import { outboxEventsOf } from '../../core/store-kit/outbox-rules.js';
import {
  decodeRecordRow,
  encodeRecordColumns,
  escapeToAscii,
  RECORD_TEXT_MARKER_JSON,
  recordTextHead,
} from './encoding.js';
import type { PgConnection } from './pool.js';
import {
  eventsParameters,
  generationListQuery,
  type KeyStatements,
  type ListFrom,
  listQuery,
  type TableStatements,
} from './statements.js';
import type { NotedVersions } from './versions.js';

/** What every view of one store shares. */
export interface PgStoreContext {
  connection: PgConnection;
  statements: TableStatements;
  keyStatements: KeyStatements;
  versions: NotedVersions;
  /** The qualified, quoted table name. */
  qualified: string;
  /** The cursor key once read (it never changes while its row stands). */
  cursorKey?: Promise<Uint8Array> | undefined;
}

/** The listing groups, first to last. */
const LIST_GROUPS: readonly ListGroup[] = [0, 1, 2];

/** Decode a row of `scope`; a row that is not exactly a record of that scope is corrupt. */
function decodeRow(
  ctx: PgStoreContext,
  row: Record<string, unknown>,
  handle: string,
  scope: string,
): VersionedRecord {
  const decoded = decodeRecordRow(row, handle);
  if (bindingScope(decoded.record.binding) !== scope) {
    throw storeError('A stored record is filed under another binding than its own.', false, 'corrupt');
  }
  ctx.versions.note(scope, handle, decoded.version);
  return decoded;
}

/** {@link decodeRow}, or `undefined` for a row that does not decode (one must not hide the others). */
function decodeListed(
  ctx: PgStoreContext,
  row: Record<string, unknown>,
  scope: string,
): VersionedRecord | undefined {
  try {
    return decodeRow(ctx, row, String(row.handle), scope);
  } catch (error) {
    // One unreadable row must not hide the others; reading its handle names it.
    if (error instanceof SessMcpError && !error.retryable) return undefined;
    throw error;
  }
}

/**
 * The compare-and-set. It makes the guarded view's checks itself (`checkRecordForScope`, before
 * anything else), so a view's `update` is this function: one promise fewer per update than
 * through the view's wrapper.
 */
async function update(
  ctx: PgStoreContext,
  scope: string,
  given: InteractionRecord,
  expectedVersion: number,
): Promise<VersionedRecord> {
  const record = checkRecordForScope(given, scope);
  const row = encodeRecordColumns(record);
  if (!isStoreVersion(expectedVersion)) throw staleVersionError();
  // One statement. From a version this store decoded or wrote the row is known to be a record of
  // this format; from any other it only overwrites a row that reads as one, in either layout. A
  // miss is classified below and left as it is.
  const known = ctx.versions.get(scope, record.handle) === expectedVersion;
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
    row.generation,
    row.finishedAt,
  ];
  if (!known) {
    for (const format of READABLE_RECORD_FORMATS) values.push(recordTextHead(record.handle, format));
  }
  const { statements } = ctx;
  // The write's events go in with it, in the same statement (`outbox.ts`).
  const events = outboxEventsOf(record);
  if (events.length > 0) values.push(...eventsParameters(events));
  const { rows } = await ctx.connection.query(
    events.length > 0
      ? known
        ? statements.updateFromDecodedWithEvents
        : statements.updateCheckedWithEvents
      : known
        ? statements.updateFromDecoded
        : statements.updateChecked,
    values,
  );
  const updated = rows[0];
  if (updated !== undefined) {
    const version = Number(updated.version);
    ctx.versions.note(scope, record.handle, version);
    // The record checked and written is the caller's: nothing is parsed back.
    return { version, record };
  }
  ctx.versions.note(scope, record.handle, undefined);
  const current = await ctx.connection.query(statements.selectRow, [record.handle, scope]);
  const stored = current.rows[0];
  // A row at the expected version that was not updated is unreadable: say so.
  if (stored !== undefined && stored.version === expectedVersion)
    decodeRow(ctx, stored, record.handle, scope);
  throw staleVersionError();
}

/**
 * Insert an unfinished record while its scope is under the cap and its principal under `quota`.
 * Creates of one scope queue on the advisory lock `lockKey`, and creates of one principal on
 * its own lock, taken second (every create takes its scope's first, so no two wait on each other
 * in a circle); the counts then see every earlier create, from any instance.
 */
function insertUnfinished(
  ctx: PgStoreContext,
  lockKey: string,
  handle: string,
  values: unknown[],
  quota: { principal: string; max: number } | undefined,
): Promise<'inserted' | 'exists' | 'full' | 'quota'> {
  return ctx.connection.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKey]);
    if (quota !== undefined) {
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        `sess-mcp quota ${ctx.qualified} ${quota.principal}`,
      ]);
      const { rows } = await client.query(ctx.statements.countOpenOfPrincipal.text, [quota.principal]);
      if (Number(rows[0]?.n ?? 0) >= quota.max) {
        // The same verdict as the other stores when more than one applies: exists, full, quota.
        if ((await client.query(ctx.statements.handleTaken, [handle])).rows.length > 0) return 'exists';
        const scoped = await client.query(ctx.statements.countUnfinished.text, [values[1]]);
        return Number(scoped.rows[0]?.n ?? 0) >= MAX_UNFINISHED ? 'full' : 'quota';
      }
    }
    const { rowCount } = await client.query(ctx.statements.insertUnfinished, values);
    if (rowCount === 1) return 'inserted';
    const { rows } = await client.query(ctx.statements.handleTaken, [handle]);
    return rows.length > 0 ? 'exists' : 'full';
  });
}

/** A new record at version 1; unfinished ones count against the cap and the principal's quota. */
async function create(
  ctx: PgStoreContext,
  scope: string,
  lockKey: string,
  record: InteractionRecord,
  limits: CreateLimits | undefined,
): Promise<VersionedRecord> {
  const quota = principalQuotaOf(record, limits);
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
    row.generation,
    quotaPrincipalOf(record.binding) ?? null,
    row.finishedAt,
  ];
  const inserted = unfinished
    ? await insertUnfinished(ctx, lockKey, record.handle, values, quota)
    : (await ctx.connection.query(ctx.statements.insertFinished, values)).rowCount === 1
      ? 'inserted'
      : 'exists';
  if (inserted === 'exists') throw handleExistsError();
  if (inserted === 'full') throw storeFullError();
  if (inserted === 'quota') throw principalQuotaError(quota?.max ?? 0);
  ctx.versions.note(scope, record.handle, 1);
  return { version: 1, record: row.copy };
}

/**
 * One page of the listing: one query per listing group from where the page starts, until one
 * record more than the page is found (that one only says whether more follow). With a
 * generation, each query reads bounded index ranges per state kind ({@link generationListQuery});
 * without one, one range per group with the kinds filtered on it (`listQuery`).
 */
async function listPage(ctx: PgStoreContext, scope: string, page: ListPageQuery): Promise<ListPage> {
  const want = page.limit + 1;
  const { generation } = page;
  const found: VersionedRecord[] = [];
  const kinds = page.kinds;
  const groups = LIST_GROUPS.filter(
    (group) =>
      (page.after === undefined || group >= page.after.group) &&
      (kinds === undefined || kinds.some((kind) => listGroupOf(kind) === group)),
  );
  for (const group of groups) {
    let from: ListFrom | undefined =
      page.after?.group === group
        ? { createdAt: escapeToAscii(page.after.createdAt), handle: page.after.handle }
        : undefined;
    while (found.length < want) {
      const batch = want - found.length;
      const sent =
        generation === undefined
          ? listQuery(ctx.qualified, scope, group, kinds, from, batch)
          : generationListQuery(
              ctx.qualified,
              scope,
              escapeToAscii(generation),
              (kinds ?? INTERACTION_STATE_KINDS).filter((kind) => listGroupOf(kind) === group),
              from,
              batch,
            );
      const { rows } = await ctx.connection.query(sent.text, sent.values);
      for (const row of rows) {
        const decoded = decodeListed(ctx, row, scope);
        // A row a 0.1.0 instance changed after migrate() may name a kind it is no longer in.
        if (decoded !== undefined && (kinds === undefined || kinds.includes(decoded.record.state.kind))) {
          found.push(decoded);
        }
      }
      const last = rows[rows.length - 1];
      if (rows.length < batch || last === undefined) break;
      from = { createdAt: String(last.created_at), handle: String(last.handle) };
    }
    if (found.length >= want) break;
  }
  return { records: found.slice(0, page.limit), more: found.length > page.limit };
}

/** The `sess_list` cursor key of the table's key row, read once per store. */
function cursorKey(ctx: PgStoreContext): Promise<Uint8Array> {
  ctx.cursorKey ??= readCursorKey(ctx).catch((error: unknown) => {
    ctx.cursorKey = undefined;
    throw error;
  });
  return ctx.cursorKey;
}

async function readCursorKey(ctx: PgStoreContext): Promise<Uint8Array> {
  const { rows } = await ctx.connection.query(ctx.keyStatements.selectCursorKey, []);
  const text = rows[0]?.key;
  if (text === undefined) {
    throw storeError(
      'The handle table has no cursor key, which this version needs: call migrate() once.',
      false,
      'not_migrated',
    );
  }
  const bytes = typeof text === 'string' ? base64UrlDecode(text) : undefined;
  if (bytes === undefined || bytes.length < LIST_CURSOR_KEY_BYTES) {
    throw storeError(
      'The cursor key row of the handle table is not one migrate() wrote. The owner must delete it and call migrate().',
      false,
      'corrupt',
    );
  }
  return bytes;
}

/** The view of `binding`: every operation confined to its scope. */
export function postgresView(ctx: PgStoreContext, binding: Binding): HandleStore {
  const scope = bindingScope(binding);
  const lockKey = `sess-mcp cap ${ctx.qualified} ${scope}`;
  const { connection, statements } = ctx;
  const updateOwn = (given: InteractionRecord, expectedVersion: number) =>
    update(ctx, scope, given, expectedVersion);
  const view = guardedView(scope, {
    update: updateOwn,
    async get(handle) {
      const { rows } = await connection.query(statements.selectRow, [handle, scope]);
      return rows[0] === undefined ? undefined : decodeRow(ctx, rows[0], handle, scope);
    },
    create: (record, limits) => create(ctx, scope, lockKey, record, limits),
    async delete(handle, expectedVersion) {
      ctx.versions.note(scope, handle, undefined);
      const { rowCount } =
        expectedVersion === undefined
          ? await connection.query(statements.deleteAny, [handle, scope])
          : await connection.query(statements.deleteAt, [handle, scope, expectedVersion]);
      return rowCount === 1;
    },
    async listUnfinished() {
      const { rows } = await connection.query(statements.selectUnfinished, [scope]);
      const out: VersionedRecord[] = [];
      for (const row of rows) {
        const decoded = decodeListed(ctx, row, scope);
        if (decoded !== undefined) out.push(decoded);
      }
      return out;
    },
    async countUnfinished() {
      const { rows } = await connection.query(statements.countUnfinished, [scope]);
      return Number(rows[0]?.n ?? 0);
    },
    listPage: (page) => listPage(ctx, scope, page),
    listCursorKey: () => cursorKey(ctx),
  });
  return { ...view, update: updateOwn };
}
