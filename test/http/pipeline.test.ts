/**
 * The request pipeline (`src/http/pipeline.ts`) and its two faces, serving a trivial server instead
 * of the Sess tools: header-only preflight, body bound, deadline, unsafe-key guard, the `node:http`
 * face, close — against real clients, a real `node:http` server and raw sockets.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { incomingFromRequest } from '../../src/http/fetch-face.js';
import type { SessMcpHttpHandler } from '../../src/http/handler.js';
import { createNodeFace } from '../../src/http/node-face.js';
import {
  resolveHttpOptions,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from '../../src/http/options.js';
import { createPipeline } from '../../src/http/pipeline.js';
import type { RequestScope } from '../../src/http/sdk-exchange.js';
import { useCleanup } from '../support/cleanup.js';
import {
  connectLegacy,
  connectModern,
  INITIALIZE,
  legacyPost,
  listen,
  rawExchange,
  rawJsonBody,
  type TestServer,
} from './helpers.js';

const PRINCIPALS: Record<string, SessHttpPrincipal> = {
  'tok-a': principal('alice', ['sess']),
  'tok-noscope': principal('bob', []),
};

function principal(id: string, scopes: string[]): SessHttpPrincipal {
  return {
    workspaceId: 'ws_1',
    principalId: id,
    clientId: 'client_1',
    grantId: `grant_${id}`,
    grantGeneration: '1',
    scopes,
    credential: () => 'sess-key-never-used',
  };
}

interface Harness {
  /** The faces only: the health answers have a test file of their own (health.test.ts). */
  handler: Omit<SessMcpHttpHandler, 'ready' | 'live'>;
  server: TestServer;
  authCalls: number;
  events: DiagnosticEvent[];
  mutationsDone: number;
  waitOutcomes: string[];
}

const open = useCleanup();

function testServer(scope: RequestScope, h: Harness): McpServer {
  const server = new McpServer({ name: 'pipeline-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('whoami', { description: 'who' }, async (ctx) => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify({
          principal: scope.principal.principalId,
          authInfo: ctx.http?.authInfo ?? null,
        }),
      },
    ],
  }));
  server.registerTool('wait', { description: 'wait until the signal' }, async () =>
    scope.track(
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          h.waitOutcomes.push('waiting');
          resolve({ content: [{ type: 'text', text: 'waiting' }] });
        }, 20_000);
        scope.waitSignal.addEventListener('abort', () => {
          clearTimeout(timer);
          h.waitOutcomes.push('needs_resume');
          resolve({ content: [{ type: 'text', text: 'needs_resume' }] });
        });
      }),
    ),
  );
  server.registerTool('mutate', { description: 'a sent mutation: never cut' }, async () =>
    scope.track(
      new Promise((resolve) =>
        setTimeout(() => {
          h.mutationsDone += 1;
          resolve({ content: [{ type: 'text', text: 'done' }] });
        }, 300),
      ),
    ),
  );
  return server;
}

async function start(extra: Partial<SessMcpHttpHandlerOptions> = {}): Promise<Harness> {
  const h = {
    authCalls: 0,
    events: [] as DiagnosticEvent[],
    mutationsDone: 0,
    waitOutcomes: [] as string[],
  } as Harness;
  const options = resolveHttpOptions({
    authenticate: (request) => {
      h.authCalls += 1;
      const token = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
      return PRINCIPALS[token];
    },
    handleStore: () => {
      throw new Error('not used by the trivial server');
    },
    allowedHosts: ['127.0.0.1', 'localhost'],
    allowedOrigins: ['https://app.example.com'],
    requiredScopes: ['sess'],
    resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource',
    requestDeadlineMs: 1_500,
    maxBodyBytes: 4_096,
    diagnostics: (e) => h.events.push(e),
    ...extra,
  });
  // The handler's faces over the pipeline, serving the trivial server instead of the Sess tools.
  const pipeline = createPipeline(
    options,
    (scope) => testServer(scope, h),
    () => new McpServer({ name: 'pipeline-test', version: '1.0.0' }, { capabilities: { tools: {} } }),
  );
  const node = createNodeFace(pipeline);
  h.handler = {
    fetch: async (request) => (await pipeline.handle(incomingFromRequest(request))).response,
    node,
    checkContinue: createNodeFace(pipeline, { sendContinue: true }),
    attach: (server) => server.on('request', node),
    close: () => pipeline.close(),
  };
  h.server = await listen((req, res) => h.handler.node(req, res));
  open.push(h.server);
  return h;
}

