/**
 * Measure 9, the wake-up: real `sess-mcp` children (the bundled bin) with their events delivered
 * to a webhook receiver in this process, and the local Sess runtime. With N interactions waiting
 * and nothing answered for 45 s (a whole long-poll, and a whole turn of the watched records): the
 * Sess calls per watched interaction per minute, the servers' resident memory (as read, and after
 * a collection that gives free heap pages back) and CPU, beside a server with none waiting
 * started with them (the baseline). Then a sample of at most 20 interactions, spread over all, is
 * answered one after another; for each answer, the time from the answer submitted to the webhook
 * received, and to a `sess-mcp wait` for that handle exiting.
 *
 * One profile holds at most `MAX_UNFINISHED` (100) unfinished interactions, so more than 100
 * watched are spread over profiles of 100 in one state directory, one server each: 1 000 watched
 * are ten servers, each watching its own profile's 100 (each profile has a watcher of its own).
 * The interactions are asked through the servers' own `sess_request`; the servers measured are
 * started afterwards on the profiles that hold them.
 *
 * No goal yet: the figures are reported. The watcher's own rules (four long-polls, more taking
 * turns) are `src/stdio/watcher.ts`; `bench/child-signal.mjs` is what reads a server's memory
 * after a collection, and profiles it under `SESS_BENCH_PROFILE`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { MAX_UNFINISHED } from '../../src/index.js';
import { ProfileWakeFiles } from '../../src/store/file/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { SURFACE } from './mcp.js';
import { now, percentile, procCpuMs } from './stats.js';
import { ms, type Row } from './table.js';

/** The sizes measured unless `--watched` says otherwise. */
export const DEFAULT_WATCHED = [1, 1_000];

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
/** How long the idle window is in which calls, memory and CPU are counted. */
const IDLE_MS = 45_000;
/** How long the servers run with their interactions waiting before the idle window starts. */
const SETTLE_MS = 3_000;
/** How many interactions are answered, spread over the watched ones. */
const SAMPLE = 20;
/** Time between two answers. */
const ANSWER_GAP_MS = 500;
/** How long after the last answer its webhook and `wait` may still come. */
const ANSWER_DEADLINE_MS = 120_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A receiver recording when each handle's first event arrived. */
async function receiver(): Promise<{ url: string; arrived: Map<string, number>; close(): Promise<void> }> {
  const arrived = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const handle = (JSON.parse(body) as { handle: string }).handle;
      if (!arrived.has(handle)) arrived.set(handle, now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrived,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? Number.NaN);
}

/** One `sess-mcp` child on `profile`, connected, its key read (one `sess_list`). */
interface Server {
  profile: string;
  client: Client;
  pid: number;
  /** Where `bench/child-signal.mjs` writes the server's memory around a full collection. */
  memoryFile: string;
  asked: { handle: string; humanUrl: string }[];
}

/**
 * Start the bin on `profile`. It runs with `bench/child-signal.mjs` loaded, which does nothing
 * until the idle window's two signals; `label` names its profiles.
 */
async function startServer(
  env: Record<string, string>,
  profile: string,
  scratch: string,
  label: string,
): Promise<Server> {
  const profiles = process.env.SESS_BENCH_PROFILE;
  const memoryFile = join(scratch, `${profile}.memory.json`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      '--import',
      join(process.env.SESS_BENCH_ROOT!, 'bench', 'child-signal.mjs'),
      join(process.env.SESS_BENCH_DIR!, 'sess-mcp.mjs'),
    ],
    env: {
      ...env,
      SESS_MCP_PROFILE: profile,
      SESS_BENCH_MEMORY: memoryFile,
      ...(profiles === undefined
        ? {}
        : { SESS_BENCH_PROFILE: profiles, SESS_BENCH_PROFILE_NAME: `wake-${label}-${profile}` }),
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-wake', version: '1' }, { capabilities: {} });
  await client.connect(transport);
  await client.callTool({ name: 'sess_list', arguments: {} });
  return { profile, client, pid: transport.pid!, memoryFile, asked: [] };
}

/** `count` interactions asked through the server's own `sess_request`. */
async function ask(server: Server, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = (await server.client.callTool({
      name: 'sess_request',
      arguments: { interaction: SURFACE },
    })) as { structuredContent?: { interaction?: { handle: string; humanUrl: string } } };
    const interaction = result.structuredContent?.interaction;
    if (interaction === undefined) throw new Error(`sess_request ${i + 1} on ${server.profile} failed`);
    server.asked.push(interaction);
  }
}

