/**
 * `@sess.si/mcp/store/file`: the durable file {@link HandleStore} of the stdio server, and the
 * owner's access to a profile's records (`sess-mcp records list|show|retire` is built on
 * {@link openProfileRecords}).
 *
 * One file per handle at `<stateDir>/profiles/<profile>/handles/<handle>.json` (mode 0600, the
 * directories 0700), holding the envelope `{ format, version, record }`. Every change is written
 * whole or not at all: a temp file in the same directory, `fsync`, `rename`, then an `fsync` of
 * the directory. Changes of one profile are serialised by an in-process lock and, across
 * processes, by an exclusive lock file (`handles.lock` beside `handles/`), so compare-and-set and
 * the cap of unfinished records are exact even when two processes share a profile.
 *
 * Beside `handles/`: `handles.lock` (held for the few milliseconds of one change),
 * `handles.lock.next` (a waiting process asks for its turn) and `handles.gen` (a token every
 * change renews, so a process knows when its summary of the profile is still current).
 *
 * It deliberately does not trust a cache over the disk (a read checks the file's inode, mtime and
 * size), repair or migrate records (anything unreadable is the owner's to resolve), or remove link
 * and answer data (the engine hands it records without them). The lock file is taken over when
 * its holder has died or has held it for over 30 s; two processes taking over the same dead lock
 * at the same instant are not coordinated.
 */
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { SessMcpError } from '../core/errors.js';
import {
  type Binding,
  bindingScope,
  type HandleStore,
  type HandleStoreFactory,
  MAX_UNFINISHED,
  type VersionedRecord,
} from '../core/ports.js';
import { type InteractionRecord, type InteractionStateKind, isUnfinished } from '../core/record.js';
import {
  checkRecordForScope,
  compareOldestFirst,
  handleExistsError,
  isStoreHandle,
  staleVersionError,
  storeError,
  storeFullError,
  storeReasonOf,
} from '../core/store-kit.js';
import { decodeEnvelope, encodeEnvelope, encodeRecord } from './record-codec.js';

