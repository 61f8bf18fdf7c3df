/**
 * The lifecycle over HTTP: the v2 client (`@modelcontextprotocol/client`, version negotiation
 * `auto`) against `createSessMcpHttpHandler` on a `node:http` server bound to 127.0.0.1, with the
 * durable file store under a fresh state directory, against the local Sess runtime. A restart
 * closes the handler, the server and the client, and builds a new store, handler, server and
 * client on the same state directory. The person answers and sees the withdrawal in Chromium. The
 * scenario is `lifecycle.ts`'s.
 *
 * The cap is read beside the server through the file store's own `countUnfinished()` for the
 * binding the handler asked its store for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { expect, it } from 'vitest';
import type { DiagnosticEvent, HttpBinding } from '../../src/core/contract/ports.js';
import { createSessMcpHttpHandler, type SessMcpHttpHandler } from '../../src/http/index.js';
import { createFileHandleStore, openProfileRecords } from '../../src/store/file/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { runtimePrincipal } from '../http/harness.js';
import { connectModern, listen, type TestServer } from '../http/helpers.js';
import { describeWithChromium } from '../page/browser-harness.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import type { ToolResultLike } from '../support/outcome.js';
import { type LifecycleFace, runLifecycle } from './lifecycle.js';
import { usePerson } from './person.js';

const BEARER = 'mcp-bearer-token-lifecycle-0001';
// The handler's store profile; HTTP records carry their own binding, the profile only names the directory.
const PROFILE = 'http';

/** One server generation: its store, handler, listener and connected client. */
interface Generation {
  handler: SessMcpHttpHandler;
  server: TestServer;
  client: Client;
}

describeWithChromium('the lifecycle over HTTP (v2 client, node:http on 127.0.0.1, file store)', () => {
  const audits = useSecretsAudit();
  const person = usePerson();
  const cleanups = useCleanup();

  /** A new store, handler, server and client on `stateDir`; `bindings` collects what it stored under. */
  async function startGeneration(
    sess: LocalSess,
    stateDir: string,
    bindings: HttpBinding[],
    events: DiagnosticEvent[],
  ): Promise<Generation> {
    const stores = createFileHandleStore({ stateDir, profile: PROFILE });
    const principal = runtimePrincipal(sess);
    const handler = createSessMcpHttpHandler({
      authenticate: (request) =>
        request.headers.get('authorization') === `Bearer ${BEARER}` ? principal : undefined,
      handleStore(binding) {
        bindings.push(binding);
        return stores.forBinding(binding);
      },
      allowedHosts: ['127.0.0.1'],
      requiredScopes: ['sess'],
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
      requestDeadlineMs: 10_000,
      diagnostics: (event) => events.push(event),
    });
    const server = await listen((req, res) => handler.node(req, res));
    const client = await connectModern(server.url, { authorization: `Bearer ${BEARER}` });
    return { handler, server, client };
  }

  async function stop(generation: Generation): Promise<void> {
    await generation.client.close();
    await generation.handler.close();
    await generation.server.close();
  }

  it('lists both after a restart, returns the answer given after it, and withdraws the other', async () => {
    const audit = audits.current;
    const sess = await startLocalSess();
    cleanups.push(() => sess.close());
    audit.secret(sess.apiKey, 'sess api key');
    audit.secret(BEARER, 'mcp bearer token');
    const stateDir = await mkdtemp(join(tmpdir(), 'sess-mcp-e2e-http-'));
    cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const bindings: HttpBinding[] = [];
    const events: DiagnosticEvent[] = [];
    audit.watch(events, 'http diagnostics');

    let current = await startGeneration(sess, stateDir, bindings, events);
    cleanups.push(() => stop(current));
    const records = openProfileRecords({ stateDir, profile: PROFILE });

    const face: LifecycleFace = {
      name: 'http',
      sess,
      audit,
      call: async (tool, args) =>
        (await current.client.callTool({ name: tool, arguments: args })) as ToolResultLike,
      async restart() {
        const oldPort = current.server.port;
        await stop(current);
        // Nothing is listening on the old port: the next calls reach the new server only.
        await expect(fetch(`http://127.0.0.1:${oldPort}/mcp`)).rejects.toThrow();
        current = await startGeneration(sess, stateDir, bindings, events);
      },
      async unfinished() {
        // Every call of the test came with the one principal: one binding.
        expect(new Set(bindings.map((b) => JSON.stringify(b))).size).toBe(1);
        return createFileHandleStore({ stateDir, profile: PROFILE })
          .forBinding(bindings[0]!)
          .countUnfinished();
      },
      record: (handle) => records.read(handle),
    };
    await runLifecycle(face, person);
  }, 120_000);
});
