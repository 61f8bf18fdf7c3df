/**
 * Measure 3 (concurrent waits): 1 000, 5 000 and 10 000 simultaneous `sess_response` waits held
 * by one handler process (bench/waits-child.ts) against the local runtime in another process
 * (bench/runtime-child.ts), each size in fresh processes, after a warm-up of 50 waits held and
 * answered in the same processes (outside every figure).
 *
 * Figures: resident memory per wait (RSS with the waits held minus RSS before, both after a full
 * collection, over n) and the time from the last answer accepted to the last wait returned (both
 * clocks are this machine's, read as `timeOrigin + now()`), with how many waits ended answered
 * and, by its tool error code or state, how every other one ended. Counts, not ratios: the goals
 * are absolute.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { message } from './children.js';
import { WAIT_LAST_RETURN_MAX_MS, WAIT_RSS_MAX_KIB } from './goals.js';
import { percentile } from './stats.js';
import { ms, type Row, yesNo } from './table.js';

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

const BATCH = 250;

/** A count with a space between thousands: `10 000`. */
const count = (value: number) => value.toLocaleString('en').replace(/,/g, ' ');

/**
 * `9 998/10 000 answered; SESS_UNAVAILABLE 2`: how many waits ended answered, then every other
 * way one ended (a tool error's code or another state), most frequent first, and any answer the
 * runtime refused.
 */
export function answeredSummary(
  answered: number,
  n: number,
  outcomes: Readonly<Record<string, number>>,
  refused = 0,
): string {
  const others = Object.entries(outcomes)
    .filter(([outcome]) => outcome !== 'answered')
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .map(([outcome, times]) => `${outcome} ${count(times)}`);
  if (refused > 0) others.push(`answers refused ${count(refused)}`);
  return [`${count(answered)}/${count(n)} answered`, ...others].join('; ');
}

const trace = (step: string) => {
  if (process.env.SESS_BENCH_TRACE === '1') process.stderr.write(`[waits] ${step}\n`);
};

async function holdWaits(n: number): Promise<Row[]> {
  const dir = process.env.SESS_BENCH_DIR!;
  const runtime = fork(join(dir, 'runtime-child.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let holder: ChildProcess | undefined;
  try {
    const ready = await message<{ origin: string; workspaceId: string; apiKey: string }>(runtime, 'ready');
    trace('runtime ready');
    holder = fork(join(dir, 'waits-child.mjs'), [ready.origin, ready.workspaceId, ready.apiKey, String(n)], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    // The warm-up: the handler holds waits on its warm-up links, the runtime answers them all.
    const warm = await message<{ urls: string[] }>(holder, 'warm');
    holder.send({ kind: 'warm-hold' });
    runtime.send({ kind: 'waiting', n: warm.urls.length });
    await message(runtime, 'waiting');
    const warmed = message(holder, 'warmed');
    runtime.send({ kind: 'answer', urls: warm.urls });
    await message(runtime, 'answered');
    await warmed;
    trace('warmed up');
    const created = await message<{ urls: string[]; before: Memory }>(holder, 'created');
    trace('created');
    const heldAt = performance.now();
    // Waits are started in batches, each once the runtime holds the previous ones: a burst of
    // thousands of connects at once overflows the runtime's listen backlog (Node's default 511).
    let held = 0;
    for (let from = 0; from < n; from += BATCH) {
      const to = Math.min(n, from + BATCH);
      holder.send({ kind: 'hold', from, to });
      runtime.send({ kind: 'waiting', n: to });
      held = (await message<{ n: number }>(runtime, 'waiting')).n;
      trace(`${held} held`);
    }
    trace('held');
    const holdMs = performance.now() - heldAt;
    holder.send({ kind: 'measure' });
    const { during } = await message<{ during: Memory }>(holder, 'held');
    trace('measured');
    const returned = message<{
      lastReturned: number;
      returnedAt: number[];
      answered: number;
      reissued: number;
      outcomes: Record<string, number>;
      holdCpuMs: number;
      returnCpuMs: number;
    }>(holder, 'returned');
    holder.send({ kind: 'answering' });
    runtime.send({ kind: 'answer', urls: created.urls });
    const answered = await message<{
      started: number;
      done: number;
      refused: number;
      cpuMs: number;
      acceptedAt: number[];
    }>(runtime, 'answered');
    trace('answered');
    const back = await returned;
    trace(`returned: ${JSON.stringify(back.outcomes)}, ${back.reissued} called again after the ceiling`);
    const perWait = (during.rss - created.before.rss) / n / 1024;
    const heapPerWait =
      (during.heapUsed + during.external - created.before.heapUsed - created.before.external) / n / 1024;
    const after = back.lastReturned - answered.done;
    // Each wait's own delay: from its answer's acceptance to its return.
    const delays = back.returnedAt.map((at, i) => at - answered.acceptedAt[i]!).filter(Number.isFinite);
    const label = `3 waits ×${n.toLocaleString('en')}`;
    return [
      {
        measure: `${label}: RSS per wait`,
        subject: `${perWait.toFixed(1)} KiB`,
        baseline: `heap+ext ${heapPerWait.toFixed(1)} KiB`,
        ratio: `${held}/${n} held in ${ms(holdMs)}`,
        goal: `< ${WAIT_RSS_MAX_KIB} KiB`,
        met: yesNo(perWait < WAIT_RSS_MAX_KIB && held === n),
      },
      {
        measure: `${label}: last return after last answer`,
        subject: ms(Math.max(0, after)),
        baseline: `answering took ${ms(answered.done - answered.started)}`,
        ratio: answeredSummary(back.answered, n, back.outcomes, answered.refused),
        goal: `≤ ${ms(WAIT_LAST_RETURN_MAX_MS)}`,
        met: yesNo(after <= WAIT_LAST_RETURN_MAX_MS && back.answered === n && answered.refused === 0),
      },
      {
        measure: `${label}: each wait's return after its answer`,
        subject: `p50 ${ms(percentile(delays, 50))}`,
        baseline: `p99 ${ms(percentile(delays, 99))}`,
        ratio: `max ${ms(Math.max(...delays))}, of ${count(delays.length)}`,
        goal: '—',
        met: '—',
      },
      {
        measure: `${label}: handler CPU per wait`,
        subject: `${ms(back.returnCpuMs / n)} returning`,
        baseline: `${ms(back.holdCpuMs / n)} starting`,
        ratio: `runtime ${ms(answered.cpuMs / n)} per answer`,
        goal: '—',
        met: '—',
      },
    ];
  } finally {
    holder?.send({ kind: 'close' });
    runtime.send({ kind: 'close' });
    await Promise.all(
      [holder, runtime].map((c) =>
        c === undefined || c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)),
      ),
    );
  }
}

/** Measure 3, for each size in turn. */
export async function concurrentWaits(sizes: readonly number[] = [1_000, 5_000, 10_000]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of sizes) rows.push(...(await holdWaits(n)));
  return rows;
}
