/**
 * `sess_list`: what this caller has, from the local records only, and with `handle` one of them
 * (inspect). It sends nothing to Sess, so it is fast and works while Sess is down, and it changes
 * no record.
 *
 * A listing is a keyset over (group, `createdAt`, handle) in the order of `ListPage`: through the
 * store's optional `listPage` when it has one (asked for this caller's generation and state
 * kinds, which the store filters itself), else through `listUnfinished` sorted into the same
 * order (and then without finished records). The cursor (`list-cursor.ts`) is opaque to the
 * caller and signed with the store's key. A record that changed after the listing started is left
 * out of later pages, so paging lists nothing twice while states change; one call reads at most
 * {@link LIST_PAGE_BUDGET} store pages, and when those held too few records to list it returns
 * what it found with a `next_cursor` where it stopped, so no call's work grows with what the
 * store holds.
 *
 * Deliberately never shows the link or an answer value: items are built field by field from the
 * record, and the only Surface shown (on inspect) is the agent's own.
 */
import { ARGUMENT_LIMITS } from '../contract/limits.js';
import type { ListPage, ListPageKey, ListPageQuery, VersionedRecord } from '../contract/ports.js';
import { bindingGeneration, bindingScope, hasOneGeneration, sameGeneration } from '../contract/ports.js';
import type { ListItem, ListResult } from '../contract/result.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  type InteractionState,
  type InteractionStateKind,
  kindsOfListState,
  type ListState,
  listStateOf,
  ownerCodeOf,
} from '../model/record.js';
import type { Surface } from '../model/surface.js';
import { compareListKeys, listKeyOf, MAX_LIST_PAGE_LIMIT, storeError } from '../store-kit/kit.js';
import { type Call, confirmedExpiry } from './call.js';
import { readCursor, writeCursor } from './list-cursor.js';
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
  const last = page.last ?? (page.records.length > 0 ? listKeyOf(page.records.at(-1)!) : undefined);
  if (page.more && last !== undefined) {
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

/** The most store pages one `sess_list` call reads. */
export const LIST_PAGE_BUDGET = 3;

/**
 * Through the store's `listPage`, for this caller's generation and kinds: pages until `limit`
 * records are listed, none is left, or {@link LIST_PAGE_BUDGET} pages were read (a record changed
 * since the listing started is left out here, and so is anything a store returns that it should
 * have filtered). The first page asks for what is still to list, later ones for a full page.
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
  // A caller whose records are of several generations (shared by its principal) asks for all
  // of them; `listed` leaves out those of its own grant at another generation.
  const { binding } = call.auth;
  const generation = hasOneGeneration(binding) ? bindingGeneration(binding) : undefined;
  for (let pages = 0; records.length < query.limit && more && pages < LIST_PAGE_BUDGET; pages++) {
    const ask: ListPageQuery = { limit: pages === 0 ? query.limit - records.length : MAX_LIST_PAGE_LIMIT };
    if (generation !== undefined) ask.generation = generation;
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
      sameGeneration(record.binding, call.auth.binding)
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