/** A process's memory at the end of the idle window: as read, then after a full collection. */
interface Memory {
  /** VmRSS as read, KiB. */
  rssKiB: number;
  /** RSS and heap used after a full garbage collection, KiB. */
  rssAfterGcKiB: number;
  heapAfterGcKiB: number;
}

/** What the idle window measured: calls, and each process's CPU and memory. */
interface Idle {
  calls: number;
  cpuMs: number[];
  memory: Memory[];
  baseCpuMs: number;
  baseMemory: Memory;
}

async function idleWindow(sess: LocalSess, servers: readonly Server[], base: Server): Promise<Idle> {
  const all = [base, ...servers];
  const calls = () => Object.values(sess.stats.requests).reduce((a, b) => a + b, 0);
  const byEndpoint = { ...sess.stats.requests };
  const callsBefore = calls();
  const cpuBefore = all.map(({ pid }) => procCpuMs(pid));
  mark(all);
  await sleep(IDLE_MS);
  const callsDuring = calls() - callsBefore;
  if (process.env.SESS_BENCH_TRACE === '1') {
    const during = Object.entries(sess.stats.requests)
      .map(([endpoint, n]) => [endpoint, n - (byEndpoint[endpoint as keyof typeof byEndpoint] ?? 0)] as const)
      .filter(([, n]) => n > 0);
    process.stderr.write(` [idle Sess calls: ${during.map(([e, n]) => `${e} ${n}`).join(', ')}]`);
  }
  const cpuMs = all.map(({ pid }, i) => procCpuMs(pid) - cpuBefore[i]!);
  const rss = all.map(({ pid }) => rssKiB(pid));
  // Only now, every figure of the window read: a full collection in each (child-signal.mjs).
  mark(all);
  const memory = await Promise.all(all.map((server, i) => memoryOf(server, rss[i]!)));
  return {
    calls: callsDuring,
    cpuMs: cpuMs.slice(1),
    memory: memory.slice(1),
    baseCpuMs: cpuMs[0]!,
    baseMemory: memory[0]!,
  };
}

/** Mark the start or the end of the idle window in each server (`bench/child-signal.mjs`). */
function mark(servers: readonly Server[]): void {
  for (const { pid } of servers) process.kill(pid, 'SIGUSR2');
}

/** The server's memory after its full collection, once `child-signal.mjs` has written it. */
async function memoryOf(server: Server, rss: number): Promise<Memory> {
  const deadline = now() + 15_000;
  while (!existsSync(server.memoryFile) && now() < deadline) await sleep(20);
  const after = existsSync(server.memoryFile)
    ? (JSON.parse(readFileSync(server.memoryFile, 'utf8')) as { after: { rss: number; heapUsed: number } })
        .after
    : { rss: Number.NaN, heapUsed: Number.NaN };
  return { rssKiB: rss, rssAfterGcKiB: after.rss / 1024, heapAfterGcKiB: after.heapUsed / 1024 };
}

/** One answered interaction of the sample, and where it lives. */
interface Sampled {
  profile: string;
  handle: string;
  humanUrl: string;
}

/** `SAMPLE` interactions (or all, when fewer) spread evenly over every server's. */
function sampleOf(servers: readonly Server[]): Sampled[] {
  const all = servers.flatMap(({ profile, asked }) => asked.map((a) => ({ profile, ...a })));
  const count = Math.min(SAMPLE, all.length);
  return Array.from({ length: count }, (_, i) => all[Math.floor(((i + 0.5) * all.length) / count)]!);
}

