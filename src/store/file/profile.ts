/**
 * One profile of the file store as the store views and the owner's records see it: the in-process
 * queue of changes, the cross-process lease around them, cached strict reads, and changes that
 * keep the cap index current. Also the option check both factories share.
 *
 * It deliberately holds no scope rules (the store views check bindings) and no file-system
 * details (`io.ts`).
 */
import { randomBytes } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { SessMcpError } from '../../core/contract/errors.js';
import { type OptionReader, optionNames, readOptions } from '../../core/contract/options.js';
import {
  bindingScope,
  type ListPage,
  type ListPageQuery,
  type PruneResult,
  type VersionedRecord,
  type WaitingPage,
  type WaitingQuery,
} from '../../core/contract/ports.js';
import { DEFAULT_PROFILE, PROFILE_NAME_RULE, profileDirectory } from '../../core/contract/rules.js';
import { finishedAtOf, isUnfinished, isWatched } from '../../core/model/record.js';
import { staleVersionError, storeError, storeReasonOf } from '../../core/store-kit/kit.js';
import type { CheckedPruneQuery } from '../../core/store-kit/retention.js';
import { decodeEnvelope } from '../record-codec.js';
import {
  CapIndex,
  type DecodedFile,
  FileCache,
  type FileSummary,
  inBatches,
  matchesSummary,
  openOfPrincipal,
  Summaries,
  summaryOf,
  unfinishedIn,
} from './cap.js';
import { profileCursorKey } from './cursor-key.js';
import { type FileStoreFs, ioError, nodeFileStoreFs, ProfileIo } from './io.js';
import { ProfileLease } from './lock.js';
import { forgetOutboxEvents, handlesHeldByOutbox } from './outbox-file.js';
import { readSummaryFile, writeSummaryFile } from './summary-file.js';

/** Options of {@link createFileHandleStore} and {@link openProfileRecords}. */
export interface FileHandleStoreOptions {
  /**
   * The absolute state directory (`SESS_MCP_STATE_DIR` or its platform default). It must be owned
   * by the user running the store and not writable by group or others (POSIX); it is made (0700)
   * when missing.
   */
  stateDir: string;
  /**
   * The profile name: 1–64 of `A–Z a–z 0–9 . _ -`, not starting with `.` or `-`.
   * @default 'default'
   */
  profile?: string;
  /**
   * The file system to use. Only tests pass anything but the default: a double that wraps the
   * default and fails on purpose (`node:fs/promises` fits as well).
   * @default `node:fs`, as the store calls it
   */
  fs?: FileStoreFs;
}

/** The option names of {@link FileHandleStoreOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<FileHandleStoreOptions>()('stateDir', 'profile', 'fs');

/** A scan that decoded at least this many record files writes the summary file again. */
const SUMMARY_WRITE_AFTER = 256;

const FS_CALLS = [
  'readFile',
  'readdir',
  'mkdir',
  'open',
  'rename',
  'link',
  'unlink',
  'stat',
  'lstat',
] as const;

/** Check the options of `factory` (a `TypeError` naming the option) and open the profile's files. */
export function openProfileFiles(factory: string, options: FileHandleStoreOptions): ProfileFiles {
  const read: OptionReader = readOptions(factory, options, { known: KNOWN_OPTIONS });
  const stateDir = read.optionalString('stateDir', options.stateDir);
  if (stateDir === undefined || !isAbsolute(stateDir)) read.fail('stateDir', 'must be an absolute path');
  const profile = read.optionalRule('profile', options.profile, PROFILE_NAME_RULE) ?? DEFAULT_PROFILE;
  const fs = options.fs ?? nodeFileStoreFs;
  if (typeof fs !== 'object' || fs === null || FS_CALLS.some((call) => typeof fs[call] !== 'function')) {
    read.fail('fs', `must have the calls ${FS_CALLS.join(', ')}`);
  }
  return new ProfileFiles(new ProfileIo(stateDir, profileDirectory(join, stateDir, profile), fs), profile);
}

/** What a decoded record file is kept under: the file's inode, modification time and size. */
function fileKey(stat: { ino: number | bigint; mtimeMs: number; size: number | bigint }): string {
  return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
}

/** One queued change: run by the queue of its directory, one at a time. */
interface QueuedChange {
  lease: ProfileLease;
  run(more: () => boolean): Promise<void>;
}

