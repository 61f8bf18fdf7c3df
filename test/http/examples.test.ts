/**
 * The three examples, run against the local Sess runtime with real clients: `node-http.ts` over a
 * real `node:http` server, `fetch-edge.ts` through its `export default { fetch }` with `Request`
 * objects only (the v2 client's `fetch` is the module's), `existing-server.ts` next to its other
 * routes.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startExistingServer } from '../../examples/existing-server.js';
import edge, { type EdgeEnv } from '../../examples/fetch-edge.js';
import { startNodeHttpExample } from '../../examples/node-http.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import { approveAnswer, approveSurface, ok, type ToolCaller } from './harness.js';
import { connectLegacy, connectModern } from './helpers.js';

const audits = useSecretsAudit();
const open = useCleanup();

async function runtime(): Promise<LocalSess> {
  const sess = await startLocalSess();
  open.push(sess);
  audits.current.secret(sess.apiKey, 'sess api key');
  return sess;
}

/** request → the person answers → sess_response answered → complete. */
async function roundTrip(client: ToolCaller, sess: LocalSess): Promise<void> {
  const created = await ok(client, 'sess_request', { interaction: approveSurface });
  audits.current.url(created.humanUrl!, 'sess link');
  await sess.submitAnswer(created.humanUrl!, approveAnswer);
  const answered = await ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
  expect(answered.state).toBe('answered');
  const completed = await ok(client, 'sess_complete', {
    handle: created.handle,
    expected_revision: 1,
    response_event_id: answered.response!.eventId,
  });
  expect(completed.state).toBe('completed');
  expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed']);
}

describe('examples', () => {
  it('node-http.ts: handler.node in node:http, a 2025 client and a 2026 client', async () => {
    const sess = await runtime();
    const bearerToken = 'example-bearer-token-0123456789';
    audits.current.secret(bearerToken, 'mcp bearer token');
    const running = await startNodeHttpExample({
      sessApiKey: sess.apiKey,
      bearerToken,
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
      workspaceId: sess.workspaceId,
    });
    open.push(running);
    const legacy = await connectLegacy(running.url, { authorization: `Bearer ${bearerToken}` });
    await roundTrip(legacy, sess);
    await legacy.close();
    const modern = await connectModern(running.url, { authorization: `Bearer ${bearerToken}` });
    expect((await modern.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'sess_ask',
      'sess_complete',
      'sess_list',
      'sess_publish',
      'sess_request',
      'sess_response',
      'sess_withdraw',
    ]);
    await modern.close();
    const refused = await fetch(running.url, { method: 'POST', headers: { authorization: 'Bearer wrong' } });
    expect(refused.status).toBe(401);
  });

  it('fetch-edge.ts: the default export serves the whole flow through Request/Response only', async () => {
    const sess = await runtime();
    const env: EdgeEnv = {
      SESS_API_KEY: sess.apiKey,
      SESS_WORKSPACE_ID: sess.workspaceId,
      MCP_BEARER_TOKEN: 'edge-bearer-token-0123456789',
      MCP_ALLOWED_HOST: 'mcp.example.test',
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
    };
    audits.current.secret(env.MCP_BEARER_TOKEN, 'mcp bearer token');
    let served = 0;
    const client = new ClientV2(
      { name: 'edge-test', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new TransportV2(new URL('https://mcp.example.test/mcp'), {
        requestInit: { headers: { authorization: `Bearer ${env.MCP_BEARER_TOKEN}` } },
        // No socket anywhere: every request is a `Request` handed to the module's fetch.
        fetch: async (input, init) => {
          served += 1;
          return edge.fetch(new Request(input, init), env);
        },
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await roundTrip(client, sess);
    await client.close();
    expect(served).toBeGreaterThan(3);
    const wrongHost = await edge.fetch(new Request('https://evil.example/mcp', { method: 'POST' }), env);
    expect(wrongHost.status).toBe(403);
    const otherPath = await edge.fetch(new Request('https://mcp.example.test/'), env);
    expect(otherPath.status).toBe(404);
  });

  it('existing-server.ts: the MCP endpoint next to other routes, its 401 pointing at the metadata', async () => {
    const sess = await runtime();
    const token = 'existing-server-token-0123456789';
    audits.current.secret(token, 'mcp bearer token');
    const running = await startExistingServer({
      tokens: new Map([
        [
          token,
          {
            workspaceId: sess.workspaceId,
            principalId: 'alice',
            clientId: 'c1',
            grantId: 'g1',
            grantGeneration: '1',
            scopes: ['sess'],
            credential: () => sess.apiKey,
          },
        ],
      ]),
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
    });
    open.push(running);
    expect(await (await fetch(`${running.origin}/healthz`)).text()).toBe('ok');
    const unauthenticated = await fetch(`${running.origin}/mcp`, { method: 'POST' });
    expect(unauthenticated.status).toBe(401);
    const challenge = unauthenticated.headers.get('www-authenticate') ?? '';
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBeDefined();
    const metadata = await fetch(`${running.origin}${new URL(metadataUrl!).pathname}`);
    expect(await metadata.json()).toMatchObject({
      resource: `${running.origin}/mcp`,
      scopes_supported: ['sess'],
    });
    const client = await connectLegacy(`${running.origin}/mcp`, { authorization: `Bearer ${token}` });
    await roundTrip(client, sess);
    await client.close();
    expect((await fetch(`${running.origin}/nope`)).status).toBe(404);
  });
});
