/**
 * `sess_list`: what this caller has, from the local records only, and with `handle` one of them
 * (inspect). It sends nothing to Sess, so it is fast and works while Sess is down, and it changes
 * no record.
 *
 * A listing is a keyset over (group, `createdAt`, handle) in the order of `ListPage`: through the
 * store's optional `listPage` when it has one, else through `listUnfinished` sorted into the same
 * order (and then without finished records). The cursor is opaque to the caller: base64url of a
 * small JSON array holding the last key, the state filter, when the listing started and a digest
 * that binds it to the caller's binding (scope and generation). A record that changed after the
 * listing started is left out of later pages, so paging lists nothing twice while states change.
 *
 * Deliberately never shows the link or an answer value: items are built field by field from the
 * record, and the only Surface shown (on inspect) is the agent's own.
 */
import { base64UrlDecode, base64UrlEncode } from '../codec/base64url.js';
import { SessMcpError } from '../contract/errors.js';
import { ARGUMENT_LIMITS } from '../contract/limits.js';
import type { ListPage, ListPageKey, ListPageQuery, VersionedRecord } from '../contract/ports.js';
import { bindingGeneration, bindingScope } from '../contract/ports.js';
import type { ListItem, ListResult } from '../contract/result.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  type InteractionState,
  type InteractionStateKind,
  kindsOfListState,
  LIST_STATES,
  type ListGroup,
  type ListState,
  listStateOf,
  ownerCodeOf,
} from '../model/record.js';
import type { Surface } from '../model/surface.js';
import { compareListKeys, listKeyOf, storeError } from '../store-kit/kit.js';
import { type Call, confirmedExpiry } from './call.js';
import { jsonDigest } from './identity.js';
import { storeFailure } from './refusals.js';

/** A validated `sess_list`. */
export interface ListOperation {
  state?: ListState;
  /** 1–100; {@link ARGUMENT_LIMITS.defaultListLimit} when absent. */
  limit?: number;
  cursor?: string;
  /** Inspect this one interaction; never sent with the listing arguments. */
  handle?: string;
}

/** `sess_list`: one page of this caller's interactions, or (with `handle`) one of them. */
export async function list(call: Call, op: ListOperation): Promise<ListResult> {
  if (op.handle !== undefined) return inspect(call, op.handle);
  const limit = op.limit ?? ARGUMENT_LIMITS.defaultListLimit;
  const filter = op.state ?? null;
  const resumed = op.cursor === undefined ? undefined : await readCursor(call, op.cursor, filter);
  // When the listing started: a record changed after it is left out of the later pages.
  const startedAt = resumed?.startedAt ?? call.nowIso();
  const kinds = op.state === undefined ? undefined : new Set(kindsOfListState(op.state));
  const listed = (record: InteractionRecord): boolean =>
    visible(call, record) &&
    (kinds === undefined || kinds.has(record.state.kind)) &&
    (resumed === undefined || !changedSince(record, startedAt));
  const store = call.auth.store;
  const page =
    typeof store.listPage === 'function'
      ? await throughListPage(call, { kinds, after: resumed?.key, limit }, listed)
      : await throughUnfinished(call, { after: resumed?.key, limit }, listed);
  const result: ListResult = { items: page.records.map((record) => itemOf(record)) };
  if (page.more && page.records.length > 0) {
    const last = page.last ?? listKeyOf(page.records[page.records.length - 1]!);
    result.next_cursor = await writeCursor(call, { filter, key: last, startedAt });
  }
  return result;
}

/** One interaction with the agent's own current Surface: scoped and refused like every tool. */
async function inspect(call: Call, handle: string): Promise<ListResult> {
  const record = recordOf(await call.load(handle));
  const item = itemOf(record);
  const surface = surfaceOf(record.state);
  if (surface !== undefined) item.surface = surface;
  return { items: [item] };
}

// ---------------------------------------------------------------------------------------------
// Reading the store

/** What one listing read produced: records in listing order, whether more follow, the last key read. */
interface Read {
  records: InteractionRecord[];
  more: boolean;
  /** The key of the last record examined (listed or left out), where the next page starts. */
  last?: ListPageKey;
}

/**
 * Through the store's `listPage`: pages until `limit` records are listed or none is left, since
 * records of another generation (or changed since the listing started) are left out here.
 */
