/**
 * A store worker run as a separate OS process by the cross-process tests (bundled by
 * `spawn-worker.ts`). It opens its own store (its own pool for PostgreSQL), says `ready`, waits
 * for `go` on stdin so every worker starts at once, runs its job and prints one JSON line with
 * the tally of outcomes (for the file store with its lease takeovers, `takeover:<reason>`). It
 * never prints record contents.
 *
 * Jobs: `create` (`count` concurrent creates of unfinished records of `binding`), `cas`
 * (`count` read-then-compare-and-set writes on `handle`, `concurrency` at a time), `hold`
 * (file store only: take the profile's lease, say `held`, keep it until `release` on stdin) and
 * `once` (file store only: one update of `handle`, or one create when there is no `handle`,
 * writing `label` as its `updatedAt`; with `pauseAt`, the process stops itself with SIGSTOP the
 * first time its change reaches that step of the write, and goes on when it is continued; with
 * `pick: 'newest'` instead of `handle`, it updates the newest unfinished record of `binding`),
 * `tool` (file store only: one tool call through a real engine, `engine-job.ts`; with `pauseAt`,
 * the process stops itself when the `pauseAtWrite`-th record write of the call reaches that step)
 * `cursorKey` (read, or make, the store's `sess_list` cursor key; its tally names the key's
 * SHA-256, never the key) and `deliver` (a delivery loop over the store's outbox to a receiver in
 * the test process, `delivery-job.ts`, until `stop` on stdin).
 */

import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import type { Binding } from '../../src/core/contract/ports.js';
import {
  createFileHandleStore,
  type FileStoreFileLike,
  type FileStoreFs,
} from '../../src/store/file/index.js';
import { nodeFileStoreFs, ProfileIo } from '../../src/store/file/io.js';
import { lockTakeovers, ProfileLease } from '../../src/store/file/lock.js';
import type { HandleStoreFactory } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { type DeliveryJob, runDelivery } from './delivery-job.js';
import { runTool, type ToolJob } from './engine-job.js';
import { makeRecord } from './fixtures.js';
import type { WriteStep } from './write-steps.js';

/** What a worker is told to do (JSON in argv[2]). */
export interface WorkerJob {
  store:
    | { kind: 'file'; stateDir: string; profile: string }
    | { kind: 'postgres'; connectionString: string; table: string };
  job: 'create' | 'cas' | 'hold' | 'once' | 'tool' | 'cursorKey' | 'deliver';
  binding: Binding;
  count: number;
  handle?: string;
  concurrency?: number;
  /** Print `w` after every successful write (for a test that kills the worker mid-run). */
  progress?: boolean;
  /** `once`: what the change writes as `updatedAt`. */
  label?: string;
  /** `once`, `tool`: the step of the record write at which the process stops itself. */
  pauseAt?: WriteStep;
  /** With `pauseAt`: stop at the step of this record write of the change (1 = the first). */
  pauseAtWrite?: number;
  /** `once` without `handle`: update the newest unfinished record of `binding` instead of creating. */
  pick?: 'newest';
  /** `tool`: the call. */
  tool?: ToolJob;
  /** `deliver`: the loop's receiver and settings. */
  delivery?: DeliveryJob;
  /** `once`: every rename of a record write takes this long (a slow disk; the heartbeat goes on). */
  slowRenameMs?: number;
}

/** The default file system with renames that take `ms` each. */
function slowFs(ms: number): FileStoreFs {
  return {
    ...nodeFileStoreFs,
    rename: async (from, to) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return nodeFileStoreFs.rename(from, to);
    },
  };
}

/**
 * `SESS_WORKER_CLOCK_SHIFT_MS`: this process's wall clock (`Date.now()` and `new Date()`) reads
 * that far from the true time, as after a clock step; the monotonic clock is left alone.
 */
function shiftWallClock(): void {
  const shift = Number(process.env.SESS_WORKER_CLOCK_SHIFT_MS ?? '0');
  if (!Number.isFinite(shift) || shift === 0) return;
  const RealDate = Date;
  const now = () => RealDate.now() + shift;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(now());
      else super(...(args as [string]));
    }
    static override now(): number {
      return now();
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}

/**
 * The default file system, stopping this process (SIGSTOP) once, when the `write`-th record write
 * reaches `step` (each record write opens one temp file).
 */
function pausingFs(step: WriteStep, write = 1): FileStoreFs {
  let writes = 0;
  const pause = (at: WriteStep) => {
    if (writes !== write || at !== step) return;
    writes = Number.POSITIVE_INFINITY;
    process.kill(process.pid, 'SIGSTOP');
  };
  const temp = (path: string) => path.endsWith('.tmp');
  const fileAt = (path: string, file: FileStoreFileLike): FileStoreFileLike => ({
    ...file,
    writeFile: async (data, options) => {
      if (temp(path)) pause('write-temp');
      return file.writeFile(data, options);
    },
    sync: async () => {
      pause(temp(path) ? 'fsync-temp' : 'fsync-dir');
      return file.sync();
    },
    close: async () => {
      if (temp(path)) pause('close-temp');
      return file.close();
    },
  });
  return {
    ...nodeFileStoreFs,
    open: async (path, flags, mode) => {
      if (temp(path)) {
        writes += 1;
        pause('open-temp');
      }
      return fileAt(path, await nodeFileStoreFs.open(path, flags, mode));
    },
    rename: async (from, to) => {
      pause('rename');
      return nodeFileStoreFs.rename(from, to);
    },
  };
}

