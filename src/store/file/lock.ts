/**
 * The cross-process lease of one profile: `handles.lock` beside `handles/`.
 *
 * A process takes the lease by creating the lock file (`O_EXCL`, never through a link) with one
 * line `<pid> <token> <identity> <host>`: a random owner token, the holder's process identity
 * (Linux: the boot id and the process start time, field 22 of `/proc/<pid>/stat`; `-` elsewhere)
 * and its host name. It keeps the lease for a burst of commits (every change its in-process queue
 * holds, and for {@link LEASE_GRACE_MS} after the queue is empty, so commits an agent awaits one
 * after the other take it once), renews the file's mtime as a heartbeat while it holds it, and
 * removes the file when the grace ends, when the process is about to exit, or at once when another
 * process waits. A waiting process announces itself in `handles.lock.next`; the holder looks for
 * that after every commit and hands the lease over, and a taker that sees another live process
 * announced steps back for a moment first, so two busy processes take turns. A process that waits
 * for an idle holder gets the lease within the grace and its own poll.
 *
 * A lease is taken over exactly when its file:
 * - was written on this host with this process's pid but a token this process does not hold (a
 *   restart reused the pid), or
 * - was written on this host by a pid that is not running, or whose identity now differs (the pid
 *   was reused by another process, or the machine rebooted), or
 * - has a heartbeat that did not move for {@link LEASE_STALE_MS} while this process watched it
 *   (whatever host wrote it; counted on this process's monotonic clock, so a wall-clock step on
 *   either side neither ages a live lease nor keeps a dead one), or
 * - is still empty after a second of watching (its taker died between creating and writing it).
 * Takeovers are serialised by a short-lived guard file (`handles.lock.takeover`), so two
 * processes taking over the same lease cannot both win; only a crash inside a takeover leaves a
 * guard, which counts as abandoned after two seconds. On Windows there is no `/proc`: there a
 * lease is taken over when its pid is not running or its heartbeat is stale.
 *
 * While it holds the lease, a holder checks before every change that the lock file is still the
 * one it wrote (one `lstat`: inode, size and mtime), so a lock replaced by hand is never written
 * over or removed.
 *
 * Fencing: a holder can stand still past its lease in the middle of a change (a stopped process,
 * a paused VM) and have it taken over. So the commit step checks the lease again
 * ({@link ProfileLease.confirm}) after the temp file is written and before the rename, and a
 * process that took a lease over removes every temp file before its first change. A holder that
 * stood still after its check finds its temp file gone and its rename fails; one that stood still
 * before it fails the check. Either way its change reports a conflict and writes nothing.
 *
 * It deliberately does not order waiters beyond the one announcement, and keeps no lease while
 * idle beyond the grace (a process with nothing queued holds nothing after it).
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, unlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { SessMcpError } from '../../core/contract/errors.js';
import { storeError } from '../../core/store-kit/kit.js';
import { CREATE_NEW_FLAGS, errnoCode, type FileStoreFileLike, ioError, type ProfileIo } from './io.js';

/**
 * `SESS_MCP_TEST_LEASE_MS` (tests only: 200–15 000) shortens the stale time, and the heartbeat
 * and the wait with it, so a test can pause a holder past its lease in about a second.
 */
const TEST_LEASE_MS = ((text) =>
  text !== undefined && /^\d+$/.test(text) && Number(text) >= 200 && Number(text) <= 15_000
    ? Number(text)
    : undefined)(process.env.SESS_MCP_TEST_LEASE_MS);
/**
 * A lease whose heartbeat has not moved for this long, as the process looking at it counts time
 * (its monotonic clock, not the wall clock: a clock step moves neither), is abandoned.
 */
export const LEASE_STALE_MS = TEST_LEASE_MS ?? 15_000;
/** How long a process waits for a lease held by a live process before it reports `busy`. */
const LOCK_WAIT_MS = LEASE_STALE_MS + 5_000;
/** How often a holder renews its lease's heartbeat. */
const HEARTBEAT_MS = Math.round(LEASE_STALE_MS / 7.5);
/** A lock file still without a pid after this long was left by a taker that died at once. */
const LOCK_UNWRITTEN_STALE_MS = 1_000;
/** How long a waiter's announcement in `handles.lock.next` counts. */
const NEXT_FRESH_MS = 1_000;
/** A takeover guard older than this was left by a process that died inside a takeover. */
const GUARD_STALE_MS = 2_000;
/**
 * How long a holder keeps the lease after its queue is empty: the next commit within it takes
 * no lock file. Another process waiting for the lease gets it within this and its own poll.
 */
