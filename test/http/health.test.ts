/**
 * The handler's health checks: readiness is the store alone (memory, file and PostgreSQL, within
 * 1 s, `not_migrated` and a stopped or hung database not ready), never Sess (still ready with Sess
 * stopped, and no request reaches Sess while probing); the details (the store check, the receipt
 * key set's state) only for a request `health.authorize` accepts, `ok` or `unavailable` for every
 * other; liveness touches nothing. The health paths answer a load balancer's probe, which has
 * neither an allowed Host nor a token, and every other path still goes through the preflight.
 * No body or diagnostic carries a secret.
 */
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiagnosticEvent, StoreReadiness } from '../../src/core/contract/ports.js';
import {
  createSessMcpHttpHandler,
  type SessMcpHealthOptions,
  type SessMcpHttpHandler,
  type SessMcpHttpHandlerOptions,
} from '../../src/http/index.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore, type PostgresHandleStore } from '../../src/store/postgres/index.js';
import { useSecretsAudit } from '../support/audit.js';
import { reportPostgresSkipped, usePostgresTables } from '../support/postgres-tables.js';
import { approveSurface } from '../support/surfaces.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../support/throwaway-postgres.js';
import { approveAnswer, call, readApproved, startHttpHarness } from './harness.js';
import { connectModern, listen, MINIMAL_HTTP_OPTIONS, type TestServer } from './helpers.js';

const audits = useSecretsAudit();
const tempDir = useTempDirs('sess-mcp-health-');
const pg = usePostgresTables('health');

/** The token the host's `authorize` accepts (a stand-in for the host's own check). */
const HEALTH_TOKEN = 'health-token-7f3a9c2e51';
const AUTHORISED = { 'x-health-token': HEALTH_TOKEN };
const authorize: NonNullable<SessMcpHealthOptions['authorize']> = (request) =>
  request.headers.get('x-health-token') === HEALTH_TOKEN;

/** A database password that must never show. */
const DB_PASSWORD = 'db-password-93b1e07c';

/**
 * A cluster of this file's own, to stop: started before the first test (initdb takes a while) and
 * awaited by the last describe, so the other cases run meanwhile.
 */
let cluster: Promise<ThrowawayPostgres> | undefined;
beforeAll(() => {
  if (pg === undefined) return;
  cluster = startThrowawayPostgres();
  cluster.catch(() => {});
});
afterAll(async () => {
  await (await cluster?.catch(() => undefined))?.stop();
});

/** Stores, handlers and servers to close after the suite. */
const closing: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const open of closing.splice(0).reverse()) await open.close();
});

/** A handler whose readiness is `store`'s, on an allowlist the probes below never match. */
function healthHandler(
  store: SessMcpHealthOptions['store'] | undefined,
  health: Partial<SessMcpHealthOptions> = {},
  extra: Partial<SessMcpHttpHandlerOptions> = {},
): SessMcpHttpHandler {
  const events: DiagnosticEvent[] = [];
  audits.current.watch(events, 'diagnostics');
  const handler = createSessMcpHttpHandler({
    ...MINIMAL_HTTP_OPTIONS,
    allowedHosts: ['mcp.example.com'],
    diagnostics: (event) => events.push(event),
    ...(store === undefined ? {} : { health: { store, authorize, ...health } }),
    ...extra,
  });
  closing.push(handler);
  return handler;
}

/** What a probe got. */
interface Probed {
  status: number;
  body: unknown;
  ms: number;
  headers: Headers;
}

/** Read `response` and give every body to the secrets audit. */
async function probed(response: Response, started: number, what: string): Promise<Probed> {
  const text = await response.text();
  audits.current.text(text, what);
  return {
    status: response.status,
    body: text === '' ? undefined : JSON.parse(text),
    ms: performance.now() - started,
    headers: response.headers,
  };
}

