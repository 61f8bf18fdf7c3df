/**
 * The file store's lease (`handles.lock`) on a real temp directory and real processes: a burst of
 * changes takes it once; a lock left by an earlier process with this pid, a restarted or dead
 * holder, a stale heartbeat or a never-written lock is taken over at once and counted; a live
 * holder in another process (whose heartbeat keeps the lease fresh) and a lock written on another
 * host are waited for, never taken over.
 */
import * as fs from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HandleStore } from '../../src/core/contract/ports.js';
import { createFileHandleStore, type FileStoreFs } from '../../src/store/file/index.js';
import { nodeFileStoreFs } from '../../src/store/file/io.js';
import { LEASE_GRACE_MS, lockTakeovers, type TakeoverReason } from '../../src/store/file/lock.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { makeRecord, stdioA } from './fixtures.js';
import { holdLease, raceCompareAndSet, startWorker } from './spawn-worker.js';

const tempStateDir = useTempDirs('sess-mcp-lease-');

const HOST = encodeURIComponent(hostname());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh profile: its store view and the path of its lock file. */
async function profile(options: { fs?: FileStoreFs } = {}) {
  const stateDir = await tempStateDir();
  const store = createFileHandleStore({ stateDir, ...options });
  const view = store.forBinding(stdioA);
  await view.create(makeRecord(stdioA, 'waiting'));
  return { stateDir, view, lock: join(stateDir, 'profiles', 'default', 'handles.lock') };
}

/** Run `change` and report how long it took and which takeovers it counted. */
async function measured(change: () => Promise<unknown>) {
  const before = lockTakeovers();
  const started = performance.now();
  await change();
  const after = lockTakeovers();
  const counted = Object.fromEntries(
    (Object.keys(after) as TakeoverReason[])
      .filter((reason) => after[reason] !== before[reason])
      .map((reason) => [reason, after[reason] - before[reason]]),
  );
  return { ms: performance.now() - started, counted };
}

/** The next change takes the leftover lock over at once (well under a second), counting `reason`. */
async function expectTakenOverAtOnce(view: HandleStore, reason: TakeoverReason): Promise<void> {
  const { ms, counted } = await measured(() => view.create(makeRecord(stdioA, 'waiting')));
  expect(counted).toEqual({ [reason]: 1 });
  expect(ms).toBeLessThan(1_000);
}

/** The lease is released within its grace once nothing is queued: the lock file is gone. */
async function expectReleased(lock: string): Promise<void> {
  await sleep(LEASE_GRACE_MS + 50);
  await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
}

/** True when `promise` is still pending after `ms`. */
async function stillPending(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await sleep(ms);
  return !settled;
}

