/**
 * Runs `worker.ts` as real OS processes: bundles it with esbuild (already installed with
 * vite and tsup; npm packages stay external and resolve from this repository's node_modules),
 * starts the workers, waits until each says `ready`, releases them together and collects each
 * one's tally.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { HandleStoreFactory } from '../../src/store/memory/memory-store.js';
import { bundleWithPackages } from '../support/bundle.js';
import { httpA, makeRecord } from './fixtures.js';
import type { WorkerJob } from './worker.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');
let bundles = 0;

/** Bundle the worker to a file inside the repository's node_modules (so `pg` resolves). */
async function bundleWorker(): Promise<string> {
  return bundleWithPackages(
    join(here, 'worker.ts'),
    'sess-mcp-store-test',
    `worker-${process.pid}-${++bundles}.mjs`,
  );
}

function waitForLine(child: ChildProcess, predicate: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (predicate(line)) {
          child.stdout?.off('data', onData);
          resolve(line);
          return;
        }
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) early: ${stderr.slice(0, 500)}`)));
  });
}

/**
 * Run one worker per job, all released at the same moment (after `beforeGo`, once every worker
 * is ready); resolves with each one's tally.
 */
export async function runWorkers(
  jobs: WorkerJob[],
  beforeGo?: () => Promise<void>,
): Promise<Record<string, number>[]> {
  const file = await bundleWorker();
  const children = jobs.map((job) =>
    spawn(process.execPath, [file, JSON.stringify(job)], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  try {
    try {
      await Promise.all(children.map((child) => waitForLine(child, (line) => line === 'ready')));
    } finally {
      // Every worker has loaded it (or failed): the bundle is no longer needed.
      await rm(file, { force: true });
    }
    const results = children.map((child) => waitForLine(child, (line) => line.startsWith('{')));
    await beforeGo?.();
    for (const child of children) child.stdin?.write('go\n');
    return (await Promise.all(results)).map((line) => JSON.parse(line) as Record<string, number>);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

/** One worker started on its own: ready to be released with `go`, its tally to come. */
export interface StartedWorker {
  pid: number;
  /** Release it; resolves with its tally (the JSON line it prints last). */
  go(): Promise<Record<string, number | string>>;
  /** Write `line` to its stdin (`stop` ends a `deliver` job, whose tally `go` then resolves with). */
  say(line: string): void;
  /** End it if it still runs. */
  stop(): void;
}

/** Start one worker with `env` added to this process's environment, and wait until it is ready. */
export async function startWorker(job: WorkerJob, env: Record<string, string> = {}): Promise<StartedWorker> {
  const file = await bundleWorker();
  const child = spawn(process.execPath, [file, JSON.stringify(job)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  try {
    await waitForLine(child, (line) => line === 'ready');
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    await rm(file, { force: true });
  }
  return {
    pid: child.pid as number,
    async go() {
      const result = waitForLine(child, (line) => line.startsWith('{'));
      child.stdin?.write('go\n');
      return JSON.parse(await result) as Record<string, number | string>;
    },
    say(line) {
      child.stdin?.write(`${line}\n`);
    },
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Add tallies up. */
export function sumTallies(tallies: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of tallies) for (const [k, n] of Object.entries(t)) out[k] = (out[k] ?? 0) + n;
  return out;
}

/**
 * Two worker processes race `count` read-then-compare-and-set writes each (4 at a time) on one
 * fresh record that `setup` (a store on the same storage as `store`) creates; `beforeGo` runs
 * once both are ready. `finalVersion` is the record's version afterwards.
 */
export async function raceCompareAndSet(
  setup: HandleStoreFactory,
  store: WorkerJob['store'],
  count = 100,
  beforeGo?: () => Promise<void>,
): Promise<{ tallies: Record<string, number>[]; total: Record<string, number>; finalVersion: number }> {
  const record = makeRecord(httpA, 'waiting');
  await setup.forBinding(httpA).create(record);
  const job: WorkerJob = { store, job: 'cas', binding: httpA, handle: record.handle, count, concurrency: 4 };
  const tallies = await runWorkers([job, job], beforeGo);
  const final = await setup.forBinding(httpA).get(record.handle);
  return { tallies, total: sumTallies(tallies), finalVersion: final?.version ?? 0 };
}

/**
 * Start one worker, release it, and SIGKILL it once it has reported `writes` successful writes
 * (the job must set `progress`): the kill lands wherever that write cycle happens to be.
 */
export async function killAfterWrites(job: WorkerJob, writes: number): Promise<void> {
  const file = await bundleWorker();
  const child = spawn(process.execPath, [file, JSON.stringify(job)], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  try {
    try {
      await waitForLine(child, (line) => line === 'ready');
    } finally {
      await rm(file, { force: true });
    }
    let seen = 0;
    const enough = waitForLine(child, (line) => line === 'w' && ++seen >= writes);
    child.stdin?.write('go\n');
    await enough;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** A worker holding a file profile's lease (job `hold`) until {@link LeaseHolder.release}. */
export interface LeaseHolder {
  pid: number;
  release(): Promise<void>;
  /** End it without releasing (what a crash leaves). */
  kill(): Promise<void>;
}

/** Start a worker that takes a file profile's lease and holds it. */
export async function holdLease(stateDir: string, profile: string): Promise<LeaseHolder> {
  const file = await bundleWorker();
  const job: WorkerJob = {
    store: { kind: 'file', stateDir, profile },
    job: 'hold',
    binding: httpA,
    count: 0,
  };
  const child = spawn(process.execPath, [file, JSON.stringify(job)], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  try {
    await waitForLine(child, (line) => line === 'held');
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    await rm(file, { force: true });
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    pid: child.pid as number,
    async release() {
      const done = waitForLine(child, (line) => line.startsWith('{'));
      child.stdin?.write('release\n');
      await done;
      await exited;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The state letter of `pid` in `/proc` (`T` once it is stopped). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/** Resolve once the process `pid` stopped (a worker that paused itself with SIGSTOP). */
export async function untilStopped(pid: number): Promise<void> {
  for (const started = Date.now(); processState(pid) !== 'T'; await sleep(10)) {
    if (Date.now() - started > 20_000) throw new Error('the paused worker never stopped');
  }
}
