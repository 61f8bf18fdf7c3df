/**
 * The Sess client's transport on Node: one `node:http` / `node:https` request per exchange over a
 * kept-alive agent of this module's, instead of `fetch`. A held wait then keeps a request, its
 * socket and Node's C++ parser, not `fetch`'s `Request`, `Response`, web streams and pool entry;
 * a returning one reads its body as buffers, not through a stream reader.
 *
 * It is chosen only on Node itself (not Deno, Bun or Workers, which also answer to `process`),
 * only when the caller passed no `fetch` of their own, and only while the global `fetch` is the
 * one this module found when it loaded. Node's modules are taken from
 * the runtime's `getBuiltinModule`, never imported (nor their types), so bundles for edge runtimes stay free of `node:`.
 * The deadline, the abort, the redirect refusal and the body limit stay `exchange.ts`'s; this
 * module only moves bytes, and its errors are Node's own (`code` on the error, as
 * `classifyFailure` reads it).
 */
import type {
  OpenedResponse,
  ResponseHeaders,
  SentRequest,
  Transport,
  TransportRequest,
} from './exchange.js';
import { decodeBody, oversizedBody } from './exchange.js';

/** The response side of a Node request, typed by what this module uses of it. */
interface NodeIncoming {
  statusCode?: number | undefined;
  /** Names and values as received, alternating. */
  rawHeaders: string[];
  /** True once the whole body arrived. */
  complete: boolean;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  destroy(): unknown;
}

/** The request side of a Node request. */
interface NodeOutgoing {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  on(event: 'response', listener: (message: NodeIncoming) => void): unknown;
  end(body?: string): unknown;
  destroy(): unknown;
}

interface NodeRequestOptions {
  method: string;
  headers: Record<string, string>;
  agent: unknown;
  timeout: number;
}

/** `node:http` or `node:https`, typed structurally so no `node:` type is imported. */
interface NodeHttpModule {
  request(url: string, options: NodeRequestOptions): NodeOutgoing;
  Agent: new (options: { keepAlive: boolean; timeout: number; scheduling: 'lifo' }) => unknown;
}

/** What the transport needs of Node: the request function and the agent of each scheme. */
interface NodeScheme {
  request: NodeHttpModule['request'];
  agent: unknown;
}

interface NodeSide {
  http: NodeScheme;
  https: NodeScheme;
}

/**
 * Idle sockets are closed after this long, or a second before the server's `Keep-Alive: timeout`
 * hint when that is shorter (Node's agent reads the hint only under a timeout of its own).
 */
const IDLE_SOCKET_MS = 4_000;

let side: NodeSide | null | undefined;

/**
 * The global `fetch` as this module found it. One replaced later (an instrumentation, a test's
 * recorder) is honoured: the client then sends through it, as through a `fetch` it was given.
 */
const globalFetchAtLoad: unknown = globalThis.fetch;

interface RuntimeGlobals {
  process?: {
    release?: { name?: unknown };
    getBuiltinModule?: (id: string) => unknown;
  };
  navigator?: { userAgent?: unknown };
  Deno?: unknown;
  Bun?: unknown;
}

/** Node's modules and this module's agents, or `null` on any runtime that is not Node itself. */
function nodeSide(): NodeSide | null {
  if (side !== undefined) return side;
  side = null;
  const g = globalThis as RuntimeGlobals;
  const proc = g.process;
  if (proc?.release?.name !== 'node' || typeof proc.getBuiltinModule !== 'function') return side;
  if (g.Deno !== undefined || g.Bun !== undefined) return side;
  const agent = g.navigator?.userAgent;
  if (typeof agent === 'string' && !agent.startsWith('Node.js')) return side;
  const http = proc.getBuiltinModule('node:http') as NodeHttpModule | undefined;
  const https = proc.getBuiltinModule('node:https') as NodeHttpModule | undefined;
  if (http === undefined || https === undefined) return side;
  const options = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
  side = {
    http: { request: http.request, agent: new http.Agent(options) },
    https: { request: https.request, agent: new https.Agent(options) },
  };
  return side;
}

/**
 * The `node:http` transport when this is Node and the global `fetch` is still the one this module
 * found, else `undefined` (then `fetch` is used).
 */
export function nodeTransport(): Transport | undefined {
  if (globalThis.fetch !== globalFetchAtLoad) return undefined;
  return nodeSide() === null ? undefined : send;
}

/**
 * The response headers read like `Headers`: every field of that name (any case), in order, joined
 * with `, `. Built from the raw list, because Node's parsed `headers` keep only the first of a
 * repeated `content-type` or `etag`, where `fetch` shows them all (and the client refuses them).
 */
function headersOf(message: NodeIncoming): ResponseHeaders {
  const raw = message.rawHeaders;
  return {
    get(name) {
      const wanted = name.toLowerCase();
      let value: string | null = null;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        if (raw[i]!.toLowerCase() !== wanted) continue;
        value = value === null ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
      }
      return value;
    },
  };
}

function send(request: TransportRequest): SentRequest {
  const node = nodeSide()!;
  const scheme = request.url.startsWith('https:') ? node.https : node.http;
  const outgoing = scheme.request(request.url, {
    method: request.method,
    headers: request.headers,
    agent: scheme.agent,
    // No idle timer while a request is out (a held wait is idle for up to 45 s by design); the
    // agent's own applies again once the socket is free.
    timeout: 0,
  });
  let incoming: NodeIncoming | undefined;
  const response = new Promise<OpenedResponse>((resolve, reject) => {
    outgoing.on('error', reject);
    outgoing.on('response', (message) => {
      incoming = message;
      const status = message.statusCode ?? 0;
      resolve({
        status,
        redirect: status >= 300 && status < 400,
        headers: headersOf(message),
        text: (maxBytes, what) => readBody(message, maxBytes, what),
        discard: () => message.destroy(),
      });
    });
  });
  // A body passed whole to `end()` is sent with its `Content-Length`, never chunked.
  outgoing.end(request.body);
  return {
    response,
    cancel: () => {
      // The exchange has already settled: whatever either side reports next is not read.
      incoming?.destroy();
      outgoing.destroy();
    },
  };
}

/**
 * The whole body, bounded. A body cut short (the connection closed before its length, or its
 * chunked end) rejects with Node's `ECONNRESET` error, as a body `fetch` saw cut short does.
 */
function readBody(message: NodeIncoming, maxBytes: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    message.on('data', (chunk) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        message.destroy();
        reject(oversizedBody(maxBytes, what));
        return;
      }
      chunks.push(chunk);
    });
    message.on('error', reject);
    message.on('end', () => {
      try {
        resolve(decodeBody(chunks, size, what));
      } catch (error) {
        reject(error);
      }
    });
    message.on('close', () => {
      if (!message.complete) reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
  });
}
