/**
 * Puts the pipeline and its two faces together: `{ fetch, node, close }` over one pipeline and
 * one `createMcpHandler`. The server factory is a parameter, so the shell is the same whatever it
 * serves; `handler.ts` plugs in the Sess tools.
 *
 * Nothing here starts a listener.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { incomingFromRequest } from './fetch-face.js';
import { createNodeFace, type NodeRequestLike, type NodeResponseLike } from './node-face.js';
import type { ResolvedHttpOptions } from './options.js';
import { createPipeline, type ScopedServerFactory } from './pipeline.js';

/** The handler `createSessMcpHttpHandler` returns. Mount `fetch` or `node`; call `close` once. */
export interface SessMcpHttpHandler {
  /** The web-standard face (Workers, Bun, Deno, Hono's `c.req.raw`). */
  fetch(request: Request): Promise<Response>;
  /** The `node:http` face: `http.createServer(handler.node)` or next to other routes. */
  node(req: NodeRequestLike, res: NodeResponseLike): void;
  /**
   * Stop: every later request gets `503`; waits in flight end as `needs_resume`; mutations
   * already sent finish. Resolves once nothing is in flight. Idempotent.
   */
  close(): Promise<void>;
}

/** The server for a request the SDK builds without a principal (it only answers a parse error). */
function bareServer(name: string, version: string): McpServer {
  return new McpServer({ name, version }, { capabilities: { tools: {} } });
}

/** Build the handler over `serverFor`. */
export function createHttpShell(
  options: ResolvedHttpOptions,
  serverFor: ScopedServerFactory,
  identity: { name: string; version: string },
): SessMcpHttpHandler {
  const pipeline = createPipeline(options, serverFor, () => bareServer(identity.name, identity.version));
  const node = createNodeFace(pipeline);
  return {
    fetch: async (request) => (await pipeline.handle(incomingFromRequest(request))).response,
    node,
    close: () => pipeline.close(),
  };
}
