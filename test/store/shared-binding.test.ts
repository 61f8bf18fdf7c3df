/**
 * The HTTP handler's `binding` option through every store (memory, file, PostgreSQL), with the
 * local Sess runtime answering and the MCP v1 client calling:
 *
 * - `'principal'`: another client and grant of the same person (a fresh dynamic client
 *   registration) lists, reads and answers the handle; the grant it was made through at another
 *   generation (revoked, consented again) gets `BINDING_MISMATCH` and does not list it, while a
 *   handle of another grant still reaches that re-consented grant; another person gets
 *   `HANDLE_NOT_FOUND`; a record shared so is read back from the store with its `share`.
 * - `'grant'` (the default): the other client gets `HANDLE_NOT_FOUND` and lists nothing.
 * - The durable stores' codec keeps `share` on a record and refuses any other value, and a record
 *   of format 1 (which never had it) with it.
 *
 * Without `DATABASE_URL` the PostgreSQL part is skipped, except under `CI`, where it fails.
 */
import type { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandleStoreFactory, HttpBinding } from '../../src/core/contract/ports.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '../../src/http/index.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { decodeRecord, encodeRecord } from '../../src/store/record-codec.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, listedHandles, ok, responseCode } from '../http/harness.js';
import { connectLegacy, listen, type TestServer } from '../http/helpers.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { makeRecord } from './fixtures.js';

const url = process.env.DATABASE_URL;
const tempDir = useTempDirs('sess-mcp-shared-');
const tables: string[] = [];

