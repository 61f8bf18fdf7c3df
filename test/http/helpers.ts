/**
 * Test helpers of the HTTP face: a real `node:http` server on 127.0.0.1 (port 0) around a
 * request listener, a raw TCP client that can send headers and withhold the body, and the two
 * real MCP clients (v2 with 2026-07-28 negotiation, v1 over the 2025 fallback).
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { SessMcpHttpHandlerOptions } from '../../src/http/index.js';

/**
 * The fewest options a handler is built with, for the tests of one more option: no request is
 * served, so neither callback runs. Spread it and add the option under test.
 */
export const MINIMAL_HTTP_OPTIONS: SessMcpHttpHandlerOptions = Object.freeze({
  authenticate: () => undefined,
  handleStore: () => {
    throw new Error('not used: no tool is called');
  },
  allowedHosts: ['localhost'],
});

/** The whole body of `req`, as UTF-8 text. */
export async function readBody(req: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A listening server and how to reach and stop it. */
export interface TestServer {
  url: string;
  port: number;
  server: http.Server;
  close(): Promise<void>;
}

/**
 * Listen on 127.0.0.1, a random port: `listener` as the request listener, or `mount(server)` to
 * add the listeners itself (`handler.attach`).
 */
export async function listen(
  listener: http.RequestListener | { mount(server: http.Server): void },
): Promise<TestServer> {
  const server = typeof listener === 'function' ? http.createServer(listener) : http.createServer();
  if (typeof listener !== 'function') listener.mount(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a raw exchange saw. */
export interface RawExchange {
  /** Everything the server sent before closing (or before `until` matched). */
  text: string;
  status: number;
  /** True when the server closed the connection. */
  closed: boolean;
  /** Milliseconds from the first byte sent to the first byte received. */
  answeredAfterMs: number;
  /** Bytes of body this client had sent when the answer came. */
  bodyBytesSent: number;
}

/**
 * Send `head` (request line and headers, without the blank line), then body chunks one by one
 * every `chunkEveryMs` (none by default: the body is withheld). Resolves when the server closes
 * the connection or `maxMs` passes.
 */
export async function rawExchange(
  port: number,
  head: string,
  options: { chunks?: Uint8Array[]; chunkEveryMs?: number; maxMs?: number; endOnAnswer?: boolean } = {},
): Promise<RawExchange> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const started = Date.now();
  let answeredAt = -1;
  let bodyBytesSent = 0;
  let text = '';
  let closed = false;
  socket.on('data', (d) => {
    if (answeredAt < 0) answeredAt = Date.now();
    text += d.toString('utf8');
  });
  socket.on('error', () => {});
  const closedP = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('end', () => {
    closed = true;
  });
  socket.write(`${head}\r\n\r\n`);
  const chunks = options.chunks ?? [];
  let stopSending = false;
  const sender = (async () => {
    for (const chunk of chunks) {
      if (stopSending || answeredAt >= 0) return;
      await new Promise((r) => setTimeout(r, options.chunkEveryMs ?? 0));
      if (stopSending || answeredAt >= 0 || socket.destroyed) return;
      socket.write(chunk);
      bodyBytesSent += chunk.byteLength;
    }
  })();
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, options.maxMs ?? 5_000));
  await Promise.race([closedP, timeout]);
  stopSending = true;
  await sender;
  closed = closed || socket.destroyed || socket.readableEnded;
  socket.destroy();
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? '0');
  return { text, status, closed, answeredAfterMs: answeredAt < 0 ? -1 : answeredAt - started, bodyBytesSent };
}

/** The JSON body of a raw HTTP/1.1 answer (chunked or not). */
export function rawJsonBody(text: string): unknown {
  const split = text.indexOf('\r\n\r\n');
  const head = text.slice(0, split);
  let body = text.slice(split + 4);
  if (/transfer-encoding: chunked/i.test(head)) {
    let out = '';
    for (;;) {
      const eol = body.indexOf('\r\n');
      const size = Number.parseInt(body.slice(0, eol), 16);
      if (!size) break;
      out += body.slice(eol + 2, eol + 2 + size);
      body = body.slice(eol + 2 + size + 2);
    }
    body = out;
  }
  return JSON.parse(body);
}

/** A v2 client negotiating 2026-07-28 (`versionNegotiation: auto`). */
export async function connectModern(url: string, headers: Record<string, string> = {}): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'http-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new TransportV2(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A v1 SDK client: 2025-11-25 over the stateless legacy fallback. */
export async function connectLegacy(url: string, headers: Record<string, string> = {}): Promise<ClientV1> {
  const client = new ClientV1({ name: 'http-test-v1', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(url), { requestInit: { headers } }));
  return client;
}

/** A JSON-RPC POST as a 2025-era client sends it. */
export function legacyPost(url: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: 'Bearer test-token',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** An `initialize` request of the 2025 handshake. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