/** Times from each answer submitted to its webhook and to its `wait` exiting (NaN: never). */
interface Answered {
  toWebhook: number[];
  toWaitExit: number[];
}

/**
 * A `sess-mcp wait` for each sampled handle (each started before any answer: it holds its
 * handle's wait file), then the answers one after another.
 */
async function answerSample(
  sess: LocalSess,
  env: Record<string, string>,
  state: string,
  arrived: ReadonlyMap<string, number>,
  sample: readonly Sampled[],
  waits: ChildProcess[],
): Promise<Answered> {
  const bin = join(process.env.SESS_BENCH_DIR!, 'sess-mcp.mjs');
  const exited = new Map<string, number>();
  for (const { profile, handle } of sample) {
    const child = spawn(process.execPath, [bin, 'wait', '--state-dir', state, '--profile', profile, handle], {
      env,
      stdio: 'ignore',
    });
    // Only a wait that saw its interaction leave `waiting` (exit 0) counts.
    child.on('exit', (code) => {
      if (code === 0) exited.set(handle, now());
    });
    waits.push(child);
  }
  const ready = now() + 30_000;
  const waitFile = ({ profile, handle }: Sampled) => ProfileWakeFiles.open(state, profile).waitPath(handle);
  while (!sample.every((s) => existsSync(waitFile(s))) && now() < ready) await sleep(50);
  const submitted = new Map<string, number>();
  for (const { handle, humanUrl } of sample) {
    submitted.set(handle, now());
    await sess.submitAnswer(humanUrl, { action: 'go', values: {} });
    await sleep(ANSWER_GAP_MS);
  }
  const deadline = now() + ANSWER_DEADLINE_MS;
  const done = () => sample.every(({ handle }) => arrived.has(handle) && exited.has(handle));
  while (!done() && now() < deadline) await sleep(50);
  const since = (at: ReadonlyMap<string, number>) =>
    sample.map(({ handle }) => (at.get(handle) ?? Number.NaN) - submitted.get(handle)!);
  return { toWebhook: since(arrived), toWaitExit: since(exited) };
}

interface Round extends Answered {
  watched: number;
  servers: number;
  idle: Idle;
}

