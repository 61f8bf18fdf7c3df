/**
 * Example: a Worker (workerd) that keeps its handles in PostgreSQL with `pg`, the durable store a
 * Worker needs because its isolates come and go. `pg` loads through workerd's Node compatibility
 * (`nodejs_compat`, on by default from compatibility date 2026-08-04; with wrangler, add it to
 * `compatibility_flags` for an older date).
 *
 * workerd does not let one request use a socket that another request opened: an isolate-wide
 * `pg.Pool` serves the first request and then hangs. So this `PoolLike` opens one connection per
 * store operation and closes it after; in production, put a connection pooler (such as
 * Cloudflare Hyperdrive) between the Worker and the database so that stays cheap.
 *
 * The handle table must exist: run the store's `migrate()` once from your deploy step. The
 * bearer-token check stands in for a real OAuth resource server, as in `fetch-edge.ts`. It
 * imports the package by its name, as an application does.
 */

import { createSessMcpHttpHandler, type SessMcpHttpHandler } from '@sess.si/mcp/http';
import { createPostgresHandleStore, type PoolLike } from '@sess.si/mcp/store/postgres';
import pg from 'pg';

/** The bindings this Worker reads. */
export interface PgWorkerEnv {
  /** `postgres://…` of the database (a Hyperdrive binding's `connectionString` fits). */
  DATABASE_URL: string;
  SESS_API_KEY: string;
  /** The Sess workspace `SESS_API_KEY` belongs to (its id; the handler checks the key against it). */
  SESS_WORKSPACE_ID: string;
  MCP_BEARER_TOKEN: string;
  /** @default 'https://api.sess.si' */
  SESS_API_ORIGIN?: string;
  /** The handle table. @default 'sess_mcp_handles' */
  HANDLE_TABLE?: string;
  /** Testing only: `'1'` allows a local `http://127.0.0.1` Sess runtime. */
  SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST?: string;
  /** The public host name of this endpoint. */
  MCP_ALLOWED_HOST: string;
}

/** A `PoolLike` that opens a connection for each query or transaction and closes it after. */
export function connectionPerCall(connectionString: string): PoolLike {
  const open = async () => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    return client;
  };
  return {
    async query(text, values) {
      const client = await open();
      try {
        return await client.query(text, values);
      } finally {
        await client.end();
      }
    },
    async connect() {
      const client = await open();
      return {
        query: (text, values) => client.query(text, values),
        release: () => {
          void client.end();
        },
      };
    },
    end: () => Promise.resolve(),
  };
}

/** Compare two strings in time that depends only on their length. */
function sameSecret(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

let handler: SessMcpHttpHandler | undefined;

function build(env: PgWorkerEnv): SessMcpHttpHandler {
  const store = createPostgresHandleStore({
    pool: connectionPerCall(env.DATABASE_URL),
    ...(env.HANDLE_TABLE === undefined ? {} : { table: env.HANDLE_TABLE }),
  });
  return createSessMcpHttpHandler({
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
    handleStore: (binding) => store.forBinding(binding),
    allowedHosts: [env.MCP_ALLOWED_HOST],
    requiredScopes: ['sess'],
    ...(env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: env.SESS_API_ORIGIN }),
    ...(env.SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST === '1' ? { allowInsecureLocalhost: true } : {}),
  });
}

export default {
  /** workerd calls this for every request; `/mcp` is the MCP endpoint. */
  fetch(request: Request, env: PgWorkerEnv): Promise<Response> {
    if (new URL(request.url).pathname !== '/mcp')
      return Promise.resolve(new Response('Not Found', { status: 404 }));
    handler ??= build(env);
    return handler.fetch(request);
  },
};
