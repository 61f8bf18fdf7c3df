/**
 * Measure 4 (durable commit): the file store's compare-and-set `update` against a bare loop that
 * writes the same bytes the store writes with write + fsync + rename + directory fsync.
 *
 * Three ways, each interleaved with its baseline on the same temporary directory's file system:
 * an isolated commit within the lease's grace (one at a time, 50 ms of idle before each: answers
 * arriving close together), an isolated commit after the grace (the store takes its lease again,
 * as for an answer arriving seconds after the last), and a burst (commits back to back). Wall and CPU time of this process
 * (the store's fs calls run on libuv's threads, which `process.cpuUsage()` counts). Nothing here
 * checks the store's correctness; its tests do.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { atMostTimes, DURABLE_COMMIT_MAX } from './goals.js';
import { sampleRecord } from './sample-record.js';
import { type Cost, costPerCall, interleave, medianOf } from './stats.js';
import { ms, type Row, times, yesNo } from './table.js';

/** Interleaved trials per way. */
const TRIALS = 7;
/** Commits per trial of a burst. */
const BURST = 20;
/** Isolated commits per trial, and the idle time before each. */
const ISOLATED = 5;
const IDLE_MS = 50;
/**
 * The idle time before a commit that takes the lease again: well past the 100 ms the store keeps
 * its lease after a commit (its grace, documented in docs/reliability.md).
 */
const LAPSED_IDLE_MS = 250;

/** `ISOLATED` commits, each after `idleMs` of nothing; the median commit's cost. */
async function isolated(commit: () => Promise<void>, idleMs: number): Promise<Cost> {
  const costs: Cost[] = [];
  for (let i = 0; i < ISOLATED; i += 1) {
    await sleep(idleMs);
    costs.push(await costPerCall(1, commit));
  }
  return { wall: medianOf(costs, 'wall'), cpu: medianOf(costs, 'cpu'), others: Number.NaN };
}

function rows(way: string, size: number, subject: Cost[], baseline: Cost[]): Row[] {
  const wall = { s: medianOf(subject, 'wall'), b: medianOf(baseline, 'wall') };
  const cpu = { s: medianOf(subject, 'cpu'), b: medianOf(baseline, 'cpu') };
  return [
    {
      measure: `4 durable commit, ${way} (file CAS, ${size} B)`,
      subject: `${ms(wall.s)}/commit`,
      baseline: `${ms(wall.b)}/commit`,
      ratio: times(wall.s / wall.b),
      goal: atMostTimes(DURABLE_COMMIT_MAX),
      met: yesNo(wall.s / wall.b <= DURABLE_COMMIT_MAX),
    },
    {
      measure: `4 durable commit, ${way}: CPU`,
      subject: `${ms(cpu.s)}/commit`,
      baseline: `${ms(cpu.b)}/commit`,
      ratio: times(cpu.s / cpu.b),
      goal: '—',
      met: '—',
    },
  ];
}

/** Measure 4. */
export async function durableCommit(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'sess-bench-file-'));
  try {
    const record = await sampleRecord();
    const files = createFileHandleStore({ stateDir: join(dir, 'state') });
    const store = files.forBinding(record.binding);
    let version = (await store.create(record)).version;
    const cas = async () => {
      version = (await store.update(record, version)).version;
    };
    await cas();
    const name = readdirSync(files.directory).find((f) => f.endsWith('.json'))!;
    const bytes = readFileSync(join(files.directory, name));

    const bareDir = join(dir, 'bare');
    mkdirSync(bareDir);
    const target = join(bareDir, 'record.json');
    const temp = join(bareDir, 'record.json.tmp');
    const bare = async () => {
      const file = await open(temp, 'w', 0o600);
      await file.writeFile(bytes);
      await file.sync();
      await file.close();
      await rename(temp, target);
      const d = await open(bareDir, 'r');
      await d.sync();
      await d.close();
    };
    for (let i = 0; i < 20; i += 1) {
      await cas();
      await bare();
    }
    const one = await interleave<Cost>(
      TRIALS,
      () => isolated(cas, IDLE_MS),
      () => isolated(bare, IDLE_MS),
    );
    const lapsed = await interleave<Cost>(
      TRIALS,
      () => isolated(cas, LAPSED_IDLE_MS),
      () => isolated(bare, LAPSED_IDLE_MS),
    );
    const burst = await interleave<Cost>(
      TRIALS,
      () => costPerCall(BURST, cas),
      () => costPerCall(BURST, bare),
    );
    return [
      ...rows(`isolated (${IDLE_MS} ms idle, lease kept)`, bytes.length, one.subject, one.baseline),
      ...rows(
        `isolated (${LAPSED_IDLE_MS} ms idle, lease taken)`,
        bytes.length,
        lapsed.subject,
        lapsed.baseline,
      ),
      ...rows(`burst of ${BURST}`, bytes.length, burst.subject, burst.baseline),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
