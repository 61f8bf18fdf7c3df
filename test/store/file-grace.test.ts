/**
 * The file store's lease grace, on a real temp directory and real processes: commits awaited one
 * after the other take the lock file once and do not read or rewrite `handles.gen` per commit;
 * the lease is released within the grace once nothing is queued; a waiter (another lease object,
 * as another process would be, or a real worker process) gets an idle holder's lease within the
 * grace and its poll, and gets it after at most a commit or two from a holder that keeps
 * committing; two processes alternating commits on one record both progress with no lost update;
 * the records directory, kept open for its fsync while the lease is held, is opened again when
 * another directory took its place.
 */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import { createFileHandleStore, type FileStoreFs } from '../../src/store/file/index.js';
import { nodeFileStoreFs, ProfileIo } from '../../src/store/file/io.js';
import { LEASE_GRACE_MS, lockTakeovers, ProfileLease } from '../../src/store/file/lock.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { httpA, makeRecord, stdioA } from './fixtures.js';
import { holdLease, runWorkers, sumTallies } from './spawn-worker.js';

const tempStateDir = useTempDirs('sess-mcp-grace-');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A file system that counts opens and status calls by file name (a named double around node's). */
function countingFs() {
  const opens = new Map<string, number>();
  const stats = new Map<string, number>();
  const name = (path: string) => (path.endsWith('.json') ? 'record' : (path.split('/').pop() ?? ''));
  const bump = (map: Map<string, number>, path: string) =>
    map.set(name(path), (map.get(name(path)) ?? 0) + 1);
  const counting: FileStoreFs = {
    ...nodeFileStoreFs,
    open: (path, flags, mode) => {
      bump(opens, path);
      return nodeFileStoreFs.open(path, flags, mode);
    },
    lstat: (path) => {
      bump(stats, path);
      return nodeFileStoreFs.lstat(path);
    },
  };
  const reset = () => {
    opens.clear();
    stats.clear();
  };
  return { counting, opens, stats, reset };
}

async function profile(options: { fs?: FileStoreFs; binding?: typeof stdioA | typeof httpA } = {}) {
  const stateDir = await tempStateDir();
  const binding = options.binding ?? stdioA;
  const view = createFileHandleStore({ stateDir, ...(options.fs ? { fs: options.fs } : {}) }).forBinding(
    binding,
  );
  const record = makeRecord(binding, 'waiting');
  await view.create(record);
  const profileDir = join(stateDir, 'profiles', 'default');
  return { stateDir, view, record, lock: join(profileDir, 'handles.lock'), profileDir };
}

async function lockExists(lock: string): Promise<boolean> {
  return fs.stat(lock).then(
    () => true,
    () => false,
  );
}

describe('file store lease grace', () => {
  it('takes the lock file once for 20 commits awaited one after the other, and reads and writes handles.gen once', async () => {
    const { counting, opens, stats, reset } = countingFs();
    const { view, record, lock } = await profile({ fs: counting });
    await sleep(LEASE_GRACE_MS + 50);
    expect(await lockExists(lock)).toBe(false);
    reset();
    let version = 1;
    for (let i = 0; i < 20; i++) {
      version = (await view.update({ ...record, updatedAt: `2026-12-01T00:00:${10 + i}.000Z` }, version))
        .version;
    }
    expect(version).toBe(21);
    expect(opens.get('handles.lock')).toBe(1);
    expect(opens.get('handles.gen')).toBe(1); // written once, before the first change
    expect(stats.get('handles.gen')).toBe(1); // read once, when the lease was taken
    // Per commit: the record's temp file, nothing else opened; the directory (for its fsync)
    // once, kept open while the lease is held.
    expect(opens.get('handles')).toBe(1);
    const named = [...opens.keys()].filter((file) => !file.endsWith('.tmp'));
    expect(named.sort()).toEqual(['handles', 'handles.gen', 'handles.lock']);
    // A commit inside the grace takes no lock file either; one after it takes it again.
    reset();
    await sleep(LEASE_GRACE_MS / 2);
    version = (await view.update(record, version)).version;
    expect(opens.get('handles.lock')).toBeUndefined();
    await sleep(LEASE_GRACE_MS + 50);
    expect(await lockExists(lock)).toBe(false);
    await view.update(record, version);
    expect(opens.get('handles.lock')).toBe(1);
    // The directory kept open inside the grace was closed with the lease, and opened again.
    expect(opens.get('handles')).toBe(1);
    expect((await view.get(record.handle))?.version).toBe(version + 1);
  });

  it('opens the records directory again for its fsync when another directory took its place', async () => {
    const { counting, opens, reset } = countingFs();
    const { view, record, profileDir } = await profile({ fs: counting });
    const handles = join(profileDir, 'handles');
    let version = (await view.update(record, 1)).version;
    reset();
    // Within the grace (the directory is kept open): the directory is replaced by a copy.
    await fs.rename(handles, `${handles}.old`);
    await fs.mkdir(handles, { mode: 0o700 });
    const name = `${record.handle}.json`;
    await fs.copyFile(join(`${handles}.old`, name), join(handles, name));
    version = (await view.update(record, version)).version;
    expect(opens.get('handles')).toBe(1);
    // The change went to the directory in place, and the one kept is open no longer.
    expect(JSON.parse(await fs.readFile(join(handles, name), 'utf8')).version).toBe(version);
    expect(JSON.parse(await fs.readFile(join(`${handles}.old`, name), 'utf8')).version).toBe(version - 1);
    await view.update(record, version);
    expect(opens.get('handles')).toBe(1);
  });

  it('keeps the lease across its heartbeat: commits for longer than a heartbeat open the lock file once', async () => {
    const { counting, opens, reset } = countingFs();
    const { view, record } = await profile({ fs: counting });
    await sleep(LEASE_GRACE_MS + 50);
    reset();
    const before = lockTakeovers();
    let version = 1;
    const started = performance.now();
    // The heartbeat renews the lock file every 2 s: its new mtime is this lease's own, not a
    // replaced lock (which would be taken again, as a leftover of this pid).
    while (performance.now() - started < 2_600) {
      version = (await view.update(record, version)).version;
      await sleep(20);
    }
    expect(opens.get('handles.lock')).toBe(1);
    expect(lockTakeovers()).toEqual(before);
  });

  it('on the default file system, the lock file made at once is renewed through its descriptor and removed at the end', async () => {
    const { view, record, lock } = await profile();
    await sleep(LEASE_GRACE_MS + 50);
    const before = lockTakeovers();
    let version = (await view.update(record, 1)).version;
    const taken = await fs.stat(lock);
    expect((await fs.readFile(lock, 'utf8')).split(' ')[0]).toBe(String(process.pid));
    const started = performance.now();
    while (performance.now() - started < 2_600) {
      version = (await view.update(record, version)).version;
      await sleep(20);
    }
    const renewed = await fs.stat(lock);
    // The same file, its mtime renewed by the heartbeat (not a lock taken again).
    expect(renewed.ino).toBe(taken.ino);
    expect(renewed.mtimeMs).toBeGreaterThan(taken.mtimeMs);
    expect(lockTakeovers()).toEqual(before);
    await sleep(LEASE_GRACE_MS + 50);
    expect(await lockExists(lock)).toBe(false);
    expect((await view.get(record.handle))?.version).toBe(version);
  });

  it('on the default file system, handles.gen is written over in place: a longer file left there is cut to the new token', async () => {
    const { view, record, profileDir } = await profile();
    await sleep(LEASE_GRACE_MS + 50);
    const gen = join(profileDir, 'handles.gen');
    await fs.writeFile(gen, `${'f'.repeat(100)}\n`, { mode: 0o600 });
    const { ino } = await fs.stat(gen);
    await view.update(record, 1);
    const text = await fs.readFile(gen, 'utf8');
    expect(text).toMatch(/^[0-9a-f]{24}\n$/);
    expect((await fs.stat(gen)).ino).toBe(ino);
    // The next tenure writes another token over it, of the same length.
    await sleep(LEASE_GRACE_MS + 50);
    await view.update(record, 2);
    const next = await fs.readFile(gen, 'utf8');
    expect(next).toMatch(/^[0-9a-f]{24}\n$/);
    expect(next).not.toBe(text);
  });

  it('a process that exits within the grace leaves no lock behind', async () => {
    const { stateDir, lock } = await profile();
    await sleep(LEASE_GRACE_MS + 50);
    const before = lockTakeovers();
    const holder = await holdLease(stateDir, 'default');
    expect((await fs.readFile(lock, 'utf8')).split(' ')[0]).toBe(String(holder.pid));
    // It lets go (kept for the grace) and its event loop empties at once: released before exit.
    await holder.release();
    expect(await lockExists(lock)).toBe(false);
    expect(lockTakeovers()).toEqual(before);
  });

  it('hands an idle holder’s lease to a waiter within the grace and the waiter’s poll, with no takeover', async () => {
    const { stateDir, view, record, lock, profileDir } = await profile();
    await view.update(record, 1);
    expect(await lockExists(lock)).toBe(true); // kept for the grace
    const before = lockTakeovers();
    const other = new ProfileLease(new ProfileIo(stateDir, profileDir, nodeFileStoreFs));
    const started = performance.now();
    await other.enter();
    const waited = performance.now() - started;
    expect(waited).toBeLessThan(LEASE_GRACE_MS + 100);
    expect((await fs.readFile(lock, 'utf8')).split(' ')[1]).toBe(other.token);
    await other.release();
    expect(await lockExists(lock)).toBe(false);
    expect(lockTakeovers()).toEqual(before);
    expect((await view.update(record, 2)).version).toBe(3);
  });

  it('hands the lease over after a commit or two to a waiter while the holder keeps committing', async () => {
    const { stateDir, view, record, profileDir } = await profile();
    const before = lockTakeovers();
    let version = 1;
    let commits = 0;
    let stop = false;
    const holder = (async () => {
      while (!stop) {
        version = (await view.update(record, version)).version;
        commits++;
      }
    })();
    await sleep(30);
    const other = new ProfileLease(new ProfileIo(stateDir, profileDir, nodeFileStoreFs));
    const atStart = commits;
    const started = performance.now();
    await other.enter();
    const waited = performance.now() - started;
    const byHolderMeanwhile = commits - atStart;
    await sleep(20); // the holder's next commit waits for this lease
    const whileOtherHeld = commits;
    await other.release();
    await sleep(50);
    stop = true;
    await holder;
    // The holder saw the announcement after its next commit (one in flight, one at most more).
    expect(byHolderMeanwhile).toBeLessThanOrEqual(2);
    expect(waited).toBeLessThan(LEASE_GRACE_MS);
    expect(commits).toBeGreaterThan(whileOtherHeld); // and it went on once the waiter was done
    expect(commits - whileOtherHeld).toBeGreaterThan(0);
    expect(lockTakeovers()).toEqual(before);
    expect((await view.get(record.handle))?.version).toBe(version);
  });

  it('a worker process waiting for this process’s idle lease gets it within the grace', async () => {
    const { stateDir, view, record, lock } = await profile({ binding: httpA });
    let startedAt = 0;
    const tallies = await runWorkers(
      [
        {
          store: { kind: 'file', stateDir, profile: 'default' },
          job: 'cas',
          binding: httpA,
          handle: record.handle,
          count: 1,
          concurrency: 1,
        },
      ],
      async () => {
        await view.update(record, 1);
        // This process keeps the lease for its grace: the worker's commit has to wait for it.
        expect((await fs.readFile(lock, 'utf8')).split(' ')[0]).toBe(String(process.pid));
        startedAt = performance.now();
      },
    );
    const took = performance.now() - startedAt;
    expect(tallies).toEqual([{ ok: 1 }]);
    // The grace, the worker's poll, one commit and its reply on stdout.
    expect(took).toBeLessThan(LEASE_GRACE_MS + 1_000);
    expect((await view.get(record.handle))?.version).toBe(3);
  });

  it('two processes alternating awaited commits on one record both progress: no lost update', async () => {
    const { stateDir, view, record } = await profile({ binding: httpA });
    let stop = false;
    const mine: Record<string, number> = {};
    const count = (key: string) => {
      mine[key] = (mine[key] ?? 0) + 1;
    };
    let loop: Promise<void> | undefined;
    const job = {
      store: { kind: 'file' as const, stateDir, profile: 'default' },
      job: 'cas' as const,
      binding: httpA,
      handle: record.handle,
      count: 40,
      concurrency: 1,
    };
    const started = performance.now();
    const tallies = await runWorkers([job], async () => {
      // This process commits one after the other, each awaited, for as long as the worker runs.
      loop = (async () => {
        while (!stop) {
          try {
            const current = await view.get(record.handle);
            await view.update(
              { ...current!.record, updatedAt: `parent-${performance.now()}` },
              current!.version,
            );
            count('ok');
          } catch (error) {
            count(isSessMcpError(error) ? `${error.code}:${error.reason ?? ''}` : 'other');
          }
        }
      })();
    });
    const took = performance.now() - started;
    stop = true;
    await loop;
    const total = sumTallies([...tallies, mine]);
    const worker = tallies[0]!;
    expect((worker.ok ?? 0) + (worker['INVALID_STATE:stale_version'] ?? 0)).toBe(40);
    expect(worker.ok).toBeGreaterThan(0);
    expect(mine.ok).toBeGreaterThan(0);
    // Every attempt either applied or was refused as stale: no busy lease, no takeover, no error.
    expect(Object.keys(total).filter((key) => key !== 'ok' && key !== 'INVALID_STATE:stale_version')).toEqual(
      [],
    );
    expect((await view.get(record.handle))?.version).toBe(1 + (total.ok ?? 0));
    // Neither side waited out the other: far below the 20 s a starved waiter would report busy.
    expect(took).toBeLessThan(15_000);
  });
});