export const LEASE_GRACE_MS = 100;

/** The retryable refusal of a change that could not hold the profile's lease (reason `busy`). */
export function profileBusyError(): SessMcpError {
  return storeError('The profile is busy (another process holds its lock). Try again.', true, 'busy');
}

/** Why a lease was taken over. */
export type TakeoverReason =
  | 'reused_pid'
  | 'dead_holder'
  | 'restarted_holder'
  | 'stale_heartbeat'
  | 'unwritten';

const takeovers: Record<TakeoverReason, number> = {
  reused_pid: 0,
  dead_holder: 0,
  restarted_holder: 0,
  stale_heartbeat: 0,
  unwritten: 0,
};

/** How many leases this module copy took over, by reason (a copy: for tests and measurements). */
export function lockTakeovers(): Record<TakeoverReason, number> {
  return { ...takeovers };
}

/**
 * The tokens of the leases this process holds now, shared by every copy of this module in the
 * process (an ESM and a CJS copy hold leases as two processes would). A lock file naming this
 * pid with a token not in here is a leftover from an earlier process that had the same pid.
 */
const LEASES_KEY = Symbol.for('@sess.si/mcp/store/file#leases');
const registry = globalThis as { [LEASES_KEY]?: Set<string> };
registry[LEASES_KEY] ??= new Set<string>();
const liveTokens: Set<string> = registry[LEASES_KEY];

const HOST = encodeURIComponent(hostname()) || '-';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
}

let bootId: Promise<string | undefined> | undefined;

/** `<boot id>:<start time>` of `pid` (Linux), or `undefined` when it cannot be told. */
async function processIdentity(pid: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  bootId ??= readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
    (text) => text.trim(),
    () => undefined,
  );
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command) is in parentheses and may hold spaces: count from the last ')'.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const boot = await bootId;
    return start === undefined || boot === undefined ? undefined : `${boot}:${start}`;
  } catch {
    return undefined;
  }
}

const ownIdentity = processIdentity(process.pid);

/** One parsed lock file. */
interface LeaseLine {
  pid: number;
  token: string | undefined;
  identity: string | undefined;
  host: string | undefined;
}

function parseLease(text: string): LeaseLine | undefined {
  const [pidText = '', token, identity, host] = text.trim().split(' ');
  const pid = Number.parseInt(pidText, 10);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  const known = (value: string | undefined) => (value === undefined || value === '-' ? undefined : value);
  return { pid, token, identity: known(identity), host: known(host) };
}

/** What a holder knows of the lock file it wrote: its status as last seen. */
interface LockSeen {
  ino: number;
  size: number;
  mtimeMs: number;
}

const sameLock = (a: LockSeen | undefined, b: LockSeen) =>
  a !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

/** One lease held: its token, its lock file and what was last seen of it, its timers. */
interface HeldLease {
  token: string;
  file: FileStoreFileLike;
  seen: LockSeen;
  beat: NodeJS.Timeout;
  /** The heartbeat in flight (its renewal changes the file's mtime), and how many have started. */
  beating: Promise<void> | undefined;
  beats: number;
  renewedAt: number;
  /** Set while the queue is empty and the lease is kept for {@link LEASE_GRACE_MS}. */
  grace: NodeJS.Timeout | undefined;
}

/**
 * The leases held now, released when the process is about to exit. Shared by every copy of this
 * module in the process (like the tokens), so the process listeners are added once.
 */
const HOLDERS_KEY = Symbol.for('@sess.si/mcp/store/file#holders');
const holderRegistry = globalThis as { [HOLDERS_KEY]?: Set<ProfileLease> };
const holders: Set<ProfileLease> = holderRegistry[HOLDERS_KEY] ?? watchExit();

function watchExit(): Set<ProfileLease> {
  const all = new Set<ProfileLease>();
  holderRegistry[HOLDERS_KEY] = all;
  // The event loop is empty: release every lease kept for its grace (the timers do not keep a
  // process alive), so the next process finds no leftover lock to take over.
  process.on('beforeExit', () => {
    for (const lease of all) void lease.release();
  });
  // `process.exit()`: no more asynchronous work runs; remove the lock files synchronously.
  process.on('exit', () => {
    for (const lease of all) lease.releaseNow();
  });
  return all;
}

