/**
 * A wait under load: when thousands of waits return at once, the agent's event loop lags for
 * seconds, so the client's pool retires idle sockets late. The confirming read that follows a
 * wait then goes out on a kept-alive socket that has been idle for longer than the runtime said
 * it keeps one. A runtime that closes at exactly the idle time it advertises closes that socket
 * as the request arrives; the read fails before any response byte and the wait ends
 * `SESS_UNAVAILABLE` instead of `answered`.
 *
 * Reproduced small and deterministically: the runtime runs in a child process (`sess-mcp local`,
 * bundled from source), so its timers keep running while this process blocks its own event
 * loop for longer than the advertised idle time — the lag of a loaded machine, with nothing
 * left to chance. The real client with Node's own `fetch` and its connection pool does the rest.
 *
 * The same lag makes a loop run its due timers before it reads responses that arrived in time;
 * the client's request deadline must not turn such a response into a timeout (a server on its
 * own thread answers while this thread is blocked past the deadline).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExchange } from '../../src/sess/exchange.js';
import { createSessClient } from '../../src/sess/index.js';
import { answerToForm } from '../../src/testing/page/index.js';
import { bundleForNode } from '../support/bundle.js';
import {
  expectLaggedReadInTime,
  lag,
  type SendSessionRead,
  sessionRead,
  slowServer,
} from '../support/slow-server.js';
import { ANSWER, sampleSurface } from '../testing/helpers.js';

let dir: string;
let runtime: ChildProcess;
let origin: string;
let apiKey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sess-waits-load-'));
  const bin = await bundleForNode('src/stdio/bin.ts', join(dir, 'sess-mcp.mjs'));
  runtime = spawn(process.execPath, [bin, 'local'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    runtime.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1\n')) resolve();
    });
    runtime.once('exit', () => reject(new Error('the runtime exited before it was ready')));
  });
  origin = /^SESS_API_ORIGIN=(\S+)$/m.exec(out)![1]!;
  apiKey = /^SESS_API_KEY=(\S+)$/m.exec(out)![1]!;
}, 60_000);

afterAll(async () => {
  if (runtime !== undefined && runtime.exitCode === null) {
    const exited = new Promise((resolve) => runtime.once('exit', resolve));
    runtime.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const JWKS = '/.well-known/sess/jwks.json';

/** The idle time the runtime advertises on a response, in milliseconds. */
function advertisedIdleMs(keepAlive: string | null): number {
  const seconds = /(?:^|[\s,])timeout=(\d+)/.exec(keepAlive ?? '')?.[1];
  expect(seconds, 'the runtime advertises how long it keeps an idle connection').toBeDefined();
  return Number(seconds) * 1000;
}

/** Block this process's event loop: no timer, no socket event runs meanwhile. */

/** How long past the advertised idle time the lag lasts: more than a client's own margin. */
const PAST_ADVERTISED_MS = 1_500;

describe('a wait under event-loop lag', () => {
  it('the confirming read after the wait is answered on the kept-alive socket, lag or not', async () => {
    const client = createSessClient({ origin, credential: () => apiKey, allowInsecureLocalhost: true });
    const surface = sampleSurface();
    const created = await client.createSession({ surface, idempotencyKey: crypto.randomUUID() });
    const posted = await fetch(created.humanUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: answerToForm(surface, ANSWER, 1).toString(),
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    const hint = await fetch(origin + JWKS);
    await hint.text();
    const idleMs = advertisedIdleMs(hint.headers.get('keep-alive'));

    // The wait returns the answer, as thousands do at once under the benchmark.
    const waited = await client.waitSession(created.sessionId, {
      revision: 1,
      status: 'active',
      timeoutMs: 5_000,
    });
    expect(waited.responses).toHaveLength(1);
    // The wait's socket goes back to the pool; then the loop lags past the advertised idle time.
    await sleep(100);
    lag(idleMs + PAST_ADVERTISED_MS);
    // The engine's confirming read: the pool hands it the socket its timer could not retire.
    const confirmed = await client.getSession(created.sessionId);
    expect(confirmed.status).toBe('answered');
    expect(confirmed.responses.map((r) => r.eventId)).toEqual(waited.responses.map((r) => r.eventId));
  }, 60_000);

  it('the runtime keeps an idle connection open well past the idle time it advertises', async () => {
    const socket: Socket = connect({ host: new URL(origin).hostname, port: Number(new URL(origin).port) });
    socket.setEncoding('latin1');
    let received = '';
    let closed = false;
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => (closed = true));
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const request = `GET ${JWKS} HTTP/1.1\r\nhost: ${new URL(origin).host}\r\nconnection: keep-alive\r\n\r\n`;
    const response = async (index: number) => {
      while ((received.match(/HTTP\/1\.1 /g) ?? []).length < index && !closed) await sleep(20);
    };
    try {
      socket.write(request);
      await response(1);
      expect(received).toMatch(/^HTTP\/1\.1 200 /);
      const idleMs = advertisedIdleMs(/^keep-alive: *(.*)$/im.exec(received)?.[1]?.trim() ?? null);
      await sleep(idleMs + PAST_ADVERTISED_MS);
      expect(closed, 'the connection is still open after the advertised idle time').toBe(false);
      socket.write(request);
      await response(2);
      expect(received.match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    } finally {
      socket.destroy();
    }
  }, 60_000);
});

/** A Session read through the exchange with Node's own `fetch`. */
const sendWithFetch: SendSessionRead = (request) =>
  runExchange({ fetch: (input, init) => fetch(input, init), ...request });

describe('a deadline under event-loop lag', () => {
  it('a response that arrived before the deadline is read, though the loop ran the deadline first', async () => {
    await expectLaggedReadInTime(sendWithFetch);
  }, 30_000);

  it('a response that had not arrived by the deadline is still a timeout', async () => {
    const server = await slowServer(2_000);
    try {
      const exchange = sendWithFetch(sessionRead(server.url, 300));
      await expect(exchange).rejects.toMatchObject({ kind: 'timeout' });
    } finally {
      await server.close();
    }
  }, 30_000);
});
