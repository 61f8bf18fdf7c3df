/**
 * The listing index of the in-process stores (memory, and the file store's summary): the listing
 * keys of one binding scope, kept sorted per (generation, state kind), so a `listPage` finds where
 * its page starts by binary search and merges the few lists its query names. A page then costs
 * `O(lists × (log n + limit))`, however many records of other generations or kinds the scope
 * holds, and never holds the event loop for longer than that.
 *
 * It deliberately holds keys only: the records, and whether one is still what its key says, are
 * the store's.
 */
import type { ListPageKey, ListPageQuery } from '../contract/ports.js';
import type { InteractionStateKind } from '../model/record.js';
import { compareListKeys } from './kit.js';

/**
 * Keys in reverse listing order: the last element is listed first, so keys of records created
 * now (newest, listed first in their group) are appended, not inserted at the front.
 */
type KeyList = ListPageKey[];

/** The number of elements of `list` that come strictly after `after` in listing order. */
function countAfter(list: KeyList, after: ListPageKey): number {
  // The elements listed after `after` are a prefix of the array (reverse listing order).
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareListKeys(list[mid] as ListPageKey, after) > 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** One scope's listing keys by generation and state kind. */
export class ListingIndex {
  private readonly lists = new Map<string, Map<InteractionStateKind, KeyList>>();

  /** How many keys the index holds. */
  get size(): number {
    let n = 0;
    for (const kinds of this.lists.values()) for (const list of kinds.values()) n += list.length;
    return n;
  }

  add(generation: string, kind: InteractionStateKind, key: ListPageKey): void {
    let kinds = this.lists.get(generation);
    if (kinds === undefined) {
      kinds = new Map();
      this.lists.set(generation, kinds);
    }
    let list = kinds.get(kind);
    if (list === undefined) {
      list = [];
      kinds.set(kind, list);
    }
    const last = list[list.length - 1];
    if (last === undefined || compareListKeys(key, last) < 0) list.push(key);
    else list.splice(countAfter(list, key), 0, key);
  }

  /** Remove the key of this generation and kind; nothing happens when it is not there. */
  remove(generation: string, kind: InteractionStateKind, key: ListPageKey): void {
    const list = this.lists.get(generation)?.get(kind);
    if (list === undefined) return;
    const at = countAfter(list, key);
    const found = list[at];
    if (found !== undefined && compareListKeys(found, key) === 0) list.splice(at, 1);
  }

  /**
   * The keys of the page `query` asks for (of its `kinds` and `generation`, strictly after its
   * `after`), in listing order, at most `query.limit`, and whether more follow.
   */
  page(query: ListPageQuery): { keys: ListPageKey[]; more: boolean } {
    const heads: { list: KeyList; next: number }[] = [];
    for (const [generation, kinds] of this.lists) {
      if (query.generation !== undefined && generation !== query.generation) continue;
      for (const [kind, list] of kinds) {
        if (query.kinds !== undefined && !query.kinds.includes(kind)) continue;
        const next = (query.after === undefined ? list.length : countAfter(list, query.after)) - 1;
        if (next >= 0) heads.push({ list, next });
      }
    }
    const keys: ListPageKey[] = [];
    while (heads.length > 0) {
      let best = 0;
      for (let i = 1; i < heads.length; i++) {
        const head = heads[i]!;
        const current = heads[best]!;
        if (compareListKeys(head.list[head.next]!, current.list[current.next]!) < 0) best = i;
      }
      if (keys.length === query.limit) return { keys, more: true };
      const chosen = heads[best]!;
      keys.push(chosen.list[chosen.next]!);
      chosen.next -= 1;
      if (chosen.next < 0) heads.splice(best, 1);
    }
    return { keys, more: false };
  }
}
