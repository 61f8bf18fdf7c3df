/**
 * The files of one profile on disk: their paths, the safety checks on the directories that hold
 * them, writes that never follow a symbolic link, whole-or-nothing record writes (temp file,
 * `fsync`, `rename`, `fsync` of the directory) and strict reads. Every file-system failure leaves
 * here as a `STATE_STORE_ERROR` that names the errno or the path relative to `SESS_MCP_STATE_DIR`,
 * never a full path.
 *
 * It deliberately knows no lock, cache or record format: the lease (`lock.ts`), the cap
 * index (`cap.ts`) and the codec (`record-codec.ts`) sit on top of it.
 *
 * Safety (POSIX): the state directory and every directory below it that the store uses
 * (`profiles`, `profiles/<profile>`, `profiles/<profile>/handles`) must be owned by the user the
 * process runs as and not writable by group or others, and none below the state directory may be a
 * symbolic link; the state directory's own ancestors may be links (macOS `/tmp` is one). Root gets
 * no exemption: as root the directories must be owned by root too, since a directory another
 * user owns can be changed under root's feet. Files the store writes are opened with `O_NOFOLLOW`
 * (or `O_EXCL`) and a record file that is a link is refused on read. On Windows there are no POSIX
 * owners or modes: those two checks are skipped (the default state directory under
 * `%LOCALAPPDATA%` is private to the user), and links are refused by an `lstat` before opening.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsync,
  ftruncateSync,
  futimes,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { SessMcpError } from '../../core/contract/errors.js';
import { isStoreHandle, storeError } from '../../core/store-kit/kit.js';

/** An open file, as far as the store uses one (`node:fs/promises` `FileHandle` fits). */
export interface FileStoreFileLike {
  /**
   * Write `data` from the start of the file. A file opened without `O_TRUNC` keeps what lies
   * beyond it: the store cuts it with {@link FileStoreFileLike.truncate}.
   */
  writeFile(data: string, options?: { encoding: 'utf8' }): Promise<void>;
  /** The open file's status (its `size` is what the store reads). */
  stat(): Promise<{ size: number }>;
  /** Cut the file to `length` bytes. */
  truncate(length: number): Promise<void>;
  sync(): Promise<void>;
  /** Renew the file's times (the lease heartbeat). */
  utimes(atime: number, mtime: number): Promise<void>;
  close(): Promise<void>;
}