const AUTH = { authorization: 'Bearer tok-a' };

describe('both eras over node:http', () => {
  it('a 2026-07-28 client (v2, auto) lists and calls tools; the tool sees the principal, no authInfo', async () => {
    const h = await start();
    const client = await connectModern(h.server.url, AUTH);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name).sort()).toEqual(['mutate', 'wait', 'whoami']);
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({
      principal: 'alice',
      authInfo: null,
    });
    await client.close();
  });

  it('a 2025 client (v1 SDK) is served by the stateless fallback: 2025-11-25, no session id', async () => {
    const h = await start();
    const client = await connectLegacy(h.server.url, AUTH);
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    expect((result.content as Array<{ text: string }>)[0]!.text).toContain('alice');
    await client.close();
    const response = await h.handler.fetch(legacyPost('http://127.0.0.1/mcp', INITIALIZE, AUTH));
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const text = await response.text();
    expect(text).toContain('"protocolVersion":"2025-11-25"');
  });

  it('calls authenticate exactly once per HTTP request', async () => {
    const h = await start();
    let posts = 0;
    const counting = await listen((req, res) => {
      posts += 1;
      h.handler.node(req, res);
    });
    open.push(counting);
    const before = h.authCalls;
    const client = await connectModern(counting.url, AUTH);
    await client.listTools();
    await client.callTool({ name: 'whoami', arguments: {} });
    await client.close();
    const legacy = await connectLegacy(counting.url, AUTH);
    await legacy.callTool({ name: 'whoami', arguments: {} });
    await legacy.close();
    expect(posts).toBeGreaterThan(4);
    expect(h.authCalls - before).toBe(posts);
  });
});

