/**
 * The wake files of one profile, beside `handles/`:
 *
 * - `wake.watcher`: which process watches the profile's waiting interactions for a late answer
 *   (one line `<pid> <host> <token>`), its mtime the watcher's heartbeat. At most one process
 *   holds it, so several stdio servers on one profile cost the Sess calls of one. It is taken
 *   with an exclusive create; a file whose holder is gone (a pid not running on this host, or a
 *   heartbeat older than {@link WATCHER_STALE_MS}) is removed, only if it is still the file
 *   judged stale, and created again. A holder checks before every round that the file still
 *   names its token, so one that stood still while another took over stands down. A wrong
 *   judgement costs only Sess calls: every state change still goes through the store's
 *   compare-and-set.
 * - `wake.wait.<handle>`: the `sess-mcp wait` running for a handle (`<pid> <host>`), so a second
 *   one exits at once. One left by a process that is no longer running is taken over.
 *
 * Every path goes through {@link ProfileIo}: no link is followed, and the directories pass its
 * checks. It knows nothing of Sess, the engine or the command line.
 */
import { randomBytes } from 'node:crypto';
import { constants, readFileSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PROFILE, PROFILE_NAME_RULE, profileDirectory } from '../../core/contract/rules.js';
import { errnoCode, type FileStoreFileLike, nodeFileStoreFs, ProfileIo } from './io.js';

/**
 * `SESS_MCP_TEST_WAKE_STALE_MS` (tests only: 500–30 000) shortens the heartbeat's stale time, so
 * a test can see a stopped watcher go stale in seconds.
 */
const TEST_STALE_MS = ((text) =>
  text !== undefined && /^\d+$/.test(text) && Number(text) >= 500 && Number(text) <= 30_000
    ? Number(text)
    : undefined)(process.env.SESS_MCP_TEST_WAKE_STALE_MS);

/** A watcher heartbeat older than this is stale: no process watches the profile. */
export const WATCHER_STALE_MS = TEST_STALE_MS ?? 30_000;
/** How often the watcher renews its heartbeat. */
export const WATCHER_HEARTBEAT_MS = Math.round(WATCHER_STALE_MS / 6);

const HOST = hostname();
/** Open an existing file to renew its times: never through a link. */
const RENEW_FLAGS = constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0);

/** The holder named by a wake file's first line. */
interface Holder {
  pid: number;
  host: string;
  token: string;
}

function parseHolder(text: string): Holder | undefined {
  const [pid, host, token = ''] = text.trim().split(' ');
  if (pid === undefined || !/^\d{1,10}$/.test(pid) || host === undefined || host === '') return undefined;
  return { pid: Number(pid), host, token };
}

/** True unless `holder` ran on this host and its pid is not running. */
function mayBeAlive(holder: Holder): boolean {
  if (holder.host !== HOST) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === 'EPERM'; // running, as another user
  }
}

/** How a claim of the watcher role ended. */
export type WatcherClaim = 'held' | 'busy';

/** The wake files of one profile. */
export class ProfileWakeFiles {
  /** The path of `wake.watcher`. */
  readonly watcherPath: string;

  private constructor(private readonly io: ProfileIo) {
    this.watcherPath = join(io.profileDir, 'wake.watcher');
  }

  /** The wake files of `profile` under `stateDir` (an absolute path). */
  static open(stateDir: string, profile: string = DEFAULT_PROFILE): ProfileWakeFiles {
    if (!PROFILE_NAME_RULE.test(profile)) throw new TypeError(`profile ${PROFILE_NAME_RULE.text}`);
    return new ProfileWakeFiles(
      new ProfileIo(stateDir, profileDirectory(join, stateDir, profile), nodeFileStoreFs),
    );
  }

  /** True when the profile's record directory exists (without making it). */
  async hasRecordDirectory(): Promise<boolean> {
    return this.io.prepare(false).catch(() => false);
  }

  /** The path of `handle`'s wait file. */
  waitPath(handle: string): string {
    return join(this.io.profileDir, `wake.wait.${handle}`);
  }

