/**
 * The whole interaction over HTTP with real clients against the local Sess runtime: request →
 * the person answers → publish → answers again → complete, in both protocol eras; bindings per
 * principal, workspace, client and grant generation; the deadline during a wait; close().
 */
import { describe, expect, it } from 'vitest';
import { type InteractionResult, SHOW_LINK_NEXT } from '../../src/core/contract/result.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import {
  approveAnswer,
  approveSurface,
  call,
  followUpSurface,
  type HttpHarness,
  ok,
  readApproved,
  startHttpHarness,
  type ToolCaller,
} from './harness.js';
import { connectLegacy, connectModern, listen } from './helpers.js';

const audits = useSecretsAudit();
const open = useCleanup();

async function harness(...args: Parameters<typeof startHttpHarness>): Promise<HttpHarness> {
  const h = await startHttpHarness(...args);
  open.push(h);
  audits.current.secret(h.sess.apiKey, 'sess api key');
  audits.current.watch(h.events, 'http diagnostics');
  return h;
}

const BEARER = 'mcp-bearer-token-alice-0001';

/** A harness with alice's bearer token and a 2025-era client of hers that created one Session. */
async function aliceCreated(...args: Parameters<typeof startHttpHarness>) {
  const h = await harness(...args);
  h.principal(BEARER);
  const client = await connectLegacy(h.server.url, { authorization: `Bearer ${BEARER}` });
  const created = await ok(client, 'sess_request', { interaction: approveSurface });
  audits.current.url(created.humanUrl!, 'sess link');
  return { h, client, created };
}

/** The person answers `created` with `approveAnswer`; `client` reads the answer (a 300 ms wait). */
async function answerAndRead(h: HttpHarness, client: ToolCaller, created: InteractionResult) {
  await h.sess.submitAnswer(created.humanUrl!, approveAnswer);
  audits.current.answer(approveAnswer.values, 'answer');
  return ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 300 });
}

/** The `sess_response` results the handler's diagnostics recorded. */
const responseResults = (h: HttpHarness) =>
  h.events.filter((e) => e.event === 'tool_result' && e.tool === 'sess_response');

/** Within `timeout` ms, the one `sess_response` result recorded is a wait ended `needs_resume`. */
async function expectEndedForResume(h: HttpHarness, timeout: number): Promise<void> {
  await expect
    .poll(() => responseResults(h), { timeout })
    .toEqual([expect.objectContaining({ state: 'needs_resume' })]);
}

const eras: Array<
  [string, (url: string, headers: Record<string, string>) => Promise<ToolCaller & { close(): Promise<void> }>]
> = [
  ['2026-07-28 (v2 client, auto negotiation)', connectModern],
  ['2025-11-25 (v1 SDK client, legacy fallback)', connectLegacy],
];

