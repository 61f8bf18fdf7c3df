/**
 * Measure 6 (PostgreSQL store): compare-and-set updates per second through the store, with one
 * and with two processes (bench/pg-worker.ts, each on its own row), against a bare
 * `UPDATE … WHERE version = $n` loop of the same bytes on the same table in the same processes.
 * Trials alternate store and bare. Skipped, with the reason, when DATABASE_URL is unset.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { sampleRecord } from './sample-record.js';
import { median } from './stats.js';
import { type Row, times, yesNo } from './table.js';

function message<T>(child: ChildProcess, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { kind: string }) => {
      if (m.kind !== kind) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null) => reject(new Error(`pg worker exited (${code}) before "${kind}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

const RUN_MS = 1_000;
const TRIALS = 6;

async function withProcesses(processes: number, recordJson: string): Promise<Row> {
  const dir = process.env.SESS_BENCH_DIR!;
  const workers = Array.from({ length: processes }, () =>
    fork(join(dir, 'pg-worker.mjs'), [recordJson], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }),
  );
  try {
    await Promise.all(workers.map((w) => message(w, 'ready')));
    const rate = async (mode: 'store' | 'bare') => {
      const counts = workers.map((w) => message<{ count: number }>(w, 'ran'));
      for (const w of workers) w.send({ kind: 'run', mode, ms: RUN_MS });
      const total = (await Promise.all(counts)).reduce((sum, c) => sum + c.count, 0);
      return total / (RUN_MS / 1000);
    };
    const store: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < TRIALS; i += 1) {
      if (i % 2 === 0) {
        store.push(await rate('store'));
        bare.push(await rate('bare'));
      } else {
        bare.push(await rate('bare'));
        store.push(await rate('store'));
      }
    }
    const s = median(store);
    const b = median(bare);
    return {
      measure: `6 postgres CAS, ${processes} process${processes === 1 ? '' : 'es'}`,
      subject: `${s.toFixed(0)} updates/s`,
      baseline: `${b.toFixed(0)} updates/s`,
      ratio: times(s / b),
      goal: '≥ 0.8×',
      met: yesNo(s / b >= 0.8),
    };
  } finally {
    for (const w of workers) if (w.exitCode === null) w.send({ kind: 'close' });
    await Promise.all(
      workers.map((w) => (w.exitCode !== null ? undefined : new Promise((r) => w.once('exit', r)))),
    );
  }
}

/** Measure 6. */
export async function postgresStore(): Promise<Row[]> {
  if (process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === '') {
    return [
      {
        measure: '6 postgres CAS',
        subject: 'skipped',
        baseline: 'DATABASE_URL is unset',
        ratio: '—',
        goal: '≥ 0.8×',
        met: '—',
      },
    ];
  }
  const recordJson = JSON.stringify(await sampleRecord());
  return [await withProcesses(1, recordJson), await withProcesses(2, recordJson)];
}