/** An open file, as far as the store uses one (`node:fs/promises` `FileHandle` fits). */
export interface FileStoreFileLike {
  writeFile(data: string, options?: { encoding: 'utf8' }): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file-system calls the store makes. `node:fs/promises` fits and is the default; a test
 * passes a named double that fails on purpose (transient errors, a crash between writing the
 * temp file and renaming it).
 */
export interface FileStoreFs {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  readdir(path: string): Promise<string[]>;
  mkdir(path: string, options: { recursive: true; mode: number }): Promise<string | undefined>;
  open(path: string, flags: string, mode?: number): Promise<FileStoreFileLike>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  stat(path: string): Promise<{ mtimeMs: number; size: number; ino: number }>;
}

/** Options of {@link createFileHandleStore} and {@link openProfileRecords}. */
export interface FileHandleStoreOptions {
  /** The absolute state directory (`SESS_MCP_STATE_DIR` or its platform default). */
  stateDir: string;
  /**
   * The profile name: 1–64 of `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`.
   * @default 'default'
   */
  profile?: string;
  /**
   * The file system to use. Only tests pass anything but the default.
   * @default node:fs/promises
   */
  fs?: FileStoreFs;
}

/** A file store backend of one profile. */
export interface FileHandleStore extends HandleStoreFactory {
  /** The directory the record files live in. */
  readonly directory: string;
}

const PROFILE_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
const RECORD_SUFFIX = '.json';
const TEMP_SUFFIX = '.tmp';
const LOCK_WAIT_MS = 20_000;
/** How long a waiter's announcement in `handles.lock.next` counts. */
const NEXT_FRESH_MS = 1_000;
const LOCK_STALE_MS = 30_000;
/** A lock file still without a pid after this long was left by a taker that died at once. */
const LOCK_UNWRITTEN_STALE_MS = 1_000;
/**
 * A summary of the profile's files is taken again after this long even when nothing announced a
 * change: directory mtimes are coarse, so a file removed by hand within the same clock tick as
 * the last change is noticed at the latest then (until then it only keeps its place in the cap).
 */
const SNAPSHOT_MAX_AGE_MS = 60_000;

/** True for a valid profile name (what `SESS_MCP_PROFILE` may be). */
export function isProfileName(name: unknown): name is string {
  return typeof name === 'string' && PROFILE_PATTERN.test(name);
}

const IS_WINDOWS = process.platform === 'win32';

/** Error codes that no retry fixes: the owner must fix permissions or the directory layout. */
const PERMANENT_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ELOOP', 'ENAMETOOLONG']);

function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A file-system failure as a `STATE_STORE_ERROR`; the message names the errno, never a path.
 * Permission and layout errors need the owner; everything else (EIO, EMFILE, ENOSPC, EAGAIN, …)
 * is transient and retryable.
 */
function ioError(error: unknown, doing: string): SessMcpError {
  if (error instanceof SessMcpError) return error;
  const code = errnoCode(error) ?? 'unknown';
  // On Windows a file another process has open (a reader, a virus scanner) refuses a rename or
  // an unlink with EPERM/EACCES for a moment: there, that is transient.
  const permanent = PERMANENT_CODES.has(code) && !(IS_WINDOWS && (code === 'EPERM' || code === 'EACCES'));
  return storeError(
    `The state store could not ${doing} (${code}).${permanent ? ' The owner must fix the state directory.' : ' Try again later.'}`,
    !permanent,
    permanent ? 'io_permanent' : 'io_transient',
  );
}

function checkOptions(options: FileHandleStoreOptions): { profileDir: string; fs: FileStoreFs } {
  if (options === null || typeof options !== 'object') throw new TypeError('options must be an object');
  const { stateDir, profile = 'default' } = options;
  if (typeof stateDir !== 'string' || stateDir === '' || !isAbsolute(stateDir)) {
    throw new TypeError('options.stateDir must be an absolute path');
  }
  if (!isProfileName(profile)) {
    throw new TypeError('options.profile must be 1-64 of A-Z a-z 0-9 . _ - and not start with . or -');
  }
  return {
    profileDir: join(stateDir, 'profiles', profile),
    fs: options.fs ?? (nodeFs as unknown as FileStoreFs),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}

/** In-process queues per profile directory, shared by every store object of this module copy. */
const inProcessQueues = new Map<string, Promise<unknown>>();

/** What the cap needs to know of one record file. */
interface FileSummary {
  scope: string;
  unfinished: boolean;
}

/** Run `work` on `items`, at most `width` at a time, results in order. */
async function inBatches<T, R>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width)
    out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}

/**
 * The files of one profile: paths, the lock, atomic writes and strict reads. Shared by the store
 * views and the owner's {@link ProfileRecords}.
 *
 * Counting unfinished records must not read every file of the profile on every create (completed
 * records stay until the owner retires them). So each change, made under the lock, first writes
 * a fresh token to `handles.gen`; a summary of every file (scope, unfinished) taken under the
 * lock is reused while the token and the directory's inode and mtime are unchanged (and for at
 * most a minute). The directory catches what bypasses the lock (the owner deleting a file by
 * hand). Decoded files are cached under their inode, mtime and size: a file is never rewritten
 * in place.
 */
class ProfileFiles {
  readonly handlesDir: string;
  private readonly lockPath: string;
  private readonly nextPath: string;
  private readonly genPath: string;
  private tempSwept = false;
  private readonly cache = new Map<string, { key: string; value: VersionedRecord | SessMcpError }>();
  private snapshot: { key: string; files: Map<string, FileSummary>; takenAt: number } | undefined;
  /** The change key read when the lock was taken; set only while this object holds the lock. */
  private heldKey: string | undefined;

  constructor(
    profileDir: string,
    private readonly fs: FileStoreFs,
  ) {
    this.handlesDir = join(profileDir, 'handles');
    this.lockPath = join(profileDir, 'handles.lock');
    this.nextPath = join(profileDir, 'handles.lock.next');
    this.genPath = join(profileDir, 'handles.gen');
  }

  pathOf(handle: string): string {
    return join(this.handlesDir, handle + RECORD_SUFFIX);
  }

