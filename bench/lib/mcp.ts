/**
 * What the HTTP benchmarks share: a raw 2025-11-25 `tools/call` sent to a fetch-shaped handler,
 * the reading of its answer, and the Sess HTTP handler wired to a memory store and a Sess origin.
 *
 * Raw JSON-RPC rather than an SDK client, so the client's own cost stays out of both sides of
 * every ratio. Nothing here times anything.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessMcpHttpHandler, type SessMcpHttpHandler } from '../../src/http/index.js';
import {
  createMemoryHandleStore,
  type HandleStore,
  type HandleStoreFactory,
  type HttpBinding,
  type InteractionRecord,
  type InteractionResult,
  type Surface,
} from '../../src/index.js';

/** A small valid Surface: one text, one action. */
export const SURFACE: Surface = {
  mode: 'interactive',
  title: 'Deploy now?',
  source: { kind: 'sess_surface', components: [{ type: 'text', text: 'Release 1.2.3 is ready.' }] },
  actions: [
    { id: 'go', label: 'Deploy', intent: 'approve' },
    { id: 'stop', label: 'Stop', intent: 'reject' },
  ],
};

/** Anything with a fetch face. */
export type FetchLike = (request: Request) => Promise<Response>;

let nextId = 1;

/** A `tools/call` request as a stateless 2025-11-25 client posts it; `principal` picks the binding. */
export function toolCall(name: string, args: unknown, principal = 'alice'): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${principal}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name, arguments: args },
    }),
  });
}

/** What a `tools/call` result carries that the benchmarks read. */
export interface ToolResult {
  structuredContent?: { interaction?: InteractionResult; error?: { code: string; reason?: string } };
  isError?: boolean;
}

/** The JSON-RPC result of a response, whether sent as JSON or as one SSE event. */
export async function resultOf(response: Response): Promise<ToolResult> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
  const json = text.startsWith('{')
    ? text
    : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  const message = JSON.parse(json) as { result?: ToolResult; error?: { message: string } };
  if (message.error !== undefined) throw new Error(`JSON-RPC error: ${message.error.message}`);
  if (message.result === undefined) throw new Error('JSON-RPC answer without a result');
  return message.result;
}

/** Call a tool and return its `interaction`; throws on a tool error. */
export async function callTool(
  fetch: FetchLike,
  name: string,
  args: unknown,
  principal?: string,
): Promise<InteractionResult> {
  const result = await resultOf(await fetch(toolCall(name, args, principal)));
  if (result.isError === true) {
    throw new Error(`${name}: ${result.structuredContent?.error?.code ?? 'tool error'}`);
  }
  const interaction = result.structuredContent?.interaction;
  if (interaction === undefined) throw new Error(`${name}: no interaction in the result`);
  return interaction;
}

/** The Sess handler over a memory store; `saved` sees every record the store writes. */
export interface SessHandlerRig {
  handler: SessMcpHttpHandler;
  stores: HandleStoreFactory;
  /** The last record any store wrote. */
  lastSaved(): InteractionRecord | undefined;
  /** Call `observer` when a store `update` starts and when it is done (measure 2's breakdown). */
  onStore(observer: (phase: 'start' | 'done') => void): void;
}

/** Wire the Sess HTTP handler to a memory store; the bearer token is the principal id. */
export function sessHandler(origin: string, workspaceId: string, apiKey: string): SessHandlerRig {
  const stores = createMemoryHandleStore();
  let last: InteractionRecord | undefined;
  let observe: ((phase: 'start' | 'done') => void) | undefined;
  const watch = (store: HandleStore): HandleStore => ({
    ...store,
    get: (h) => store.get(h),
    listUnfinished: () => store.listUnfinished(),
    countUnfinished: () => store.countUnfinished(),
    delete: (h, v) => store.delete(h, v),
    create: async (r) => {
      last = r;
      return store.create(r);
    },
    update: async (r, v) => {
      last = r;
      observe?.('start');
      const saved = await store.update(r, v);
      observe?.('done');
      return saved;
    },
  });
  const handler = createSessMcpHttpHandler({
    authenticate: (request) => ({
      workspaceId,
      principalId: (request.headers.get('authorization') ?? '').replace(/^Bearer /, '') || 'alice',
      clientId: 'bench',
      grantId: 'grant',
      grantGeneration: 'g1',
      scopes: [],
      credential: () => apiKey,
    }),
    handleStore: (binding: HttpBinding) => watch(stores.forBinding(binding)),
    allowedHosts: ['127.0.0.1'],
    sessOrigin: origin,
    allowInsecureLocalhost: true,
    requestDeadlineMs: 120_000,
  });
  return {
    handler,
    stores,
    lastSaved: () => last,
    onStore: (observer) => {
      observe = observer;
    },
  };
}

/** A loopback server answering every request with a tiny JSON body. */
export async function trivialServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
      res.end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resident memory, heap and external bytes after two full collections (run with `--expose-gc`). */
export function memoryAfterGc(): { rss: number; heapUsed: number; external: number } {
  const gc = (globalThis as { gc?: () => void }).gc!;
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

/** Create `n` interactions through the handler, one principal each (`p<i>`), 32 at a time. */
export async function createInteractions(
  rig: SessHandlerRig,
  n: number,
  principal = 'p',
): Promise<{ handles: string[]; urls: string[] }> {
  const handles: string[] = new Array(n);
  const urls: string[] = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const created = await callTool(
        rig.handler.fetch,
        'sess_request',
        { interaction: SURFACE },
        `${principal}${i}`,
      );
      handles[i] = created.handle;
      urls[i] = created.humanUrl!;
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return { handles, urls };
}
