/**
 * The in-memory {@link HandleStore}: records kept in this process only, one backend holding the
 * records of every binding scope and handing out one view per binding. It is what tests and
 * short-lived hosts use, and the reference behaviour the file and PostgreSQL stores match (the
 * contract suite in `test/store/contract.ts` runs against all three).
 *
 * The checks and errors every store shares come from `core/store-kit/kit.ts`. It deliberately does not
 * persist anything, validate the shape of a record's state (the durable stores do that on every
 * read) or coordinate between processes.
 */

import { readOptions } from '../../core/contract/options.js';
import type {
  Binding,
  HandleStoreFactory,
  ListPageKey,
  PruneQuery,
  PruneResult,
  VersionedRecord,
  WaitingPage,
  WaitingQuery,
} from '../../core/contract/ports.js';
import { bindingGeneration, bindingScope, MAX_UNFINISHED } from '../../core/contract/ports.js';
import { eventIdsOf } from '../../core/model/events.js';
import {
  finishedAtOf,
  type InteractionRecord,
  type InteractionStateKind,
  isUnfinished,
  isWatched,
} from '../../core/model/record.js';
import {
  compareOldestFirst,
  guardedView,
  handleExistsError,
  type ListingHandleStore,
  listKeyOf,
  principalQuotaError,
  principalQuotaOf,
  quotaPrincipalOf,
  staleVersionError,
  storeError,
  storeFullError,
} from '../../core/store-kit/kit.js';
import { ListingIndex } from '../../core/store-kit/listing-index.js';
import { outboxEventsOf } from '../../core/store-kit/outbox-rules.js';
import { processCursorKey } from '../../core/store-kit/process-key.js';
import { checkPruneQuery, FinishedIndex } from '../../core/store-kit/retention.js';
import { checkWaitingQuery, WaitingIndex } from '../../core/store-kit/waiting-index.js';
import { MemoryOutbox } from './memory-outbox.js';

/** Declared in `ports.ts`; exported here too, beside its in-memory implementation. */
export type { HandleStoreFactory } from '../../core/contract/ports.js';

interface MemoryEntry {
  scope: string;
  version: number;
  /** The record as JSON: what a caller gets back is never the object it handed in. */
  json: string;
  unfinished: boolean;
  /** Whether a watcher polls it (`waiting`, `ask_open`): in the index {@link HandleStoreFactory.waiting} pages. */
  watched: boolean;
  /** When it finished (`finishedAtOf`), for retention; absent while unfinished. */
  finishedAt: number | undefined;
  /** The record's state kind, generation and listing key: its place in the scope's listing index. */
  kind: InteractionStateKind;
  generation: string;
  key: ListPageKey;
}

/**
 * The records of one scope: the handles of its unfinished ones (what the cap counts, so a create
 * never walks the finished records, which have no cap), and the listing index a page is chosen
 * from.
 */
interface ScopeEntries {
  unfinished: Set<string>;
  listing: ListingIndex;
}

/** The indexes of a memory backend that span every scope. */
interface SharedIndexes {
  /** The handles of the watched records, sorted. */
  watched: WaitingIndex;
  /** The finished records, oldest finish first (retention). */
  finished: FinishedIndex;
}

function unindexShared(shared: SharedIndexes, handle: string, entry: MemoryEntry): void {
  if (entry.watched) shared.watched.remove(handle);
  if (entry.finishedAt !== undefined) shared.finished.remove(handle, entry.finishedAt);
}

function indexShared(shared: SharedIndexes, handle: string, entry: MemoryEntry): void {
  if (entry.watched) shared.watched.add(handle);
  if (entry.finishedAt !== undefined) shared.finished.add(handle, entry.finishedAt);
}

/** What {@link pruneMemory} removes from: a backend's records, their scopes, outbox and indexes. */
interface MemoryRecords {
  entries: Map<string, MemoryEntry>;
  byScope: Map<string, ScopeEntries>;
  outbox: MemoryOutbox;
  shared: SharedIndexes;
}

/**
 * {@link HandleStoreFactory.prune} of a memory backend: the oldest finished records from the
 * index, less those an owed event holds, each removed with its events within one turn of the
 * event loop (a read sees it whole or not at all).
 */
