/**
 * One soak run: its own throwaway PostgreSQL cluster, the local Sess runtime (two workspaces), a
 * webhook receiver, three instances (`instance.ts`) on that one database, and HAProxy in front of
 * them; agents of many principals drive real MCP clients through HAProxy while the faults of the
 * schedule (`faults.ts`) strike. Once the load has ended and every event had its chance to
 * arrive, the parts' own records are reconciled (`ledger.ts`) and the figures read from the call
 * log (`figures.ts`).
 *
 * Everything listens on 127.0.0.1, on ports found free at the start, and everything it started is
 * stopped at the end, whatever happened. The report holds counts, times and process ids only.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startLocalSess } from '../../src/testing/index.js';
import { startThrowawayPostgres } from '../support/throwaway-postgres.js';
import { newSecret } from '../support/webhook-receiver.js';
import { type CallRecord, Lane } from './calls.js';
import { type FaultRecord, runFaults, type ScheduledFault, scheduleOf } from './faults.js';
import { type Figures, figuresOf } from './figures.js';
import { startHaproxy } from './haproxy.js';
import type { SoakInstanceSettings } from './instance.js';
import { type InstanceSlot, prepareFleet } from './instances.js';
import { type Ledger, readOutbox, readRecords, reconcile } from './ledger.js';
import { startSwitchableReceiver } from './receiver.js';
import { probeLoop, type Story, type StoryContext, storyLoop } from './stories.js';

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Seconds of load: 60 (the CI schedule) or 600 (a kill a minute). */
  durationS: number;
  /** Agent lanes, one principal each (a probe lane comes on top). @default 8 */
  lanes?: number;
  /** Progress lines (never a secret). */
  progress?: (line: string) => void;
}

/** What a run reports. */
export interface SoakReport {
  durationS: number;
  startedAt: string;
  wallS: number;
  /** The machine's load average (1, 5, 15 min) when the load started and when it ended. */
  loadAverage: { atStart: number[]; atEnd: number[] };
  schedule: ScheduledFault[];
  faults: FaultRecord[];
  ledger: Ledger;
  figures: Figures;
  /** Seconds from the end of the load until every outbox event had reached the receiver. */
  drainS: number;
}

/** The webhook retry schedule runs at 1/50 of its real times, so an outage drains in seconds. */
const WEBHOOK_SCALE = '0.02';
const INSTANCES = ['a', 'b', 'c'];

const loadAverage = () => loadavg().map((l) => Math.round(l * 10) / 10);

/** `count` ports free on 127.0.0.1 now. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/**
 * What a run started, closed in reverse order of starting, each even when another fails. A test
 * passes its own and closes it in `afterAll`, so nothing outlives a run that timed out.
 */
export class SoakStack {
  readonly #closers: Array<() => Promise<unknown>> = [];
  push(close: () => Promise<unknown>): void {
    this.#closers.push(close);
  }
  /** Close everything started so far. Idempotent. */
  async close(): Promise<void> {
    for (let close = this.#closers.pop(); close !== undefined; close = this.#closers.pop()) {
      await close().catch(() => {});
    }
  }
}

/** Wait until every event of the outbox has reached the receiver, or `ms` has passed. */
async function drain(observer: pg.Pool, delivered: Map<string, number>, ms: number): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(500)) {
    try {
      const { eventIds } = await readOutbox(observer);
      if (eventIds.every((id) => delivered.has(id))) return;
    } catch {
      // The database may be coming back; look again.
    }
  }
}

/**
 * Run the soak; resolves with its report, after closing `stack`. Throws only when the stack cannot
 * be started.
 */
