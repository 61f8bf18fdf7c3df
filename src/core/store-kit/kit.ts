/**
 * What every {@link HandleStore} shares (memory, file, PostgreSQL): the rule for store keys, the
 * write-side checks a store makes before it writes a record (and the format it writes), the
 * errors of the store contract with their {@link StoreErrorReason} words, the order of
 * `listUnfinished`, and the order, query check and keyset of `listPage`. Each store imports these from
 * here, so the three agree on every verdict the contract suite asserts.
 *
 * It deliberately holds no storage of its own and no codec: how a record is laid out on a medium
 * is each store's business.
 */
import { SessMcpError } from '../contract/errors.js';
import type {
  Binding,
  CreateLimits,
  HandleStore,
  ListPage,
  ListPageKey,
  ListPageQuery,
  StoreErrorReason,
  VersionedRecord,
} from '../contract/ports.js';
import {
  bindingGeneration,
  bindingPrincipal,
  bindingScope,
  MAX_UNFINISHED,
  STORE_ERROR_REASONS,
} from '../contract/ports.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  type InteractionStateKind,
  listGroupOf,
  READABLE_RECORD_FORMATS,
  RECORD_FORMAT,
  type RecordFormat,
} from '../model/record.js';

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
 * The write-side checks every store makes before it stores `record` in the view of `scope`, and
 * the record as it is stored: the record format is one this version reads, the handle is a store
 * key and the record's binding is of that scope. Throws a non-retryable `STATE_STORE_ERROR`
 * (nothing is written) otherwise.
 *
 * Every store writes {@link RECORD_FORMAT} only. A record read at format 1 (written by 0.1.0) and
 * handed back changed, as the engine does, is written as format 2: format 1 is format 2 without
 * `title`, `expiresAt` and the withdraw states, so nothing else about it changes. The returned
 * record is what the store writes and returns.
 */
export function checkRecordForScope(record: InteractionRecord, scope: string): InteractionRecord {
  if (record === null || typeof record !== 'object') {
    throw storeError('The record to store is not an object.', false, 'invalid_record');
  }
  if (!READABLE_RECORD_FORMATS.includes(record.format as RecordFormat)) {
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
  return record.format === RECORD_FORMAT ? record : { ...record, format: RECORD_FORMAT };
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

/**
 * The principal an HTTP binding's open records count for under a per-principal quota
 * ({@link bindingPrincipal}); `undefined` for a stdio binding, which has no such quota.
 */
export function quotaPrincipalOf(binding: Binding): string | undefined {
  return binding.kind === 'http' ? bindingPrincipal(binding) : undefined;
}

/**
 * The quota principal ({@link quotaPrincipalOf}) of the records filed under `scope`, a
 * {@link bindingScope} string, or `undefined` for a stdio scope or a string that is not a scope. A
 * store that keeps a record's scope need not keep its principal: this derives it.
 */
export function principalOfScope(scope: string): string | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(scope);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === 'string')) return undefined;
  // A grant's scope names the client and the grant; a principal's shared scope ends at the principal.
  const [tag, origin, workspaceId, principalId, clientId, grantId] = parts as string[];
  const grant = tag === 'http' && parts.length === 6;
  if (!grant && !(tag === 'http-principal' && parts.length === 4)) return undefined;
  const binding: Binding = {
    kind: 'http',
    origin: origin!,
    workspaceId: workspaceId!,
    principalId: principalId!,
    clientId: clientId ?? '',
    grantId: grantId ?? '',
    grantGeneration: '',
  };
  if (!grant) binding.share = 'principal';
  return quotaPrincipalOf(binding);
}

/** The `PRINCIPAL_QUOTA_REACHED` a create over {@link CreateLimits.maxOpenPerPrincipal} reports. */
export function principalQuotaError(max: number): SessMcpError {
  return new SessMcpError(
    'PRINCIPAL_QUOTA_REACHED',
    `This caller already holds ${max} open interactions on this server, its quota; nothing was created. ` +
      'Complete or withdraw one first.',
    { limit: max },
  );
}

/**
 * The per-principal quota a create of `record` must keep, with the principal it counts for:
 * `undefined` when there is none (no limit given, or a binding without a principal). A limit that
 * is not a whole number from 1 is a defect of the caller: refused, nothing written.
 */
export function principalQuotaOf(
  record: InteractionRecord,
  limits: CreateLimits | undefined,
): { principal: string; max: number } | undefined {
  const max = limits?.maxOpenPerPrincipal;
  if (max === undefined) return undefined;
  if (!Number.isSafeInteger(max) || max < 1) {
    throw storeError('maxOpenPerPrincipal must be a whole number from 1.', false, 'invalid_record');
  }
  const principal = quotaPrincipalOf(record.binding);
  return principal === undefined ? undefined : { principal, max };
}

/** Oldest first: by `createdAt`, then by handle, so every store lists in the same order. */
export function compareOldestFirst(a: VersionedRecord, b: VersionedRecord): number {
  if (a.record.createdAt !== b.record.createdAt) return a.record.createdAt < b.record.createdAt ? -1 : 1;
  return a.record.handle < b.record.handle ? -1 : a.record.handle > b.record.handle ? 1 : 0;
}

/** A {@link HandleStore} whose `listPage` is there (every store of this package). */
export type ListingHandleStore = HandleStore & Required<Pick<HandleStore, 'listPage'>>;

/**
 * The view of `scope` over `inner` with the checks every store makes in front of its medium: a
 * handle that is not a store key is not found (`get`) and not deleted (`delete`, as is an
 * `expectedVersion` that cannot be a version), a record is written only after (and as)
 * {@link checkRecordForScope}, and a listing query only after {@link checkListPageQuery}. `inner`
 * then sees only store keys, records of its scope at {@link RECORD_FORMAT} and valid queries.
 */
