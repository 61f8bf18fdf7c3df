/**
 * The `sess_list` cursor: where a listing resumes, opaque to the caller. It is base64url of a
 * small JSON array holding the last key examined, the state filter, when the listing started and
 * an HMAC-SHA-256 over those and the caller's binding (scope and generation), keyed with the
 * store's {@link HandleStore.listCursorKey} (or this process's key for a store without one). A
 * caller can therefore neither forge a cursor nor change one it was given (an old `startedAt`
 * included), and a cursor made on one instance pages on every instance sharing the store.
 *
 * It deliberately never puts the key, or anything derived from it but the MAC, in a message: a
 * refused cursor is refused in the same words whatever was wrong with it.
 */
import { base64UrlDecode, base64UrlEncode } from '../codec/base64url.js';
import { SessMcpError } from '../contract/errors.js';
import {
  bindingGeneration,
  bindingScope,
  type HandleStore,
  LIST_CURSOR_KEY_BYTES,
  type ListPageKey,
} from '../contract/ports.js';
import { LIST_STATES, type ListGroup, type ListState } from '../model/record.js';
import { processCursorKey } from '../store-kit/process-key.js';
import type { Call } from './call.js';
import { storeFailure } from './refusals.js';

/** Version 1 carried an unkeyed SHA-256; it is refused like any cursor this version did not make. */
const CURSOR_VERSION = 2;

/** Where a listing resumes. */
export interface Resume {
  filter: ListState | null;
  key: ListPageKey;
  /** When the first page was read (ISO 8601). */
  startedAt: string;
}

/** HMAC keys imported, by the key's base64url: a store hands out the same few keys. */
const imported = new Map<string, Promise<CryptoKey>>();
/** More keys than a process meets (one per store backend); the oldest is dropped beyond it. */
const MAX_IMPORTED = 16;

function hmacKey(bytes: Uint8Array): Promise<CryptoKey> {
  const id = base64UrlEncode(bytes);
  let found = imported.get(id);
  if (found === undefined) {
    found = globalThis.crypto.subtle.importKey(
      'raw',
      new Uint8Array(bytes),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    );
    if (imported.size >= MAX_IMPORTED) imported.delete(imported.keys().next().value as string);
    imported.set(id, found);
  }
  return found;
}

/** The store's cursor key, checked, or this process's key for a store that has none. */
async function cursorKey(call: Call): Promise<CryptoKey> {
  const store: HandleStore = call.auth.store;
  if (typeof store.listCursorKey !== 'function') return hmacKey(processCursorKey());
  const bytes = await call.store(() => (store.listCursorKey as () => Promise<Uint8Array>)());
  if (!(bytes instanceof Uint8Array) || bytes.length < LIST_CURSOR_KEY_BYTES) {
    throw storeFailure(new TypeError(`listCursorKey returned fewer than ${LIST_CURSOR_KEY_BYTES} bytes`));
  }
  return hmacKey(bytes);
}

/** The fields a cursor carries, in order: its version and `resume`. */
function cursorFields(resume: Resume): unknown[] {
  const { filter, key, startedAt } = resume;
  return [CURSOR_VERSION, filter, key.group, key.createdAt, key.handle, startedAt];
}

/** The bytes the MAC covers: the cursor's content and the caller's binding. */
function signedBytes(call: Call, resume: Resume): Uint8Array<ArrayBuffer> {
  const { binding } = call.auth;
  const body = [...cursorFields(resume), bindingScope(binding), bindingGeneration(binding)];
  return new TextEncoder().encode(JSON.stringify(body));
}

/** The cursor of `resume`, signed for this caller. */
export async function writeCursor(call: Call, resume: Resume): Promise<string> {
  const mac = new Uint8Array(
    await globalThis.crypto.subtle.sign('HMAC', await cursorKey(call), signedBytes(call, resume)),
  );
  const body = [...cursorFields(resume), base64UrlEncode(mac)];
  return base64UrlEncode(new TextEncoder().encode(JSON.stringify(body)));
}

function cursorError(message: string): SessMcpError {
  return new SessMcpError('INVALID_ARGUMENTS', `/cursor ${message}`, { field: '/cursor' });
}

const LAST_PAGE_HINT =
  'Send next_cursor exactly as returned, or leave cursor out to start from the first page.';

/**
 * Decode a cursor and check that this caller's store signed it for this caller, unchanged, and
 * for the same state filter. Anything else is `INVALID_ARGUMENTS` at `/cursor`.
 */
export async function readCursor(call: Call, cursor: string, filter: ListState | null): Promise<Resume> {
  const parsed = parseCursor(cursor);
  if (parsed === undefined) throw cursorError(`is not a cursor sess_list returned. ${LAST_PAGE_HINT}`);
  const { mac, ...resume } = parsed;
  const valid = await globalThis.crypto.subtle.verify(
    'HMAC',
    await cursorKey(call),
    mac,
    signedBytes(call, resume),
  );
  if (!valid) throw cursorError(`was not returned to this caller, or it was changed. ${LAST_PAGE_HINT}`);
  if (resume.filter !== filter) {
    throw cursorError(
      'belongs to a listing with another state filter. Send the same state as for its first page, or leave cursor out.',
    );
  }
  return resume;
}

const GROUPS: readonly ListGroup[] = [0, 1, 2];
/** The length of an HMAC-SHA-256 in bytes. */
const MAC_BYTES = 32;

function parseCursor(cursor: string): (Resume & { mac: Uint8Array<ArrayBuffer> }) | undefined {
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
  const [version, filter, group, createdAt, handle, startedAt, macText] = body as unknown[];
  if (version !== CURSOR_VERSION) return undefined;
  if (filter !== null && !(LIST_STATES as readonly unknown[]).includes(filter)) return undefined;
  if (!GROUPS.includes(group as ListGroup)) return undefined;
  if (typeof createdAt !== 'string' || typeof handle !== 'string') return undefined;
  if (typeof startedAt !== 'string' || Number.isNaN(Date.parse(startedAt))) return undefined;
  const mac = typeof macText === 'string' ? base64UrlDecode(macText) : undefined;
  if (mac === undefined || mac.length !== MAC_BYTES) return undefined;
  return {
    filter: filter as ListState | null,
    key: { group: group as ListGroup, createdAt, handle },
    startedAt,
    mac: new Uint8Array(mac),
  };
}
