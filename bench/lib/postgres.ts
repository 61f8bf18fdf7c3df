/**
 * Measure 6 (PostgreSQL store): compare-and-set updates per second through the store, with one
 * and with two processes (bench/pg-worker.ts, each on its own row), against a bare
 * `UPDATE … WHERE handle = $1 AND version = $n` of the same columns and values on the same table
 * in the same processes, sent unnamed (the goal's baseline) and, in a row outside the goal, named
 * (prepared, as the store sends its own). Trials interleave the three. Beside the rate, the CPU time the
 * worker processes spent per update (their own `process.cpuUsage()`; the server's is not counted).
 * Skipped, with the reason, when DATABASE_URL is unset.
 */

import { closeChildren, forkBench, message } from './children.js';
import { atLeastTimes, POSTGRES_CAS_MIN } from './goals.js';
import { sampleRecord } from './sample-record.js';
import { median } from './stats.js';
import { ms, type Row, times, yesNo } from './table.js';

const RUN_MS = 1_000;
/** Interleaved trials per side (at least 5). */
const TRIALS = 9;

interface Trial {
  rate: number;
  cpuPerUpdate: number;
}

interface Ran {
  count: number;
  cpuMs: number;
}

async function withProcesses(processes: number, recordJson: string): Promise<Row[]> {
  const workers = Array.from({ length: processes }, () => forkBench('pg-worker', [recordJson]));
  try {
    await Promise.all(workers.map((w) => message(w, 'ready')));
    const trial = async (mode: 'store' | 'bare' | 'prepared') => {
      const ran = workers.map((w) => message<Ran>(w, 'ran'));
      for (const w of workers) w.send({ kind: 'run', mode, ms: RUN_MS });
      const all = await Promise.all(ran);
      const count = all.reduce((sum, r) => sum + r.count, 0);
      const cpu = all.reduce((sum, r) => sum + r.cpuMs, 0);
      return { rate: count / (RUN_MS / 1000), cpuPerUpdate: cpu / count };
    };
    const ran = { store: [] as Trial[], bare: [] as Trial[], prepared: [] as Trial[] };
    // Each trial the three in another order, so none always runs first.
    const orders = [
      ['store', 'bare', 'prepared'],
      ['bare', 'prepared', 'store'],
      ['prepared', 'store', 'bare'],
    ] as const;
    for (let i = 0; i < TRIALS; i += 1) {
      for (const mode of orders[i % orders.length]!) ran[mode].push(await trial(mode));
    }
    const s = median(ran.store.map((t) => t.rate));
    const b = median(ran.bare.map((t) => t.rate));
    const p = median(ran.prepared.map((t) => t.rate));
    const sCpu = median(ran.store.map((t) => t.cpuPerUpdate));
    const bCpu = median(ran.bare.map((t) => t.cpuPerUpdate));
    const label = `6 postgres CAS, ${processes} process${processes === 1 ? '' : 'es'}`;
    return [
      {
        measure: label,
        subject: `${s.toFixed(0)} updates/s`,
        baseline: `${b.toFixed(0)} updates/s`,
        ratio: times(s / b),
        goal: atLeastTimes(POSTGRES_CAS_MIN),
        met: yesNo(s / b >= POSTGRES_CAS_MIN),
      },
      {
        measure: `${label}: against the bare UPDATE prepared`,
        subject: `${s.toFixed(0)} updates/s`,
        baseline: `${p.toFixed(0)} updates/s`,
        ratio: times(s / p),
        goal: '—',
        met: '—',
      },
      {
        measure: `${label}: client CPU`,
        subject: `${ms(sCpu)}/update`,
        baseline: `${ms(bCpu)}/update`,
        ratio: times(sCpu / bCpu),
        goal: '—',
        met: '—',
      },
    ];
  } finally {
    await closeChildren(workers);
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
        goal: atLeastTimes(POSTGRES_CAS_MIN),
        met: '—',
      },
    ];
  }
  const recordJson = JSON.stringify(await sampleRecord());
  return [...(await withProcesses(1, recordJson)), ...(await withProcesses(2, recordJson))];
}