export function guardedView(scope: string, inner: ListingHandleStore): ListingHandleStore {
  return {
    get: async (handle) => (isStoreHandle(handle) ? inner.get(handle) : undefined),
    create: async (record, limits) => inner.create(checkRecordForScope(record, scope), limits),
    update: async (record, expectedVersion) =>
      inner.update(checkRecordForScope(record, scope), expectedVersion),
    async delete(handle, expectedVersion) {
      if (!isStoreHandle(handle)) return false;
      if (expectedVersion !== undefined && !isStoreVersion(expectedVersion)) return false;
      return inner.delete(handle, expectedVersion);
    },
    listUnfinished: () => inner.listUnfinished(),
    countUnfinished: () => inner.countUnfinished(),
    listPage: async (query) => inner.listPage(checkListPageQuery(query)),
    ...(inner.listCursorKey === undefined ? {} : { listCursorKey: inner.listCursorKey }),
  };
}

/** True when `version` can be a stored version (a whole number from 1); no other can match. */
export function isStoreVersion(version: unknown): version is number {
  return typeof version === 'number' && Number.isSafeInteger(version) && version >= 1;
}

// ---------------------------------------------------------------------------------------------
// Listing

/** The most records one {@link ListPageQuery} may ask for. */
export const MAX_LIST_PAGE_LIMIT = 100;

const KNOWN_KINDS: ReadonlySet<string> = new Set(INTERACTION_STATE_KINDS);

/**
 * A {@link ListPageQuery} checked, as a store runs it: `limit` a whole number from 1 to
 * {@link MAX_LIST_PAGE_LIMIT}, `kinds` (when given) state kinds, `after` (when given) a
 * {@link ListPageKey}. Anything else is a `TypeError` naming the field: a caller's mistake, never
 * a store failure. The copy returned shares nothing with the caller's query.
 */
export function checkListPageQuery(query: ListPageQuery): ListPageQuery {
  if (query === null || typeof query !== 'object' || Array.isArray(query)) {
    throw new TypeError('listPage: query must be an object.');
  }
  const { limit, kinds, after, generation } = query;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_PAGE_LIMIT) {
    throw new TypeError(`listPage: query.limit must be a whole number from 1 to ${MAX_LIST_PAGE_LIMIT}.`);
  }
  const out: ListPageQuery = { limit };
  if (kinds !== undefined) {
    if (!Array.isArray(kinds) || kinds.some((kind) => typeof kind !== 'string' || !KNOWN_KINDS.has(kind))) {
      throw new TypeError('listPage: query.kinds must be a list of record state kinds.');
    }
    out.kinds = [...new Set(kinds)];
  }
  if (generation !== undefined) {
    if (typeof generation !== 'string') throw new TypeError('listPage: query.generation must be a string.');
    out.generation = generation;
  }
  if (after !== undefined) {
    if (
      after === null ||
      typeof after !== 'object' ||
      ![0, 1, 2].includes(after.group) ||
      typeof after.createdAt !== 'string' ||
      typeof after.handle !== 'string'
    ) {
      throw new TypeError(
        'listPage: query.after must be a listing key { group: 0, 1 or 2, createdAt: string, handle: string }.',
      );
    }
    out.after = { group: after.group, createdAt: after.createdAt, handle: after.handle };
  }
  return out;
}

/** The listing key of a record: its {@link ListGroup}, `createdAt` and handle. */
export function listKeyOf(record: InteractionRecord): ListPageKey {
  return { group: listGroupOf(record.state.kind), createdAt: record.createdAt, handle: record.handle };
}

/** Strings compared as UTF-16 code units (the `"C"` collation of ASCII text). */
function compareUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Listing order of two keys: `group` ascending, then `createdAt` descending, then `handle`
 * descending. Negative when `a` comes first.
 */
export function compareListKeys(a: ListPageKey, b: ListPageKey): number {
  if (a.group !== b.group) return a.group - b.group;
  return compareUnits(b.createdAt, a.createdAt) || compareUnits(b.handle, a.handle);
}

/** Listing order of two records ({@link compareListKeys} of their keys). */
export function compareListOrder(a: VersionedRecord, b: VersionedRecord): number {
  return compareListKeys(listKeyOf(a.record), listKeyOf(b.record));
}

/**
 * Whether a record of this kind, generation and key belongs on the page `query` asks for, before
 * the limit: its kind is one of `query.kinds`, its generation `query.generation`, and it comes
 * strictly after `query.after`.
 */
export function onPage(
  query: ListPageQuery,
  kind: InteractionStateKind,
  generation: string,
  key: ListPageKey,
): boolean {
  if (query.kinds !== undefined && !query.kinds.includes(kind)) return false;
  if (query.generation !== undefined && generation !== query.generation) return false;
  return query.after === undefined || compareListKeys(key, query.after) > 0;
}

/**
 * The page of `query` from `candidates` (records of the view's scope, in any order): those
 * {@link onPage}, in listing order, at most `query.limit`, and whether more follow.
 */
export function pageOf(query: ListPageQuery, candidates: readonly VersionedRecord[]): ListPage {
  const matching = candidates
    .filter((entry) =>
      onPage(
        query,
        entry.record.state.kind,
        bindingGeneration(entry.record.binding),
        listKeyOf(entry.record),
      ),
    )
    .sort(compareListOrder);
  return { records: matching.slice(0, query.limit), more: matching.length > query.limit };
}