function pruneMemory(records: MemoryRecords, query: PruneQuery): PruneResult {
  const { olderThan, limit } = checkPruneQuery(query);
  const { entries, byScope, outbox, shared } = records;
  const eventsOf = (entry: MemoryEntry) => eventIdsOf(JSON.parse(entry.json) as InteractionRecord);
  const held = (handle: string) => {
    const entry = entries.get(handle);
    return entry !== undefined && outbox.holds(eventsOf(entry));
  };
  const { handles, more } = shared.finished.oldest(olderThan, limit, held);
  for (const handle of handles) {
    const entry = entries.get(handle);
    if (entry === undefined) continue;
    entries.delete(handle);
    outbox.forget(eventsOf(entry));
    unindexShared(shared, handle, entry);
    byScope.get(entry.scope)?.listing.remove(entry.generation, entry.kind, entry.key);
  }
  return { removed: handles.length, more };
}

/**
 * Create an in-memory store backend. Records live as long as the returned object; every view of
 * one backend shares them. Handles are one namespace across scopes, as in the durable stores: a
 * view never sees another scope's record, and cannot create a record under its handle either.
 * Operations run to completion within one turn of the event loop, so compare-and-set and the cap
 * of {@link MAX_UNFINISHED} are exact under any concurrency. As in every store, the cap is checked
 * when an unfinished record is created; an update never refuses for it. Its views have
 * `listPage`, and write every record as format 2 (a format 1 record handed back changed included).
 * A listing page is chosen from an index kept sorted per generation and state kind, so it costs
 * the page and a binary search, however many records the scope holds; cursors are signed with a
 * key of this process. `waiting` pages through the watched records of every scope from their
 * handles kept sorted. `ready` is always `ready`: the records live in this object.
 * It takes no options: a bag with any key is refused (`TypeError`), as every factory refuses an
 * option it does not know.
 *
 * @example
 * ```ts source="examples/snippets/core.examples.ts#createMemoryHandleStore"
 * const stores = createMemoryHandleStore();
 * const store = stores.forBinding(binding);
 * const created = await store.create(record); // version 1
 * await store.update({ ...record, updatedAt: now }, created.version); // version 2
 * ```
 */