describe.each(eras)('the full flow in the %s era', (_era, connect) => {
  it('request → answer → publish → answer → complete, with the link in the result', async () => {
    const h = await harness();
    h.principal(BEARER);
    audits.current.secret(BEARER, 'mcp bearer token');
    // Record what reaches Sess: every call must carry the Sess key and never the MCP token.
    const seenAuth: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.startsWith(h.sess.origin)) {
        seenAuth.push(
          new Headers(input instanceof Request ? input.headers : init?.headers).get('authorization') ?? '',
        );
      }
      return realFetch(input, init);
    };
    try {
      const client = await connect(h.server.url, { authorization: `Bearer ${BEARER}` });
      const created = await call(client, 'sess_request', { interaction: approveSurface });
      expect(created.ok).toBe(true);
      if (!created.ok) return;
      const { handle, humanUrl } = created.interaction;
      expect(created.interaction).toMatchObject({ revision: 1, state: 'waiting' });
      expect(humanUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
      // The text leads with next; the link is in the JSON after it, as in structuredContent.
      expect(created.text.split('\n')[0]).toBe(SHOW_LINK_NEXT);
      expect(created.text).toContain(`"humanUrl":${JSON.stringify(humanUrl)}`);
      audits.current.url(humanUrl!, 'sess link');
      audits.current.answer(approveAnswer.values, 'answer');

      expect((await h.sess.submitAnswer(humanUrl!, approveAnswer)).status).toBe(303);
      const answered = await readApproved(client, handle, { actorAssurance: 'link_holder' });

      const published = await ok(client, 'sess_publish', {
        handle,
        expected_revision: 1,
        response_event_id: answered.response!.eventId,
        interaction: followUpSurface,
      });
      expect(published).toMatchObject({ revision: 2, state: 'waiting' });

      await h.sess.submitAnswer(humanUrl!, { action: 'push', values: {} });
      const second = await ok(client, 'sess_response', { handle, revision: 2, wait_ms: 5_000 });
      expect(second).toMatchObject({ state: 'answered', response: { revision: 2, action: 'push' } });

      const completed = await ok(client, 'sess_complete', {
        handle,
        expected_revision: 2,
        response_event_id: second.response!.eventId,
      });
      expect(completed).toMatchObject({ revision: 2, state: 'completed' });
      expect(h.sess.sessions.list()).toHaveLength(1);
      expect(h.sess.sessions.list()[0]!.view.status).toBe('completed');
      await client.close();
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(seenAuth.length).toBeGreaterThan(4);
    // Authenticated calls carry the Sess key; the rest (the receipt key set, the test's own page
    // posts) carry nothing. The MCP bearer token never reaches Sess.
    expect(seenAuth).toContain(`Bearer ${h.sess.apiKey}`);
    expect(new Set(seenAuth.filter((a) => a !== ''))).toEqual(new Set([`Bearer ${h.sess.apiKey}`]));
    expect(seenAuth.join('\n')).not.toContain(BEARER);
    expect(h.bindings[0]).toEqual({
      kind: 'http',
      origin: h.sess.origin,
      workspaceId: h.sess.workspaceId,
      principalId: 'alice',
      clientId: 'client_1',
      grantId: 'grant_1',
      grantGeneration: 'g1',
    });
  });
});

describe('bindings', () => {
  async function createdBy(h: HttpHarness, token: string): Promise<{ handle: string; humanUrl: string }> {
    const client = await connectLegacy(h.server.url, { authorization: `Bearer ${token}` });
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    await client.close();
    audits.current.url(created.humanUrl!, 'sess link');
    return { handle: created.handle, humanUrl: created.humanUrl! };
  }

  async function responseAs(h: HttpHarness, token: string, handle: string) {
    const client = await connectModern(h.server.url, { authorization: `Bearer ${token}` });
    const outcome = await call(client, 'sess_response', { handle, revision: 1, wait_ms: 0 });
    await client.close();
    return outcome;
  }

  it.each([
    ['another principal', { principalId: 'bob' }, 'HANDLE_NOT_FOUND'],
    ['another client (agent host)', { clientId: 'client_2' }, 'HANDLE_NOT_FOUND'],
    ['another grant', { grantId: 'grant_2' }, 'HANDLE_NOT_FOUND'],
    ['a re-issued grant (new generation)', { grantGeneration: 'g2' }, 'BINDING_MISMATCH'],
  ])('%s gets %s', async (_name, overrides, code) => {
    const h = await harness();
    h.principal('token-a-000000000001');
    h.principal('token-b-000000000001', overrides);
    const { handle } = await createdBy(h, 'token-a-000000000001');
    const outcome = await responseAs(h, 'token-b-000000000001', handle);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.code).toBe(code);
    expect(outcome.text).not.toContain('http://127.0.0.1');
  });

  it('another workspace gets HANDLE_NOT_FOUND', async () => {
    const h = await harness();
    const other = await h.sess.createWorkspace();
    audits.current.secret(other.apiKey, 'other api key');
    h.principal('token-a-000000000001');
    h.principal('token-w-000000000001', { workspaceId: other.workspaceId, credential: () => other.apiKey });
    const { handle } = await createdBy(h, 'token-a-000000000001');
    const outcome = await responseAs(h, 'token-w-000000000001', handle);
    expect(outcome.ok ? 'ok' : outcome.error.code).toBe('HANDLE_NOT_FOUND');
  });

  it("principal.workspaceId is checked against the key's workspace: another workspace's key creates nothing and reads nothing", async () => {
    const h = await harness();
    const other = await h.sess.createWorkspace();
    audits.current.secret(other.apiKey, 'other api key');
    h.principal('token-a-000000000001');
    // The host mixed them up: the principal says one workspace, its key belongs to another.
    h.principal('token-x-000000000001', { workspaceId: h.sess.workspaceId, credential: () => other.apiKey });
    const client = await connectModern(h.server.url, { authorization: 'Bearer token-x-000000000001' });
    const created = await call(client, 'sess_request', { interaction: approveSurface });
    const { handle } = await createdBy(h, 'token-a-000000000001');
    const read = await call(client, 'sess_response', { handle, revision: 1, wait_ms: 0 });
    await client.close();
    for (const outcome of [created, read]) {
      expect(outcome.ok).toBe(false);
      if (outcome.ok) continue;
      expect(outcome.error.code).toBe('NOT_CONFIGURED');
      expect(outcome.error.retryable).toBe(false);
      expect(outcome.error.message).toContain('principal.workspaceId');
    }
    expect(!created.ok && created.error.message).toContain(
      `The Sess API key belongs to workspace ${other.workspaceId}, not to ${h.sess.workspaceId}`,
    );
    // Only token-a's Session exists; none in the key's workspace.
    expect(h.sess.stats.of(other.workspaceId).sessionsCreated).toBe(0);
    expect(h.sess.stats.of().sessionsCreated).toBe(1);
  });

  it('a token refresh (same grant generation) keeps the handles', async () => {
    const h = await harness();
    h.principal('token-a-000000000001');
    const { handle, humanUrl } = await createdBy(h, 'token-a-000000000001');
    h.tokens.delete('token-a-000000000001');
    h.principal('token-a-refreshed-0002');
    await h.sess.submitAnswer(humanUrl, approveAnswer);
    audits.current.answer(approveAnswer.values, 'answer');
    const outcome = await responseAs(h, 'token-a-refreshed-0002', handle);
    expect(outcome.ok && outcome.interaction.state).toBe('answered');
  });

  it('runs authenticate exactly once per HTTP request and opens the store at most once', async () => {
    const h = await harness();
    h.principal('token-a-000000000001');
    let requests = 0;
    const counting = await listen((req, res) => {
      requests += 1;
      h.handler.node(req, res);
    });
    open.push(counting);
    const client = await connectModern(counting.url, { authorization: 'Bearer token-a-000000000001' });
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    await ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 0 });
    await client.close();
    expect(h.counts.authenticate).toBe(requests);
    expect(h.counts.handleStore).toBe(2);
  });
});

