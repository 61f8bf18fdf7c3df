/**
 * Measure 9, the wake-up: a real `sess-mcp` child (the bundled bin) with its events delivered to a
 * webhook receiver in this process, and the local Sess runtime. With N interactions waiting, the
 * person answers them one after another; for each answer, the time from the answer submitted to
 * the webhook received, and to a `sess-mcp wait` for that handle exiting. Then, with N waiting and
 * nothing answered for 45 s (a whole long-poll): the Sess calls per watched interaction per minute,
 * the server's resident memory, and its CPU per watched interaction. The memory is the whole
 * server's: a few records change it by less than the collector's noise.
 *
 * No goal: the issue asks for the figures. The watcher's own rules (four long-polls, more taking
 * turns) are `src/stdio/watcher.ts`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startLocalSess } from '../../src/testing/index.js';
import { SURFACE } from './mcp.js';
import { now, percentile, procCpuMs } from './stats.js';
import { ms, type Row } from './table.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
/** How long the idle window is in which calls, memory and CPU are counted. */
const IDLE_MS = 45_000;
/** Time between two answers. */
const ANSWER_GAP_MS = 1_000;

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

interface Round {
  toWebhook: number[];
  toWaitExit: number[];
  callsPerWatchedPerMin: number;
  rssKiB: number;
  cpuPerWatchedMsPerMin: number;
}

/** One round with `watched` interactions waiting. */
async function round(watched: number): Promise<Round> {
  const dir = process.env.SESS_BENCH_DIR!;
  const bin = join(dir, 'sess-mcp.mjs');
  const sess = await startLocalSess();
  const hook = await receiver();
  const state = mkdtempSync(join(tmpdir(), 'sess-bench-wake-'));
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
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench-wake', version: '1' }, { capabilities: {} });
  const waits: ChildProcess[] = [];
  try {
    await client.connect(transport);
    const pid = transport.pid!;
    await client.callTool({ name: 'sess_list', arguments: {} });
    const asked: { handle: string; humanUrl: string }[] = [];
    for (let i = 0; i < watched; i++) {
      const result = (await client.callTool({
        name: 'sess_request',
        arguments: { interaction: SURFACE },
      })) as {
        structuredContent: { interaction: { handle: string; humanUrl: string } };
      };
      asked.push(result.structuredContent.interaction);
    }
    // Idle: nothing answered. Count the Sess calls, the server's memory and CPU.
    await new Promise((r) => setTimeout(r, 2_000));
    const calls = () => Object.values(sess.stats.requests).reduce((a, b) => a + b, 0);
    const callsBefore = calls();
    const cpuBefore = procCpuMs(pid);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const minutes = IDLE_MS / 60_000;
    const callsPerWatchedPerMin = (calls() - callsBefore) / minutes / watched;
    const cpuPerWatchedMsPerMin = (procCpuMs(pid) - cpuBefore) / minutes / watched;
    const rssNow = rssKiB(pid);

    // A `wait` for each, then the answers one after another.
    const exited = new Map<string, number>();
    for (const { handle } of asked) {
      const child = spawn(process.execPath, [bin, 'wait', '--state-dir', state, handle], {
        env,
        stdio: 'ignore',
      });
      child.on('exit', () => exited.set(handle, now()));
      waits.push(child);
    }
    const submitted = new Map<string, number>();
    for (const { handle, humanUrl } of asked) {
      submitted.set(handle, now());
      await sess.submitAnswer(humanUrl, { action: 'go', values: {} });
      await new Promise((r) => setTimeout(r, ANSWER_GAP_MS));
    }
    const deadline = now() + 120_000;
    while ((hook.arrived.size < watched || exited.size < watched) && now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const toWebhook = asked.map(
      ({ handle }) => (hook.arrived.get(handle) ?? Number.NaN) - submitted.get(handle)!,
    );
    const toWaitExit = asked.map(({ handle }) => (exited.get(handle) ?? Number.NaN) - submitted.get(handle)!);
    return { toWebhook, toWaitExit, callsPerWatchedPerMin, rssKiB: rssNow, cpuPerWatchedMsPerMin };
  } finally {
    for (const child of waits) child.kill();
    await client.close().catch(() => undefined);
    await hook.close();
    await sess.close();
    rmSync(state, { recursive: true, force: true });
  }
}

const pct = (values: number[], p: number) => ms(percentile(values, p));

/** Measure 9: one round with one interaction waiting, one with twenty. */
export async function wakeBench(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const watched of [1, 20]) {
    const r = await round(watched);
    const name = `9 wake-up, ${watched} watched`;
    const none = { baseline: '', ratio: '', goal: '', met: '' };
    rows.push(
      {
        measure: `${name}: answer → webhook p50 / p99`,
        subject: `${pct(r.toWebhook, 50)} / ${pct(r.toWebhook, 99)}`,
        ...none,
      },
      {
        measure: `${name}: answer → wait exits p50 / p99`,
        subject: `${pct(r.toWaitExit, 50)} / ${pct(r.toWaitExit, 99)}`,
        ...none,
      },
      {
        measure: `${name}: Sess calls per watched per minute (idle)`,
        subject: r.callsPerWatchedPerMin.toFixed(2),
        ...none,
      },
      {
        measure: `${name}: server RSS / idle CPU per watched`,
        subject: `${(r.rssKiB / 1024).toFixed(1)} MiB / ${r.cpuPerWatchedMsPerMin.toFixed(1)} ms per min`,
        ...none,
      },
    );
  }
  return rows;
}