  /** Run `work` holding the in-process queue of this profile and its lock file. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const previous = inProcessQueues.get(this.handlesDir) ?? Promise.resolve();
    const run = previous.then(
      () => this.underLockFile(work),
      () => this.underLockFile(work),
    );
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    inProcessQueues.set(this.handlesDir, settled);
    void settled.then(() => {
      if (inProcessQueues.get(this.handlesDir) === settled) inProcessQueues.delete(this.handlesDir);
    });
    return run;
  }

  private async underLockFile<T>(work: () => Promise<T>): Promise<T> {
    try {
      await this.fs.mkdir(this.handlesDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw ioError(error, 'create its directory');
    }
    await this.acquireLockFile();
    try {
      if (!this.tempSwept) {
        // Holding the lock, no write is in flight: every temp file is left over from a crash.
        await this.sweepTempFiles();
        this.tempSwept = true;
      }
      this.heldKey = await this.changeKey();
      return await work();
    } finally {
      this.heldKey = undefined;
      await this.fs.unlink(this.lockPath).catch(() => undefined);
    }
  }

  /**
   * Take the lock file. The lock is not fair by itself (a process with queued work takes it again
   * at once), so a process that waits says so in `handles.lock.next`, and a taker that sees
   * another live process waiting there steps back for a moment first.
   */
  private async acquireLockFile(): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    let announcedAt = 0;
    let steppedBack = 0;
    for (let attempt = 0; ; attempt++) {
      if (steppedBack < 50 && (await this.anotherIsNext())) {
        steppedBack++;
        await sleep(2);
        continue;
      }
      try {
        const file = await this.fs.open(this.lockPath, 'wx', 0o600);
        try {
          await file.writeFile(`${process.pid}\n`, { encoding: 'utf8' });
        } finally {
          await file.close();
        }
        if (announcedAt !== 0) await this.fs.unlink(this.nextPath).catch(() => undefined);
        return;
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw ioError(error, 'take the profile lock');
      }
      if (await this.lockIsStale()) {
        await this.fs.unlink(this.lockPath).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw storeError('The profile is busy (another process holds its lock). Try again.', true, 'busy');
      }
      if (Date.now() - announcedAt > NEXT_FRESH_MS / 2) {
        announcedAt = Date.now();
        await this.writeSmallFile(this.nextPath, `${process.pid}\n`).catch(() => undefined);
      }
      await sleep(Math.min(1 + attempt, 10) * (0.5 + Math.random()));
    }
  }

  /** True when another live process announced, recently, that it waits for the lock. */
  private async anotherIsNext(): Promise<boolean> {
    try {
      const [content, stat] = await Promise.all([
        this.fs.readFile(this.nextPath, 'utf8'),
        this.fs.stat(this.nextPath),
      ]);
      const pid = Number.parseInt(content, 10);
      return (
        Number.isSafeInteger(pid) &&
        pid > 0 &&
        pid !== process.pid &&
        Date.now() - stat.mtimeMs < NEXT_FRESH_MS &&
        processIsAlive(pid)
      );
    } catch {
      return false;
    }
  }

  private async writeSmallFile(path: string, content: string): Promise<void> {
    const file = await this.fs.open(path, 'w', 0o600);
    try {
      await file.writeFile(content, { encoding: 'utf8' });
    } finally {
      await file.close();
    }
  }

  private async lockIsStale(): Promise<boolean> {
    try {
      const [content, stat] = await Promise.all([
        this.fs.readFile(this.lockPath, 'utf8'),
        this.fs.stat(this.lockPath),
      ]);
      const pid = Number.parseInt(content, 10);
      const age = Date.now() - stat.mtimeMs;
      if (age > LOCK_STALE_MS) return true;
      if (!Number.isSafeInteger(pid) || pid <= 0) {
        // No pid yet: being taken right now, or its taker died between creating and writing it.
        return age > LOCK_UNWRITTEN_STALE_MS;
      }
      return pid !== process.pid && !processIsAlive(pid);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false; // released meanwhile: just try again
      throw ioError(error, 'read the profile lock');
    }
  }

  private async sweepTempFiles(): Promise<void> {
    for (const name of await this.names()) {
      if (name.startsWith('.') && name.endsWith(TEMP_SUFFIX)) {
        await this.fs.unlink(join(this.handlesDir, name)).catch(() => undefined);
      }
    }
  }

  /** The token of the last change and the directory's identity: equal keys, equal contents. */
  private async changeKey(): Promise<string> {
    const [gen, dir] = await Promise.all([
      this.fs.readFile(this.genPath, 'utf8').catch((error: unknown) => {
        if (errnoCode(error) === 'ENOENT') return 'none';
        throw ioError(error, 'read the change token');
      }),
      this.directoryKey(),
    ]);
    return `${gen.trim()}|${dir}`;
  }

  private async directoryKey(): Promise<string> {
    try {
      const stat = await this.fs.stat(this.handlesDir);
      return `${stat.ino}:${stat.mtimeMs}`;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return 'absent';
      throw ioError(error, 'list records');
    }
  }

  /** Every name in the handles directory (none when it does not exist yet). */
  async names(): Promise<string[]> {
    try {
      return await this.fs.readdir(this.handlesDir);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw ioError(error, 'list records');
    }
  }

  /** The handles that have a record file. */
  async handles(): Promise<string[]> {
    const out: string[] = [];
    for (const name of await this.names()) {
      if (!name.endsWith(RECORD_SUFFIX)) continue;
      const handle = name.slice(0, -RECORD_SUFFIX.length);
      if (isStoreHandle(handle)) out.push(handle);
    }
    if (this.cache.size > out.length) {
      const present = new Set(out);
      for (const handle of this.cache.keys()) if (!present.has(handle)) this.cache.delete(handle);
    }
    return out;
  }

  /**
   * The decoded record file (shared, do not change it), a non-retryable error value for an
   * unreadable one, or `undefined` when there is none. Transient failures throw.
   */
  private async load(handle: string): Promise<VersionedRecord | SessMcpError | undefined> {
    let key: string;
    try {
      const stat = await this.fs.stat(this.pathOf(handle));
      key = `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') {
        this.cache.delete(handle);
        return undefined;
      }
      throw ioError(error, 'read a record');
    }
    const cached = this.cache.get(handle);
    if (cached?.key === key) return cached.value;
    const text = await this.readText(handle);
    if (text === undefined) return undefined;
    let value: VersionedRecord | SessMcpError;
    try {
      value = decodeEnvelope(text, handle);
    } catch (error) {
      if (!(error instanceof SessMcpError)) throw error;
      value = error;
    }
    this.cache.set(handle, { key, value });
    return value;
  }

  /** The raw text of a record file, or `undefined` when there is none. */
  async readText(handle: string): Promise<string | undefined> {
    try {
      return await this.fs.readFile(this.pathOf(handle), 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw ioError(error, 'read a record');
    }
  }

  /** A copy of the decoded record file, or `undefined`; unreadable files throw (non-retryable). */
  async read(handle: string): Promise<VersionedRecord | undefined> {
    const value = await this.load(handle);
    if (value instanceof SessMcpError) {
      throw storeError(value.message, value.retryable, storeReasonOf(value));
    }
    return value === undefined ? undefined : structuredClone(value);
  }

  async exists(handle: string): Promise<boolean> {
    try {
      await this.fs.stat(this.pathOf(handle));
      return true;
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false;
      throw ioError(error, 'read a record');
    }
  }

  /** Summarise every readable file (unreadable ones do not count: reading their handle names them). */
  private async scan(): Promise<Map<string, FileSummary>> {
    const files = new Map<string, FileSummary>();
    const handles = await this.handles();
    const loaded = await inBatches(handles, 32, (handle) => this.load(handle));
    handles.forEach((handle, i) => {
      const value = loaded[i];
      if (value === undefined || value instanceof SessMcpError) return;
      files.set(handle, {
        scope: bindingScope(value.record.binding),
        unfinished: isUnfinished(value.record),
      });
    });
    return files;
  }

  /**
   * The handles of the unfinished records of `scope`: from the summary while it is current, else
   * from a new summary taken under the lock.
   */
  async unfinishedOf(scope: string): Promise<string[]> {
    const key = this.heldKey ?? (await this.changeKey());
    const snapshot = this.snapshot;
    let files =
      snapshot?.key === key && Date.now() - snapshot.takenAt < SNAPSHOT_MAX_AGE_MS
        ? snapshot.files
        : undefined;
    if (files === undefined) {
      // Only a summary taken under the lock is kept (outside it a change may be half made), so
      // a summary worth keeping is taken under the lock.
      if (this.heldKey === undefined && !key.endsWith('|absent')) {
        return this.exclusive(() => this.unfinishedOf(scope));
      }
      const takenAt = Date.now();
      files = await this.scan();
      if (this.heldKey !== undefined) this.snapshot = { key, files, takenAt };
    }
    const out: string[] = [];
    for (const [handle, summary] of files)
      if (summary.unfinished && summary.scope === scope) out.push(handle);
    return out;
  }

  /** The unfinished records of `scope`, read now. */
  async unfinishedRecords(scope: string): Promise<VersionedRecord[]> {
    const handles = await this.unfinishedOf(scope);
    const loaded = await inBatches(handles, 32, (handle) => this.load(handle));
    const out: VersionedRecord[] = [];
    for (const value of loaded) {
      if (value === undefined || value instanceof SessMcpError) continue;
      if (isUnfinished(value.record) && bindingScope(value.record.binding) === scope)
        out.push(structuredClone(value));
    }
    return out;
  }

  /**
   * Announce a change (under the lock, before making it): a fresh token in `handles.gen`. If it
   * cannot be written, nothing is changed.
   */
  private async announceChange(): Promise<string> {
    const token = randomBytes(12).toString('hex');
    try {
      await this.writeSmallFile(this.genPath, `${token}\n`);
    } catch (error) {
      throw ioError(error, 'write a record');
    }
    return token;
  }

  /** After a change under the lock: keep the summary current if it was, else drop it. */
  private async noteChange(token: string, handle: string, summary: FileSummary | undefined): Promise<void> {
    this.cache.delete(handle);
    const snapshot = this.snapshot;
    this.snapshot = undefined;
    if (snapshot === undefined || snapshot.key !== this.heldKey) return;
    try {
      snapshot.key = `${token}|${await this.directoryKey()}`;
    } catch {
      return;
    }
    if (summary === undefined) snapshot.files.delete(handle);
    else snapshot.files.set(handle, summary);
    this.snapshot = snapshot;
    this.heldKey = snapshot.key;
  }

  /** Write a record file whole (under the lock): temp file, fsync, rename, directory fsync. */
  async write(handle: string, text: string, summary: FileSummary): Promise<void> {
    const token = await this.announceChange();
    const temp = join(
      this.handlesDir,
      `.${handle}.${process.pid}-${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`,
    );
    let renamed = false;
    try {
      const file = await this.fs.open(temp, 'wx', 0o600);
      try {
        await file.writeFile(text, { encoding: 'utf8' });
        await file.sync();
      } finally {
        await file.close();
      }
      await this.fs.rename(temp, this.pathOf(handle));
      renamed = true;
      await this.syncDirectory();
    } catch (error) {
      if (!renamed) await this.fs.unlink(temp).catch(() => undefined);
      this.snapshot = undefined;
      this.cache.delete(handle);
      throw ioError(error, 'write a record');
    }
    await this.noteChange(token, handle, summary);
  }

  /** Remove a record file (under the lock) and make the removal durable. False when there was none. */
  async remove(handle: string): Promise<boolean> {
    const token = await this.announceChange();
    try {
      await this.fs.unlink(this.pathOf(handle));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false;
      this.snapshot = undefined;
      throw ioError(error, 'remove a record');
    }
    try {
      await this.syncDirectory();
    } catch (error) {
      this.snapshot = undefined;
      throw ioError(error, 'remove a record');
    }
    await this.noteChange(token, handle, undefined);
    return true;
  }

  /**
   * Make a rename or unlink durable. Windows cannot open a directory for `fsync` (and its renames
   * are durable on their own); a file system that does not support it says EINVAL or ENOTSUP.
   */
  private async syncDirectory(): Promise<void> {
    if (IS_WINDOWS) return;
    const dir = await this.fs.open(this.handlesDir, 'r');
    try {
      await dir.sync();
    } catch (error) {
      const code = errnoCode(error);
      if (code !== 'EINVAL' && code !== 'ENOTSUP') throw error;
    } finally {
      await dir.close();
    }
  }
}

/**
 * Open the file store of one profile. Nothing is touched until the first operation; directories
 * are created (0700) on the first write. Bad options throw a `TypeError` naming the option.
 *
 * A corrupt or unsupported-version file is reported (non-retryable `STATE_STORE_ERROR`) when its
 * handle is read, and is left out of `listUnfinished`/`countUnfinished` and the cap so one bad
 * file does not stop the profile; the owner finds it with {@link openProfileRecords}.
 *
 * @example
 * ```ts
 * const stores = createFileHandleStore({ stateDir: '/home/me/.local/state/sess-mcp', profile: 'default' });
 * const store = stores.forBinding({ kind: 'stdio', profile: 'default', apiOrigin, credentialGeneration });
 * const { version } = await store.create(record);
 * ```
 */
export function createFileHandleStore(options: FileHandleStoreOptions): FileHandleStore {
  const { profileDir, fs } = checkOptions(options);
  const profile = options.profile ?? 'default';
  const files = new ProfileFiles(profileDir, fs);

  /** This scope's record under `handle`, or undefined (absent, foreign or not a store key). */
  async function own(handle: string, scope: string): Promise<VersionedRecord | undefined> {
    if (!isStoreHandle(handle)) return undefined;
    const current = await files.read(handle);
    return current !== undefined && bindingScope(current.record.binding) === scope ? current : undefined;
  }

  return {
    directory: files.handlesDir,
    forBinding(binding: Binding): HandleStore {
      const scope = bindingScope(binding);
      if (binding.kind === 'stdio' && binding.profile !== profile) {
        throw new TypeError('binding.profile must be the profile this file store was opened for');
      }
      return {
        get: (handle) => own(handle, scope),
        create: async (record) => {
          checkRecordForScope(record, scope);
          const json = encodeRecord(record);
          const unfinished = isUnfinished(record);
          return files.exclusive(async () => {
            if (await files.exists(record.handle)) throw handleExistsError();
            if (unfinished && (await files.unfinishedOf(scope)).length >= MAX_UNFINISHED)
              throw storeFullError();
            await files.write(record.handle, encodeEnvelope(1, json), { scope, unfinished });
            return { version: 1, record: JSON.parse(json) as InteractionRecord };
          });
        },
        update: async (record, expectedVersion) => {
          checkRecordForScope(record, scope);
          const json = encodeRecord(record);
          return files.exclusive(async () => {
            const current = await own(record.handle, scope);
            if (current === undefined || current.version !== expectedVersion) throw staleVersionError();
            const version = current.version + 1;
            await files.write(record.handle, encodeEnvelope(version, json), {
              scope,
              unfinished: isUnfinished(record),
            });
            return { version, record: JSON.parse(json) as InteractionRecord };
          });
        },
        delete: async (handle, expectedVersion) => {
          if (!isStoreHandle(handle)) return false;
          return files.exclusive(async () => {
            const current = await own(handle, scope);
            if (current === undefined) return false;
            if (expectedVersion !== undefined && current.version !== expectedVersion) return false;
            return files.remove(handle);
          });
        },
        listUnfinished: async () => (await files.unfinishedRecords(scope)).sort(compareOldestFirst),
        countUnfinished: async () => (await files.unfinishedOf(scope)).length,
      };
    },
  };
}

/** One record file of a profile as the owner sees it in a listing. Holds no link or answer. */
export interface ProfileRecordSummary {
  handle: string;
  /** The file's path, for the owner procedure. */
  path: string;
  /** Set when the file cannot be read: the owner must review or retire it. */
  problem?: 'corrupt' | 'unsupported_version';
  version?: number;
  state?: InteractionStateKind;
  /** For `blocked`: the code the tools report and the fixed-word reason. */
  blockedCode?: string;
  reason?: string;
  unfinished?: boolean;
  sessionId?: string;
  askId?: string;
  createdAt?: string;
  updatedAt?: string;
  /** What the record is bound to: `stdio` or `http`, and its origin. */
  bindingKind?: Binding['kind'];
  origin?: string;
}

/** The owner's access to the records of one profile (the `sess-mcp records` CLI). */
export interface ProfileRecords {
  /** The directory the record files live in. */
  readonly directory: string;
  /** Every record file of the profile, oldest first, unreadable ones last (by handle). */
  list(): Promise<ProfileRecordSummary[]>;
  /**
   * One record, whatever its binding, or `undefined`. It can hold the Sess link and answer
   * data: redact before showing. Unreadable files throw a non-retryable `STATE_STORE_ERROR`.
   */
  read(handle: string): Promise<VersionedRecord | undefined>;
  /** The path of a handle's file, or `undefined` when `handle` cannot be a store key. */
  pathOf(handle: string): string | undefined;
  /**
   * Retire a record: remove its file (readable or not). With `expectedVersion`, only a readable
   * record at that version is removed. False when there was nothing (or another version).
   */
  remove(handle: string, options?: { expectedVersion?: number }): Promise<boolean>;
}

function summarize(handle: string, path: string, current: VersionedRecord): ProfileRecordSummary {
  const { record } = current;
  const state = record.state;
  const out: ProfileRecordSummary = {
    handle,
    path,
    version: current.version,
    state: state.kind,
    unfinished: isUnfinished(record),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    bindingKind: record.binding.kind,
    origin: record.binding.kind === 'stdio' ? record.binding.apiOrigin : record.binding.origin,
  };
  if ('session' in state) out.sessionId = state.session.sessionId;
  else if ('sessionId' in state && state.sessionId !== undefined) out.sessionId = state.sessionId;
  if ('askId' in state) out.askId = state.askId;
  if (state.kind === 'blocked') {
    out.blockedCode = state.code;
    out.reason = state.reason;
  } else if (state.kind === 'create_unknown') {
    out.reason = state.reason;
  }
  return out;
}

/**
 * Open the records of one profile for its owner: list them by state, read one, retire one. It
 * takes the same lock as the store, so retiring is safe while a server runs on the profile.
 * Bad options throw a `TypeError` naming the option.
 *
 * @example
 * ```ts
 * const records = openProfileRecords({ stateDir, profile: 'default' });
 * for (const r of await records.list()) if (r.state === 'blocked' || r.problem) console.log(r.handle, r.state ?? r.problem);
 * await records.remove(handle);
 * ```
 */
export function openProfileRecords(options: FileHandleStoreOptions): ProfileRecords {
  const { profileDir, fs } = checkOptions(options);
  const files = new ProfileFiles(profileDir, fs);
  return {
    directory: files.handlesDir,
    pathOf: (handle) => (isStoreHandle(handle) ? files.pathOf(handle) : undefined),
    async list() {
      const readable: [VersionedRecord, ProfileRecordSummary][] = [];
      const unreadable: ProfileRecordSummary[] = [];
      for (const handle of await files.handles()) {
        const path = files.pathOf(handle);
        try {
          const current = await files.read(handle);
          if (current !== undefined) readable.push([current, summarize(handle, path, current)]);
        } catch (error) {
          if (!(error instanceof SessMcpError) || error.retryable) throw error;
          unreadable.push({
            handle,
            path,
            problem: error.reason === 'unsupported_version' ? 'unsupported_version' : 'corrupt',
          });
        }
      }
      readable.sort(([a], [b]) => compareOldestFirst(a, b));
      unreadable.sort((a, b) => (a.handle < b.handle ? -1 : 1));
      return [...readable.map(([, summary]) => summary), ...unreadable];
    },
    read: async (handle) => (isStoreHandle(handle) ? files.read(handle) : undefined),
    async remove(handle, removeOptions = {}) {
      if (!isStoreHandle(handle)) return false;
      return files.exclusive(async () => {
        if (removeOptions.expectedVersion !== undefined) {
          const current = await files.read(handle);
          if (current?.version !== removeOptions.expectedVersion) return false;
        }
        return files.remove(handle);
      });
    },
  };
}
