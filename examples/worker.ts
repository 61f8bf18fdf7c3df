/**
 * Example: a Cloudflare Worker (workerd) that serves the MCP endpoint at `/mcp`.
 *
 * The module builds the handler from {@link createEdgeHandler} once per isolate, from the
 * Worker's `env` bindings (`examples/edge/wrangler.jsonc` declares them). It needs no
 * compatibility flag: nothing here, nor in `@sess.si/mcp/http`, imports a `node:` module.
 *
 * The memory store lives only as long as the isolate. A Worker runs in many isolates and drops
 * them at will, so a handle created in one can be unknown to the next: a deployment replaces
 * `createMemoryHandleStore` with a durable store (for example one backed by a Durable Object or
 * PostgreSQL). This example keeps the memory store so it runs with no account anywhere.
 *
 * It imports the package by its name, as an application does.
 */

import type { SessMcpHttpHandler } from '@sess.si/mcp/http';
import { createEdgeHandler, type EdgeEnv } from './fetch-edge.js';

/** The part of a Worker's `ExecutionContext` this module uses. */
export interface WorkerContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

let handler: SessMcpHttpHandler | undefined;

export default {
  /** workerd calls this for every request. */
  fetch(request: Request, env: EdgeEnv, _ctx: WorkerContextLike): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== '/mcp') return Promise.resolve(new Response('Not Found', { status: 404 }));
    handler ??= createEdgeHandler(env);
    return handler.fetch(request);
  },
};
