/**
 * The in-memory {@link HandleStore}: records kept in this process only, one backend holding the
 * records of every binding scope and handing out one view per binding. It is what tests and
 * short-lived hosts use, and the reference behaviour the file and PostgreSQL stores match (the
 * contract suite in `test/store/contract.ts` runs against all three).
 *
 * It also holds the few write-side checks every store shares ({@link isStoreHandle},
 * {@link checkRecordForScope}). It deliberately does not persist anything, validate the shape of
 * a record's state (the durable stores do that on every read) or coordinate between processes.
 */
import { SessMcpError } from './errors.js';
import {
  type Binding,
  bindingScope,
  type HandleStore,
  MAX_UNFINISHED,
  type VersionedRecord,
} from './ports.js';
import { type InteractionRecord, isUnfinished, RECORD_FORMAT } from './record.js';

/**
 * A backend that holds the records of many bindings and hands out one {@link HandleStore} view
 * per binding. A view sees, counts and caps only the records of `bindingScope(binding)`; records
 * of the same scope with another credential or grant generation are returned (the engine reports
 * them as `BINDING_MISMATCH`).
 */
export interface HandleStoreFactory {
  /** The store view of one binding scope. Cheap: call it per tool call. */
  forBinding(binding: Binding): HandleStore;
}

/** A handle a store can hold: 1–200 of `A–Z a–z 0–9 . _ ~ -`, not starting with `.` or `-`. */
const HANDLE_PATTERN = /^[A-Za-z0-9_~][A-Za-z0-9._~-]{0,199}$/;

/**
 * True when `handle` can be a store key. Every store treats any other string as not found (so a
 * crafted handle can never name a path or another row) and refuses to create a record under it.
 */
export function isStoreHandle(handle: unknown): handle is string {
  return typeof handle === 'string' && HANDLE_PATTERN.test(handle);
}

/**
 * The write-side checks every store makes before it stores `record` in the view of `scope`: the
 * record format is {@link RECORD_FORMAT}, the handle is a store key and the record's binding is of
 * that scope. Throws a non-retryable `STATE_STORE_ERROR` (nothing is written) otherwise.
 */
export function checkRecordForScope(record: InteractionRecord, scope: string): void {
  if (record === null || typeof record !== 'object') {
    throw storeError('The record to store is not an object.', false, 'invalid_record');
  }
  if (record.format !== RECORD_FORMAT) {
    throw storeError(
      `The record to store has format ${String(record.format)}; this store writes format ${RECORD_FORMAT}.`,
      false,
      'unsupported_version',
    );
  }
  if (!isStoreHandle(record.handle)) {
    throw storeError(
      'The record to store has a handle that is not a valid store key.',
      false,
      'invalid_handle',
    );
  }
  let recordScope: string;
  try {
    recordScope = bindingScope(record.binding);
  } catch {
    throw storeError('The record to store has no valid binding.', false, 'invalid_record');
  }
  if (recordScope !== scope) {
    throw storeError(
      'The record to store belongs to another binding than this store view.',
      false,
      'foreign_scope',
    );
  }
}

/** A `STATE_STORE_ERROR` with a fixed-word `reason`. Messages never carry record contents. */
export function storeError(
  message: string,
  retryable: boolean,
  reason: string,
  cause?: unknown,
): SessMcpError {
  return new SessMcpError('STATE_STORE_ERROR', message, { retryable, reason, cause });
}

/** The `INVALID_STATE` a compare-and-set that lost reports: nothing was changed. */
export function staleVersionError(): SessMcpError {
  return new SessMcpError(
    'INVALID_STATE',
    'The interaction was changed by another call first; nothing was written. Read it again.',
    { reason: 'stale_version' },
  );
}

/** The `INVALID_STATE` a create under an existing handle reports. */
export function handleExistsError(): SessMcpError {
  return new SessMcpError('INVALID_STATE', 'A record with this handle exists already; nothing was written.', {
    reason: 'exists',
  });
}

/** The `STATE_STORE_FULL` a create over {@link MAX_UNFINISHED} reports. */
export function storeFullError(): SessMcpError {
  return new SessMcpError(
    'STATE_STORE_FULL',
    `This binding already holds ${MAX_UNFINISHED} unfinished interactions; complete or retire some first.`,
    { limit: MAX_UNFINISHED },
  );
}