describe('header-only preflight, answered before the body is sent', () => {
  const head = (extra: string) =>
    `POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n${extra}`;

  it.each([
    ['a Host not on the allowlist', 'Host: evil.example\r\nAuthorization: Bearer tok-a', 403, false],
    [
      'an Origin not on the allowlist',
      'Host: 127.0.0.1\r\nOrigin: https://evil.example\r\nAuthorization: Bearer tok-a',
      403,
      false,
    ],
    [
      'a port-different Origin (exact match)',
      'Host: 127.0.0.1\r\nOrigin: https://app.example.com:8443\r\nAuthorization: Bearer tok-a',
      403,
      false,
    ],
    ['no principal', 'Host: 127.0.0.1\r\nAuthorization: Bearer nope', 401, true],
    ['a missing scope', 'Host: 127.0.0.1\r\nAuthorization: Bearer tok-noscope', 403, true],
  ])('%s', async (_name, headers, status, authCalled) => {
    const h = await start();
    const seen = await rawExchange(h.server.port, head(headers), { maxMs: 3_000 });
    expect(seen.status).toBe(status);
    expect(seen.bodyBytesSent).toBe(0);
    expect(seen.closed).toBe(true);
    expect(seen.text).toMatch(/connection: close/i);
    expect(h.authCalls).toBe(authCalled ? 1 : 0);
    if (status === 401) {
      expect(seen.text).toMatch(
        /www-authenticate: Bearer (?:error="invalid_token", )?scope="sess", resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource"/i,
      );
    }
    if (status === 403 && authCalled) {
      expect(seen.text).toMatch(/www-authenticate: Bearer error="insufficient_scope", scope="sess"/i);
      expect(rawJsonBody(seen.text)).toMatchObject({ error: 'insufficient_scope' });
    }
  });

  it('accepts a request without Origin and one with an allowed Origin', async () => {
    const h = await start();
    for (const origin of [undefined, 'https://app.example.com']) {
      const response = await h.handler.fetch(
        legacyPost('http://127.0.0.1/mcp', INITIALIZE, { ...AUTH, ...(origin ? { origin } : {}) }),
      );
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
  });

  it('a throwing authenticate answers 500 without its message', async () => {
    const h = await start({
      authenticate: () => {
        throw new Error('db password hunter2 leaked');
      },
    });
    const response = await h.handler.fetch(legacyPost('http://127.0.0.1/mcp', INITIALIZE, AUTH));
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('hunter2');
    expect(JSON.stringify(h.events)).not.toContain('hunter2');
    expect(h.events.map((e) => e.event)).toContain('http.authenticate_failed');
  });

  it('a hanging authenticate answers 503 at the deadline', async () => {
    const h = await start({ authenticate: () => new Promise(() => {}), requestDeadlineMs: 300 });
    const started = Date.now();
    const response = await h.handler.fetch(legacyPost('http://127.0.0.1/mcp', INITIALIZE, AUTH));
    expect(response.status).toBe(503);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('the body', () => {
  it('a declared Content-Length over the bound answers 413 before the body is read', async () => {
    const h = await start();
    const seen = await rawExchange(
      h.server.port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-a\r\nContent-Type: application/json\r\nContent-Length: 5000',
    );
    expect(seen.status).toBe(413);
    expect(seen.bodyBytesSent).toBe(0);
    expect(seen.closed).toBe(true);
  });

  it('a streamed (chunked) body over the bound answers 413 and the connection closes', async () => {
    const h = await start();
    const chunk = new TextEncoder().encode(`400\r\n${'x'.repeat(1024)}\r\n`);
    const seen = await rawExchange(
      h.server.port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked',
      { chunks: Array.from({ length: 40 }, () => chunk), chunkEveryMs: 5 },
    );
    expect(seen.status).toBe(413);
    expect(seen.closed).toBe(true);
    expect(seen.bodyBytesSent).toBeLessThan(40 * chunk.byteLength);
  });

  it('a streamed body over the bound answers 413 on the fetch face too', async () => {
    const h = await start();
    const big = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(1024).fill(32));
      },
    });
    const response = await h.handler.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...AUTH },
        body: big,
        duplex: 'half',
      } as RequestInit),
    );
    expect(response.status).toBe(413);
  });

  it('a body that has not arrived by the deadline answers 408 and the connection closes', async () => {
    const h = await start({ requestDeadlineMs: 400 });
    const seen = await rawExchange(
      h.server.port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok-a\r\nContent-Type: application/json\r\nContent-Length: 200',
      { chunks: Array.from({ length: 50 }, () => new TextEncoder().encode(' ')), chunkEveryMs: 100 },
    );
    expect(seen.status).toBe(408);
    expect(seen.answeredAfterMs).toBeGreaterThanOrEqual(350);
    expect(seen.answeredAfterMs).toBeLessThan(1_500);
    expect(seen.closed).toBe(true);
  });

  it('a non-JSON content type answers 415', async () => {
    const h = await start();
    const response = await h.handler.fetch(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...AUTH },
        body: JSON.stringify(INITIALIZE),
      }),
    );
    expect(response.status).toBe(415);
  });
});