/** A probe as a load balancer sends it: to the instance's address, no Authorization header. */
async function probe(
  handler: SessMcpHttpHandler,
  path = '/healthz',
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Probed> {
  const started = performance.now();
  return probed(await handler.fetch(new Request(`http://10.0.0.7:8080${path}`, init)), started, path);
}

/** The details a probe with the health token gets. */
async function details(handler: SessMcpHttpHandler): Promise<Probed> {
  return probe(handler, '/healthz', { headers: AUTHORISED });
}

/** A TCP server that accepts and never answers: a hung database. */
async function hungServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('readiness over each store', () => {
  it.each([
    ['memory', async () => createMemoryHandleStore()],
    ['file', async () => createFileHandleStore({ stateDir: await tempDir() })],
  ])('the %s store: 200 ok to anyone, the details to an authorised caller', async (_name, make) => {
    const handler = healthHandler(await make());
    expect(await probe(handler)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const authorised = await details(handler);
    expect(authorised.status).toBe(200);
    expect(authorised.body).toEqual({
      status: 'ok',
      store: { kind: 'ready', ms: expect.any(Number) },
      // Nothing was verified yet: the key set loads on the first receipt, never for a probe.
      keySet: { state: 'not_loaded' },
    });
    expect(authorised.headers.get('cache-control')).toBe('no-store');
  });

  it('a file store whose state directory others may write: 503, unsafe_path in the details', async () => {
    const stateDir = await tempDir();
    const { chmod } = await import('node:fs/promises');
    await chmod(stateDir, 0o777);
    const handler = healthHandler(createFileHandleStore({ stateDir }));
    expect(await probe(handler)).toMatchObject({ status: 503, body: { status: 'unavailable' } });
    expect((await details(handler)).body).toMatchObject({
      status: 'unavailable',
      store: { kind: 'not_ready', reason: 'unsafe_path' },
    });
    // The reason word only: no path.
    expect(JSON.stringify((await details(handler)).body)).not.toContain(stateDir);
  });
});

if (pg === undefined) reportPostgresSkipped('the health checks over PostgreSQL');
else {
  describe('readiness over PostgreSQL', () => {
    it('a migrated table: 200', async () => {
      const handler = healthHandler(await pg.open());
      expect(await probe(handler)).toMatchObject({ status: 200, body: { status: 'ok' } });
    });

    it('a table migrate() has not brought to this version: 503, not_migrated in the details', async () => {
      const store = createPostgresHandleStore({ connectionString: pg.url, table: pg.table() });
      closing.push(store);
      const handler = healthHandler(store);
      expect(await probe(handler)).toMatchObject({ status: 503, body: { status: 'unavailable' } });
      expect((await details(handler)).body).toMatchObject({
        store: { kind: 'not_ready', reason: 'not_migrated' },
      });
      await store.migrate();
      expect((await probe(handler)).status).toBe(200);
    });

    it('a database that accepts and never answers, and a host store that never answers: 503 within the bound', async () => {
      const hung = await hungServer();
      audits.current.secret(DB_PASSWORD, 'database password');
      const store = createPostgresHandleStore({
        connectionString: `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${hung.port}/none`,
      });
      closing.push(store);
      try {
        const hungStore = healthHandler(store);
        const silentHost = healthHandler({ ready: () => new Promise<StoreReadiness>(() => {}) });
        const [fromPg, fromHost, plain] = await Promise.all([
          details(hungStore),
          details(silentHost),
          probe(silentHost),
        ]);
        for (const answer of [fromPg, fromHost]) {
          expect(answer.status).toBe(503);
          expect(answer.body).toMatchObject({ store: { kind: 'not_ready', reason: 'timeout' } });
          expect(answer.ms).toBeGreaterThanOrEqual(900);
          expect(answer.ms).toBeLessThan(1_500);
        }
        // Unauthorised: ok or not, nothing else; liveness touches no store.
        expect(plain.body).toEqual({ status: 'unavailable' });
        const live = await probe(hungStore, '/livez');
        expect([live.status, live.ms < 200]).toEqual([200, true]);
      } finally {
        // The store's pending connection fails now, so closing it does not wait on it.
        await hung.close();
      }
    });
  });
}

describe('readiness never calls Sess', () => {
  it('reports the key set to an authorised caller, sends nothing to Sess, and stays ready with Sess stopped', async () => {
    const h = await startHttpHarness({
      health: { store: createMemoryHandleStore(), authorize },
    });
    closing.push(h);
    const audit = audits.current;
    audit.secret(h.sess.apiKey, 'sess api key');
    audit.secret('bearer-token-health-1', 'mcp bearer token');
    audit.watch(h.events, 'diagnostics');
    h.principal('bearer-token-health-1');
    // One verified answer loads the handler's key set.
    const client = await connectModern(h.server.url, { authorization: 'Bearer bearer-token-health-1' });
    const created = await call(client, 'sess_request', { interaction: approveSurface });
    if (!created.ok) throw new Error(created.error.message);
    audit.url(created.interaction.humanUrl!, 'sess link');
    audit.answer(approveAnswer.values, 'answer');
    await h.sess.submitAnswer(created.interaction.humanUrl!, approveAnswer);
    await readApproved(client, created.interaction.handle);
    await client.close();

    const sent = () => Object.values(h.sess.stats.requests).reduce((sum, n) => sum + n, 0);
    const before = sent();
    const loaded = await details(h.handler);
    expect(loaded.status).toBe(200);
    expect(loaded.body).toMatchObject({
      status: 'ok',
      keySet: { state: 'loaded', ageSeconds: 0, keys: expect.any(Number) },
    });
    expect(await probe(h.handler)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(sent()).toBe(before);

    await h.sess.close();
    const withoutSess = await details(h.handler);
    expect(withoutSess.status).toBe(200);
    expect(withoutSess.body).toMatchObject({ status: 'ok', keySet: { state: 'loaded' } });
    expect(JSON.stringify(withoutSess.body)).not.toContain(h.sess.origin);
    expect(await probe(h.handler)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});

describe('the health paths', () => {
  let server: TestServer;
  let handler: SessMcpHttpHandler;
  beforeAll(async () => {
    handler = healthHandler(createMemoryHandleStore());
    server = await listen((req, res) => handler.node(req, res));
    closing.push(server);
  });

  it('answer on node:http without an allowed Host or a token; every other path still meets the preflight', async () => {
    const base = `http://127.0.0.1:${server.port}`;
    const ready = await fetch(`${base}/healthz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ok' }]);
    const live = await fetch(`${base}/livez?probe=1`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
    const post = await fetch(`${base}/healthz`, { method: 'POST', body: '{}' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    await post.body?.cancel();
    // The MCP endpoint: its Host check refuses 127.0.0.1.
    const mcp = await fetch(`${base}/mcp`, { method: 'POST', body: '{}' });
    expect(mcp.status).toBe(403);
    await mcp.body?.cancel();
  });

  it('as functions: ready and live answer the same', async () => {
    const started = performance.now();
    const ready = await probed(await handler.ready(new Request('http://x/any')), started, 'ready');
    expect([ready.status, ready.body]).toEqual([200, { status: 'ok' }]);
    const authorised = await handler.ready(new Request('http://x/any', { headers: AUTHORISED }));
    expect(await authorised.json()).toMatchObject({ store: { kind: 'ready' } });
    const live = handler.live(new Request('http://x/any'));
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
  });

  it('paths of the host’s choice, or none; without the option no path is answered and ready is 503', async () => {
    const own = healthHandler(createMemoryHandleStore(), { path: '/ready', livePath: false });
    expect((await probe(own, '/ready')).status).toBe(200);
    // Not health paths now: the pipeline's Host check refuses them.
    expect((await probe(own, '/livez')).status).toBe(403);
    expect((await probe(own, '/healthz')).status).toBe(403);
    const none = healthHandler(undefined);
    expect((await probe(none, '/healthz')).status).toBe(403);
    const started = performance.now();
    const notConfigured = await probed(await none.ready(new Request('http://x/')), started, 'ready');
    expect([notConfigured.status, notConfigured.body]).toEqual([503, { status: 'unavailable' }]);
  });

  it('a closed handler is not ready (a draining instance leaves the balancer) and still live', async () => {
    const closed = healthHandler(createMemoryHandleStore());
    await closed.close();
    expect(await probe(closed)).toMatchObject({ status: 503, body: { status: 'unavailable' } });
    expect((await details(closed)).body).toMatchObject({
      store: { kind: 'not_checked', reason: 'handler_closed' },
    });
    expect((await probe(closed, '/livez')).status).toBe(200);
  });

  it('a host store that throws or answers nonsense is not ready; an authorize that throws shows nothing', async () => {
    const throwing = healthHandler({
      ready: async () => {
        throw new Error(`postgres://postgres:${DB_PASSWORD}@db.internal/x is down`);
      },
    });
    audits.current.secret(DB_PASSWORD, 'database password');
    expect((await details(throwing)).body).toMatchObject({
      store: { kind: 'not_ready', reason: 'store_failure' },
    });
    const nonsense = healthHandler({ ready: async () => ({ kind: 'great' }) as unknown as StoreReadiness });
    expect((await details(nonsense)).status).toBe(503);
    // A reason word the port does not have is not repeated.
    const madeUp = healthHandler({
      ready: async () => ({ kind: 'not_ready', reason: 'pw_hunter2' }) as unknown as StoreReadiness,
    });
    expect((await details(madeUp)).body).toMatchObject({
      store: { kind: 'not_ready', reason: 'store_failure' },
    });
    const refusing = healthHandler(createMemoryHandleStore(), {
      authorize: () => {
        throw new Error('no');
      },
    });
    expect((await details(refusing)).body).toEqual({ status: 'ok' });
  });
});

// Last: by now the cluster started at the top has had its time.
if (pg !== undefined) {
  describe('readiness over a PostgreSQL that stops', () => {
    it('a database that stopped: 503 within the bound, liveness still 200', async () => {
      const { url, stop } = await cluster!;
      const store: PostgresHandleStore = createPostgresHandleStore({ connectionString: url });
      closing.push(store);
      await store.migrate();
      const handler = healthHandler(store);
      expect((await probe(handler)).status).toBe(200);
      await stop();
      const down = await details(handler);
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ store: { kind: 'not_ready', reason: 'db_transient' } });
      expect(down.ms).toBeLessThan(1_500);
      expect(await probe(handler, '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
    });
  });
}
