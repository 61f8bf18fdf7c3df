/**
 * The watched records over every scope (`HandleStoreFactory.waiting`): the check of a
 * {@link WaitingQuery}, which every store applies, and the in-process stores' index (memory, and
 * the file store's summary), the handles of the watched records kept sorted, so a page is a
 * binary search and a slice however many records of other kinds the store holds.
 *
 * It deliberately holds handles only: the records, and whether one is still of a watched kind
 * when it is read, are the store's.
 */
import { MAX_WAITING_PAGE_LIMIT, type WaitingQuery } from '../contract/ports.js';

/**
 * A {@link WaitingQuery} checked, as a store runs it: `limit` a whole number from 1 to
 * {@link MAX_WAITING_PAGE_LIMIT}, `after` (when given) a string. Anything else is a `TypeError`
 * naming the field. The copy returned shares nothing with the caller's query.
 */
export function checkWaitingQuery(query: WaitingQuery): WaitingQuery {
  if (query === null || typeof query !== 'object' || Array.isArray(query)) {
    throw new TypeError('waiting: query must be an object.');
  }
  const { limit, after } = query;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_WAITING_PAGE_LIMIT) {
    throw new TypeError(`waiting: query.limit must be a whole number from 1 to ${MAX_WAITING_PAGE_LIMIT}.`);
  }
  if (after !== undefined && typeof after !== 'string') {
    throw new TypeError('waiting: query.after must be a string (a handle).');
  }
  return after === undefined ? { limit } : { limit, after };
}

/** The number of elements of the sorted `list` that are at most `handle` (UTF-16 code units). */
function countUpTo(list: readonly string[], handle: string): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((list[mid] as string) <= handle) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** The handles of the watched records, sorted. */
export class WaitingIndex {
  private readonly handles: string[] = [];

  /** How many handles the index holds. */
  get size(): number {
    return this.handles.length;
  }

  /** Add `handle` (nothing happens when it is there). */
  add(handle: string): void {
    const at = countUpTo(this.handles, handle);
    if (this.handles[at - 1] === handle) return;
    if (at === this.handles.length) this.handles.push(handle);
    else this.handles.splice(at, 0, handle);
  }

  /** Remove `handle` (nothing happens when it is not there). */
  remove(handle: string): void {
    const at = countUpTo(this.handles, handle) - 1;
    if (at >= 0 && this.handles[at] === handle) this.handles.splice(at, 1);
  }

  /** The handles of the page `query` asks for, and whether more follow. */
  page(query: WaitingQuery): { handles: string[]; more: boolean } {
    const from = query.after === undefined ? 0 : countUpTo(this.handles, query.after);
    const handles = this.handles.slice(from, from + query.limit);
    return { handles, more: from + query.limit < this.handles.length };
  }
}
