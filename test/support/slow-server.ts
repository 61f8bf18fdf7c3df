/**
 * Event-loop lag on purpose, for the tests of a deadline that a blocked loop runs late: a server
 * on its own thread (its own event loop, so this thread's lag does not stop it), and ways to block
 * this thread.
 *
 * It judges one case itself, the one every way of sending a read must pass: a response that arrived
 * before the deadline, read by a loop that ran the deadline first, is returned
 * ({@link expectLaggedReadInTime}). Any other test reads its exchange and says what it expects.
 *
 * @example
 * ```ts
 * const server = await slowServer(300);
 * const exchange = runExchange({ url: server.url, timeoutMs: 600, … });
 * await server.requested();
 * await lagInIoCallback(1_000); // the response arrives while the loop is blocked
 * ```
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { expect } from 'vitest';
import type { ExchangeRequest, ExchangeResponse } from '../../src/sess/exchange.js';

/** Block this thread for `ms` milliseconds (timers, sockets and callbacks all wait). */
export function lag(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Block this thread for `ms` inside an I/O-side callback (`setImmediate`), as a burst of
 * returning waits blocks it; unblocked, the loop's next turn runs due timers before it reads a
 * socket.
 */
export function lagInIoCallback(ms: number): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      lag(ms);
      resolve();
    }),
  );
}

/**
 * A plain Session read of `url` with a `timeoutMs` deadline, for `runExchange`; the caller adds
 * how it is sent (`fetch`, and a `transport` when it tests one).
 */
export function sessionRead(url: string, timeoutMs: number): Omit<ExchangeRequest, 'fetch'> {
  return {
    url,
    method: 'GET',
    headers: { accept: 'application/json' },
    mutation: false,
    what: 'read a Session',
    timeoutMs,
    maxBytes: 1024,
  };
}

/** A server on its own thread that answers every request `{}` (200) after a delay. */
export interface SlowServer {
  /** A Session's URL on it. */
  url: string;
  /** Resolves once the server has received a request. */
  requested(): Promise<void>;
  close(): Promise<void>;
}

/** Start a {@link SlowServer} that answers `delayMs` after each request arrives. */
export async function slowServer(delayMs: number): Promise<SlowServer> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    const http = require('node:http');
    const server = http.createServer((req, res) => {
      Atomics.store(workerData.flag, 0, 1);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
        res.end('{}');
      }, workerData.delayMs);
    });
    server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
    { eval: true, workerData: { flag, delayMs } },
  );
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  return {
    url: `http://127.0.0.1:${port}/v1/sessions/ses_x`,
    async requested() {
      while (Atomics.load(flag, 0) === 0) await sleep(1);
    },
    close: () => worker.terminate().then(() => {}),
  };
}

/** How a test sends a Session read: `runExchange` with its own `fetch`, and a `transport` if any. */
export type SendSessionRead = (request: Omit<ExchangeRequest, 'fetch'>) => Promise<ExchangeResponse>;

/**
 * A Session read with a 600 ms deadline, which the server answers at +300 ms while this thread is
 * blocked (in an I/O-side callback, as a burst of returning waits blocks it) until past the
 * deadline. Unblocked, the loop's next turn runs the due deadline before it reads the socket; the
 * response arrived first, so `send` must return it (200, `{}`), not a timeout.
 */
export async function expectLaggedReadInTime(send: SendSessionRead): Promise<void> {
  const server = await slowServer(300);
  try {
    const exchange = send(sessionRead(server.url, 600));
    const started = performance.now();
    await server.requested();
    await lagInIoCallback(1_000);
    expect(performance.now() - started).toBeGreaterThan(600);
    const response = await exchange;
    expect(response.status).toBe(200);
    expect(response.text).toBe('{}');
  } finally {
    await server.close();
  }
}