/** Oldest first: by `createdAt`, then by handle, so every store lists in the same order. */
export function compareOldestFirst(a: VersionedRecord, b: VersionedRecord): number {
  if (a.record.createdAt !== b.record.createdAt) return a.record.createdAt < b.record.createdAt ? -1 : 1;
  return a.record.handle < b.record.handle ? -1 : a.record.handle > b.record.handle ? 1 : 0;
}

interface MemoryEntry {
  scope: string;
  version: number;
  /** The record as JSON: what a caller gets back is never the object it handed in. */
  json: string;
  unfinished: boolean;
}

/**
 * Create an in-memory store backend. Records live as long as the returned object; every view of
 * one backend shares them. Handles are one namespace across scopes, as in the durable stores: a
 * view never sees another scope's record, and cannot create a record under its handle either.
 * Operations run to completion within one turn of the event loop, so compare-and-set and the cap
 * of {@link MAX_UNFINISHED} are exact under any concurrency. As in every store, the cap is checked
 * when an unfinished record is created; an update never refuses for it.
 *
 * @example
 * ```ts
 * const stores = createMemoryHandleStore();
 * const store = stores.forBinding(binding);
 * const created = await store.create(record); // version 1
 * await store.update({ ...record, updatedAt: now }, created.version); // version 2
 * ```
 */
export function createMemoryHandleStore(): HandleStoreFactory {
  const entries = new Map<string, MemoryEntry>();
  /** The handles of each scope, so a view never walks other scopes' records. */
  const handlesByScope = new Map<string, Set<string>>();

  function handlesOf(scope: string): Set<string> {
    let handles = handlesByScope.get(scope);
    if (handles === undefined) {
      handles = new Set();
      handlesByScope.set(scope, handles);
    }
    return handles;
  }

  function toVersioned(entry: MemoryEntry): VersionedRecord {
    return { version: entry.version, record: JSON.parse(entry.json) as InteractionRecord };
  }

  function serialize(record: InteractionRecord): string {
    try {
      return JSON.stringify(record);
    } catch (cause) {
      throw storeError('The record to store cannot be written as JSON.', false, 'invalid_record', cause);
    }
  }

  return {
    forBinding(binding: Binding): HandleStore {
      const scope = bindingScope(binding);
      const handles = handlesOf(scope);
      const own = (handle: string): MemoryEntry | undefined => {
        const entry = isStoreHandle(handle) ? entries.get(handle) : undefined;
        return entry?.scope === scope ? entry : undefined;
      };
      const unfinishedEntries = (): MemoryEntry[] => {
        const out: MemoryEntry[] = [];
        for (const handle of handles) {
          const entry = entries.get(handle);
          if (entry?.unfinished) out.push(entry);
        }
        return out;
      };
      return {
        async get(handle) {
          const entry = own(handle);
          return entry === undefined ? undefined : toVersioned(entry);
        },
        async create(record) {
          checkRecordForScope(record, scope);
          const json = serialize(record);
          if (entries.has(record.handle)) throw handleExistsError();
          const unfinished = isUnfinished(record);
          if (unfinished && unfinishedEntries().length >= MAX_UNFINISHED) throw storeFullError();
          const entry: MemoryEntry = { scope, version: 1, json, unfinished };
          entries.set(record.handle, entry);
          handles.add(record.handle);
          return toVersioned(entry);
        },
        async update(record, expectedVersion) {
          checkRecordForScope(record, scope);
          const json = serialize(record);
          const current = own(record.handle);
          if (current === undefined || current.version !== expectedVersion) throw staleVersionError();
          const entry: MemoryEntry = {
            scope,
            version: current.version + 1,
            json,
            unfinished: isUnfinished(record),
          };
          entries.set(record.handle, entry);
          return toVersioned(entry);
        },
        async delete(handle, expectedVersion) {
          const current = own(handle);
          if (current === undefined) return false;
          if (expectedVersion !== undefined && current.version !== expectedVersion) return false;
          entries.delete(handle);
          handles.delete(handle);
          return true;
        },
        async listUnfinished() {
          return unfinishedEntries().map(toVersioned).sort(compareOldestFirst);
        },
        async countUnfinished() {
          return unfinishedEntries().length;
        },
      };
    },
  };
}