/** One round with `watched` interactions waiting, over as many servers as the cap needs. */
async function round(watched: number): Promise<Round> {
  const sess = await startLocalSess({ plan: { maxOpenSessions: 2 * watched + 10 } });
  const hook = await receiver();
  const state = mkdtempSync(join(tmpdir(), 'sess-bench-wake-'));
  const scratch = mkdtempSync(join(tmpdir(), 'sess-bench-wake-memory-'));
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: state,
    SESS_API_KEY: sess.apiKey,
    SESS_API_ORIGIN: sess.origin,
    SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
    SESS_MCP_STATE_DIR: state,
    SESS_MCP_WEBHOOK_URL: hook.url,
    SESS_MCP_WEBHOOK_SECRET: SECRET,
  };
  const count = Math.ceil(watched / MAX_UNFINISHED);
  const started: Server[] = [];
  const waits: ChildProcess[] = [];
  try {
    // The interactions are asked through servers that then stop; the servers measured start on
    // the profiles that hold them, as a restarted server does, so the window finds their watchers
    // taking turns already (a watcher that saw the first few come keeps their 45 s long-polls).
    const profiles = Array.from({ length: count }, (_, i) => `watched-${i}`);
    const asking = await Promise.all(profiles.map((profile) => startServer(env, profile, scratch, 'ask')));
    started.push(...asking);
    await Promise.all(
      asking.map((server, i) => ask(server, Math.min(MAX_UNFINISHED, watched - i * MAX_UNFINISHED))),
    );
    await Promise.all(asking.map(({ client }) => client.close()));
    const base = await startServer(env, 'baseline', scratch, String(watched));
    started.push(base);
    const servers: Server[] = [];
    for (const [i, profile] of profiles.entries()) {
      const server = await startServer(env, profile, scratch, String(watched));
      server.asked.push(...asking[i]!.asked);
      started.push(server);
      servers.push(server);
    }
    await sleep(SETTLE_MS);
    const idle = await idleWindow(sess, servers, base);
    const answered = await answerSample(sess, env, state, hook.arrived, sampleOf(servers), waits);
    return { watched, servers: count, idle, ...answered };
  } finally {
    for (const child of waits) child.kill();
    await Promise.all(started.map(({ client }) => client.close().catch(() => undefined)));
    await hook.close();
    await sess.close();
    rmSync(state, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `p50 / p99` of the times that came, and how many never came (within the deadline). */
function percentiles(values: readonly number[]): string {
  const came = values.filter(Number.isFinite);
  const missing = values.length - came.length;
  const text = `${ms(percentile(came, 50))} / ${ms(percentile(came, 99))}`;
  return missing === 0 ? text : `${text}, ${missing} never came`;
}

const kib = (value: number) => `${value.toFixed(1)} KiB`;
const mib = (value: number) => `${(value / 1024).toFixed(1)} MiB`;

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** The rows of one round. */
function rowsOf(r: Round): Row[] {
  const { idle } = r;
  const minutes = IDLE_MS / 60_000;
  const servers = r.servers === 1 ? '1 server' : `${r.servers} servers`;
  const name = `9 wake-up, ${r.watched} watched (${servers})`;
  const sampled = `${r.toWebhook.length} answered`;
  const row = (figure: string, subject: string, baseline = ''): Row => ({
    measure: `${name}: ${figure}`,
    subject,
    baseline,
    ratio: '',
    goal: '',
    met: '—',
  });
  // The baseline is a server with none watched, once per server of the round.
  const total = (key: keyof Memory) => sum(idle.memory.map((m) => m[key]));
  const base = (key: keyof Memory) => idle.baseMemory[key] * r.servers;
  const perWatched = (key: keyof Memory) => (total(key) - base(key)) / r.watched;
  const cpuOver = (sum(idle.cpuMs) - idle.baseCpuMs * r.servers) / minutes / r.watched;
  return [
    row(`answer → webhook p50 / p99 (${sampled})`, percentiles(r.toWebhook)),
    row(`answer → wait exits p50 / p99 (${sampled})`, percentiles(r.toWaitExit)),
    row('Sess calls per watched per minute (idle)', (idle.calls / minutes / r.watched).toFixed(2)),
    row(
      'RSS, as read / after a full collection; baseline: none watched, per server',
      `${mib(total('rssKiB'))} / ${mib(total('rssAfterGcKiB'))}`,
      `${mib(base('rssKiB'))} / ${mib(base('rssAfterGcKiB'))}`,
    ),
    row(
      'RSS per watched over the baseline, as read / after a full collection (heap)',
      `${kib(perWatched('rssKiB'))} / ${kib(perWatched('rssAfterGcKiB'))} (${kib(perWatched('heapAfterGcKiB'))})`,
    ),
    row(
      'idle CPU per minute, per server; baseline: none watched',
      ms(sum(idle.cpuMs) / minutes / r.servers),
      ms(idle.baseCpuMs / minutes),
    ),
    row('idle CPU per watched per minute, over the baseline', ms(cpuOver)),
  ];
}

/** Measure 9: one round per size in `sizes` (default {@link DEFAULT_WATCHED}). */
export async function wakeBench(sizes: readonly number[] = DEFAULT_WATCHED): Promise<Row[]> {
  const rows: Row[] = [];
  for (const watched of sizes) {
    const t = now();
    const r = await round(watched);
    if (process.env.SESS_BENCH_TRACE === '1')
      process.stderr.write(` [${watched} watched: ${((now() - t) / 1000).toFixed(0)} s]`);
    rows.push(...rowsOf(r));
  }
  return rows;
}
