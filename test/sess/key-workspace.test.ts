/**
 * `credentialWorkspaceId`: a client told the workspace its key must belong to learns the key's
 * workspace before its first create (one read of a Session that does not exist, answered `404`
 * with `Sess-Workspace-Id`) and refuses a key of another workspace as `configuration` before
 * anything is created there; every later answer is checked too. Against the local runtime, with
 * a test double server only for what the runtime never does (a `201` naming another workspace
 * than the `404` before it).
 */
import { describe, expect, it } from 'vitest';
import type { SessApi } from '../../src/core/contract/ports.js';
import { createSessClient, createSessClientFactory } from '../../src/sess/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { useLocalSess } from '../support/local-sess.js';
import { expectSessError, idemKey, startDoubleServer, surface } from './helpers.js';

const runtime = useLocalSess({ each: true });

function clientOf(sess: LocalSess, apiKey: string, credentialWorkspaceId: string): SessApi {
  return createSessClient({
    origin: sess.origin,
    credential: () => apiKey,
    allowInsecureLocalhost: true,
    credentialWorkspaceId,
  });
}

const create = (client: SessApi) => client.createSession({ surface: surface(), idempotencyKey: idemKey() });

describe('credentialWorkspaceId', () => {
  it('a key of that workspace creates as before, after one read that names its workspace', async () => {
    const sess = runtime();
    const client = clientOf(sess, sess.apiKey, sess.workspaceId);
    const created = await create(client);
    expect(created.workspaceId).toBe(sess.workspaceId);
    expect(sess.stats.requests.get).toBe(1);
    // Known from then on: the next create reads nothing first.
    await create(client);
    expect(sess.stats.requests.get).toBe(1);
    expect(sess.stats.of().sessionsCreated).toBe(2);
  });

  it('a key of another workspace creates nothing, refused as configuration naming both workspaces', async () => {
    const sess = runtime();
    const other = await sess.createWorkspace();
    const client = clientOf(sess, other.apiKey, sess.workspaceId);
    const error = await expectSessError(create(client), 'configuration');
    expect(error.message).toBe(
      `The Sess API key belongs to workspace ${other.workspaceId}, not to ${sess.workspaceId}, the workspace this caller is configured for (principal.workspaceId over HTTP); nothing was changed.`,
    );
    await expectSessError(
      client.createAsk({ surface: surface(), idempotencyKey: idemKey(), respondents: { max: 2 } }),
      'configuration',
    );
    expect(sess.stats.of(other.workspaceId).sessionsCreated).toBe(0);
    expect(sess.stats.of(other.workspaceId).asksCreated).toBe(0);
    expect(sess.stats.of().sessionsCreated).toBe(0);
  });

  it('a read answered for another workspace is refused as configuration too', async () => {
    const sess = runtime();
    const other = await sess.createWorkspace();
    const theirs = await create(
      createSessClient({ origin: sess.origin, credential: () => other.apiKey, allowInsecureLocalhost: true }),
    );
    const client = clientOf(sess, other.apiKey, sess.workspaceId);
    await expectSessError(client.getSession(theirs.sessionId), 'configuration');
  });

  it('a refused key is the 401 it is; a read that fails sends no create (not_sent)', async () => {
    const sess = runtime();
    const revoked = await sess.createApiKey();
    await sess.revokeApiKey(revoked);
    await expectSessError(create(clientOf(sess, revoked, sess.workspaceId)), 'api', { status: 401 });
    sess.faults.drop('get');
    await expectSessError(create(clientOf(sess, sess.apiKey, sess.workspaceId)), 'not_sent', {
      notSentKind: 'transport',
    });
    expect(sess.stats.of().sessionsCreated).toBe(0);
  });

  it('a Sess that names no workspace cannot be checked: the create goes ahead', async () => {
    const headerless = await startLocalSess({ workspaceHeader: false });
    try {
      const created = await create(clientOf(headerless, headerless.apiKey, 'ws_not_checked'));
      expect(created.sessionId).toMatch(/./);
    } finally {
      await headerless.close();
    }
  });

  it("createSessClientFactory: each client's own credentialWorkspaceId, and none for the factory", async () => {
    const sess = runtime();
    const other = await sess.createWorkspace();
    const clientFor = createSessClientFactory({ origin: sess.origin, allowInsecureLocalhost: true });
    await create(clientFor(() => sess.apiKey, { credentialWorkspaceId: sess.workspaceId }));
    await expectSessError(
      create(clientFor(() => other.apiKey, { credentialWorkspaceId: sess.workspaceId })),
      'configuration',
    );
    expect(() =>
      createSessClientFactory({
        origin: sess.origin,
        credentialWorkspaceId: sess.workspaceId,
      } as unknown as Parameters<typeof createSessClientFactory>[0]),
    ).toThrow(/createSessClientFactory: option "credentialWorkspaceId" is not an option/);
  });
});

describe('a create Sess carried out in another workspace (a test double server)', () => {
  it('is protocol, never configuration: a Session may exist there', async () => {
    // The double names ws_a on the read and ws_b on the create's 201: a Sess out of step with itself.
    let calls = 0;
    const double = await startDoubleServer((_req, res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(404, { 'content-type': 'application/json', 'sess-workspace-id': 'ws_a' });
        res.end(JSON.stringify({ error: { code: 'not_found', message: 'no such Session' } }));
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json', 'sess-workspace-id': 'ws_b' });
      res.end('{}');
    });
    try {
      const client = createSessClient({
        origin: double.origin,
        credential: () => 'sk_x',
        allowInsecureLocalhost: true,
        credentialWorkspaceId: 'ws_a',
      });
      const error = await expectSessError(create(client), 'protocol');
      expect(error.protocolReason).toBe('workspace_header_other_key');
    } finally {
      await double.close();
    }
  });
});
