/**
 * What every {@link HandleStore} shares (memory, file, PostgreSQL): the rule for store keys, the
 * write-side checks a store makes before it writes a record, the errors of the store contract with
 * their {@link StoreErrorReason} words, and the one listing order. Each store imports these from
 * here, so the three agree on every verdict the contract suite asserts.
 *
 * It deliberately holds no storage of its own and no codec: how a record is laid out on a medium
 * is each store's business.
 */
import { SessMcpError } from './errors.js';
import type { HandleStore, StoreErrorReason, VersionedRecord } from './ports.js';
import { bindingScope, MAX_UNFINISHED, STORE_ERROR_REASONS } from './ports.js';
import { type InteractionRecord, RECORD_FORMAT } from './record.js';

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
  reason: StoreErrorReason,
  cause?: unknown,
): SessMcpError {
  return new SessMcpError('STATE_STORE_ERROR', message, { retryable, reason, cause });
}

/**
 * The {@link StoreErrorReason} of a store failure that is carried on (e.g. read once and thrown
 * again): its own word when it has one of the contract's, `corrupt` otherwise.
 */
export function storeReasonOf(error: SessMcpError): StoreErrorReason {
  return isStoreErrorReason(error.reason) ? error.reason : 'corrupt';
}

const REASONS: ReadonlySet<string> = new Set(STORE_ERROR_REASONS);

/** True for a word of {@link StoreErrorReason}. */
export function isStoreErrorReason(reason: unknown): reason is StoreErrorReason {
  return typeof reason === 'string' && REASONS.has(reason);
}

/** The `INVALID_STATE` a compare-and-set that lost reports: nothing was changed. */
export function staleVersionError(): SessMcpError {
  return new SessMcpError(
    'INVALID_STATE',
    'The interaction was changed by another call first; nothing was written. Read it again.',
    { reason: 'stale_version' satisfies StoreErrorReason },
  );
}

/** The `INVALID_STATE` a create under an existing handle reports. */
export function handleExistsError(): SessMcpError {
  return new SessMcpError('INVALID_STATE', 'A record with this handle exists already; nothing was written.', {
    reason: 'exists' satisfies StoreErrorReason,
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

/**
 * The view of `scope` over `inner` with the checks every store makes in front of its medium: a
 * handle that is not a store key is not found (`get`) and not deleted (`delete`, as is an
 * `expectedVersion` that cannot be a version), and a record is written only after
 * {@link checkRecordForScope}. `inner` then sees only store keys and records of its scope.
 */
export function guardedView(scope: string, inner: HandleStore): HandleStore {
  return {
    get: async (handle) => (isStoreHandle(handle) ? inner.get(handle) : undefined),
    async create(record) {
      checkRecordForScope(record, scope);
      return inner.create(record);
    },
    async update(record, expectedVersion) {
      checkRecordForScope(record, scope);
      return inner.update(record, expectedVersion);
    },
    async delete(handle, expectedVersion) {
      if (!isStoreHandle(handle)) return false;
      if (expectedVersion !== undefined && !isStoreVersion(expectedVersion)) return false;
      return inner.delete(handle, expectedVersion);
    },
    listUnfinished: () => inner.listUnfinished(),
    countUnfinished: () => inner.countUnfinished(),
  };
}

/** True when `version` can be a stored version (a whole number from 1); no other can match. */
export function isStoreVersion(version: unknown): version is number {
  return typeof version === 'number' && Number.isSafeInteger(version) && version >= 1;
}