/** The lease of one profile as one store object holds it. */
export class ProfileLease {
  private held: HeldLease | undefined;
  /** A release in progress: taking the lease again waits for it. */
  private dropping: Promise<void> | undefined;
  /** The token this object announces while it waits (its own announcement is no other waiter). */
  private waitingToken: string | undefined;
  /**
   * The lock file as this object first saw it unchanged (inode, mtime and text) and when, on the
   * monotonic clock: a heartbeat that does not move while watched is how a lease goes stale.
   */
  private watched: { lock: string; since: number } | undefined;

  constructor(private readonly io: ProfileIo) {}

  /**
   * The token of the lease held now, or `undefined`: a new token is a new tenure, in which
   * another process may have changed the profile before.
   */
  get token(): string | undefined {
    return this.held?.token;
  }

  /** Make sure this object holds the lease (take it, or check it was not taken over meanwhile). */
  async enter(): Promise<void> {
    if (this.dropping !== undefined) await this.dropping;
    const held = this.held;
    if (held !== undefined) {
      if (held.grace !== undefined) clearTimeout(held.grace);
      held.grace = undefined;
      if (await this.stillHeld(held)) return;
      // Lost (this process stood still longer than the heartbeat allows, or the file was
      // replaced): take it again, leaving the file alone.
      await this.drop(false);
    }
    await this.acquire();
  }

  /**
   * The commit step's fence: resolves when this object still holds the lease it held when the
   * change began, and throws `lost()` otherwise (the lease was taken over meanwhile: the change
   * must write nothing). The lease is then dropped, so the next change takes it again.
   */
  async confirm(lost: () => Error): Promise<void> {
    const held = this.held;
    if (held !== undefined && (await this.stillHeld(held))) return;
    if (held !== undefined && this.held === held) await this.drop(false);
    throw lost();
  }

  /** True while the lock file is still the one `held` wrote and last renewed. */
  private async stillHeld(held: HeldLease): Promise<boolean> {
    // A heartbeat renewing the file while it is looked at changes its mtime: look again then.
    for (let look = 0; look < 3; look++) {
      if (held.beating !== undefined) await held.beating;
      const beats = held.beats;
      // Only a holder that stood still past its heartbeat can have lost the lease; the file is
      // then read to tell its own lock from another's that got the same inode. Otherwise one
      // status tells whether the file is still the one this lease wrote and last renewed.
      const overdue = performance.now() - held.renewedAt > 2 * HEARTBEAT_MS;
      const lock = overdue
        ? await this.io.readSmallFile(this.io.lockPath, 'take the profile lock')
        : undefined;
      const stats = await this.io.fileStatus(this.io.lockPath, 'take the profile lock');
      const kept = overdue
        ? stats?.ino === held.seen.ino && parseLease(lock?.text ?? '')?.token === held.token
        : sameLock(stats, held.seen);
      if (kept && this.held === held) {
        if (stats !== undefined) held.seen = { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
        return true;
      }
      if (this.held !== held || (held.beats === beats && held.beating === undefined)) break;
    }
    return false;
  }

  /**
   * After one commit: keep the lease when `more` of this object's work is queued, or for the
   * grace when nothing is, as long as no other process waits for it; otherwise release it.
   */
  async leave(more: boolean): Promise<void> {
    const held = this.held;
    if (held === undefined) return;
    if (await this.anotherIsNext().catch(() => true)) return this.drop(true);
    if (more || this.held !== held) return;
    if (held.grace !== undefined) clearTimeout(held.grace);
    held.grace = setTimeout(() => {
      held.grace = undefined;
      if (this.held === held) void this.release();
    }, LEASE_GRACE_MS);
    held.grace.unref();
  }

  /** Release the lease now, if this object holds it. */
  release(): Promise<void> {
    return this.drop(true);
  }

  /** Remove the lock file synchronously (the process is exiting: nothing asynchronous runs). */
  releaseNow(): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    holders.delete(this);
    try {
      if (sameLock(lstatSync(this.io.lockPath), held.seen)) unlinkSync(this.io.lockPath);
    } catch {
      // Left behind, it is a leftover the next taker recognises (its pid is not running).
    }
  }