/**
 * The changes waiting per profile directory, shared by every store object of this module copy.
 * The running change is first; a lease is kept across changes while the next one is its own.
 */
const queues = new Map<string, QueuedChange[]>();
/** The lease that ran the last change per profile directory (it may be kept for its grace). */
const lastLeases = new Map<string, ProfileLease>();

async function drain(dir: string, queue: QueuedChange[]): Promise<void> {
  while (queue.length > 0) {
    const change = queue[0] as QueuedChange;
    // Another store object of this process kept the lease for its grace: it is not needed there.
    const last = lastLeases.get(dir);
    if (last !== undefined && last !== change.lease) await last.release().catch(() => undefined);
    lastLeases.set(dir, change.lease);
    await change.run(() => queue[1]?.lease === change.lease);
    queue.shift();
  }
  queues.delete(dir);
}

/** The records of one profile; see the module header. */
export class ProfileFiles {
  private readonly lease: ProfileLease;
  private readonly decoded = new FileCache<DecodedFile>();
  /** The summary of each file (`null`: unreadable) the last scan took, under the file's key. */
  private readonly summarised = new FileCache<FileSummary | null>();
  private readonly cap = new CapIndex();
  private tempSwept = false;
  private key: Promise<Uint8Array> | undefined;
  /** Whether the summary file was read into {@link ProfileFiles.summarised} (once). */
  private seeded = false;
  /** How many record files were decoded for a summary (so a scan knows it had news to keep). */
  private decodes = 0;
  /** The change key read when the current change started; set only while a change runs. */
  private heldKey: string | undefined;
  /**
   * The change token in `handles.gen` as this object knows it within one tenure of the lease
   * (`tenure` is the lease's token): only the holder changes it, so while the lease stays held
   * it is not read again, and it is written once, before the tenure's first change (`written`).
   */
  private gen: { tenure: string; text: string; written: boolean } | undefined;

  constructor(
    readonly io: ProfileIo,
    readonly profile: string,
  ) {
    this.lease = new ProfileLease(io);
  }

  get handlesDir(): string {
    return this.io.handlesDir;
  }

  pathOf(handle: string): string {
    return this.io.pathOf(handle);
  }

  /** Run `work` as one change: in this profile's in-process queue, holding its lease. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const change: QueuedChange = {
        lease: this.lease,
        run: async (more) => {
          let outcome: { value: T } | { error: unknown };
          try {
            outcome = { value: await this.underLease(work) };
          } catch (error) {
            outcome = { error };
          }
          // Released (unless more of this object's changes follow) before the caller hears back.
          await this.lease.leave(more()).catch(() => undefined);
          if ('value' in outcome) resolve(outcome.value);
          else reject(outcome.error);
        },
      };
      const queue = queues.get(this.handlesDir);
      if (queue !== undefined) queue.push(change);
      else {
        const fresh = [change];
        queues.set(this.handlesDir, fresh);
        void drain(this.handlesDir, fresh);
      }
    });
  }

  private async underLease<T>(work: () => Promise<T>): Promise<T> {
    await this.io.prepare(true);
    try {
      await this.lease.enter();
    } catch (error) {
      this.io.recheck();
      throw error;
    }
    if (!this.tempSwept) {
      // Holding the lease, no write is in flight: every temp file is left over from a crash.
      await this.io.sweepTempFiles();
      this.tempSwept = true;
    }
    this.heldKey = await this.changeKey(this.lease.token);
    try {
      return await work();
    } catch (error) {
      if (error instanceof SessMcpError && error.code === 'STATE_STORE_ERROR') this.io.recheck();
      throw error;
    } finally {
      this.heldKey = undefined;
    }
  }

  /**
   * The token of the last change and the directory's identity: equal keys, equal contents.
   * Under the lease (`tenure`, its token) the token is read once per tenure; the directory's
   * status is taken every time (it shows what bypasses the lease, such as a file removed by hand).
   */
  private async changeKey(tenure?: string): Promise<string> {
    const known = tenure !== undefined && this.gen?.tenure === tenure ? this.gen.text : undefined;
    const [gen, dir] = await Promise.all([
      known ??
        this.io.readSmallFile(this.io.genPath, 'read the change token').then((g) => g?.text.trim() ?? 'none'),
      this.directoryKey(),
    ]);
    if (tenure !== undefined && known === undefined) this.gen = { tenure, text: gen, written: false };
    return `${gen}|${dir}`;
  }

