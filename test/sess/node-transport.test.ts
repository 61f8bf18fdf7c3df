/**
 * The Sess client's transport on Node (`node:http` with a kept-alive agent, chosen when no
 * `fetch` is given): that it is the one used, that sockets are reused, and the failures only a
 * byte-level server can make — a body cut short, an abort while a wait is held, a deadline under
 * event-loop lag — end as the same kinds `fetch` gives. Loopback servers stand in for Sess where
 * the local runtime cannot misbehave so.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSessClient } from '../../src/sess/client.js';
import { runExchange } from '../../src/sess/exchange.js';
import { nodeTransport } from '../../src/sess/node-transport.js';
import { expectLaggedReadInTime } from '../support/slow-server.js';
import { clientFor, expectSessError, idemKey, surface, useRuntime } from './helpers.js';

const runtime = useRuntime();
/** A Session as the local runtime sends it on the wire, served by the doubles below. */
let view: unknown;
beforeAll(async () => {
  const created = await clientFor(runtime).createSession({ surface: surface(), idempotencyKey: idemKey() });
  view = runtime.sessions.get(created.sessionId)!.view;
});

interface Double {
  origin: string;
  /** Headers of every request received, in order. */
  seen: IncomingMessage['headers'][];
  /** TCP connections accepted so far, and how many of them have closed. */
  connections: { opened: number; closed: number };
  close(): Promise<void>;
}

async function double(respond: (req: IncomingMessage, res: ServerResponse) => void): Promise<Double> {
  const seen: IncomingMessage['headers'][] = [];
  const connections = { opened: 0, closed: 0 };
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => respond(req, res));
  });
  server.on('connection', (socket: Socket) => {
    connections.opened += 1;
    socket.on('close', () => {
      connections.closed += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const client = (origin: string, extra: Partial<Parameters<typeof createSessClient>[0]> = {}) =>
  createSessClient({ origin, credential: () => 'sk_test', allowInsecureLocalhost: true, ...extra });

const id = () => (view as { id: string }).id;

let server: Double | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the Node transport', () => {
  it('is what a client without a fetch of its own sends with, over one kept-alive socket', async () => {
    expect(nodeTransport()).toBeTypeOf('function');
    server = await double((_req, res) => json(res, view));
    const sess = client(server.origin);
    for (let i = 0; i < 3; i++) expect((await sess.getSession(id())).revision).toBe(1);
    expect(server.seen).toHaveLength(3);
    // `fetch` (undici) announces itself with `sec-fetch-mode` and `user-agent: node`; node:http does not.
    for (const headers of server.seen) {
      expect(headers['sec-fetch-mode']).toBeUndefined();
      expect(headers.authorization).toBe('Bearer sk_test');
      expect(headers.connection).toBe('keep-alive');
    }
    expect(server.connections.opened).toBe(1);
  });

  it('a fetch of the caller is used as given', async () => {
    server = await double((_req, res) => json(res, view));
    let calls = 0;
    const sess = client(server.origin, {
      fetch: (input, init) => {
        calls += 1;
        return fetch(input, init);
      },
    });
    await sess.getSession(id());
    expect(calls).toBe(1);
    expect(server.seen[0]?.['sec-fetch-mode']).toBe('cors');
  });

  it('a global fetch replaced after the package loaded is used, as a given one is', async () => {
    server = await double((_req, res) => json(res, view));
    const realFetch = globalThis.fetch;
    let calls = 0;
    globalThis.fetch = (input, init) => {
      calls += 1;
      return realFetch(input, init);
    };
    try {
      expect(nodeTransport()).toBeUndefined();
      await client(server.origin).getSession(id());
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(calls).toBe(1);
    expect(nodeTransport()).toBeTypeOf('function');
  });

  it('a repeated content-type or etag is read as fetch reads it (all of them), so refused alike', async () => {
    for (const repeated of ['content-type', 'etag']) {
      server = await double((_req, res) => {
        const headers: Record<string, string | string[]> = {
          'content-type': 'application/json',
          etag: '"1"',
        };
        headers[repeated] = repeated === 'etag' ? ['"1"', '"2"'] : ['application/json', 'application/json'];
        res.writeHead(200, headers);
        res.end(JSON.stringify(view));
      });
      const viaNode = await expectSessError(client(server.origin).getSession(id()), 'protocol');
      const viaFetch = await expectSessError(
        client(server.origin, { fetch: (input, init) => fetch(input, init) }).getSession(id()),
        'protocol',
      );
      expect(viaNode.protocolReason).toBe(viaFetch.protocolReason);
      await server.close();
      server = undefined;
    }
  });

  it('a body cut short is transport on a read and unknown_outcome on a mutation', async () => {
    server = await double((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id":"ses_1",');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    await expectSessError(client(server.origin).getSession('ses_1'), 'transport');
    await expectSessError(
      client(server.origin).createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'unknown_outcome',
    );
  });

  it('a connection the server drops before answering is transport, and a refused one not_sent', async () => {
    server = await double((req) => req.socket.destroy());
    await expectSessError(client(server.origin).getSession('ses_1'), 'transport');
    const origin = server.origin;
    await server.close();
    server = undefined;
    await expectSessError(client(origin).getSession('ses_1'), 'not_sent', { notSentKind: 'transport' });
  });

  it('aborting a held wait ends it at once and closes its socket', async () => {
    server = await double(() => {});
    const controller = new AbortController();
    const wait = client(server.origin).waitSession(
      'ses_1',
      { revision: 1, status: 'active', timeoutMs: 30_000 },
      { signal: controller.signal },
    );
    while (server.seen.length === 0) await sleep(5);
    const started = performance.now();
    controller.abort();
    await expectSessError(wait, 'aborted');
    expect(performance.now() - started).toBeLessThan(500);
    for (let i = 0; i < 100 && server.connections.closed < 1; i++) await sleep(10);
    expect(server.connections.closed).toBe(1);
  });

  it('the deadline ends a held wait as timeout and closes its socket', async () => {
    server = await double(() => {});
    const sess = client(server.origin, { requestTimeoutMs: 200 });
    await expectSessError(
      sess.waitSession('ses_1', { revision: 1, status: 'active', timeoutMs: 100 }),
      'timeout',
    );
    for (let i = 0; i < 100 && server.connections.closed < 1; i++) await sleep(10);
    expect(server.connections.closed).toBe(1);
  });

  it('a response that arrived before the deadline is read, though a lagging loop ran the deadline first', async () => {
    await expectLaggedReadInTime((request) =>
      runExchange({
        fetch: () => Promise.reject(new Error('fetch must not be used')),
        transport: nodeTransport(),
        ...request,
      }),
    );
  }, 30_000);
});