describe('deadline and close', () => {
  it('the request deadline ends a wait as needs_resume, and the next call resumes it', async () => {
    const h = await harness({ requestDeadlineMs: 700 });
    h.principal(BEARER);
    const client = await connectModern(h.server.url, { authorization: `Bearer ${BEARER}` });
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    const started = Date.now();
    const cut = await call(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(cut.ok && cut.interaction.state).toBe('needs_resume');
    expect(cut.text.startsWith('No answer yet.')).toBe(true);

    await h.sess.submitAnswer(created.humanUrl!, approveAnswer);
    audits.current.answer(approveAnswer.values, 'answer');
    const resumed = await ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 100 });
    expect(resumed.state).toBe('answered');
    expect(h.sess.sessions.list()).toHaveLength(1);
    await client.close();
  });

  it('close() ends a wait in flight as needs_resume; later requests get 503', async () => {
    const { h, client, created } = await aliceCreated();
    const waiting = call(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
    await h.sess.whenWaiting();
    await h.handler.close();
    const outcome = await waiting;
    expect(outcome.ok && outcome.interaction.state).toBe('needs_resume');
    const after = await fetch(h.server.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${BEARER}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(after.status).toBe(503);
  });
  it.each([
    ['create', 'sess_request'],
    ['publish', 'sess_publish'],
    ['complete', 'sess_complete'],
  ] as const)('a %s already sent is not cut by the deadline', async (endpoint, tool) => {
    const h = await harness({ requestDeadlineMs: 600 });
    h.principal(BEARER);
    const client = await connectLegacy(h.server.url, { authorization: `Bearer ${BEARER}` });
    let args: Record<string, unknown> = { interaction: approveSurface };
    if (tool !== 'sess_request') {
      const created = await ok(client, 'sess_request', { interaction: approveSurface });
      audits.current.url(created.humanUrl!, 'sess link');
      const answered = await answerAndRead(h, client, created);
      args = { handle: created.handle, expected_revision: 1, response_event_id: answered.response!.eventId };
      if (tool === 'sess_publish') args.interaction = followUpSurface;
    }
    h.sess.faults.delay(endpoint, 1_200);
    const started = Date.now();
    const result = await ok(client, tool, args);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_100);
    if (result.humanUrl !== undefined) audits.current.url(result.humanUrl, 'sess link');
    expect(result.state).toBe(tool === 'sess_complete' ? 'completed' : 'waiting');
    expect(h.sess.sessions.list()).toHaveLength(1);
    await client.close();
  });

  it('a client that disconnects during a wait ends it; the next call resumes it', async () => {
    const { h, client, created } = await aliceCreated();
    const cut = client.callTool({
      name: 'sess_response',
      arguments: { handle: created.handle, revision: 1, wait_ms: 20_000 },
    });
    await h.sess.whenWaiting();
    // Closing the transport drops its HTTP connections: the server sees the disconnect.
    await client.close();
    await expect(cut).rejects.toThrow();
    // The engine's wait ends with the HTTP request (as needs_resume), not 20 s later.
    await expectEndedForResume(h, 3_000);
    await h.sess.submitAnswer(created.humanUrl!, approveAnswer);
    audits.current.answer(approveAnswer.values, 'answer');
    const again = await connectModern(h.server.url, { authorization: `Bearer ${BEARER}` });
    const resumed = await ok(again, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 100 });
    expect(resumed.state).toBe('answered');
    expect(h.sess.sessions.list()).toHaveLength(1);
    await again.close();
  });

  it.each([
    ['2026-07-28 (the client drops the request)', 'modern'],
    ['2025 (notifications/cancelled, a separate POST)', 'legacy'],
  ] as const)('MCP cancellation in the %s era ends a wait as needs_resume', async (_name, era) => {
    const h = await harness();
    h.principal(BEARER);
    const headers = { authorization: `Bearer ${BEARER}` };
    const client =
      era === 'modern'
        ? await connectModern(h.server.url, headers)
        : await connectLegacy(h.server.url, headers);
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    const controller = new AbortController();
    const params = {
      name: 'sess_response',
      arguments: { handle: created.handle, revision: 1, wait_ms: 20_000 },
    };
    const cut =
      era === 'modern'
        ? (client as Awaited<ReturnType<typeof connectModern>>).callTool(params, {
            signal: controller.signal,
          })
        : (client as Awaited<ReturnType<typeof connectLegacy>>).callTool(params, undefined, {
            signal: controller.signal,
          });
    await h.sess.whenWaiting();
    controller.abort();
    await expect(cut).rejects.toThrow();
    await expectEndedForResume(h, 3_000);
    await client.close();
  });

  it("another caller's cancellation with the same request id changes nothing", async () => {
    // The deadline is far enough out that only the cancellation can end the wait in time.
    const h = await harness({ requestDeadlineMs: 6_000 });
    h.principal('token-a-000000000001');
    h.principal('token-b-000000000001', { principalId: 'bob' });
    const client = await connectLegacy(h.server.url, { authorization: 'Bearer token-a-000000000001' });
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    await client.close();
    const post = (token: string, body: unknown) =>
      h.handler.fetch(
        new Request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify(body),
        }),
      );
    const waiting = post('token-a-000000000001', {
      jsonrpc: '2.0',
      id: 42,
      method: 'tools/call',
      params: { name: 'sess_response', arguments: { handle: created.handle, revision: 1, wait_ms: 20_000 } },
    });
    await h.sess.whenWaiting();
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 42 } };
    expect((await post('token-b-000000000001', cancel)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    expect(responseResults(h)).toEqual([]);
    expect((await post('token-a-000000000001', cancel)).status).toBe(202);
    await expectEndedForResume(h, 1_500);
    expect(await (await waiting).text()).toContain('needs_resume');
  });

  it('close() lets a complete already sent finish before it resolves', async () => {
    const { h, client, created } = await aliceCreated();
    const answered = await answerAndRead(h, client, created);
    h.sess.faults.delay('complete', 800);
    const completing = ok(client, 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: answered.response!.eventId,
    });
    await expect.poll(() => h.sess.stats.requests.complete ?? 0).toBeGreaterThan(0);
    await h.handler.close();
    expect(h.sess.sessions.list()[0]!.view.status).toBe('completed');
    expect((await completing).state).toBe('completed');
  });
});