/** One change of job `once`: its outcome, and the version it wrote. */
async function once(job: WorkerJob, store: ReturnType<HandleStoreFactory['forBinding']>) {
  try {
    if (job.pick === 'newest') {
      const newest = (await store.listUnfinished()).at(-1);
      if (newest === undefined) throw new Error('missing');
      const written = await store.update({ ...newest.record, updatedAt: job.label! }, newest.version);
      return { ok: 1, version: written.version };
    }
    if (job.handle === undefined) {
      const created = await store.create({ ...makeRecord(job.binding, 'waiting'), updatedAt: job.label! });
      return { ok: 1, version: created.version, handle: created.record.handle };
    }
    const current = await store.get(job.handle);
    if (current === undefined) throw new Error('missing');
    const written = await store.update({ ...current.record, updatedAt: job.label! }, current.version);
    return { ok: 1, version: written.version };
  } catch (error) {
    return { [outcome(error)]: 1 };
  }
}

function outcome(error: unknown): string {
  if (isSessMcpError(error)) return error.reason ? `${error.code}:${error.reason}` : error.code;
  return 'other';
}

/** Hold the lease of a file profile (with its heartbeat) until told to release it. */
async function hold(stateDir: string, profile: string): Promise<void> {
  const io = new ProfileIo(stateDir, join(stateDir, 'profiles', profile), nodeFileStoreFs);
  await io.prepare(true);
  const lease = new ProfileLease(io);
  await lease.enter();
  process.stdout.write('held\n');
  await new Promise<void>((resolve) => {
    process.stdin.on('data', (chunk) => {
      if (String(chunk).includes('release')) resolve();
    });
  });
  await lease.leave(false);
  process.stdout.write('{"released":1}\n');
  process.stdin.destroy();
}

async function main(): Promise<void> {
  shiftWallClock();
  const job = JSON.parse(process.argv[2] ?? '{}') as WorkerJob;
  if (job.job === 'hold' && job.store.kind === 'file') return hold(job.store.stateDir, job.store.profile);
  let factory: HandleStoreFactory;
  let close = async () => {};
  if (job.store.kind === 'file') {
    factory = createFileHandleStore({
      stateDir: job.store.stateDir,
      profile: job.store.profile,
      ...(job.pauseAt === undefined ? {} : { fs: pausingFs(job.pauseAt, job.pauseAtWrite) }),
      ...(job.slowRenameMs === undefined ? {} : { fs: slowFs(job.slowRenameMs) }),
    });
  } else {
    const pg = createPostgresHandleStore({
      connectionString: job.store.connectionString,
      table: job.store.table,
    });
    factory = pg;
    close = () => pg.close();
  }
  const store = factory.forBinding(job.binding);
  // Warm up (a first connection, the directory) before the start signal.
  await store.countUnfinished();
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    process.stdin.on('data', (chunk) => {
      if (String(chunk).includes('go')) resolve();
    });
  });
  const tally: Record<string, number> = {};
  const count = (key: string) => {
    tally[key] = (tally[key] ?? 0) + 1;
  };
  if (job.job === 'deliver') {
    const stopped = new Promise<void>((resolve) => {
      process.stdin.on('data', (chunk) => {
        if (String(chunk).includes('stop')) resolve();
      });
    });
    Object.assign(tally, await runDelivery(job.delivery!, factory.outbox!(), stopped));
  } else if (job.job === 'tool' && job.binding.kind === 'stdio') {
    Object.assign(tally, await runTool(job.tool!, job.binding, factory));
  } else if (job.job === 'once') {
    Object.assign(tally, await once(job, store));
  } else if (job.job === 'cursorKey') {
    const key = await (store.listCursorKey as () => Promise<Uint8Array>)();
    count(`key:${createHash('sha256').update(key).digest('hex')}`);
  } else if (job.job === 'create') {
    const results = await Promise.allSettled(
      Array.from({ length: job.count }, () => store.create(makeRecord(job.binding, 'create_intent'))),
    );
    for (const r of results) count(r.status === 'fulfilled' ? 'ok' : outcome(r.reason));
  } else {
    let remaining = job.count;
    const loop = async () => {
      while (remaining > 0) {
        remaining--;
        try {
          const current = await store.get(job.handle!);
          if (current === undefined) throw new Error('missing');
          const next = { ...current.record, updatedAt: `${process.pid}-${remaining}` };
          await store.update(next, current.version);
          count('ok');
          if (job.progress) process.stdout.write('w\n');
        } catch (error) {
          count(outcome(error));
        }
      }
    };
    await Promise.all(Array.from({ length: job.concurrency ?? 4 }, loop));
  }
  await close();
  // A file store's lease takeovers count as outcomes too (none, unless a lock was left behind).
  if (job.store.kind === 'file') {
    for (const [reason, n] of Object.entries(lockTakeovers())) if (n > 0) tally[`takeover:${reason}`] = n;
  }
  process.stdout.write(`${JSON.stringify(tally)}\n`);
  process.stdin.destroy();
}

main().catch((error) => {
  process.stderr.write(`worker failed: ${outcome(error)} ${error instanceof Error ? error.name : ''}\n`);
  process.exit(1);
});
