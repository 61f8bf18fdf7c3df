/**
 * The soak's faults, on a fixed schedule from the start of the load, and the proof that each
 * happened: an instance SIGKILLed (its pid gone, a new process on its port), PostgreSQL restarted
 * (`pg_postmaster_start_time()` moved), the instances' pool connections ended with
 * `pg_terminate_backend` (how many were ended), and the webhook receiver down for a while (a
 * connection to its port refused).
 *
 * The 60-second schedule: kills at 10 s and 35 s, the PostgreSQL restart at 20 s,
 * `pg_terminate_backend` at 45 s, the receiver down from 15 s to 40 s. The 10-minute one: a kill
 * every minute (at 10 s, 70 s, …, 550 s), the restart at 200 s, `pg_terminate_backend` at 320 s,
 * the receiver down from 380 s to 440 s.
 *
 * It injects and proves; recovery times are read from the call log afterwards (`figures.ts`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { InstanceSlot } from './instances.js';
import type { SwitchableReceiver } from './receiver.js';

/** One fault of a schedule, at `atS` seconds from the start of the load. */
export type ScheduledFault =
  | { kind: 'kill'; atS: number }
  | { kind: 'pg_restart'; atS: number }
  | { kind: 'pg_terminate'; atS: number }
  | { kind: 'receiver_down'; atS: number; untilS: number };

/** A fault as it happened. */
export interface FaultRecord {
  kind: ScheduledFault['kind'];
  /** `Date.now()` when it was injected. */
  at: number;
  /** When it was over: the new instance listening, PostgreSQL back, the backends ended, the receiver back up. */
  over: number;
  /** What proves it happened. */
  happened: boolean;
  evidence: Record<string, string | number | boolean>;
}

/** The schedule of a run of `durationS` seconds (60 or 600). */
export function scheduleOf(durationS: number): ScheduledFault[] {
  if (durationS < 600) {
    return [
      { kind: 'kill', atS: 10 },
      { kind: 'receiver_down', atS: 15, untilS: 40 },
      { kind: 'pg_restart', atS: 20 },
      { kind: 'kill', atS: 35 },
      { kind: 'pg_terminate', atS: 45 },
    ];
  }
  const kills: ScheduledFault[] = [];
  for (let at = 10; at < durationS; at += 60) kills.push({ kind: 'kill', atS: at });
  const rest: ScheduledFault[] = [
    { kind: 'pg_restart', atS: 200 },
    { kind: 'pg_terminate', atS: 320 },
    { kind: 'receiver_down', atS: 380, untilS: 440 },
  ];
  return [...kills, ...rest].sort((a, b) => a.atS - b.atS);
}

/** What the faults act on. */
export interface FaultTargets {
  slots: InstanceSlot[];
  restartPostgres(): Promise<void>;
  /** A pool of the soak's own (`application_name` `sess-soak-observer`). */
  observer: pg.Pool;
  receiver: SwitchableReceiver;
}

/** A query on the observer that tries again while PostgreSQL is coming back. */
async function observe<T extends pg.QueryResultRow>(observer: pg.Pool, sql: string): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return (await observer.query<T>(sql)).rows[0]!;
    } catch (error) {
      if (n >= 100) throw error;
      await sleep(100);
    }
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function kill(targets: FaultTargets): Promise<FaultRecord> {
  const slot = targets.slots[Math.floor(Math.random() * targets.slots.length)]!;
  const at = Date.now();
  const oldPid = await slot.kill();
  const gone = !alive(oldPid);
  await slot.start();
  const newPid = slot.pid();
  return {
    kind: 'kill',
    at,
    over: Date.now(),
    happened: gone && newPid !== oldPid && alive(newPid),
    evidence: { instance: slot.name, oldPid, newPid, oldPidGone: gone },
  };
}

const START_TIME = 'SELECT pg_postmaster_start_time()::text AS started';

async function restartPostgres(targets: FaultTargets): Promise<FaultRecord> {
  const before = (await observe<{ started: string }>(targets.observer, START_TIME)).started;
  const at = Date.now();
  await targets.restartPostgres();
  const over = Date.now();
  const after = (await observe<{ started: string }>(targets.observer, START_TIME)).started;
  return {
    kind: 'pg_restart',
    at,
    over,
    happened: after !== before && Date.parse(after) > Date.parse(before),
    evidence: { startedBefore: before, startedAfter: after },
  };
}

async function terminateBackends(targets: FaultTargets): Promise<FaultRecord> {
  const at = Date.now();
  const { ended } = await observe<{ ended: number }>(
    targets.observer,
    `SELECT count(*)::int AS ended FROM (
       SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
       WHERE application_name IN ('sess-soak-a', 'sess-soak-b', 'sess-soak-c')
     ) t WHERE done`,
  );
  return {
    kind: 'pg_terminate',
    at,
    over: Date.now(),
    happened: ended > 0,
    evidence: { backendsEnded: ended },
  };
}

async function receiverDown(targets: FaultTargets, forMs: number): Promise<FaultRecord> {
  const at = Date.now();
  await targets.receiver.down();
  const refused = await targets.receiver.refuses();
  await sleep(forMs - (Date.now() - at));
  const stillRefused = await targets.receiver.refuses();
  await targets.receiver.up();
  return {
    kind: 'receiver_down',
    at,
    over: Date.now(),
    happened: refused && stillRefused,
    evidence: { refusedAtStart: refused, refusedAtEnd: stillRefused, downMs: Date.now() - at },
  };
}

/** Run `schedule` from `startedAt`; resolves with every fault once the last is over. */
export async function runFaults(
  schedule: ScheduledFault[],
  startedAt: number,
  targets: FaultTargets,
): Promise<FaultRecord[]> {
  return Promise.all(
    schedule.map(async (fault) => {
      await sleep(Math.max(0, startedAt + fault.atS * 1_000 - Date.now()));
      switch (fault.kind) {
        case 'kill':
          return kill(targets);
        case 'pg_restart':
          return restartPostgres(targets);
        case 'pg_terminate':
          return terminateBackends(targets);
        case 'receiver_down':
          return receiverDown(targets, (fault.untilS - fault.atS) * 1_000);
      }
    }),
  );
}