  private drop(unlink: boolean): Promise<void> {
    if (this.dropping !== undefined) return this.dropping;
    const held = this.held;
    if (held === undefined) return Promise.resolve();
    this.dropping = this.dropHeld(held, unlink).finally(() => {
      this.dropping = undefined;
    });
    return this.dropping;
  }

  private async dropHeld(held: HeldLease, unlink: boolean): Promise<void> {
    this.held = undefined;
    holders.delete(this);
    clearInterval(held.beat);
    if (held.grace !== undefined) clearTimeout(held.grace);
    try {
      if (held.beating !== undefined) await held.beating;
      // Remove the file only while it is still this lease's (a takeover or a hand replaced it
      // otherwise).
      const stats = unlink
        ? await this.io.fileStatus(this.io.lockPath, 'release the profile lock')
        : undefined;
      if (stats !== undefined && sameLock(stats, held.seen)) await this.io.fs.unlink(this.io.lockPath);
    } catch {
      // Left behind, it is a leftover the next taker recognises (this token is no longer live).
    } finally {
      // Only now: while the file may still be there, this process's own lock is not a leftover.
      liveTokens.delete(held.token);
      await held.file.close().catch(() => undefined);
      await this.io.closeDirectory();
    }
  }

  /**
   * Take the lease. The lease is not fair by itself (a process with queued work takes it again
   * at once), so a process that waits says so in `handles.lock.next`, and a taker that sees
   * another live process waiting there steps back for a moment first.
   */
  private async acquire(): Promise<void> {
    const token = randomBytes(16).toString('hex');
    this.waitingToken = token;
    try {
      await this.acquireAs(token);
    } finally {
      this.waitingToken = undefined;
    }
  }