/** The stores under test; PostgreSQL only with a database (and never skipped in CI). */
const STORES: Array<[string, () => Promise<HandleStoreFactory & { close?(): Promise<void> }>]> = [
  ['memory', async () => createMemoryHandleStore()],
  ['file', async () => createFileHandleStore({ stateDir: await tempDir(), profile: 'default' })],
];
if (url !== undefined && url !== '') {
  STORES.push([
    'postgres',
    async () => {
      const table = `h_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      tables.push(table);
      const store = createPostgresHandleStore({ connectionString: url, table });
      await store.migrate();
      return store;
    },
  ]);
} else if (process.env.CI) {
  it('has a database in CI', () => {
    throw new Error('CI must not skip the PostgreSQL part: DATABASE_URL is unset');
  });
} else {
  process.stderr.write('shared-binding: PostgreSQL part skipped (DATABASE_URL is unset)\n');
}

afterAll(async () => {
  if (tables.length === 0 || url === undefined) return;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  for (const table of tables)
    await admin.query(
      `DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys", "public"."${table}_events", "public"."${table}_deliveries"`,
    );
  await admin.end();
});

/**
 * Who calls, by bearer token: alice through her first registration (`a1`), a fresh registration
 * (`a2`), her first registration revoked and consented again (`a1r`), and bob (`bob`).
 */
function principals(sess: LocalSess): Map<string, SessHttpPrincipal> {
  const of = (principalId: string, clientId: string, grantId: string, grantGeneration: string) => ({
    workspaceId: sess.workspaceId,
    principalId,
    clientId,
    grantId,
    grantGeneration,
    scopes: ['sess'],
    credential: () => sess.apiKey,
  });
  return new Map([
    ['a1', of('alice', 'client_1', 'grant_1', 'g1')],
    ['a2', of('alice', 'client_2', 'grant_2', 'g7')],
    ['a1r', of('alice', 'client_1', 'grant_1', 'g2')],
    ['bob', of('bob', 'client_1', 'grant_bob', 'g1')],
  ]);
}

describe.each(STORES)('the binding option over the %s store', (_name, makeStores) => {
  let sess: LocalSess;
  let stores: HandleStoreFactory & { close?(): Promise<void> };
  const servers: Array<{ server: TestServer; close(): Promise<void> }> = [];
  const clients: ClientV1[] = [];

  beforeAll(async () => {
    sess = await startLocalSess();
    stores = await makeStores();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    for (const running of servers) await running.close();
    await stores?.close?.();
    await sess?.close();
  });

  /** A handler over the store with `binding`, and a v1 client per token. */
  async function serve(binding: 'grant' | 'principal' | undefined) {
    const tokens = principals(sess);
    const handler = createSessMcpHttpHandler({
      authenticate: (request) => tokens.get((request.headers.get('authorization') ?? '').slice(7)),
      handleStore: (bound) => stores.forBinding(bound),
      allowedHosts: ['127.0.0.1'],
      requiredScopes: ['sess'],
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
      ...(binding === undefined ? {} : { binding }),
    });
    const server = await listen((req, res) => handler.node(req, res));
    servers.push({
      server,
      async close() {
        await handler.close();
        await server.close();
      },
    });
    const client = async (token: string) => {
      const connected = await connectLegacy(server.url, { authorization: `Bearer ${token}` });
      clients.push(connected);
      return connected;
    };
    return {
      a1: await client('a1'),
      a2: await client('a2'),
      a1r: await client('a1r'),
      bob: await client('bob'),
    };
  }

  it("'principal': every client of the person reaches the handle; its own grant revoked and consented again, and another person, do not", async () => {
    const { a1, a2, a1r, bob } = await serve('principal');
    const open = await ok(a1, 'sess_request', { interaction: approveSurface });
    // The record is kept shared, and read back so from the store.
    const stored = await stores
      .forBinding({
        kind: 'http',
        origin: sess.origin,
        workspaceId: sess.workspaceId,
        principalId: 'alice',
        clientId: 'client_9',
        grantId: 'grant_9',
        grantGeneration: 'g9',
        share: 'principal',
      })
      .get(open.handle);
    expect(stored?.record.binding).toEqual({
      kind: 'http',
      origin: sess.origin,
      workspaceId: sess.workspaceId,
      principalId: 'alice',
      clientId: 'client_1',
      grantId: 'grant_1',
      grantGeneration: 'g1',
      share: 'principal',
    } satisfies HttpBinding);

    // A fresh registration lists it and reads the answer.
    expect(await listedHandles(a2)).toContain(open.handle);
    expect(await responseCode(a2, open.handle)).toBe('ok:waiting');
    await sess.submitAnswer(open.humanUrl!, approveAnswer);
    const answered = await ok(a2, 'sess_response', { handle: open.handle, revision: 1, wait_ms: 5_000 });
    expect(answered.state).toBe('answered');
    expect(answered.response).toMatchObject({ values: approveAnswer.values, verified: true });
    expect(await responseCode(a1, open.handle)).toBe('ok:answered');

    // Its own grant at another generation: BINDING_MISMATCH, and not listed.
    expect(await responseCode(a1r, open.handle)).toBe('BINDING_MISMATCH');
    expect(await listedHandles(a1r)).not.toContain(open.handle);
    // A handle of the other grant reaches the re-consented one (it is the same person).
    const other = await ok(a2, 'sess_request', { interaction: approveSurface });
    expect(await responseCode(a1r, other.handle)).toBe('ok:waiting');
    expect(await listedHandles(a1r)).toEqual([other.handle]);
    expect((await listedHandles(a1)).sort()).toEqual([open.handle, other.handle].sort());

    // Another person: neither exists.
    for (const handle of [open.handle, other.handle])
      expect(await responseCode(bob, handle)).toBe('HANDLE_NOT_FOUND');
    expect(await listedHandles(bob)).toEqual([]);
  });

  it("'grant' (the default): another client of the same person gets HANDLE_NOT_FOUND and lists nothing", async () => {
    const { a1, a2, a1r, bob } = await serve(undefined);
    const open = await ok(a1, 'sess_request', { interaction: approveSurface });
    expect(await listedHandles(a1)).toContain(open.handle);
    expect(await responseCode(a2, open.handle)).toBe('HANDLE_NOT_FOUND');
    expect(await listedHandles(a2)).toEqual([]);
    expect(await responseCode(a1r, open.handle)).toBe('BINDING_MISMATCH');
    expect(await responseCode(bob, open.handle)).toBe('HANDLE_NOT_FOUND');
    // A handle made under 'principal' is not in a grant's scope, nor the other way round.
    const { a2: shared } = await serve('principal');
    expect(await responseCode(shared, open.handle)).toBe('HANDLE_NOT_FOUND');
  });
});

describe('the record codec and share', () => {
  const binding: HttpBinding = {
    kind: 'http',
    origin: 'https://api.sess.si',
    workspaceId: 'ws_1',
    principalId: 'alice',
    clientId: 'client_1',
    grantId: 'grant_1',
    grantGeneration: 'g1',
    share: 'principal',
  };

  it('keeps share: principal through a write and a read', () => {
    const record = makeRecord(binding, 'waiting');
    const decoded = decodeRecord(JSON.parse(encodeRecord(record)), record.handle);
    expect(decoded).toEqual(record);
    expect((decoded.binding as HttpBinding).share).toBe('principal');
  });

  it('refuses another share, by path and never by value, and share on a format 1 record', () => {
    const bad = makeRecord({ ...binding, share: 'everyone' as 'principal' }, 'waiting');
    expect(() => encodeRecord(bad)).toThrow(/at binding/);
    // As 0.1.0 wrote a record: format 1, without what format 2 added.
    const asFormat1 = (record: InteractionRecord) => {
      const { title: _t, expiresAt: _e, events: _v, ...rest } = record;
      return { ...rest, format: 1 };
    };
    const old = asFormat1(makeRecord(binding, 'waiting'));
    expect(() => decodeRecord(old, old.handle)).toThrow(/at binding/);
    const { share: _dropped, ...plain } = binding;
    const oldPlain = asFormat1(makeRecord(plain, 'waiting'));
    expect(decodeRecord(oldPlain, oldPlain.handle).binding).toEqual(plain);
  });
});