export function createMemoryHandleStore(options?: Readonly<Record<string, never>>): HandleStoreFactory {
  readOptions('createMemoryHandleStore', options, { known: [], allowMissing: true });
  const entries = new Map<string, MemoryEntry>();
  /** The records of each scope, so a view never walks other scopes' records. */
  const byScope = new Map<string, ScopeEntries>();
  /** How many unfinished records each principal holds over all its scopes (the quota's count). */
  const openByPrincipal = new Map<string, number>();
  /** The events record writes added, and their deliveries (never part of a record's version). */
  const outbox = new MemoryOutbox();
  /** The indexes over every scope: the watched handles and the finished records (retention). */
  const shared: SharedIndexes = { watched: new WaitingIndex(), finished: new FinishedIndex() };
  const { watched } = shared;
  const unindex = (handle: string, entry: MemoryEntry) => unindexShared(shared, handle, entry);
  const index = (handle: string, entry: MemoryEntry) => indexShared(shared, handle, entry);

  /** Count `entry`'s record in (`by` 1) or out of (`by` -1) its principal's open records. */
  function countOpen(principal: string | undefined, entry: MemoryEntry | undefined, by: 1 | -1): void {
    if (principal === undefined || entry?.unfinished !== true) return;
    const open = (openByPrincipal.get(principal) ?? 0) + by;
    if (open === 0) openByPrincipal.delete(principal);
    else openByPrincipal.set(principal, open);
  }

  function scopeEntries(scope: string): ScopeEntries {
    let found = byScope.get(scope);
    if (found === undefined) {
      found = { unfinished: new Set(), listing: new ListingIndex() };
      byScope.set(scope, found);
    }
    return found;
  }

  function toVersioned(entry: MemoryEntry): VersionedRecord {
    return { version: entry.version, record: JSON.parse(entry.json) as InteractionRecord };
  }

  function entryOf(scope: string, version: number, record: InteractionRecord, json: string): MemoryEntry {
    const unfinished = isUnfinished(record);
    const generation = bindingGeneration(record.binding);
    const kind = record.state.kind;
    return {
      scope,
      version,
      json,
      unfinished,
      watched: isWatched(record),
      finishedAt: finishedAtOf(record),
      kind,
      generation,
      key: listKeyOf(record),
    };
  }

  function serialize(record: InteractionRecord): string {
    try {
      return JSON.stringify(record);
    } catch (cause) {
      throw storeError('The record to store cannot be written as JSON.', false, 'invalid_record', cause);
    }
  }

  /** {@link HandleStoreFactory.waiting}: a slice of the sorted handles, each record read now. */
  async function waiting(query: WaitingQuery): Promise<WaitingPage> {
    const checked = checkWaitingQuery(query);
    const { handles, more } = watched.page(checked);
    const records: VersionedRecord[] = [];
    for (const handle of handles) {
      const entry = entries.get(handle);
      if (entry?.watched === true) records.push(toVersioned(entry));
    }
    const last = handles[handles.length - 1];
    return more && last !== undefined ? { records, next: last } : { records };
  }

  return {
    outbox: () => outbox,
    waiting,
    // Records live in this object: nothing to reach, nothing to migrate, nothing to close.
    ready: async () => ({ kind: 'ready' }),
    prune: async (query) => pruneMemory({ entries, byScope, outbox, shared }, query),
    forBinding(binding: Binding): ListingHandleStore {
      const scope = bindingScope(binding);
      const principal = quotaPrincipalOf(binding);
      const { unfinished, listing } = scopeEntries(scope);
      const unlist = (handle: string, entry: MemoryEntry) => {
        listing.remove(entry.generation, entry.kind, entry.key);
        unfinished.delete(handle);
        unindex(handle, entry);
      };
      const enlist = (handle: string, entry: MemoryEntry) => {
        listing.add(entry.generation, entry.kind, entry.key);
        if (entry.unfinished) unfinished.add(handle);
        index(handle, entry);
      };
      const own = (handle: string): MemoryEntry | undefined => {
        const entry = entries.get(handle);
        return entry?.scope === scope ? entry : undefined;
      };
      const unfinishedEntries = (): MemoryEntry[] => {
        const out: MemoryEntry[] = [];
        for (const handle of unfinished) {
          const entry = entries.get(handle);
          if (entry !== undefined) out.push(entry);
        }
        return out;
      };
      return guardedView(scope, {
        async get(handle) {
          const entry = own(handle);
          return entry === undefined ? undefined : toVersioned(entry);
        },
        async create(record, limits) {
          const json = serialize(record);
          const quota = principalQuotaOf(record, limits);
          if (entries.has(record.handle)) throw handleExistsError();
          const open = isUnfinished(record);
          if (open && unfinished.size >= MAX_UNFINISHED) throw storeFullError();
          if (open && quota !== undefined && (openByPrincipal.get(quota.principal) ?? 0) >= quota.max) {
            throw principalQuotaError(quota.max);
          }
          const entry = entryOf(scope, 1, record, json);
          entries.set(record.handle, entry);
          outbox.add(outboxEventsOf(record));
          enlist(record.handle, entry);
          countOpen(principal, entry, 1);
          return toVersioned(entry);
        },
        async update(record, expectedVersion) {
          const json = serialize(record);
          const current = own(record.handle);
          if (current === undefined || current.version !== expectedVersion) throw staleVersionError();
          const entry = entryOf(scope, current.version + 1, record, json);
          entries.set(record.handle, entry);
          outbox.add(outboxEventsOf(record));
          unlist(record.handle, current);
          enlist(record.handle, entry);
          countOpen(principal, current, -1);
          countOpen(principal, entry, 1);
          return toVersioned(entry);
        },
        async delete(handle, expectedVersion) {
          const current = own(handle);
          if (current === undefined) return false;
          if (expectedVersion !== undefined && current.version !== expectedVersion) return false;
          entries.delete(handle);
          unlist(handle, current);
          countOpen(principal, current, -1);
          return true;
        },
        async listUnfinished() {
          return unfinishedEntries().map(toVersioned).sort(compareOldestFirst);
        },
        async countUnfinished() {
          return unfinished.size;
        },
        async listPage(query) {
          const { keys, more } = listing.page(query);
          const records: VersionedRecord[] = [];
          for (const key of keys) {
            const entry = entries.get(key.handle);
            if (entry !== undefined) records.push(toVersioned(entry));
          }
          return { records, more };
        },
        listCursorKey: async () => processCursorKey(),
      });
    },
  };
}
