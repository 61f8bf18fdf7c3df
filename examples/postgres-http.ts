/**
 * Example: two instances of the HTTP handler on two ports sharing one PostgreSQL database, the
 * way several instances run behind a load balancer. Each instance has its own `pg` pool and its
 * own `createPostgresHandleStore`; the handle records live in one table, so any instance can
 * answer any tool call of an interaction another instance started.
 *
 * What a host changes before running this for real:
 * - `authenticate`: the bearer-token check stands in for a real OAuth resource server, which
 *   verifies an access token and maps it to a workspace, principal, client, grant and grant
 *   generation, with a `credential()` returning that grant's Sess API key (or token). The MCP
 *   bearer token never goes to Sess.
 * - `sessOrigin`: the real Sess API (`https://api.sess.si`, the default); never
 *   `allowInsecureLocalhost`, which exists for the local test runtime only.
 * - `migrate()`: run once at deploy; it is idempotent and safe from several instances at once,
 *   but a host usually runs it from its migration step rather than from every start.
 * - The pool: size it for the instance's concurrency (each waiting `sess_response` does not hold
 *   a connection, but each store operation briefly does).
 *
 * It deliberately does not terminate TLS, balance load or log: a host's proxy and logging do.
 *
 * It imports the package by its name, as an application does. Run it with a TypeScript runner
 * (Bun, or tsx):
 *
 * ```sh
 * DATABASE_URL=postgres://… SESS_API_KEY=… SESS_WORKSPACE_ID=… MCP_BEARER_TOKEN=$(openssl rand -hex 32) \
 *   bun examples/postgres-http.ts      # instances on :8080 and :8081
 * ```
 */
import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '@sess.si/mcp/http';
import { createPostgresHandleStore, type PoolLike } from '@sess.si/mcp/store/postgres';
import pg from 'pg';

/** What one instance needs to run. */
export interface PostgresHttpInstanceOptions {
  /** The shared database, e.g. `postgres://user@db.internal:5432/app`. */
  connectionString: string;
  /** The Sess API key the example's one principal acts with (a real host: per grant). */
  sessApiKey: string;
  /** The bearer token an MCP client must present (at least 16 characters). */
  bearerToken: string;
  /** @default 'https://api.sess.si' */
  sessOrigin?: string;
  /** Testing only: a local `http://127.0.0.1` Sess runtime. */
  allowInsecureLocalhost?: boolean;
  /**
   * The Sess workspace the key belongs to (its id, as Sess names it: `sess-mcp local` prints its
   * runtime's). The handler checks the key against it.
   */
  workspaceId: string;
  /** The handle table's schema. @default 'public' */
  schema?: string;
  /** The handle table. @default 'sess_mcp_handles' */
  table?: string;
  /** Run the store's `migrate()` before listening. @default true */
  migrate?: boolean;
  /** Connections of this instance's pool. @default 10 */
  poolSize?: number;
  /** The handler's per-principal quota of open interactions. @default 25 (the handler's) */
  maxOpenPerPrincipal?: number;
  /** @default 0 (any free port) */
  port?: number;
  /** @default '127.0.0.1' */
  hostname?: string;
}