export async function runSoak(options: SoakOptions, stack = new SoakStack()): Promise<SoakReport> {
  const progress = options.progress ?? (() => {});
  const began = Date.now();
  try {
    const dir = await mkdtemp(join(tmpdir(), 'sess-mcp-soak-'));
    stack.push(() => rm(dir, { recursive: true, force: true }));
    // Answered Sessions stay open at Sess until completed: no plan limit in a run of thousands.
    const plan = { maxOpenSessions: 1_000_000 };
    const [cluster, sess] = await Promise.all([startThrowawayPostgres(), startLocalSess({ plan })]);
    stack.push(() => cluster.stop());
    stack.push(() => sess.close());
    const observer = new pg.Pool({
      connectionString: cluster.url,
      application_name: 'sess-soak-observer',
      max: 2,
    });
    observer.on('error', () => {});
    stack.push(() => observer.end());
    const other = await sess.createWorkspace();
    const keys = { [sess.workspaceId]: sess.apiKey, [other.workspaceId]: other.apiKey };
    const laneCount = options.lanes ?? 8;
    const tokens = Array.from({ length: laneCount + 1 }, () => randomBytes(24).toString('hex'));
    const principals: SoakInstanceSettings['principals'] = {};
    tokens.forEach((token, i) => {
      principals[token] = {
        workspaceId: i % 2 === 0 ? sess.workspaceId : other.workspaceId,
        principalId: `agent-${i}`,
      };
    });

    const [balancerPort, receiverPort, ...instancePorts] = await freePorts(2 + INSTANCES.length);
    const secret = newSecret();
    const receiver = await startSwitchableReceiver(receiverPort!, secret);
    stack.push(() => receiver.close());
    const fleet = await prepareFleet({ SESS_MCP_TEST_WEBHOOK_SCALE: WEBHOOK_SCALE });
    stack.push(() => fleet.dispose());
    const slots: InstanceSlot[] = INSTANCES.map((name, i) =>
      fleet.slot({
        name,
        port: instancePorts[i]!,
        databaseUrl: cluster.url,
        sessOrigin: sess.origin,
        migrate: i === 0,
        keys,
        principals,
        webhook: { url: receiver.url, secret },
      }),
    );
    for (const slot of slots) stack.push(() => slot.stop());
    await slots[0]!.start(); // migrates the table once
    await Promise.all(slots.slice(1).map((slot) => slot.start()));
    const haproxy = await startHaproxy(
      dir,
      balancerPort!,
      INSTANCES.map((name, i) => [name, instancePorts[i]!]),
    );
    stack.push(() => haproxy.stop());
    progress(`stack up in ${((Date.now() - began) / 1000).toFixed(1)} s; load for ${options.durationS} s`);

    const log: CallRecord[] = [];
    const lanes = tokens.map((token) => new Lane(haproxy.url, token, log));
    stack.push(() => Promise.all(lanes.map((lane) => lane.close())));
    const startedAt = Date.now();
    const loadAtStart = loadAverage();
    const loadEndsAt = startedAt + options.durationS * 1_000;
    const stories: Story[] = [];
    const ctx: StoryContext = { sess, stories, running: () => Date.now() < loadEndsAt };
    const schedule = scheduleOf(options.durationS);
    const faults = runFaults(schedule, startedAt, {
      slots,
      restartPostgres: () => cluster.restart(),
      observer,
      receiver,
    });
    const ticker = setInterval(() => {
      progress(
        `+${Math.round((Date.now() - startedAt) / 1000)} s: ${stories.length} stories, ${log.length} calls`,
      );
    }, 10_000);
    try {
      await Promise.all([probeLoop(ctx, lanes[0]!), ...lanes.slice(1).map((lane) => storyLoop(ctx, lane))]);
    } finally {
      clearInterval(ticker);
    }
    const faultRecords = await faults;
    const loadEnded = Date.now();
    // The retries of events that failed while the receiver was down come within about twice its
    // outage (full jitter over a doubling ceiling): wait that long at most, usually far less.
    await drain(observer, receiver.tally.deliveries, options.durationS < 600 ? 60_000 : 150_000);
    const drainS = (Date.now() - loadEnded) / 1000;
    // Let deliveries in flight land before counting.
    await sleep(500);
    const ledger = reconcile({
      sess,
      records: await readRecords(observer),
      outbox: await readOutbox(observer),
      stories,
      tally: receiver.tally,
    });
    return {
      durationS: options.durationS,
      startedAt: new Date(startedAt).toISOString(),
      wallS: (Date.now() - began) / 1000,
      loadAverage: { atStart: loadAtStart, atEnd: loadAverage() },
      schedule,
      faults: faultRecords,
      ledger,
      figures: figuresOf(log, faultRecords, receiver.tally, startedAt, haproxy.transitions),
      drainS,
    };
  } finally {
    await stack.close();
  }
}