  private async directoryKey(): Promise<string> {
    try {
      const stat = await this.io.status(this.handlesDir);
      return stat === undefined ? 'absent' : `${stat.ino}:${stat.mtimeMs}`;
    } catch (error) {
      throw ioError(error, 'list records');
    }
  }

  /** The profile's `sess_list` cursor key, read (or made) once per store object. */
  cursorKey(): Promise<Uint8Array> {
    this.key ??= profileCursorKey(this.io).catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  /** The handles that have a record file. */
  async handles(): Promise<string[]> {
    const out = await this.io.handles();
    this.decoded.keepOnly(out);
    this.summarised.keepOnly(out);
    return out;
  }

  /**
   * The decoded record file (shared, do not change it), a non-retryable error value for an
   * unreadable one, or `undefined` when there is none. Transient failures throw.
   */
  private async load(handle: string): Promise<DecodedFile | undefined> {
    const stat = await this.statusOf(handle);
    if (stat === undefined) {
      this.decoded.delete(handle);
      return undefined;
    }
    const key = fileKey(stat);
    const cached = this.decoded.get(handle, key);
    if (cached !== undefined) return cached;
    const value = await this.decode(handle);
    if (value !== undefined) this.decoded.set(handle, key, value);
    return value;
  }

  /** The status of `handle`'s record file, or `undefined` when there is none. */
  private async statusOf(handle: string) {
    return (await this.io.prepare(false))
      ? await this.io.fileStatus(this.pathOf(handle), 'read a record')
      : undefined;
  }

  /** Read and decode `handle`'s record file (nothing is kept); see {@link ProfileFiles.load}. */
  private async decode(handle: string): Promise<DecodedFile | undefined> {
    const text = await this.io.readText(handle);
    if (text === undefined) return undefined;
    try {
      return decodeEnvelope(text, handle);
    } catch (error) {
      if (!(error instanceof SessMcpError)) throw error;
      return error;
    }
  }

  /**
   * The summary of `handle`'s record file (`null`: unreadable), or `undefined` when there is
   * none: kept under the file's key, so a file unchanged since the last scan is not read again.
   */
  private async summaryOfFile(handle: string): Promise<FileSummary | null | undefined> {
    const stat = await this.statusOf(handle);
    if (stat === undefined) return undefined;
    const key = fileKey(stat);
    const cached = this.summarised.get(handle, key);
    if (cached !== undefined) return cached;
    const value = this.decoded.get(handle, key) ?? (await this.decode(handle));
    if (value === undefined) return undefined;
    this.decodes += 1;
    const summary = value instanceof SessMcpError ? null : summaryOf(value.record);
    this.summarised.set(handle, key, summary);
    return summary;
  }

  /** A copy of the decoded record file, or `undefined`; unreadable files throw (non-retryable). */
  async read(handle: string): Promise<VersionedRecord | undefined> {
    const value = await this.peek(handle);
    return value === undefined ? undefined : structuredClone(value);
  }

  /**
   * The decoded record file itself (shared: read it at once, never change or hand it out), or
   * `undefined`; unreadable files throw (non-retryable). For a check such as a compare-and-set's
   * version, which needs no copy.
   */
  async peek(handle: string): Promise<Readonly<VersionedRecord> | undefined> {
    const value = await this.load(handle);
    if (value instanceof SessMcpError) {
      throw storeError(value.message, value.retryable, storeReasonOf(value));
    }
    return value;
  }

  async exists(handle: string): Promise<boolean> {
    if (!(await this.io.prepare(false))) return false;
    return (await this.io.fileStatus(this.pathOf(handle), 'read a record')) !== undefined;
  }

  /** Summarise every readable file (unreadable ones do not count: reading their handle names them). */
  private async scan(): Promise<Summaries> {
    if (!this.seeded) {
      // Another process's summary of the files: only the files changed since are decoded.
      this.seeded = true;
      for (const { handle, key, summary } of await readSummaryFile(this.io))
        this.summarised.set(handle, key, summary);
    }
    const files = new Map<string, FileSummary>();
    const handles = await this.handles();
    const decodedBefore = this.decodes;
    const summaries = await inBatches(handles, 32, (handle) => this.summaryOfFile(handle));
    handles.forEach((handle, i) => {
      const summary = summaries[i];
      if (summary !== undefined && summary !== null) files.set(handle, summary);
    });
    if (this.heldKey !== undefined && this.decodes - decodedBefore >= SUMMARY_WRITE_AFTER) {
      const entries = [...this.summarised.entries()].map(({ handle, key, value }) => ({
        handle,
        key,
        summary: value,
      }));
      await writeSummaryFile(this.io, entries);
    }
    return new Summaries(files);
  }

  /**
   * The summary of every readable file: the cap index while it is current, else a new summary
   * taken under the lease. Shared: read it at once, do not change it.
   */
  private async summaries(): Promise<Summaries> {
    const key = this.heldKey ?? (await this.changeKey());
    const files = this.cap.current(key);
    if (files !== undefined) return files;
    // Only a summary taken under the lease is kept (outside it a change may be half made), so
    // a summary worth keeping is taken under the lease.
    if (this.heldKey === undefined && !key.endsWith('|absent')) return this.exclusive(() => this.summaries());
    const takenAt = Date.now();
    const fresh = await this.scan();
    if (this.heldKey !== undefined) this.cap.keep(key, fresh, takenAt);
    return fresh;
  }

  /** The handles of the unfinished records of `scope`. */
  async unfinishedOf(scope: string): Promise<string[]> {
    return unfinishedIn((await this.summaries()).files, scope);
  }

  /** How many unfinished records `principal` holds over all its scopes. */
  async openOfPrincipal(principal: string): Promise<number> {
    return openOfPrincipal((await this.summaries()).files, principal);
  }

  /**
   * One listing page of `scope` (a checked query): chosen from the summary, then only the
   * records on it are read. When one of them is no longer what the summary said (another
   * process changed it in between), the page is chosen again under the lease, where no change
   * is made; if even then a file disagrees (it was changed by hand), the summary is taken again
   * from the files.
   */
  async listPage(scope: string, query: ListPageQuery): Promise<ListPage> {
    const page = await this.pageFrom(scope, query, true);
    if (page !== undefined) return page;
    return this.exclusive(async () => {
      const held = await this.pageFrom(scope, query, true);
      if (held !== undefined) return held;
      // Under the lease the summary still disagrees with a file: it was changed by hand. Take
      // the summary again from the files.
      this.cap.drop();
      return (await this.pageFrom(scope, query, false)) as ListPage;
    });
  }

  private async pageFrom(
    scope: string,
    query: ListPageQuery,
    strict: boolean,
  ): Promise<ListPage | undefined> {
    const summaries = await this.summaries();
    const { keys, more } = summaries.listingOf(scope).page(query);
    const loaded = await inBatches(keys, 32, ({ handle }) => this.load(handle));
    const records: VersionedRecord[] = [];
    for (const [i, value] of loaded.entries()) {
      const summary = summaries.files.get(keys[i]!.handle);
      const fits =
        value !== undefined &&
        !(value instanceof SessMcpError) &&
        summary !== undefined &&
        matchesSummary(value.record, summary);
      if (fits) records.push(structuredClone(value));
      else {
        // Its summary is wrong (the file changed without its key changing): decode it again.
        this.summarised.delete(keys[i]!.handle);
        if (strict) return undefined;
      }
    }
    return { records, more };
  }

  /**
   * One page of the watched records of every scope (a checked query): chosen from the summary,
   * then only the files on it are read; one that is no longer watched or readable is left out.
   */
  async waitingPage(query: WaitingQuery): Promise<WaitingPage> {
    const { handles, more } = (await this.summaries()).waiting().page(query);
    const loaded = await inBatches(handles, 32, (handle) => this.load(handle));
    const records: VersionedRecord[] = [];
    for (const value of loaded) {
      if (value !== undefined && !(value instanceof SessMcpError) && isWatched(value.record)) {
        records.push(structuredClone(value));
      }
    }
    const last = handles[handles.length - 1];
    return more && last !== undefined ? { records, next: last } : { records };
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
   * Write a record file whole (in a change), keeping the cap index current. `written` is what
   * `text` decodes to, kept for the next read (the store's own copy: it must not be shared).
   */
  async write(handle: string, text: string, summary: FileSummary, written?: VersionedRecord): Promise<void> {
    await this.change([[handle, summary]], () => this.io.writeRecord(handle, text, this.fence));
    if (written !== undefined) await this.remember(handle, written);
  }

  /**
   * Keep a record just written for the next read, under the file's status now. Only the lease's
   * holder writes record files, and it holds the lease until this returns, so the file is still
   * the one written; the next read checks that status with one `lstat` and reads the file again
   * as soon as anything (another process's later write) changed it.
   */
  private async remember(handle: string, written: VersionedRecord): Promise<void> {
    try {
      const stat = await this.io.fileStatus(this.pathOf(handle), 'read a record');
      if (stat !== undefined) this.decoded.set(handle, fileKey(stat), written);
    } catch {
      // Nothing is kept: the next read reads the file.
    }
  }

  /**
   * The commit step's check that the lease was not taken over since the change began: a change
   * it stops writes nothing and reports `stale_version` (another process may have changed the
   * record meanwhile; reading it again tells).
   */
  readonly fence = () => this.lease.confirm(staleVersionError);

  /** Remove a record file (in a change) durably. False when there was none. */
  async remove(handle: string): Promise<boolean> {
    let removed = false;
    await this.change([[handle, undefined]], async () => {
      removed = await this.io.removeRecord(handle, this.fence);
    });
    return removed;
  }

  /**
   * Retention (`HandleStoreFactory.prune`, a checked query), as one change under the lease: the
   * oldest finished records from the summary's index, less those an owed event holds, each file
   * read again to confirm it is still what the index says, then removed (one fence, one sync of
   * the directory), then their events dropped from the outbox. A reader without the lease finds
   * a file whole or not at all (a removal is one unlink).
   */
  prune(query: CheckedPruneQuery): Promise<PruneResult> {
    return this.exclusive(async () => {
      const held = await handlesHeldByOutbox(this.io);
      const { handles, more } = (await this.summaries())
        .finished()
        .oldest(query.olderThan, query.limit, (handle) => held.has(handle));
      const loaded = await inBatches(handles, 32, (handle) => this.load(handle));
      const doomed = handles.filter((_, i) => {
        const value = loaded[i];
        if (value === undefined || value instanceof SessMcpError) return false;
        const finishedAt = finishedAtOf(value.record);
        return finishedAt !== undefined && finishedAt < query.olderThan;
      });
      // Nothing to remove (the index was behind a file): say none are left, so no loop spins.
      if (doomed.length === 0) return { removed: 0, more: false };
      let removed: string[] = [];
      await this.change(
        doomed.map((handle) => [handle, undefined] as const),
        async () => {
          removed = await this.io.removeRecords(doomed, this.fence);
        },
      );
      await forgetOutboxEvents(this, new Set(removed));
      return { removed: removed.length, more };
    });
  }

  /**
   * Make one change (of one record, or a batch a prune removes): announce the lease's tenure of changes first with a fresh token in
   * `handles.gen`, once, before its first change (if that cannot be written, nothing is changed;
   * every other process's summary was taken under an older token, so it is not used again),
   * then make it, then move the cap index along (or drop it when the change failed).
   */
  private async change(
    changed: readonly (readonly [handle: string, summary: FileSummary | undefined])[],
    make: () => Promise<void>,
  ): Promise<void> {
    // Changes run under the lease; without a tenure (never expected) the token is not kept.
    const tenure = this.lease.token ?? '';
    let gen = this.gen;
    if (gen === undefined || gen.tenure !== tenure || !gen.written || tenure === '') {
      const token = randomBytes(12).toString('hex');
      await this.io.writeSmallFile(this.io.genPath, `${token}\n`, 'write a record');
      gen = { tenure, text: token, written: true };
      this.gen = tenure === '' ? undefined : gen;
    }
    for (const [handle] of changed) {
      this.decoded.delete(handle);
      this.summarised.delete(handle);
    }
    try {
      await make();
    } catch (error) {
      this.cap.drop();
      throw error;
    }
    let nextKey: string;
    try {
      nextKey = `${gen.text}|${await this.directoryKey()}`;
    } catch {
      this.cap.drop();
      return;
    }
    if (this.cap.follow(this.heldKey, nextKey, changed)) this.heldKey = nextKey;
  }
}
