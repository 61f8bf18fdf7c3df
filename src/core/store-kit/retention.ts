/**
 * Retention (`HandleStoreFactory.prune`), what every store shares: the check of a
 * {@link PruneQuery}, and the in-process stores' index of finished records by finish time
 * (memory, and the file store's summary), so a prune finds the oldest finished records with a
 * slice, however many records of other kinds the store holds.
 *
 * Which records are finished and when they finished is the record model's (`finishedAtOf`);
 * whether an event still holds its record is the outbox rules' (`holdsRecord`). It deliberately
 * removes nothing itself: the stores do, each on its own medium.
 */
import { DEFAULT_PRUNE_LIMIT, MAX_PRUNE_LIMIT, type PruneQuery } from '../contract/ports.js';

/** The fields a {@link PruneQuery} has; any other is refused. */
const PRUNE_FIELDS: readonly string[] = ['olderThan', 'limit'];

/** A checked {@link PruneQuery}: every field filled. */
export interface CheckedPruneQuery {
  olderThan: number;
  limit: number;
}

/**
 * A {@link PruneQuery} checked, as a store runs it: `olderThan` a whole number of milliseconds
 * since the epoch (0 to 8.64e15, the range of a `Date`), `limit` (when given) a whole number from 1
 * to {@link MAX_PRUNE_LIMIT}, {@link DEFAULT_PRUNE_LIMIT} when absent, and no other field. Anything
 * else is a `TypeError` naming the field.
 */
export function checkPruneQuery(query: PruneQuery): CheckedPruneQuery {
  if (query === null || typeof query !== 'object' || Array.isArray(query)) {
    throw new TypeError('prune: query must be an object.');
  }
  for (const key of Object.keys(query)) {
    if (!PRUNE_FIELDS.includes(key)) {
      // The name only (cut short and escaped), never a value.
      throw new TypeError(
        `prune: query.${JSON.stringify(key.slice(0, 64)).slice(1, -1)} is not a field of a prune query (olderThan, limit).`,
      );
    }
  }
  const { olderThan, limit } = query;
  if (typeof olderThan !== 'number' || !Number.isInteger(olderThan) || olderThan < 0 || olderThan > 8.64e15) {
    throw new TypeError('prune: query.olderThan must be a time in whole milliseconds since the epoch.');
  }
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PRUNE_LIMIT)
  ) {
    throw new TypeError(`prune: query.limit must be a whole number from 1 to ${MAX_PRUNE_LIMIT}.`);
  }
  return { olderThan, limit: limit ?? DEFAULT_PRUNE_LIMIT };
}

/** One finished record in a {@link FinishedIndex}: when it finished, and its handle. */
interface FinishedEntry {
  at: number;
  handle: string;
}

/** `a` before `b`: earlier finish first, then by handle (UTF-16 code units). */
function before(a: FinishedEntry, b: FinishedEntry): boolean {
  return a.at < b.at || (a.at === b.at && a.handle < b.handle);
}

/** The finished records, oldest finish first: what a prune takes from the front of. */
export class FinishedIndex {
  private readonly entries: FinishedEntry[] = [];

  /** How many finished records the index holds. */
  get size(): number {
    return this.entries.length;
  }

  /** The position of the first entry not before `entry`. */
  private find(entry: FinishedEntry): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (before(this.entries[mid] as FinishedEntry, entry)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Add `handle`, finished at `at` (records finish in time order, so this is mostly an append). */
  add(handle: string, at: number): void {
    const entry = { at, handle };
    const last = this.entries[this.entries.length - 1];
    if (last === undefined || before(last, entry)) {
      this.entries.push(entry);
      return;
    }
    const index = this.find(entry);
    const found = this.entries[index];
    if (found?.at === at && found.handle === handle) return;
    this.entries.splice(index, 0, entry);
  }

  /** Remove `handle`, finished at `at` (nothing happens when it is not there). */
  remove(handle: string, at: number): void {
    const index = this.find({ at, handle });
    const found = this.entries[index];
    if (found?.at === at && found.handle === handle) this.entries.splice(index, 1);
  }

  /**
   * The handles finished before `olderThan`, oldest first, at most `limit` of those `keep` lets go
   * (a record an owed event holds is passed over), and whether more may follow.
   */
  oldest(
    olderThan: number,
    limit: number,
    keep: (handle: string) => boolean,
  ): { handles: string[]; more: boolean } {
    const handles: string[] = [];
    for (const entry of this.entries) {
      if (entry.at >= olderThan) return { handles, more: false };
      if (keep(entry.handle)) continue;
      if (handles.length === limit) return { handles, more: true };
      handles.push(entry.handle);
    }
    return { handles, more: false };
  }
}