describe('file store lease takeover', () => {
  for (const [name, line, reason] of [
    ['this pid with a token this process does not hold', `${process.pid} 0123abcd - ${HOST}\n`, 'reused_pid'],
    ['this pid in the 0.1.0 form (no token)', `${process.pid}\n`, 'reused_pid'],
    [
      'a live pid whose process identity changed',
      `${process.ppid} 0123abcd bogus-boot:1 ${HOST}\n`,
      'restarted_holder',
    ],
  ] as const) {
    it(`takes over at once a leftover lock naming ${name}`, async () => {
      const { view, lock } = await profile();
      await fs.writeFile(lock, line, { mode: 0o600 });
      await expectTakenOverAtOnce(view, reason);
      expect(await view.countUnfinished()).toBe(2);
      await expectReleased(lock);
    });
  }

  it('takes over an empty lock file once it stayed empty for a second while watched', async () => {
    const { view, lock } = await profile();
    await fs.writeFile(lock, '', { mode: 0o600 });
    // An old mtime alone proves nothing (the clock may have stepped): the file is watched.
    await fs.utimes(lock, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const { ms, counted } = await measured(() => view.create(makeRecord(stdioA, 'waiting')));
    expect(counted).toEqual({ unwritten: 1 });
    expect(ms).toBeGreaterThanOrEqual(1_000);
    expect(ms).toBeLessThan(2_000);
  });

  it('takes over a lease whose heartbeat stood still while watched, even when its pid is alive', async () => {
    const { stateDir, lock } = await profile();
    await fs.writeFile(lock, `${process.ppid} 0123abcd - ${HOST}\n`, { mode: 0o600 });
    // A worker with a 600 ms lease watches the heartbeat stand still, then takes the lease over
    // (its first look at the profile may already be the one that waits).
    const worker = await startWorker(
      {
        store: { kind: 'file', stateDir, profile: 'default' },
        job: 'once',
        binding: stdioA,
        count: 1,
        label: 'after the takeover',
      },
      { SESS_MCP_TEST_LEASE_MS: '600' },
    );
    try {
      expect(await worker.go()).toMatchObject({ ok: 1, 'takeover:stale_heartbeat': 1 });
    } finally {
      worker.stop();
    }
  });

  it('takes over the lease of a holder killed while holding it', async () => {
    const { stateDir, view, lock } = await profile();
    const holder = await holdLease(stateDir, 'default');
    expect((await fs.readFile(lock, 'utf8')).split(' ')[0]).toBe(String(holder.pid));
    await holder.kill();
    await expectTakenOverAtOnce(view, 'dead_holder');
  });

  it('waits for a live holder in another process, whose heartbeat keeps the lease fresh', async () => {
    const { stateDir, view, lock } = await profile();
    const holder = await holdLease(stateDir, 'default');
    const heldSince = (await fs.stat(lock)).mtimeMs;
    const before = lockTakeovers();
    const waiting = view.create(makeRecord(stdioA, 'waiting'));
    expect(await stillPending(waiting, 2_600)).toBe(true);
    // The heartbeat renewed the lease meanwhile, and the waiter announced itself.
    expect((await fs.stat(lock)).mtimeMs).toBeGreaterThan(heldSince);
    expect(
      (await fs.readFile(join(stateDir, 'profiles', 'default', 'handles.lock.next'), 'utf8')).split(' ')[0],
    ).toBe(String(process.pid));
    await holder.release();
    await waiting;
    expect(lockTakeovers()).toEqual(before);
    expect(await view.countUnfinished()).toBe(2);
  });

  it('never takes over a fresh lock written on another host by a pid that means nothing here', async () => {
    const { view, lock } = await profile();
    await fs.writeFile(lock, `${process.pid} 0123abcd - another-host\n`, { mode: 0o600 });
    const before = lockTakeovers();
    const waiting = view.create(makeRecord(stdioA, 'waiting'));
    expect(await stillPending(waiting, 300)).toBe(true);
    await fs.unlink(lock);
    await waiting;
    expect(lockTakeovers()).toEqual(before);
  });
});

describe('file store lease across a burst', () => {
  it('takes the lock file once for 100 concurrent changes, and releases it when they are done', async () => {
    let lockOpens = 0;
    const counting: FileStoreFs = {
      ...nodeFileStoreFs,
      open: (path, flags, mode) => {
        if (path.endsWith('handles.lock')) lockOpens++;
        return nodeFileStoreFs.open(path, flags, mode);
      },
    };
    const { view, lock } = await profile({ fs: counting });
    // The setup's create keeps the lease for its grace: start once it is released.
    await expectReleased(lock);
    lockOpens = 0;
    const records = Array.from({ length: 100 }, () => makeRecord(stdioA, 'completed'));
    await Promise.all(records.map((record) => view.create(record)));
    expect(lockOpens).toBe(1);
    await expectReleased(lock);
    for (const record of records) expect((await view.get(record.handle))?.version).toBe(1);
  });
});

describe('file store lease takeover by two processes at once', () => {
  it('two processes finding the same dead lock take it over one at a time: no lost update', async () => {
    const stateDir = await tempStateDir();
    const setup = createFileHandleStore({ stateDir, profile: 'race' });
    const lock = join(stateDir, 'profiles', 'race', 'handles.lock');
    // Both workers are ready (the profile exists) when a crash's lock appears; both meet it at once.
    const { tallies, total, finalVersion } = await raceCompareAndSet(
      setup,
      { kind: 'file', stateDir, profile: 'race' },
      100,
      () => fs.writeFile(lock, `999999999 0123abcd - ${HOST}\n`),
    );
    // Exactly one of them took the dead lock over; the other then waited for its live lease.
    expect(total['takeover:dead_holder']).toBe(1);
    expect((total.ok ?? 0) + (total['INVALID_STATE:stale_version'] ?? 0)).toBe(200);
    expect(finalVersion - 1).toBe(total.ok);
    expect(tallies.every((t) => (t.ok ?? 0) > 0)).toBe(true);
  });
});
