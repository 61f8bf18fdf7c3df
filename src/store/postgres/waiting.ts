/**
 * The watched records of every scope (`HandleStoreFactory.waiting`) on PostgreSQL: one range of
 * the partial index `<table>_watched` (handle order, `"C"` collation), read for one row more than
 * the page, so a page costs its limit however many finished rows the table holds.
 *
 * Unlike a binding's view (`view.ts`) it is confined to no scope: it checks instead that each row
 * is filed under its own record's scope, and leaves out a row that is not, that does not decode,
 * or whose record is no longer of a watched kind (a row a 0.1.0 instance changed keeps the kind
 * `migrate()` last saw).
 */
import { SessMcpError } from '../../core/contract/errors.js';
import {
  bindingScope,
  type VersionedRecord,
  type WaitingPage,
  type WaitingQuery,
} from '../../core/contract/ports.js';
import { isWatched } from '../../core/model/record.js';
import { decodeRecordRow } from './encoding.js';
import type { PgStoreContext } from './view.js';

/** A watched row decoded, or `undefined` for one that is not a readable watched record of its scope. */
function decodeWatched(ctx: PgStoreContext, row: Record<string, unknown>): VersionedRecord | undefined {
  const handle = String(row.handle);
  let decoded: VersionedRecord;
  try {
    decoded = decodeRecordRow(row, handle);
  } catch (error) {
    // One unreadable row must not hide the others; reading its handle names it.
    if (error instanceof SessMcpError && !error.retryable) return undefined;
    throw error;
  }
  const scope = String(row.scope);
  if (bindingScope(decoded.record.binding) !== scope || !isWatched(decoded.record)) return undefined;
  ctx.versions.note(scope, handle, decoded.version);
  return decoded;
}

/** One page of the watched rows (a checked query). */
export async function waitingPage(ctx: PgStoreContext, query: WaitingQuery): Promise<WaitingPage> {
  const { rows } = await ctx.connection.query(ctx.statements.selectWatched, [
    query.after ?? '',
    query.limit + 1,
  ]);
  const page = rows.slice(0, query.limit);
  const records: VersionedRecord[] = [];
  for (const row of page) {
    const decoded = decodeWatched(ctx, row);
    if (decoded !== undefined) records.push(decoded);
  }
  const last = page[page.length - 1];
  return rows.length > query.limit && last !== undefined
    ? { records, next: String(last.handle) }
    : { records };
}
