/**
 * The in-memory MCP stack for test files, in the style of `useSecretsAudit()`: the engine harness
 * (`test/engine/harness.ts`) on the local Sess runtime, a real server with the Sess tools on that
 * engine (a 2.x `McpServer` with `registerSessTools`, or the low-level `Server` of the SDK 1.x with
 * `createSessToolHandlers`), and an MCP client of either SDK generation connected to it over that
 * SDK's in-memory transport pair. Everything a test starts is closed after it: first what it
 * deferred and the clients with their servers (in the order they were started), then the harness.
 *
 * A test file states only what is particular to it: which client, which server, which tool set,
 * which schema form. It does not stand in for the HTTP or stdio faces (`test/http/harness.ts`,
 * `useStdioStack()`).
 *
 * @example
 * ```ts
 * const mcp = useInMemoryMcp();
 * it('lists the five tools', async () => {
 *   const h = await mcp.harness();
 *   const client = await mcp.connect(h.engine, { tools: 'sess-mcp-tools/5' });
 *   expect((await client.listTools()).tools).toHaveLength(5);
 * });
 * ```
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport as InMemoryTransportV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server as ServerV1 } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { afterEach, expect } from 'vitest';
import { serverInstructions } from '../../src/core/contract/tool-definitions.js';
import type { SessEngine } from '../../src/core/engine/engine.js';
import { registerSessTools } from '../../src/core/engine/register.js';
import { createSessToolHandlers } from '../../src/core/engine/tool-handlers.js';
import { type Harness, type HarnessOptions, sessionIdOf, startHarness } from '../engine/harness.js';

/** The in-memory transport of either SDK generation. */
type InMemoryTransportOfEither =
  | InstanceType<typeof InMemoryTransport>
  | InstanceType<typeof InMemoryTransportV1>;

/** An MCP client of either SDK generation, as far as the fixture uses it. */
export interface ConnectableClient {
  connect(transport: InMemoryTransportOfEither): Promise<void>;
  close(): Promise<void>;
}

/**
 * The server the client talks to and what it gets besides the engine; the server's instructions
 * follow `tools`.
 */
export interface InMemoryServerOptions {
  /**
   * `'mcp-server'`, a 2.x `McpServer` with `registerSessTools`, or `'server-v1'`, the low-level
   * `Server` of `@modelcontextprotocol/sdk` 1.x with `createSessToolHandlers`, over the 1.x
   * in-memory transport.
   * @default 'mcp-server'
   */
  server?: 'mcp-server' | 'server-v1';
  tools?: 'sess-mcp-tools/5' | 'sess-mcp-tools/6';
  /** Passed through unchecked, so a test may hand over a value the option refuses. */
  inputSchemas?: unknown;
  /** Every JSON-RPC message the client receives is pushed here, as the server sent it. */
  wire?: unknown[];
}

/** A server with the Sess tools and the client side of its in-memory transport pair. */
interface ServedPair {
  server: { close(): Promise<void> };
  clientSide: InMemoryTransportOfEither;
}

/** The server `options.server` names, with the Sess tools on `engine`, connected in memory. */
async function serve(engine: SessEngine, options: InMemoryServerOptions): Promise<ServedPair> {
  const { tools, inputSchemas } = options;
  const info = { name: '@sess.si/mcp', version: '0.0.0-test' };
  const settings = { capabilities: { tools: {} }, instructions: serverInstructions(tools) };
  const toolOptions = {
    engine,
    ...(tools === undefined ? {} : { tools }),
    ...(inputSchemas === undefined ? {} : { inputSchemas: inputSchemas as 'exact' | 'flat' }),
  };
  if (options.server === 'server-v1') {
    const server = new ServerV1(info, settings);
    const handlers = createSessToolHandlers(toolOptions);
    server.setRequestHandler(ListToolsRequestSchema, handlers.listTools);
    server.setRequestHandler(CallToolRequestSchema, handlers.callTool);
    const [clientSide, serverSide] = InMemoryTransportV1.createLinkedPair();
    await server.connect(serverSide);
    return { server, clientSide };
  }
  const server = new McpServer(info, settings);
  registerSessTools(server, toolOptions);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  return { server, clientSide };
}

/** Push every message `transport` hands its client into `wire`, before the client reads it. */
function recordInto(transport: InMemoryTransportOfEither, wire: unknown[]): void {
  const deliver = transport.onmessage as ((message: unknown, extra?: unknown) => void) | undefined;
  transport.onmessage = ((message: unknown, extra?: unknown) => {
    wire.push(structuredClone(message));
    deliver?.(message, extra);
  }) as never;
}

/** Options of {@link InMemoryMcpFixture.connect}. */
export interface InMemoryConnectOptions<C extends ConnectableClient> extends InMemoryServerOptions {
  /** The client to connect. @default a fresh `@modelcontextprotocol/client` `Client` */
  client?: C;
}

/** A test file's in-memory MCP stacks, closed after each test. */
export interface InMemoryMcpFixture {
  /** Start the engine harness for the current test; it is closed after the test, last. */
  harness(options?: HarnessOptions): Promise<Harness>;
  /** A fresh server with the Sess tools on `engine`, and a client connected to it in memory. */
  connect(engine: SessEngine, options?: InMemoryServerOptions & { client?: undefined }): Promise<Client>;
  connect<C extends ConnectableClient>(
    engine: SessEngine,
    options: InMemoryConnectOptions<C> & { client: C },
  ): Promise<C>;
  /** Run `close` after the current test, before the harness is closed. */
  defer(close: () => Promise<void>): void;
}

/** Per test: every client, server and deferred close, then the harness, are closed after it. */
export function useInMemoryMcp(): InMemoryMcpFixture {
  const closers: Array<() => Promise<void>> = [];
  let current: Harness | undefined;
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await current?.close();
    current = undefined;
  });
  async function connect(
    engine: SessEngine,
    options: InMemoryConnectOptions<ConnectableClient> = {},
  ): Promise<ConnectableClient> {
    const { client = new Client({ name: 'sess-mcp-test', version: '1.0.0' }), wire } = options;
    const { server, clientSide } = await serve(engine, options);
    await client.connect(clientSide);
    if (wire !== undefined) recordInto(clientSide, wire);
    closers.push(async () => {
      await client.close();
      await server.close();
    });
    return client;
  }
  return {
    async harness(options) {
      await current?.close();
      current = await startHarness(options);
      return current;
    },
    connect: connect as InMemoryMcpFixture['connect'],
    defer(close) {
      closers.push(close);
    },
  };
}

/**
 * Cancel a waiting `sess_response` over MCP: `start(signal)` sends the call of `created`'s wait;
 * once the local runtime holds the wait, the signal aborts it. The call rejects, and the server side
 * saw the cancellation: its wait ended and the result was `needs_resume`, nothing changed.
 */
export async function expectCancelledWait(
  h: Harness,
  created: { humanUrl: string },
  start: (signal: AbortSignal) => Promise<unknown>,
): Promise<void> {
  const controller = new AbortController();
  const call = start(controller.signal);
  call.catch(() => {});
  await h.sess.whenWaiting(sessionIdOf(h.sess, created.humanUrl));
  controller.abort();
  await expect(call).rejects.toThrow();
  await expect.poll(() => h.sess.pendingWaits()).toBe(0);
  expect(h.diagnostics).toContainEqual(
    expect.objectContaining({ event: 'tool_result', state: 'needs_resume' }),
  );
}
