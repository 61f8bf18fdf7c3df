/**
 * The in-memory MCP stack for test files, in the style of `useSecretsAudit()`: the engine harness
 * (`test/engine/harness.ts`) on the local Sess runtime, a real `McpServer` with
 * `registerSessTools` on that engine, and an MCP client of either SDK generation connected to it
 * over the SDK's in-memory transport pair. Everything a test starts is closed after it: first what
 * it deferred and the clients with their servers (in the order they were started), then the
 * harness.
 *
 * A test file states only what is particular to it: which client, which tool set, which schema
 * form. It does not stand in for the HTTP or stdio faces (`test/http/harness.ts`,
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
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { afterEach } from 'vitest';
import { serverInstructions } from '../../src/core/contract/tool-definitions.js';
import type { SessEngine } from '../../src/core/engine/engine.js';
import { registerSessTools } from '../../src/core/engine/register.js';
import { type Harness, type HarnessOptions, startHarness } from '../engine/harness.js';

/** An MCP client of either SDK generation, as far as the fixture uses it. */
export interface ConnectableClient {
  connect(transport: InstanceType<typeof InMemoryTransport>): Promise<void>;
  close(): Promise<void>;
}

/** What `registerSessTools` gets besides the engine; the server's instructions follow `tools`. */
export interface InMemoryServerOptions {
  tools?: 'sess-mcp-tools/5' | 'sess-mcp-tools/6';
  /** Passed through unchecked, so a test may hand over a value the option refuses. */
  inputSchemas?: unknown;
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
  /** A fresh `McpServer` with the Sess tools on `engine`, and a client connected to it in memory. */
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
    const { client = new Client({ name: 'sess-mcp-test', version: '1.0.0' }), tools, inputSchemas } = options;
    const server = new McpServer(
      { name: '@sess.si/mcp', version: '0.0.0-test' },
      { capabilities: { tools: {} }, instructions: serverInstructions(tools) },
    );
    registerSessTools(server, {
      engine,
      ...(tools === undefined ? {} : { tools }),
      ...(inputSchemas === undefined ? {} : { inputSchemas: inputSchemas as 'exact' | 'flat' }),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
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