describe('the unsafe-key guard, in the request era', () => {
  const poisoned =
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{"a":{"__proto__":{"x":1}}}}}';

  it('2025 era: an in-band JSON-RPC error (HTTP 200) with the request id', async () => {
    const h = await start();
    const response = await h.handler.fetch(legacyPost('http://127.0.0.1/mcp', poisoned, AUTH));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
  });

  it.each(['constructor', 'prototype'])('2025 era: "%s" as a key is refused too', async (key) => {
    const h = await start();
    const body = poisoned.replace('__proto__', key);
    const response = await h.handler.fetch(legacyPost('http://127.0.0.1/mcp', body, AUTH));
    expect(await response.json()).toMatchObject({ id: 7, error: { code: -32602, data: { unsafeKey: key } } });
  });

  it('2026-07-28 era: an entry-gate rejection (HTTP 400) the v2 client reads as the call error', async () => {
    const h = await start();
    const client = await connectModern(h.server.url, AUTH);
    await expect(
      client.callTool({ name: 'whoami', arguments: JSON.parse('{"__proto__":{"polluted":true}}') }),
    ).rejects.toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await client.close();
    expect(h.events.map((e) => e.event)).toContain('http.unsafe_key');
  });

  it('2025 era: the v1 SDK client gets the refusal as the call error', async () => {
    const h = await start();
    const client = await connectLegacy(h.server.url, AUTH);
    await expect(
      client.callTool({ name: 'whoami', arguments: JSON.parse('{"x":{"constructor":{"prototype":1}}}') }),
    ).rejects.toThrow(/-32602|constructor/);
    await client.close();
  });

  it('a value that merely contains the word is fine', async () => {
    const h = await start();
    const client = await connectLegacy(h.server.url, AUTH);
    const result = await client.callTool({ name: 'whoami', arguments: { note: '__proto__ constructor' } });
    expect(result.isError).toBeFalsy();
    await client.close();
  });
});

describe('deadline, disconnect and close', () => {
  it('the deadline ends a wait in flight, and the answer still arrives', async () => {
    const h = await start({ requestDeadlineMs: 600 });
    const client = await connectLegacy(h.server.url, AUTH);
    const started = Date.now();
    const result = await client.callTool({ name: 'wait', arguments: {} });
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe('needs_resume');
    expect(Date.now() - started).toBeLessThan(2_000);
    await client.close();
  });

  it('a client disconnect aborts the wait', async () => {
    const h = await start({ requestDeadlineMs: 10_000 });
    const client = await connectLegacy(h.server.url, AUTH);
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await expect(call).rejects.toThrow();
    await client.close();
    await expect.poll(() => h.waitOutcomes, { timeout: 3_000 }).toEqual(['needs_resume']);
  });

  it('close() ends waits as needs_resume, lets a mutation finish, then later requests get 503', async () => {
    const h = await start({ requestDeadlineMs: 10_000 });
    const client = await connectLegacy(h.server.url, AUTH);
    const waiting = client.callTool({ name: 'wait', arguments: {} });
    const mutating = client.callTool({ name: 'mutate', arguments: {} });
    await new Promise((r) => setTimeout(r, 100));
    await h.handler.close();
    expect(h.mutationsDone).toBe(1);
    expect(h.waitOutcomes).toEqual(['needs_resume']);
    expect(((await waiting).content as Array<{ text: string }>)[0]!.text).toBe('needs_resume');
    expect(((await mutating).content as Array<{ text: string }>)[0]!.text).toBe('done');
    const after = await h.handler.fetch(legacyPost('http://127.0.0.1/mcp', INITIALIZE, AUTH));
    expect(after.status).toBe(503);
    await client.close();
  });
});

describe('the unsafe-key scan', () => {
  it('finds a key below nesting deep enough to overflow a recursive walk', async () => {
    const { parseBody } = await import('../../src/http/preflight/unsafe-keys.js');
    const depth = 100_000;
    const text = `${'['.repeat(depth)}{"constructor":1}${']'.repeat(depth)}`;
    expect(parseBody(text)).toMatchObject({ ok: true, unsafeKey: 'constructor' });
    expect(parseBody('{"a":[{"b":{"prototype":null}}]}')).toMatchObject({ unsafeKey: 'prototype' });
    expect(parseBody('{"a":"__proto__"}')).toEqual({ ok: true, value: { a: '__proto__' } });
    expect(parseBody('{"a":')).toEqual({ ok: false });
  });
});