async function throughListPage(
  call: Call,
  query: {
    kinds: ReadonlySet<InteractionStateKind> | undefined;
    after: ListPageKey | undefined;
    limit: number;
  },
  listed: (record: InteractionRecord) => boolean,
): Promise<Read> {
  const store = call.auth.store;
  const records: InteractionRecord[] = [];
  let after = query.after;
  let more = true;
  while (records.length < query.limit && more) {
    const ask: ListPageQuery = { limit: query.limit };
    if (query.kinds !== undefined) ask.kinds = [...query.kinds];
    if (after !== undefined) ask.after = after;
    const page: ListPage = await call.store(() =>
      (store.listPage as NonNullable<typeof store.listPage>)(ask),
    );
    if (page === null || typeof page !== 'object' || !Array.isArray(page.records)) {
      throw storeFailure(new TypeError('listPage returned no records array'));
    }
    let index = 0;
    let progressed = false;
    for (; index < page.records.length && records.length < query.limit; index++) {
      const record = recordOf(page.records[index]);
      const key = listKeyOf(record);
      // A store that returns a record at or before where the page starts makes no progress.
      if (after !== undefined && compareListKeys(key, after) <= 0) continue;
      after = key;
      progressed = true;
      if (listed(record)) records.push(record);
    }
    more = progressed && (index < page.records.length || page.more === true);
  }
  const read: Read = { records, more };
  if (after !== undefined) read.last = after;
  return read;
}

/** Through `listUnfinished`, sorted into listing order: finished records are not listed. */
async function throughUnfinished(
  call: Call,
  query: { after: ListPageKey | undefined; limit: number },
  listed: (record: InteractionRecord) => boolean,
): Promise<Read> {
  const all = await call.store(() => call.auth.store.listUnfinished());
  if (!Array.isArray(all)) throw storeFailure(new TypeError('listUnfinished returned no array'));
  const { after } = query;
  const candidates = all
    .map(recordOf)
    .filter((record) => after === undefined || compareListKeys(listKeyOf(record), after) > 0)
    .filter(listed)
    .sort((a, b) => compareListKeys(listKeyOf(a), listKeyOf(b)));
  return { records: candidates.slice(0, query.limit), more: candidates.length > query.limit };
}

function recordOf(entry: VersionedRecord | undefined): InteractionRecord {
  const record = entry?.record;
  const kind = record?.state?.kind as string | undefined;
  if (
    record === undefined ||
    typeof record.handle !== 'string' ||
    typeof record.createdAt !== 'string' ||
    !(INTERACTION_STATE_KINDS as readonly string[]).includes(kind ?? '')
  ) {
    throw storeError('A stored record is unreadable. The owner must review it.', false, 'corrupt');
  }
  return record;
}

/** Another binding's records are invisible; the same scope with another generation is left out. */
function visible(call: Call, record: InteractionRecord): boolean {
  try {
    return (
      bindingScope(record.binding) === bindingScope(call.auth.binding) &&
      bindingGeneration(record.binding) === bindingGeneration(call.auth.binding)
    );
  } catch {
    return false;
  }
}

function changedSince(record: InteractionRecord, startedAt: string): boolean {
  return Date.parse(record.updatedAt) > Date.parse(startedAt);
}

// ---------------------------------------------------------------------------------------------
// Items

