/**
 * Fencing of the file store's lease: a holder that stands still past its lease in the middle of
 * a change (here it stops itself with SIGSTOP at one step of the record write, as a debugger, a
 * frozen container or a paused VM would stop it) has the lease taken over by another process,
 * which changes the same record. When the first goes on, its change must write nothing and
 * report a conflict; no update is lost and no version is written twice.
 *
 * Real processes on one profile. `SESS_MCP_TEST_LEASE_MS` shortens their lease so a cell pauses
 * for about a second; one cell keeps the real 15 s lease. The clock cells show that a wall-clock
 * step of an hour either way (the lock file's mtime moved as far) takes no live holder's lease.
 */
import { readFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { LEASE_GRACE_MS } from '../../src/store/file/lock.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { httpA, makeRecord } from './fixtures.js';
import { holdLease, startWorker, untilStopped } from './spawn-worker.js';
import type { WorkerJob } from './worker.js';
import { WRITE_STEPS, type WriteStep } from './write-steps.js';

const tempStateDir = useTempDirs('sess-mcp-fencing-');
const SHORT_LEASE = { SESS_MCP_TEST_LEASE_MS: '600' };

interface Cell {
  /** What the paused change (A) reported, and the change of the process that took over (B). */
  a: Record<string, number | string>;
  b: Record<string, number | string>;
  final: { version: number; updatedAt: string } | undefined;
  /** The record A created, when A's change was a create. */
  created: boolean;
}

/**
 * One cell: A changes the record (an update, or a create of another one) and stops itself at
 * `step`; B updates the record meanwhile (taking the lease over); then A goes on.
 */
async function pauseCell(step: WriteStep, change: 'update' | 'create', env = SHORT_LEASE): Promise<Cell> {
  const stateDir = await tempStateDir();
  const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(httpA);
  const record = { ...makeRecord(httpA, 'waiting'), updatedAt: 'first' };
  await store.create(record);
  await sleep(LEASE_GRACE_MS + 50); // this process's lease is released
  const job = (label: string, more: Partial<WorkerJob>): WorkerJob => ({
    store: { kind: 'file', stateDir, profile: 'default' },
    job: 'once',
    binding: httpA,
    count: 1,
    label,
    ...more,
  });
  const a = await startWorker(
    job('A', change === 'update' ? { handle: record.handle, pauseAt: step } : { pauseAt: step }),
    env,
  );
  const b = await startWorker(job('B', { handle: record.handle }), env);
  try {
    const aDone = a.go();
    await untilStopped(a.pid);
    const bDone = await b.go();
    process.kill(a.pid, 'SIGCONT');
    const aDoneValue = await aDone;
    const final = await store.get(record.handle);
    const created =
      typeof aDoneValue.handle === 'string' && (await store.get(aDoneValue.handle)) !== undefined;
    return {
      a: aDoneValue,
      b: bDone,
      final: final && { version: final.version, updatedAt: final.record.updatedAt },
      created,
    };
  } finally {
    a.stop();
    b.stop();
  }
}

/** No lost and no doubled version: the record's version counts every success, and the last wins. */
function expectNothingLost(cell: Cell): void {
  const updates = [cell.a, cell.b].filter((r) => r.ok === 1 && r.handle === undefined);
  const versions = updates.map((r) => r.version);
  expect(new Set(versions).size, 'two successes wrote the same version').toBe(versions.length);
  expect(cell.final?.version).toBe(1 + updates.length);
  const last = updates.find((r) => r.version === cell.final?.version);
  expect(cell.final?.updatedAt).toBe(last === cell.a ? 'A' : 'B');
}

describe('file store fencing: a holder paused past its lease in the middle of a change', () => {
  for (const step of WRITE_STEPS) {
    it(`an update paused at ${step}: the update of the process that took over stands`, async () => {
      const cell = await pauseCell(step, 'update');
      expect(cell.b).toMatchObject({ ok: 1 });
      if (step === 'fsync-dir') {
        // A's rename came before the pause: its version landed, and B's update followed it.
        expect(cell.a).toMatchObject({ ok: 1, version: 2 });
        expect(cell.b).toMatchObject({ version: 3 });
      } else {
        expect(cell.a).toEqual({ 'INVALID_STATE:stale_version': 1 });
        expect(cell.b).toMatchObject({ version: 2 });
      }
      expectNothingLost(cell);
    }, 60_000);
  }

  for (const step of ['write-temp', 'rename'] as const) {
    it(`a create paused at ${step} writes nothing and reports the profile busy`, async () => {
      const cell = await pauseCell(step, 'create');
      expect(cell.a).toEqual({ 'STATE_STORE_ERROR:busy': 1 });
      expect(cell.created).toBe(false);
      expect(cell.b).toMatchObject({ ok: 1, version: 2 });
      expectNothingLost(cell);
    }, 60_000);
  }

  it('with the real lease (15 s): an update paused before its rename reports a conflict', async () => {
    const cell = await pauseCell('rename', 'update', { SESS_MCP_TEST_LEASE_MS: '' });
    expect(cell.a).toEqual({ 'INVALID_STATE:stale_version': 1 });
    expect(cell.b).toMatchObject({ ok: 1, version: 2 });
    expectNothingLost(cell);
  }, 90_000);
});

describe('file store lease under clock steps', () => {
  for (const [name, shift] of [
    ['20 s ahead', 20_000],
    ['an hour ahead', 3_600_000],
    ['an hour behind', -3_600_000],
  ] as const) {
    it(`a holder inside a 3 s write keeps its lease against a process whose wall clock is ${name}`, async () => {
      // The reproduction's scenario: A (true clock) updates the record through a rename that takes
      // 3 s; B, whose clock reads `shift` from the true time, updates the same record meanwhile,
      // from the version it read before A's write landed.
      const stateDir = await tempStateDir();
      const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(httpA);
      const record = { ...makeRecord(httpA, 'waiting'), updatedAt: 'first' };
      await store.create(record);
      await sleep(LEASE_GRACE_MS + 50);
      const job = (label: string, more: Partial<WorkerJob>): WorkerJob => ({
        store: { kind: 'file', stateDir, profile: 'default' },
        job: 'once',
        binding: httpA,
        count: 1,
        handle: record.handle,
        label,
        ...more,
      });
      const a = await startWorker(job('A', { slowRenameMs: 3_000 }));
      const b = await startWorker(job('B', {}), { SESS_WORKER_CLOCK_SHIFT_MS: String(shift) });
      try {
        const aDone = a.go();
        await sleep(500); // A holds the lease, inside its rename
        const bDone = b.go();
        const [aResult, bResult] = await Promise.all([aDone, bDone]);
        expect(aResult).toEqual({ ok: 1, version: 2 });
        // B waited for the live holder (no takeover) and then lost the compare-and-set.
        expect(bResult).toEqual({ 'INVALID_STATE:stale_version': 1 });
        const final = await store.get(record.handle);
        expect([final?.version, final?.record.updatedAt]).toEqual([2, 'A']);
      } finally {
        a.stop();
        b.stop();
      }
    }, 30_000);
  }

  for (const [name, hours] of [
    ['an hour behind', -1],
    ['an hour ahead', 1],
  ] as const) {
    it(`a live holder whose lock file's time is ${name} keeps its lease`, async () => {
      const stateDir = await tempStateDir();
      const holder = await holdLease(stateDir, 'default');
      const lock = join(stateDir, 'profiles', 'default', 'handles.lock');
      try {
        // What a wall-clock step of the holder (or of the waiter, the other way) looks like.
        const stepped = new Date(Date.now() + hours * 3_600_000);
        await fs.utimes(lock, stepped, stepped);
        const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(httpA);
        let settled = false;
        const waiting = store.create(makeRecord(httpA, 'waiting')).finally(() => {
          settled = true;
        });
        await sleep(2_000);
        // Not taken over: the holder is alive and its heartbeat moves the file.
        expect(settled).toBe(false);
        expect(readFileSync(lock, 'utf8').split(' ')[0]).toBe(String(holder.pid));
        await holder.release();
        await waiting;
      } finally {
        await holder.kill().catch(() => undefined);
      }
    }, 30_000);
  }
});