  private async acquireAs(token: string): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    let announcedAt = 0;
    let steppedBack = 0;
    let tookOver = false;
    for (let attempt = 0; ; attempt++) {
      if (steppedBack < 50 && (await this.anotherIsNext())) {
        steppedBack++;
        await sleep(2);
        continue;
      }
      if (await this.tryCreate(token)) {
        if (announcedAt !== 0) await this.io.fs.unlink(this.io.nextPath).catch(() => undefined);
        // The holder this lease was taken from may still be inside a change: its temp file goes
        // before this holder's first change, so that change can no longer land (see the fencing
        // above).
        if (tookOver) await this.io.sweepTempFiles();
        return;
      }
      const reason = await this.abandoned();
      if (reason !== undefined) {
        tookOver = (await this.takeOver()) || tookOver;
        continue;
      }
      if (Date.now() > deadline) {
        throw profileBusyError();
      }
      if (Date.now() - announcedAt > NEXT_FRESH_MS / 2) {
        announcedAt = Date.now();
        await this.io.writeSmallFile(this.io.nextPath, `${process.pid} ${token}\n`, 'take the profile lock');
      }
      await sleep(Math.min(1 + attempt, 10) * (0.5 + Math.random()));
    }
  }

  /** Create the lock file; false when one exists. */
  private async tryCreate(token: string): Promise<boolean> {
    const identity = (await ownIdentity) ?? '-';
    let file: FileStoreFileLike;
    try {
      const line = `${process.pid} ${token} ${identity} ${HOST}\n`;
      file = await this.io.createFile(this.io.lockPath, line, 'take the profile lock');
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') return false;
      throw ioError(error, 'take the profile lock');
    }
    try {
      const stats = await this.io.fileStatus(this.io.lockPath, 'take the profile lock');
      if (stats === undefined) throw Object.assign(new Error('lock vanished'), { code: 'ENOENT' });
      liveTokens.add(token);
      const beat = setInterval(() => {
        const held = this.held;
        if (held?.token !== token || held.beating !== undefined) return;
        held.beats++;
        held.beating = this.renew(held).finally(() => {
          held.beating = undefined;
        });
      }, HEARTBEAT_MS);
      beat.unref();
      const seen = { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
      this.held = {
        token,
        file,
        seen,
        beat,
        beating: undefined,
        beats: 0,
        renewedAt: performance.now(),
        grace: undefined,
      };
      holders.add(this);
      return true;
    } catch (error) {
      await file.close().catch(() => undefined);
      await this.io.fs.unlink(this.io.lockPath).catch(() => undefined);
      throw ioError(error, 'take the profile lock');
    }
  }

  /** The heartbeat: renew the lock file's mtime, and note the file's status after it. */
  private async renew(held: HeldLease): Promise<void> {
    const now = Date.now() / 1000;
    try {
      const before = await this.io.fileStatus(this.io.lockPath, 'renew the profile lock');
      await held.file.utimes(now, now);
      const after = await this.io.fileStatus(this.io.lockPath, 'renew the profile lock');
      // Only the file this lease last saw is renewed as its own; any other change stays visible.
      if (after !== undefined && sameLock(before, held.seen) && after.ino === held.seen.ino) {
        held.seen = { ino: after.ino, size: after.size, mtimeMs: after.mtimeMs };
        held.renewedAt = performance.now();
      }
    } catch {
      // Not renewed: the next change checks the file again.
    }
  }

  /** Why the current lock file is abandoned, or `undefined` while its holder may still use it. */
  private async abandoned(): Promise<TakeoverReason | undefined> {
    const lock = await this.io.readSmallFile(this.io.lockPath, 'read the profile lock');
    if (lock === undefined) return undefined; // released meanwhile: just try again
    const age = this.unchangedFor(lock);
    const line = parseLease(lock.text);
    if (line === undefined) return age > LOCK_UNWRITTEN_STALE_MS ? 'unwritten' : undefined;
    if (age > LEASE_STALE_MS) return 'stale_heartbeat';
    // A pid names a process only on the host that wrote it (a lock of 0.1.0 names no host).
    if (line.host !== undefined && line.host !== HOST) return undefined;
    if (line.pid === process.pid) {
      return line.token !== undefined && liveTokens.has(line.token) ? undefined : 'reused_pid';
    }
    if (!processIsAlive(line.pid)) return 'dead_holder';
    if (line.identity === undefined) return undefined;
    const now = await processIdentity(line.pid);
    return now !== undefined && now !== line.identity ? 'restarted_holder' : undefined;
  }

  /**
   * How long, on this process's monotonic clock, the lock file has been seen exactly as it is now
   * (text and mtime): 0 the first time it is seen so.
   */
  private unchangedFor(lock: { text: string; mtimeMs: number }): number {
    const key = `${lock.mtimeMs}|${lock.text}`;
    const now = performance.now();
    if (this.watched?.lock !== key) this.watched = { lock: key, since: now };
    return now - this.watched.since;
  }

  /**
   * Remove an abandoned lock file, judged again under the takeover guard so that of two
   * processes taking over one lease only the first removes it (the second finds the first's).
   * True when this call removed it.
   */
  private async takeOver(): Promise<boolean> {
    const guardPath = `${this.io.lockPath}.takeover`;
    let guard: FileStoreFileLike;
    try {
      guard = await this.io.openForWrite(guardPath, CREATE_NEW_FLAGS, 'take over the profile lock');
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw ioError(error, 'take over the profile lock');
      const left = await this.io.readSmallFile(guardPath, 'take over the profile lock');
      if (left !== undefined && Date.now() - left.mtimeMs > GUARD_STALE_MS) {
        await this.io.fs.unlink(guardPath).catch(() => undefined);
      } else {
        await sleep(1);
      }
      return false;
    }
    try {
      const reason = await this.abandoned();
      if (reason !== undefined) {
        await this.io.fs.unlink(this.io.lockPath);
        takeovers[reason]++;
        return true;
      }
      return false;
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw ioError(error, 'take over the profile lock');
      return false;
    } finally {
      await guard.close().catch(() => undefined);
      await this.io.fs.unlink(guardPath).catch(() => undefined);
    }
  }

  /** True when another live waiter (not this object) announced, recently, that it waits for the lease. */
  private async anotherIsNext(): Promise<boolean> {
    let next: { text: string; mtimeMs: number } | undefined;
    try {
      next = await this.io.readSmallFile(this.io.nextPath, 'read the profile lock');
    } catch (error) {
      if ((error as SessMcpError).reason === 'unsafe_path') throw error; // the owner must know
      return false;
    }
    if (next === undefined || Date.now() - next.mtimeMs >= NEXT_FRESH_MS) return false;
    const line = parseLease(next.text);
    if (line === undefined) return false;
    if (line.pid === process.pid) return line.token !== this.waitingToken;
    return processIsAlive(line.pid);
  }
}