/** What the store reads of a file's status (`node:fs` `Stats` fits). */
export interface FileStoreStats {
  mtimeMs: number;
  size: number;
  ino: number;
  mode: number;
  uid: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/**
 * The file-system calls the store makes: the one seam between the store and the disk. The
 * store's every path goes through it, and {@link nodeFileStoreFs} is what it runs by default. A
 * test passes a named double that wraps `nodeFileStoreFs` and fails on purpose (transient errors,
 * a crash between writing the temp file and renaming it), so an injected fault runs the path
 * production runs. `node:fs/promises` fits too.
 */
export interface FileStoreFs {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  readdir(path: string): Promise<string[]>;
  mkdir(path: string, options: { recursive?: boolean; mode: number }): Promise<string | undefined>;
  /** `flags` is a string (`'r'`) or the `O_*` bits of `node:fs` `constants`. */
  open(path: string, flags: string | number, mode?: number): Promise<FileStoreFileLike>;
  rename(from: string, to: string): Promise<void>;
  /**
   * Make `to` a new name of the file `from` (a hard link). It fails with `EEXIST` when `to`
   * exists, so a file made whole under a temp name appears under `to` at once, and only once.
   */
  link(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Status of what `path` names, following links (used for the state directory only). */
  stat(path: string): Promise<FileStoreStats>;
  /**
   * Status of `path` itself, never following a link. When nothing is there it may resolve
   * `undefined` (the default does: no error is made for the common case) or reject with `ENOENT`
   * (as `node:fs/promises` does); the store reads both the same way.
   */
  lstat(path: string): Promise<FileStoreStats | undefined>;
}

/** A call that completes through libuv's thread pool, as a promise. */
function pooled(run: (done: (error: NodeJS.ErrnoException | null) => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => run((error) => (error ? reject(error) : resolve())));
}

/**
 * A file descriptor as the store uses one. Writes, statuses and the close are synchronous: on a
 * local disk each takes microseconds, where a round trip through a worker thread and back costs
 * more than the call. Only `fsync` and the times' renewal go through the thread pool.
 */
function fileOfDescriptor(fd: number): FileStoreFileLike {
  return {
    async writeFile(data) {
      const bytes = Buffer.from(data, 'utf8');
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at, at);
    },
    stat: async () => fstatSync(fd),
    truncate: async (length) => ftruncateSync(fd, length),
    sync: () => pooled((done) => fsync(fd, done)),
    utimes: (atime, mtime) => pooled((done) => futimes(fd, atime, mtime, done)),
    close: async () => closeSync(fd),
  };
}

/**
 * The default file system, `node:fs` as the store calls it. Statuses, opens, small reads,
 * renames and unlinks are synchronous calls (an `lstat` of a local file takes a few microseconds
 * of CPU, a round trip through libuv's thread pool about ten times that, and a commit makes
 * about a dozen calls); the `fsync`s, directory listings and `mkdir`s go through the thread pool.
 * Its `lstat` of a missing path resolves `undefined`.
 */
export const nodeFileStoreFs: FileStoreFs = {
  readFile: async (path, encoding) => readFileSync(path, encoding),
  readdir: (path) => nodeFs.readdir(path),
  mkdir: (path, options) => nodeFs.mkdir(path, options),
  open: async (path, flags, mode) => fileOfDescriptor(openSync(path, flags, mode)),
  rename: async (from, to) => renameSync(from, to),
  link: async (from, to) => linkSync(from, to),
  unlink: async (path) => unlinkSync(path),
  stat: (path) => nodeFs.stat(path),
  lstat: async (path) => lstatSync(path, { throwIfNoEntry: false }),
};

export const IS_WINDOWS = process.platform === 'win32';
const RECORD_SUFFIX = '.json';
const TEMP_SUFFIX = '.tmp';
/** `O_NOFOLLOW` where the platform has it (not on Windows: there an `lstat` comes first). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/**
 * Create or overwrite in place (no truncation first), write only, never through a link.
 * Truncating a file and writing it again makes ext4 free and allocate its block and flush it at
 * `close` (its protection for files replaced that way): about 0.5–1 ms here for the 25 bytes of
 * `handles.gen`, where an overwrite of the same length costs a page-cache copy.
 */
const OVERWRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | NOFOLLOW;
/** Create a new file only (a link in its place counts as existing), write only. */
export const CREATE_NEW_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;

/** Error codes that no retry fixes: the owner must fix permissions or the directory layout. */
const PERMANENT_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR', 'ELOOP', 'ENAMETOOLONG']);

export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A file-system failure as a `STATE_STORE_ERROR`; the message names the errno, never a path.
 * Permission and layout errors need the owner; everything else (EIO, EMFILE, ENOSPC, EAGAIN, …)
 * is transient and retryable.
 */
export function ioError(error: unknown, doing: string): SessMcpError {
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

/** A rejection handler that turns `ENOENT` into `value` and rethrows anything else. */
function absentAs<T>(value: T): (error: unknown) => T {
  return (error) => {
    if (errnoCode(error) === 'ENOENT') return value;
    throw error;
  };
}

const ABSENT_AS_UNDEFINED = absentAs(undefined);

/** Why a path in the state directory is refused. */
export type UnsafeWhy =
  | 'is a symbolic link'
  | 'is not a directory'
  | 'is not a regular file'
  | 'is not owned by the user running the store'
  | 'is writable by group or others'
  | 'is readable or writable by group or others';

/** The files and directories of one profile, and the checked operations on them. */
export class ProfileIo {
  readonly profileDir: string;
  readonly handlesDir: string;
  readonly lockPath: string;
  readonly nextPath: string;
  readonly genPath: string;
  /** The key `sess_list` cursors of this profile are signed with (`cursor-key.ts`). */
  readonly cursorKeyPath: string;
  /** The summary of the record files kept between processes (`summary-file.ts`). */
  readonly summaryPath: string;
  /** The event outbox (`outbox-file.ts`). */
  readonly outboxPath: string;
  /** Set once every directory exists and passed its checks (they are private from then on). */
  private checked = false;
  /**
   * The handles directory kept open for its `fsync` while the lease is held, with its inode when
   * it was opened (an open directory's inode is not reused, so an equal inode is the same one).
   */
  private directory: { file: FileStoreFileLike; ino: number } | undefined;
  /**
   * Temp file names: the pid and random bytes drawn once per profile object, then a counter, so
   * no two writers (processes, hosts on a shared directory, objects in one process) pick the same.
   */
  private readonly tempPrefix = `${process.pid}-${randomBytes(6).toString('hex')}-`;
  private temps = 0;

  constructor(
    readonly stateDir: string,
    profileDir: string,
    readonly fs: FileStoreFs,
  ) {
    this.profileDir = profileDir;
    this.handlesDir = join(profileDir, 'handles');
    this.lockPath = join(profileDir, 'handles.lock');
    this.nextPath = join(profileDir, 'handles.lock.next');
    this.genPath = join(profileDir, 'handles.gen');
    this.cursorKeyPath = join(profileDir, 'list-cursor.key');
    this.summaryPath = join(profileDir, 'handles.summary');
    this.outboxPath = join(profileDir, 'handles.outbox');
  }

  /** A fresh temp file name in the handles directory (a crash's leftover is swept with the others). */
  private tempPath(name: string): string {
    this.temps += 1;
    return join(this.handlesDir, `.${name}.${this.tempPrefix}${this.temps.toString(36)}${TEMP_SUFFIX}`);
  }

  /**
   * A fresh temp file name for the profile file `name` (the cursor key, the summary), in the
   * profile directory, so writing it changes nothing in the records directory. Only a crash
   * between its create and its rename or removal leaves one.
   */
  profileTempPath(name: string): string {
    this.temps += 1;
    return join(this.profileDir, `.${name}.${this.tempPrefix}${this.temps.toString(36)}${TEMP_SUFFIX}`);
  }

  pathOf(handle: string): string {
    return join(this.handlesDir, handle + RECORD_SUFFIX);
  }

  /** `path` as the owner reads it in a message: `SESS_MCP_STATE_DIR/profiles/…`. */
  where(path: string): string {
    const inside = relative(this.stateDir, path).split(sep).join('/');
    return inside === '' ? 'SESS_MCP_STATE_DIR' : `SESS_MCP_STATE_DIR/${inside}`;
  }

  /** The non-retryable refusal of an unsafe path (reason `unsafe_path`). */
  unsafe(path: string, why: UnsafeWhy): SessMcpError {
    return storeError(
      `The state store refuses ${this.where(path)}: it ${why}. The owner must fix the state directory.`,
      false,
      'unsafe_path',
    );
  }

  /**
   * Check (and with `create`, first make, 0700) the state, profiles, profile and handles
   * directories. False when one does not exist yet (nothing to read then).
   */
  async prepare(create: boolean): Promise<boolean> {
    if (this.checked) return true;
    const levels = [join(this.stateDir, 'profiles'), this.profileDir, this.handlesDir];
    try {
      if (create) await this.fs.mkdir(this.stateDir, { recursive: true, mode: 0o700 });
      if (!(await this.checkDirectory(this.stateDir, true))) return false;
      for (const dir of levels) {
        if (create) {
          await this.fs.mkdir(dir, { mode: 0o700 }).catch((error: unknown) => {
            if (errnoCode(error) !== 'EEXIST') throw error;
          });
        }
        if (!(await this.checkDirectory(dir, false))) return false;
      }
    } catch (error) {
      throw ioError(error, create ? 'create its directory' : 'open its directory');
    }
    this.checked = true;
    return true;
  }

  /**
   * What the profile's readiness checks, afresh (the checks {@link ProfileIo.prepare} remembers
   * are not taken as read): every directory that exists passes its safety checks, and the records
   * directory can be listed. Directories not made yet are fine: the first write makes them.
   */
  async checkReady(): Promise<void> {
    const levels = [join(this.stateDir, 'profiles'), this.profileDir, this.handlesDir];
    try {
      if (!(await this.checkDirectory(this.stateDir, true))) return;
      for (const dir of levels) {
        if (!(await this.checkDirectory(dir, false))) return;
      }
      await this.fs.readdir(this.handlesDir);
    } catch (error) {
      throw ioError(error, 'open its directory');
    }
  }

  /** Check the directories again before the next change (after a failure: the owner may have removed them). */
  recheck(): void {
    this.checked = false;
  }

  /** False when `dir` does not exist; throws when it is unsafe. */
  private async checkDirectory(dir: string, follow: boolean): Promise<boolean> {
    const stats = follow ? await this.fs.stat(dir).catch(absentAs(undefined)) : await this.status(dir);
    if (stats === undefined) return false;
    if (stats.isSymbolicLink()) throw this.unsafe(dir, 'is a symbolic link');
    if (!stats.isDirectory()) throw this.unsafe(dir, 'is not a directory');
    const uid = process.geteuid?.();
    if (IS_WINDOWS || uid === undefined) return true;
    if (stats.uid !== uid) throw this.unsafe(dir, 'is not owned by the user running the store');
    if ((stats.mode & 0o022) !== 0) throw this.unsafe(dir, 'is writable by group or others');
    return true;
  }

  /**
   * The status of a file the store owns, or `undefined` when there is none. A link or anything
   * but a regular file is refused.
   */
  async fileStatus(path: string, doing: string): Promise<FileStoreStats | undefined> {
    let stats: FileStoreStats | undefined;
    try {
      stats = await this.status(path);
    } catch (error) {
      throw ioError(error, doing);
    }
    if (stats === undefined) return undefined;
    if (stats.isSymbolicLink()) throw this.unsafe(path, 'is a symbolic link');
    if (!stats.isFile()) throw this.unsafe(path, 'is not a regular file');
    return stats;
  }

  /**
   * The status of `path` itself (never following a link), or `undefined` when there is none;
   * other failures throw as the file system reports them.
   */
  async status(path: string): Promise<FileStoreStats | undefined> {
    return this.fs.lstat(path).catch(ABSENT_AS_UNDEFINED);
  }

  /** Open `path` for writing with `flags`, never through a link. */
  async openForWrite(path: string, flags: number, doing: string): Promise<FileStoreFileLike> {
    if (NOFOLLOW === 0) await this.fileStatus(path, doing);
    try {
      return await this.fs.open(path, flags, 0o600);
    } catch (error) {
      // O_NOFOLLOW on a link fails with ELOOP (EMLINK on some BSDs).
      if (errnoCode(error) === 'ELOOP' || errnoCode(error) === 'EMLINK') {
        throw this.unsafe(path, 'is a symbolic link');
      }
      throw error;
    }
  }

  /**
   * Replace the content of a small side file (`handles.gen`, `handles.lock.next`): a few dozen
   * bytes, never synced, written over the old content from its start, the file cut to it only
   * when it was longer (see `OVERWRITE_FLAGS`).
   */
  async writeSmallFile(path: string, content: string, doing: string): Promise<void> {
    try {
      const file = await this.openForWrite(path, OVERWRITE_FLAGS, doing);
      try {
        await file.writeFile(content, { encoding: 'utf8' });
        const length = Buffer.byteLength(content, 'utf8');
        if ((await file.stat()).size > length) await file.truncate(length);
      } finally {
        await file.close();
      }
    } catch (error) {
      throw ioError(error, doing);
    }
  }

  /**
   * Create `path` as a new file (`O_EXCL`, never through a link) holding `content`, and keep it
   * open (the lease's lock file, renewed through it). A failure after the create removes the
   * file again; one of the create itself is thrown as the file system reports it (`EEXIST` when
   * the file exists).
   */
  async createFile(path: string, content: string, doing: string): Promise<FileStoreFileLike> {
    const file = await this.openForWrite(path, CREATE_NEW_FLAGS, doing);
    try {
      await file.writeFile(content, { encoding: 'utf8' });
    } catch (error) {
      await file.close().catch(() => undefined);
      // Left behind, it is an empty leftover the next taker recognises.
      await this.fs.unlink(path).catch(() => undefined);
      throw ioError(error, doing);
    }
    return file;
  }

  /** A small file's text and modification time, or `undefined` when there is none. */
  async readSmallFile(path: string, doing: string): Promise<{ text: string; mtimeMs: number } | undefined> {
    const stats = await this.fileStatus(path, doing);
    if (stats === undefined) return undefined;
    try {
      return { text: await this.fs.readFile(path, 'utf8'), mtimeMs: stats.mtimeMs };
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw ioError(error, doing);
    }
  }

  /**
   * The raw text of a record file, or `undefined` when there is none. Call it after
   * {@link ProfileIo.fileStatus} refused a link there.
   */
  async readText(handle: string): Promise<string | undefined> {
    try {
      return await this.fs.readFile(this.pathOf(handle), 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw ioError(error, 'read a record');
    }
  }

  /** Every name in the handles directory (none when it does not exist yet). */
  async names(): Promise<string[]> {
    if (!(await this.prepare(false))) return [];
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
    return out;
  }

  /** Remove the temp files a crash left (under the lock: no write is in flight). */
  async sweepTempFiles(): Promise<void> {
    for (const name of await this.names()) {
      if (name.startsWith('.') && name.endsWith(TEMP_SUFFIX)) {
        await this.fs.unlink(join(this.handlesDir, name)).catch(() => undefined);
      }
    }
  }

  /**
   * Write a record file whole (under the lock): temp file, fsync, `fence`, rename, directory
   * fsync. `fence` is the lease's check that it was not taken over meanwhile (it throws when it
   * was); a rename whose temp file is gone (a takeover removed it after the check) is asked the
   * fence again, so it reports the lost lease, not a file-system failure.
   */
  async writeRecord(handle: string, text: string, fence: () => Promise<void>): Promise<void> {
    const temp = this.tempPath(handle);
    let renamed = false;
    try {
      const file = await this.openForWrite(temp, CREATE_NEW_FLAGS, 'write a record');
      try {
        await file.writeFile(text, { encoding: 'utf8' });
        await file.sync();
      } finally {
        await file.close();
      }
      await fence();
      // rename replaces a link in the record's place; it never writes through one.
      try {
        await this.fs.rename(temp, this.pathOf(handle));
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') await fence();
        throw error;
      }
      renamed = true;
      await this.syncDirectory();
    } catch (error) {
      if (!renamed) await this.fs.unlink(temp).catch(() => undefined);
      throw ioError(error, 'write a record');
    }
  }

  /**
   * Replace the profile file `path` whole (under the lock): temp file, fsync, `fence`, rename,
   * and with `durable` an fsync of the profile directory. A failure leaves the old file.
   */
  async writeProfileFile(
    path: string,
    text: string,
    fence: () => Promise<void>,
    options: { durable: boolean; doing: string },
  ): Promise<void> {
    const temp = this.profileTempPath(path.slice(path.lastIndexOf(sep) + 1));
    let renamed = false;
    try {
      const file = await this.openForWrite(temp, CREATE_NEW_FLAGS, options.doing);
      try {
        await file.writeFile(text, { encoding: 'utf8' });
        await file.sync();
      } finally {
        await file.close();
      }
      await fence();
      await this.fs.rename(temp, path);
      renamed = true;
      if (options.durable && !IS_WINDOWS) {
        const dir = await this.fs.open(this.profileDir, 'r');
        try {
          await dir.sync().catch((error: unknown) => {
            const code = errnoCode(error);
            if (code !== 'EINVAL' && code !== 'ENOTSUP') throw error;
          });
        } finally {
          await dir.close();
        }
      }
    } catch (error) {
      if (!renamed) await this.fs.unlink(temp).catch(() => undefined);
      throw ioError(error, options.doing);
    }
  }

  /**
   * Remove a record file (under the lock) durably, after `fence` (see
   * {@link ProfileIo.writeRecord}). False when there was none.
   */
  async removeRecord(handle: string, fence: () => Promise<void>): Promise<boolean> {
    await fence();
    try {
      await this.fs.unlink(this.pathOf(handle));
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return false;
      throw ioError(error, 'remove a record');
    }
    try {
      await this.syncDirectory();
    } catch (error) {
      throw ioError(error, 'remove a record');
    }
    return true;
  }

  /**
   * Remove several record files after one fence, then make the removals durable with one sync of
   * the directory (retention removes a batch at a time). The handles whose file was there.
   */
  async removeRecords(handles: readonly string[], fence: () => Promise<void>): Promise<string[]> {
    await fence();
    const removed: string[] = [];
    for (const handle of handles) {
      try {
        await this.fs.unlink(this.pathOf(handle));
        removed.push(handle);
      } catch (error) {
        if (errnoCode(error) !== 'ENOENT') throw ioError(error, 'remove a record');
      }
    }
    try {
      await this.syncDirectory();
    } catch (error) {
      throw ioError(error, 'remove a record');
    }
    return removed;
  }

  /**
   * Make a rename or unlink durable. Windows cannot open a directory for `fsync` (and its renames
   * are durable on their own); a file system that does not support it says EINVAL or ENOTSUP.
   */
  private async syncDirectory(): Promise<void> {
    if (IS_WINDOWS) return;
    const dir = await this.openDirectory();
    try {
      await dir.sync();
    } catch (error) {
      const code = errnoCode(error);
      if (code !== 'EINVAL' && code !== 'ENOTSUP') {
        await this.closeDirectory();
        throw error;
      }
    }
  }

  /**
   * The handles directory, open for its `fsync`: opened at the first change of a holding of the
   * lease and kept until the lease is released (two fewer file-system requests per commit), as
   * long as the directory in its place is still the one opened.
   */
  private async openDirectory(): Promise<FileStoreFileLike> {
    const now = await this.status(this.handlesDir);
    const kept = this.directory;
    if (kept !== undefined && now !== undefined && now.ino === kept.ino) return kept.file;
    await this.closeDirectory();
    const file = await this.fs.open(this.handlesDir, 'r');
    // Without a status (removed meanwhile) it is kept under no inode: the next commit closes it.
    this.directory = { file, ino: now?.ino ?? Number.NaN };
    return file;
  }

  /** Close the handles directory kept open for its `fsync` (when the lease is released). */
  async closeDirectory(): Promise<void> {
    const kept = this.directory;
    this.directory = undefined;
    await kept?.file.close().catch(() => undefined);
  }
}