/** One running instance. */
export interface RunningInstance {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`. */
  url: string;
  /** Stop listening, end the handler's work and this instance's pool. */
  close(): Promise<void>;
}

/** Options of {@link startPostgresHttpExample}: one instance's options, and a port for each. */
export interface PostgresHttpExampleOptions extends Omit<PostgresHttpInstanceOptions, 'port' | 'migrate'> {
  /** @default [0, 0] (any free ports) */
  ports?: [number, number];
}

/** The two running instances. */
export interface RunningPair {
  /** The MCP endpoints of the two instances. */
  urls: [string, string];
  close(): Promise<void>;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Start one instance: its own `pg` pool, its own PostgreSQL store on the shared table, and the
 * handler mounted at `/mcp` of a `node:http` server. Another process can start another instance
 * on the same database; each sees the other's handles.
 */
export async function startPostgresHttpInstance(
  options: PostgresHttpInstanceOptions,
): Promise<RunningInstance> {
  if (options.bearerToken.length < 16) throw new TypeError('bearerToken must be at least 16 characters');
  const hostname = options.hostname ?? '127.0.0.1';
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    query_timeout: 20_000,
  });
  // An idle connection dropping must not crash the instance; the next query reports it.
  pool.on('error', () => {});
  const stores = createPostgresHandleStore({
    pool: pool as unknown as PoolLike,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.table === undefined ? {} : { table: options.table }),
  });
  try {
    if (options.migrate !== false) await stores.migrate();
  } catch (error) {
    await pool.end();
    throw error;
  }
  // A real host: look the token up with its OAuth server and return that grant's principal.
  const principal: SessHttpPrincipal = {
    workspaceId: options.workspaceId,
    principalId: 'owner',
    clientId: 'example-client',
    grantId: 'example-grant',
    grantGeneration: '1',
    scopes: ['sess'],
    credential: () => options.sessApiKey,
  };
  const handler = createSessMcpHttpHandler({
    authenticate(request) {
      const header = request.headers.get('authorization') ?? '';
      const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
      return sameSecret(token, options.bearerToken) ? principal : undefined;
    },
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: [hostname, 'localhost'],
    requiredScopes: ['sess'],
    ...(options.sessOrigin === undefined ? {} : { sessOrigin: options.sessOrigin }),
    ...(options.allowInsecureLocalhost === true ? { allowInsecureLocalhost: true } : {}),
    ...(options.maxOpenPerPrincipal === undefined
      ? {}
      : { maxOpenPerPrincipal: options.maxOpenPerPrincipal }),
  });
  const server = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === '/mcp') return handler.node(req, res);
    res.writeHead(404).end();
  });
  server.listen(options.port ?? 0, hostname);
  try {
    await once(server, 'listening');
  } catch (error) {
    await handler.close();
    await pool.end();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostname}:${port}/mcp`,
    close() {
      closing ??= (async () => {
        await handler.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await stores.close();
        await pool.end();
      })();
      return closing;
    },
  };
}

/**
 * Start two instances in this process on two ports, sharing one database: the first migrates
 * the table once, then both serve. (Two processes or machines each call
 * {@link startPostgresHttpInstance} instead.)
 */
export async function startPostgresHttpExample(options: PostgresHttpExampleOptions): Promise<RunningPair> {
  const { ports = [0, 0], ...shared } = options;
  const first = await startPostgresHttpInstance({ ...shared, port: ports[0], migrate: true });
  let second: RunningInstance;
  try {
    second = await startPostgresHttpInstance({ ...shared, port: ports[1], migrate: false });
  } catch (error) {
    await first.close();
    throw error;
  }
  return {
    urls: [first.url, second.url],
    async close() {
      await Promise.all([first.close(), second.close()]);
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const connectionString = process.env.DATABASE_URL ?? '';
  const sessApiKey = process.env.SESS_API_KEY ?? '';
  const workspaceId = process.env.SESS_WORKSPACE_ID ?? '';
  const bearerToken = process.env.MCP_BEARER_TOKEN ?? '';
  if (connectionString === '' || sessApiKey === '' || workspaceId === '' || bearerToken === '') {
    process.stderr.write(
      'Set DATABASE_URL, SESS_API_KEY, SESS_WORKSPACE_ID (the workspace of that key) and MCP_BEARER_TOKEN.\n',
    );
    process.exit(1);
  }
  const running = await startPostgresHttpExample({
    connectionString,
    sessApiKey,
    workspaceId,
    bearerToken,
    ports: [Number(process.env.PORT_A ?? 8080), Number(process.env.PORT_B ?? 8081)],
    ...(process.env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: process.env.SESS_API_ORIGIN }),
  });
  process.stderr.write(`MCP endpoints: ${running.urls.join(' and ')}\n`);
  process.once('SIGINT', () => void running.close().then(() => process.exit(0)));
}
