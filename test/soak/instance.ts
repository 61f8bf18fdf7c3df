/**
 * One soak instance, run as its own OS process: the HTTP handler on a PostgreSQL store, built as
 * `examples/postgres-http.ts` builds an instance (its own `pg` pool, `createPostgresHandleStore`,
 * the handler at `/mcp` of a `node:http` server), plus what a production instance behind a load
 * balancer adds: the `health` option (`GET /healthz` for the balancer's check), a principal per
 * bearer token, and a long-lived `createSessMcpWatcher` sharing the handler's wait gate, which
 * delivers every event to the soak's webhook receiver.
 *
 * Its settings come as JSON in `SOAK_INSTANCE` (never in argv: they hold the bearer tokens, the
 * Sess keys and the webhook secret). It answers every request with `x-soak-pid` (its process id),
 * so the load generator knows which process served a call. It prints `ready` once it listens and
 * logs nothing else: no token, key, link or answer ever reaches its output.
 */
import http from 'node:http';
import pg from 'pg';
import {
  createSessMcpHttpHandler,
  createSessMcpWatcher,
  type SessHttpPrincipal,
} from '../../src/http/index.js';
import { createWaitGate, type HttpBinding } from '../../src/index.js';
import { createPostgresHandleStore, type PoolLike } from '../../src/store/postgres/index.js';

/** The settings of one instance. */
export interface SoakInstanceSettings {
  /** The instance's name (`a`, `b`, `c`): its pool's `application_name` is `sess-soak-<name>`. */
  name: string;
  port: number;
  databaseUrl: string;
  sessOrigin: string;
  /** Run `migrate()` before listening (one instance, once). */
  migrate: boolean;
  /** The Sess API key of each workspace. */
  keys: Record<string, string>;
  /** Bearer token → the principal's workspace and id. */
  principals: Record<string, { workspaceId: string; principalId: string }>;
  webhook: { url: string; secret: string };
}

const settings = JSON.parse(process.env.SOAK_INSTANCE ?? '{}') as SoakInstanceSettings;
const keyOf = (workspaceId: string) => settings.keys[workspaceId];

const pool = new pg.Pool({
  connectionString: settings.databaseUrl,
  application_name: `sess-soak-${settings.name}`,
  max: 8,
  connectionTimeoutMillis: 5_000,
  query_timeout: 10_000,
});
// A connection the database ended (a restart, pg_terminate_backend) must not end the process:
// the next query that needs it reports it, and the pool connects again.
pool.on('error', () => {});
const stores = createPostgresHandleStore({ pool: pool as unknown as PoolLike });
if (settings.migrate) await stores.migrate();

const principals = new Map<string, SessHttpPrincipal>();
for (const [token, { workspaceId, principalId }] of Object.entries(settings.principals)) {
  principals.set(token, {
    workspaceId,
    principalId,
    clientId: 'soak-agent',
    grantId: `grant-${principalId}`,
    grantGeneration: 'g1',
    scopes: ['sess'],
    credential: () => keyOf(workspaceId) ?? '',
  });
}
const known = new Set([...principals.values()].map((p) => `${p.workspaceId}/${p.principalId}`));

const waitGate = createWaitGate();
const handler = createSessMcpHttpHandler({
  authenticate(request) {
    const header = request.headers.get('authorization') ?? '';
    return principals.get(header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '');
  },
  handleStore: (binding) => stores.forBinding(binding),
  allowedHosts: ['127.0.0.1', 'localhost'],
  requiredScopes: ['sess'],
  sessOrigin: settings.sessOrigin,
  allowInsecureLocalhost: true,
  maxOpenPerPrincipal: 500,
  waitGate,
  health: { store: stores },
});
const watcher = createSessMcpWatcher({
  handleStores: stores,
  credentialFor: (binding: HttpBinding) =>
    known.has(`${binding.workspaceId}/${binding.principalId}`) ? keyOf(binding.workspaceId) : undefined,
  sessOrigin: settings.sessOrigin,
  allowInsecureLocalhost: true,
  waitGate,
  callsPerMinutePerCredential: 6_000,
  webhook: { url: settings.webhook.url, secrets: [settings.webhook.secret], allowPrivate: true },
});

// `/mcp`, and `/healthz` with `/livez` (the health option's paths): all the handler's.
const server = http.createServer((req, res) => {
  res.setHeader('x-soak-pid', String(process.pid));
  return handler.node(req, res);
});
server.keepAliveTimeout = 30_000;
server.listen(settings.port, '127.0.0.1', () => {
  watcher.start();
  process.stdout.write('ready\n');
});

async function shutDown(): Promise<void> {
  await watcher.stop();
  await handler.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await stores.close();
  await pool.end();
  process.exit(0);
}
process.once('SIGTERM', () => void shutDown());