  /**
   * Create `path` for this process (`<pid> <host> <token>`), taking over a file left by a holder
   * that is gone: `true` when this process holds it now. `stale` judges an existing file.
   */
  private async take(
    path: string,
    token: string,
    stale: (holder: Holder | undefined, mtimeMs: number) => boolean,
    create: boolean,
  ): Promise<boolean> {
    if (!(await this.io.prepare(create))) return false;
    for (let attempt = 0; attempt < 2; attempt++) {
      let file: FileStoreFileLike;
      try {
        file = await this.io.createFile(path, `${process.pid} ${HOST} ${token}\n`, 'take a wake file');
      } catch (error) {
        if (errnoCode(error) !== 'EEXIST') throw error;
        const seen = await this.io.readSmallFile(path, 'read a wake file');
        if (seen === undefined) continue; // removed in between: create it again
        if (!stale(parseHolder(seen.text), seen.mtimeMs)) return false;
        // Remove it only if it is still the file judged stale (another taker may have won).
        const again = await this.io.readSmallFile(path, 'read a wake file');
        if (again?.text !== seen.text || again.mtimeMs !== seen.mtimeMs) return false;
        await this.io.fs.unlink(path).catch(() => undefined);
        continue;
      }
      await file.close();
      return true;
    }
    return false;
  }

  /** True when `path` names `token` (this process still holds it). */
  private async holds(path: string, token: string): Promise<boolean> {
    const seen = await this.io.readSmallFile(path, 'read a wake file');
    const holder = seen === undefined ? undefined : parseHolder(seen.text);
    return holder?.token === token && holder.pid === process.pid && holder.host === HOST;
  }

  /** Take the watcher role with `token`, or `busy` when a live watcher holds it. */
  async claimWatcher(token: string, now = Date.now()): Promise<WatcherClaim> {
    if (await this.holds(this.watcherPath, token)) return 'held';
    const taken = await this.take(
      this.watcherPath,
      token,
      (holder, mtimeMs) => holder === undefined || !mayBeAlive(holder) || now - mtimeMs > WATCHER_STALE_MS,
      true, // a tool call read the key: its profile's directories are made now, as its store would
    );
    return taken ? 'held' : 'busy';
  }

  /**
   * Renew the heartbeat of the role `token` holds: false (and nothing written) when another
   * process holds the role now.
   */
  async renewWatcher(token: string, now = Date.now()): Promise<boolean> {
    if (!(await this.holds(this.watcherPath, token))) return false;
    const seconds = now / 1000;
    const file = await this.io.openForWrite(this.watcherPath, RENEW_FLAGS, 'renew the watcher heartbeat');
    try {
      await file.utimes(seconds, seconds);
    } finally {
      await file.close();
    }
    return true;
  }

  /** Give the role up, if `token` still holds it. */
  async releaseWatcher(token: string): Promise<void> {
    if (await this.holds(this.watcherPath, token).catch(() => false)) {
      await this.io.fs.unlink(this.watcherPath).catch(() => undefined);
    }
  }

  /** True when a watcher's heartbeat moved within {@link WATCHER_STALE_MS} of `now`. */
  async watcherFresh(now = Date.now()): Promise<boolean> {
    const seen = await this.io.readSmallFile(this.watcherPath, 'read a wake file').catch(() => undefined);
    if (seen === undefined) return false;
    const holder = parseHolder(seen.text);
    return holder !== undefined && mayBeAlive(holder) && now - seen.mtimeMs <= WATCHER_STALE_MS;
  }

  /**
   * Take `handle`'s wait file for this process: a release function, or `undefined` when a wait
   * that is still running holds it.
   */
  async lockWait(handle: string): Promise<(() => void) | undefined> {
    const path = this.waitPath(handle);
    const token = randomBytes(9).toString('base64url');
    const taken = await this.take(
      path,
      token,
      (holder) => holder === undefined || !mayBeAlive(holder),
      false,
    );
    if (!taken) return undefined;
    return () => {
      // Synchronous, so it also runs from an exit handler.
      try {
        nodeUnlinkIfOurs(path, token);
      } catch {
        // Left behind, the next wait takes it over: its pid is no longer running.
      }
    };
  }
}

/** Remove `path` when it still names `token` (the file is small: one line). */
function nodeUnlinkIfOurs(path: string, token: string): void {
  const holder = parseHolder(readFileSync(path, 'utf8'));
  if (holder?.token === token) unlinkSync(path);
}
