/**
 * Example: an edge runtime module (Cloudflare Workers, Bun, Deno) — `export default { fetch }`.
 *
 * The handler is built once per isolate from the runtime's `env` bindings. The bearer-token check
 * stands in for a real OAuth resource server, and the memory store lives only as long as the
 * isolate: a hosted deployment supplies a durable store per binding. Nothing here imports a
 * `node:` module.
 *
 * It imports the package by its name, as an application does.
 */

import { createMemoryHandleStore } from '@sess.si/mcp';
import {
  createSessMcpHttpHandler,
  type SessMcpHttpHandler,
  type SessMcpHttpHandlerOptions,
} from '@sess.si/mcp/http';

/** The bindings this module reads. */
export interface EdgeEnv {
  /** The Sess API key the example's one principal acts with. */
  SESS_API_KEY: string;
  /** The Sess workspace `SESS_API_KEY` belongs to (its id; the handler checks the key against it). */
  SESS_WORKSPACE_ID: string;
  /** The bearer token an MCP client must present. */
  MCP_BEARER_TOKEN: string;
  /** The public host name of this endpoint, e.g. `mcp.example.com`. */
  MCP_ALLOWED_HOST: string;
  /** @default 'https://api.sess.si' */
  SESS_API_ORIGIN?: string;
  /** Testing only: `'1'` allows a local `http://127.0.0.1` Sess runtime. */
  SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST?: string;
}

/** Compare two strings in time that depends only on their length. */
function sameSecret(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

/**
 * Build the handler from the bindings; `more` adds options a deployment sets in code, such as
 * `telemetry` with its OpenTelemetry providers.
 */
export function createEdgeHandler(
  env: EdgeEnv,
  more: Pick<SessMcpHttpHandlerOptions, 'telemetry'> = {},
): SessMcpHttpHandler {
  const stores = createMemoryHandleStore();
  return createSessMcpHttpHandler({
    ...more,
    authenticate(request) {
      const header = request.headers.get('authorization') ?? '';
      const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
      if (env.MCP_BEARER_TOKEN.length < 16 || !sameSecret(token, env.MCP_BEARER_TOKEN)) return undefined;
      return {
        workspaceId: env.SESS_WORKSPACE_ID,
        principalId: 'owner',
        clientId: 'edge-example',
        grantId: 'edge-grant',
        grantGeneration: '1',
        scopes: ['sess'],
        credential: () => env.SESS_API_KEY,
      };
    },
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: [env.MCP_ALLOWED_HOST],
    requiredScopes: ['sess'],
    ...(env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: env.SESS_API_ORIGIN }),
    ...(env.SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST === '1' ? { allowInsecureLocalhost: true } : {}),
  });
}

let handler: SessMcpHttpHandler | undefined;

export default {
  /** The runtime calls this for every request; `/mcp` is the MCP endpoint. */
  fetch(request: Request, env: EdgeEnv): Promise<Response> {
    if (new URL(request.url).pathname !== '/mcp')
      return Promise.resolve(new Response('Not Found', { status: 404 }));
    handler ??= createEdgeHandler(env);
    return handler.fetch(request);
  },
};
