/**
 * The profile's `sess_list` cursor key: `list-cursor.key` in the profile directory, one line of
 * `sess-mcp-list-cursor-key/1 ` and 32 random bytes as base64url. It is made once and read by every store object of every process
 * on the profile, so a cursor made before a restart, or by another process, still pages.
 *
 * Made safely: written whole to a temp file created exclusively (`O_EXCL`, never through a link)
 * with mode 0600 and synced, then hard-linked to its name. The temp file is in the profile
 * directory, not among the records: a change to the records directory would make every process
 * take the summary of the profile's records again. The link fails when another opener
 * linked first; that key is then read, and the temp file removed either way. Every opener ends
 * with the same key, and no reader ever sees a partial one. Read strictly: a link, a file that is
 * not regular, another user's, one group or others may read or write, or one that does not hold
 * exactly a key is refused (non-retryable `STATE_STORE_ERROR`), naming the path relative to
 * `SESS_MCP_STATE_DIR` and never the file's content.
 *
 * It deliberately keeps no copy (the profile does) and never writes the key anywhere else. It is
 * made the way the stdio server makes its `credential-key` (`src/stdio/credential.ts`), through
 * the store's file-system seam and with its path checks.
 */
import { randomBytes } from 'node:crypto';
import { base64UrlDecode, base64UrlEncode } from '../../core/codec/base64url.js';
import { LIST_CURSOR_KEY_BYTES } from '../../core/contract/ports.js';
import { storeError } from '../../core/store-kit/kit.js';
import { CREATE_NEW_FLAGS, errnoCode, IS_WINDOWS, ioError, type ProfileIo } from './io.js';

/** The line's first words: what the file is and the layout's version (as `credential-key`'s). */
const HEADER = 'sess-mcp-list-cursor-key/1 ';

/** What the file holds: the header, the key as base64url (no padding) and a newline. */
const KEY_TEXT = new RegExp(`^${HEADER}([A-Za-z0-9_-]{${Math.ceil((LIST_CURSOR_KEY_BYTES * 4) / 3)}})\\n$`);

/** The profile's cursor key, made first when there is none. */
export async function profileCursorKey(io: ProfileIo): Promise<Uint8Array> {
  const found = await readCursorKey(io);
  if (found !== undefined) return found;
  await makeCursorKey(io);
  const made = await readCursorKey(io);
  if (made === undefined) {
    throw storeError(
      'The state store could not keep its cursor key (it was removed). Try again.',
      true,
      'io_transient',
    );
  }
  return made;
}

/** The key in the file, or `undefined` when there is no file (or no profile directory yet). */
async function readCursorKey(io: ProfileIo): Promise<Uint8Array | undefined> {
  if (!(await io.prepare(false))) return undefined;
  const path = io.cursorKeyPath;
  const stats = await io.fileStatus(path, 'read its cursor key');
  if (stats === undefined) return undefined;
  const uid = process.geteuid?.();
  if (!IS_WINDOWS && uid !== undefined) {
    if (stats.uid !== uid) throw io.unsafe(path, 'is not owned by the user running the store');
    if ((stats.mode & 0o077) !== 0) throw io.unsafe(path, 'is readable or writable by group or others');
  }
  let text: string;
  try {
    text = await io.fs.readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw ioError(error, 'read its cursor key');
  }
  const body = KEY_TEXT.exec(text)?.[1];
  const bytes = body === undefined ? undefined : base64UrlDecode(body);
  if (bytes === undefined || bytes.length !== LIST_CURSOR_KEY_BYTES) {
    throw storeError(
      `The state store refuses ${io.where(path)}: it does not hold a cursor key this store wrote. The owner must remove it (sess_list cursors given out before then stop working).`,
      false,
      'corrupt',
    );
  }
  return bytes;
}

/** Make the key file, unless another opener made it first (then nothing is changed). */
async function makeCursorKey(io: ProfileIo): Promise<void> {
  await io.prepare(true);
  const temp = io.profileTempPath('list-cursor.key');
  const text = `${HEADER}${base64UrlEncode(new Uint8Array(randomBytes(LIST_CURSOR_KEY_BYTES)))}\n`;
  try {
    const file = await io.openForWrite(temp, CREATE_NEW_FLAGS, 'make its cursor key');
    try {
      await file.writeFile(text, { encoding: 'utf8' });
      await file.sync();
    } finally {
      await file.close();
    }
    await io.fs.link(temp, io.cursorKeyPath).catch((error: unknown) => {
      // Another opener linked its key first: that one is the profile's.
      if (errnoCode(error) !== 'EEXIST') throw error;
    });
  } catch (error) {
    throw ioError(error, 'make its cursor key');
  } finally {
    await io.fs.unlink(temp).catch(() => undefined);
  }
}
