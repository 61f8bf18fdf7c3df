/**
 * The JSDoc examples of the root entry (`@sess.si/mcp`): the tool contract, the engine, the memory
 * store, `registerSessTools` and `createSessToolHandlers`. The type check covers this file and
 * `npm run snippets` copies each region into the JSDoc that names it; it is never run.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { McpServer } from '@modelcontextprotocol/server';
import {
  type Authority,
  type Binding,
  createMemoryHandleStore,
  createSessEngine,
  createSessToolHandlers,
  type InteractionRecord,
  parseToolArguments,
  registerSessTools,
  SERVER_INSTRUCTIONS,
  type SessEngine,
  SessMcpError,
} from '../../src/index.js';

declare const authority: Authority;
declare const binding: Binding;
declare const record: InteractionRecord;
declare const handle: string;
declare const now: string;
declare const signal: AbortSignal;
declare const version: string;
declare function retryLater(): void;

export async function engineExample(): Promise<void> {
  //#region createSessEngine
  const engine = createSessEngine({ authority, maxWaitMs: 30_000 });
  const result = await engine.call('sess_response', { handle, revision: 1 }, { signal });
  //#endregion
  if (result.isError === true) console.error(result.structuredContent);
}

export function registerExample(): McpServer {
  //#region registerSessTools
  const server = new McpServer(
    { name: '@sess.si/mcp', version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  registerSessTools(server, { engine: createSessEngine({ authority }) });
  //#endregion
  return server;
}

export function toolHandlersExample(): Server {
  //#region createSessToolHandlers
  const server = new Server(
    { name: 'my-server', version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  const sess = createSessToolHandlers({ engine: createSessEngine({ authority }) });
  server.setRequestHandler(ListToolsRequestSchema, sess.listTools);
  server.setRequestHandler(CallToolRequestSchema, sess.callTool);
  //#endregion
  return server;
}

export async function errorExample(engine: SessEngine): Promise<void> {
  //#region SessMcpError
  try {
    await engine.response({ handle, revision: 1 });
  } catch (error) {
    if (error instanceof SessMcpError && error.code === 'SESS_UNAVAILABLE') retryLater();
  }
  //#endregion
}

export async function memoryExample(): Promise<void> {
  //#region createMemoryHandleStore
  const stores = createMemoryHandleStore();
  const store = stores.forBinding(binding);
  const created = await store.create(record); // version 1
  await store.update({ ...record, updatedAt: now }, created.version); // version 2
  //#endregion
}

export function parseExample(): number {
  //#region parseToolArguments
  const args = parseToolArguments('sess_response', { handle: 'h_1', revision: 1 });
  //#endregion
  return args.revision;
}