function itemOf(record: InteractionRecord): ListItem {
  const { state } = record;
  const item: ListItem = {
    handle: record.handle,
    revision: revisionOf(state),
    state: listStateOf(state.kind),
    kind: isAsk(state) ? 'ask' : 'session',
    title: typeof record.title === 'string' ? record.title : null,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
  const code = ownerCodeOf(state);
  if (code !== undefined) item.code = code;
  const expiresAt = record.expiresAt ?? confirmedExpiry(state);
  if (expiresAt !== undefined) item.expiresAt = expiresAt;
  const max = maxOf(state);
  if (max !== undefined) item.max = max;
  return item;
}

function revisionOf(state: InteractionState): number {
  switch (state.kind) {
    case 'create_intent':
    case 'create_unknown':
    case 'ask_open':
    case 'ask_close_pending':
    case 'ask_closed':
      return 1;
    case 'blocked':
      return state.revision ?? 1;
    default:
      return state.revision;
  }
}

function isAsk(state: InteractionState): boolean {
  switch (state.kind) {
    case 'ask_open':
    case 'ask_close_pending':
    case 'ask_closed':
      return true;
    case 'create_intent':
    case 'create_unknown':
      return state.request.respondents !== undefined;
    case 'blocked':
      return state.previous.startsWith('ask_');
    default:
      return false;
  }
}

function maxOf(state: InteractionState): number | undefined {
  switch (state.kind) {
    case 'ask_open':
    case 'ask_close_pending':
      return state.max;
    case 'create_intent':
    case 'create_unknown':
      return state.request.respondents?.max;
    default:
      return undefined;
  }
}

/** The agent's own Surface the record still holds for what the person sees (never an answer). */
function surfaceOf(state: InteractionState): Surface | undefined {
  switch (state.kind) {
    case 'waiting':
    case 'answered':
    case 'publish_pending':
    case 'complete_pending':
    case 'withdraw_pending':
    case 'ask_open':
    case 'ask_close_pending':
    case 'ask_closed':
      return state.surface;
    case 'create_intent':
    case 'create_unknown':
      return state.request.surface;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The cursor

const CURSOR_VERSION = 1;
const DIGEST_PREFIX = 'sha256:';

/** Where a listing resumes. */
interface Resume {
  filter: ListState | null;
  key: ListPageKey;
  /** When the first page was read (ISO 8601). */
  startedAt: string;
}

/** The digest binding a cursor to its content and to the caller's binding (scope and generation). */
async function cursorDigest(call: Call, resume: Resume): Promise<string> {
  const { binding } = call.auth;
  const digest = await jsonDigest([
    CURSOR_VERSION,
    resume.filter,
    resume.key.group,
    resume.key.createdAt,
    resume.key.handle,
    resume.startedAt,
    bindingScope(binding),
    bindingGeneration(binding),
  ]);
  return digest.slice(DIGEST_PREFIX.length);
}

async function writeCursor(call: Call, resume: Resume): Promise<string> {
  const { filter, key, startedAt } = resume;
  const body = [
    CURSOR_VERSION,
    filter,
    key.group,
    key.createdAt,
    key.handle,
    startedAt,
    await cursorDigest(call, resume),
  ];
  return base64UrlEncode(new TextEncoder().encode(JSON.stringify(body)));
}

function cursorError(message: string): SessMcpError {
  return new SessMcpError('INVALID_ARGUMENTS', `/cursor ${message}`, { field: '/cursor' });
}

const LAST_PAGE_HINT =
  'Send next_cursor exactly as returned, or leave cursor out to start from the first page.';

/** Decode a cursor and check it is this caller's, unchanged, and for the same state filter. */
async function readCursor(call: Call, cursor: string, filter: ListState | null): Promise<Resume> {
  const resume = parseCursor(cursor);
  if (resume === undefined) throw cursorError(`is not a cursor sess_list returned. ${LAST_PAGE_HINT}`);
  const { digest, ...rest } = resume;
  if (digest !== (await cursorDigest(call, rest))) {
    throw cursorError(`was not returned to this caller, or it was changed. ${LAST_PAGE_HINT}`);
  }
  if (rest.filter !== filter) {
    throw cursorError(
      'belongs to a listing with another state filter. Send the same state as for its first page, or leave cursor out.',
    );
  }
  return rest;
}

const GROUPS: readonly ListGroup[] = [0, 1, 2];

function parseCursor(cursor: string): (Resume & { digest: string }) | undefined {
  // Only the one canonical spelling of these bytes is a cursor.
  const bytes = base64UrlDecode(cursor);
  if (bytes === undefined) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (!Array.isArray(body) || body.length !== 7) return undefined;
  const [version, filter, group, createdAt, handle, startedAt, digest] = body as unknown[];
  if (version !== CURSOR_VERSION) return undefined;
  if (filter !== null && !(LIST_STATES as readonly unknown[]).includes(filter)) return undefined;
  if (!GROUPS.includes(group as ListGroup)) return undefined;
  if (typeof createdAt !== 'string' || typeof handle !== 'string') return undefined;
  if (typeof startedAt !== 'string' || Number.isNaN(Date.parse(startedAt))) return undefined;
  if (typeof digest !== 'string') return undefined;
  return {
    filter: filter as ListState | null,
    key: { group: group as ListGroup, createdAt, handle },
    startedAt,
    digest,
  };
}
