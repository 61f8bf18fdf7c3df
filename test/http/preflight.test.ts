/**
 * The node face's header-only preflight over raw sockets: an `allowedHosts` entry with a port
 * matches that port only (`:80` included), and a handler mounted with `attach` answers
 * `Expect: 100-continue` with `100 Continue` only once the request passed the preflight — a
 * refused request gets its refusal, never an invitation to send its body.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSessMcpHttpHandler,
  type SessHttpPrincipal,
  type SessMcpHttpHandler,
  type SessMcpHttpHandlerOptions,
} from '../../src/http/index.js';
import type { DiagnosticEvent } from '../../src/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { INITIALIZE, listen, rawExchange, type TestServer } from './helpers.js';

const TOKEN = 'preflight-token-0000001';
const principal: SessHttpPrincipal = {
  workspaceId: 'ws_1',
  principalId: 'alice',
  clientId: 'client_1',
  grantId: 'grant_1',
  grantGeneration: '1',
  scopes: ['sess'],
  credential: () => 'sess-key-never-used-here',
};

const open: Array<{ handler: SessMcpHttpHandler; server: TestServer }> = [];
afterEach(async () => {
  for (const { handler, server } of open.splice(0)) {
    await handler.close();
    await server.close();
  }
});

async function start(
  mount: 'node' | 'attach' | 'routed' | 'behind-a-parser',
  extra: Partial<SessMcpHttpHandlerOptions> = {},
): Promise<TestServer> {
  const stores = createMemoryHandleStore();
  const handler = createSessMcpHttpHandler({
    authenticate: (request) =>
      request.headers.get('authorization') === `Bearer ${TOKEN}` ? principal : undefined,
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: ['127.0.0.1'],
    requiredScopes: ['sess'],
    ...extra,
  });
  const server = await listen(
    mount === 'node'
      ? (req, res) => handler.node(req, res)
      : mount === 'behind-a-parser'
        ? // What a body parser does: read the whole body, then pass the request on.
          (req, res) => {
            req.resume();
            req.once('end', () => handler.node(req, res));
          }
        : mount === 'attach'
          ? { mount: (s) => handler.attach(s) }
          : {
              // Next to another route: the host sends 100 Continue itself for its own routes.
              mount: (s) => {
                const other = (_req: unknown, res: ServerResponse) => res.end('other route');
                s.on('request', (req, res) =>
                  req.url === '/mcp' ? handler.node(req, res) : other(req, res),
                );
                s.on('checkContinue', (req, res) => {
                  if (req.url === '/mcp') return handler.checkContinue(req, res);
                  res.writeContinue();
                  other(req, res);
                });
              },
            },
  );
  open.push({ handler, server });
  return server;
}

const head = (host: string, extra = '') =>
  `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\nConnection: close${extra}`;

describe('allowedHosts with a port', () => {
  it.each([
    // entry, Host header, allowed
    ['mcp.example.com:80', 'mcp.example.com:80', true],
    ['mcp.example.com:80', 'mcp.example.com', true],
    ['mcp.example.com:80', 'mcp.example.com:8443', false],
    ['mcp.example.com:80', 'mcp.example.com:31337', false],
    ['mcp.example.com:8443', 'mcp.example.com:8443', true],
    ['mcp.example.com:8443', 'mcp.example.com', false],
    ['mcp.example.com:8443', 'mcp.example.com:80', false],
    ['mcp.example.com', 'mcp.example.com:31337', true],
    ['mcp.example.com', 'evil.example.com', false],
    ['[::1]:8080', '[::1]:8080', true],
    ['[::1]:8080', '[::1]:9090', false],
  ])('entry %s, Host %s: allowed %s', async (entry, host, allowed) => {
    const server = await start('node', { allowedHosts: [entry] });
    const seen = await rawExchange(server.port, head(host), {
      chunks: [new TextEncoder().encode('{}')],
      maxMs: 3_000,
    });
    // Past the Host check, the missing bearer token is what refuses the request.
    expect(seen.status).toBe(allowed ? 401 : 403);
  });
});

describe('the diagnostic of a refused Host or Origin, over a real socket', () => {
  it('names allowedHosts and the Host received, escaped; the 403 body names neither', async () => {
    const events: DiagnosticEvent[] = [];
    const server = await start('node', { diagnostics: (event) => events.push(event) });
    // Node's parser passes bytes 0x80-0xFF in a header value (obs-text) and reads them as
    // latin1: the head goes out as UTF-8, so U+009B (the one-byte CSI) arrives as C2 9B, `Â` and CSI.
    const seen = await rawExchange(server.port, head('rebind.example\x9b2J'), {
      chunks: [new TextEncoder().encode('{}')],
      maxMs: 3_000,
    });
    expect(seen.status).toBe(403);
    expect(seen.text).not.toContain('rebind');
    const refused = events.find((e) => e.event === 'http.host_rejected');
    expect(refused).toMatchObject({ variable: 'allowedHosts', received: 'rebind.example\u00c2\\u009b2J' });
  });

  it('names allowedOrigins and the Origin received', async () => {
    const events: DiagnosticEvent[] = [];
    const server = await start('node', {
      allowedOrigins: ['https://app.example.com'],
      diagnostics: (event) => events.push(event),
    });
    const seen = await rawExchange(server.port, head('127.0.0.1', '\r\nOrigin: https://evil.example'), {
      chunks: [new TextEncoder().encode('{}')],
      maxMs: 3_000,
    });
    expect(seen.status).toBe(403);
    expect(events.find((e) => e.event === 'http.origin_rejected')).toMatchObject({
      variable: 'allowedOrigins',
      received: 'https://evil.example',
    });
  });
});

describe('Expect: 100-continue', () => {
  const expecting = (authorization: string) =>
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${authorization}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\nExpect: 100-continue`;

  it.each([
    ['no credentials', ''],
    ['a wrong bearer token', 'Authorization: Bearer wrong-token-000000\r\n'],
  ])('mounted with attach, a request with %s gets 401 and never 100 Continue', async (_name, auth) => {
    const server = await start('attach');
    const seen = await rawExchange(server.port, expecting(auth), { maxMs: 3_000 });
    expect(seen.text).not.toMatch(/HTTP\/1\.1 100/);
    expect(seen.status).toBe(401);
    expect(seen.closed).toBe(true);
    expect(seen.bodyBytesSent).toBe(0);
  });

  it('mounted with attach, a request on a Host not allowed gets 403 and never 100 Continue', async () => {
    const server = await start('attach');
    const seen = await rawExchange(
      server.port,
      expecting(`Authorization: Bearer ${TOKEN}\r\n`).replace('Host: 127.0.0.1', 'Host: evil.example.com'),
      { maxMs: 3_000 },
    );
    expect(seen.text).not.toMatch(/HTTP\/1\.1 100/);
    expect(seen.status).toBe(403);
  });

  it('mounted with attach, an accepted request gets 100 Continue, then its answer once the body is sent', async () => {
    const server = await start('attach');
    const body = JSON.stringify(INITIALIZE);
    const { connect } = await import('node:net');
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('utf8');
    });
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
    );
    const until = async (pattern: RegExp) => {
      const started = Date.now();
      while (!pattern.test(text) && Date.now() - started < 3_000) await new Promise((r) => setTimeout(r, 10));
      return pattern.test(text);
    };
    expect(await until(/^HTTP\/1\.1 100 Continue\r\n\r\n/)).toBe(true);
    // Nothing but the interim answer before the body.
    expect(text).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    socket.write(body);
    expect(await until(/HTTP\/1\.1 200 /)).toBe(true);
    expect(await until(/"protocolVersion"/)).toBe(true);
    socket.destroy();
  });

  it('mounted next to other routes, checkContinue refuses /mcp without 100 Continue; the host continues its own route', async () => {
    const server = await start('routed');
    const refused = await rawExchange(server.port, expecting(''), { maxMs: 3_000 });
    expect(refused.text).not.toMatch(/HTTP\/1\.1 100/);
    expect(refused.status).toBe(401);
    const other = await rawExchange(server.port, expecting('').replace('POST /mcp', 'POST /other'), {
      maxMs: 1_000,
    });
    expect(other.text).toMatch(/^HTTP\/1\.1 100 Continue/);
  });

  it('mounted as a plain request listener, Node itself sends 100 Continue before the preflight (why attach exists)', async () => {
    const server = await start('node');
    const seen = await rawExchange(server.port, expecting(''), { maxMs: 3_000 });
    expect(seen.text).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(seen.text).toMatch(/HTTP\/1\.1 401/);
  });
});

describe('a body parser mounted before the handler', () => {
  it('gets a 400 that says to mount the handler first, and a http.body_consumed diagnostic', async () => {
    const events: Array<{ event: string }> = [];
    const server = await start('behind-a-parser', { diagnostics: (event) => events.push(event) });
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(INITIALIZE),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      'Parse error: the request body was read before this handler saw it; mount the MCP handler before any body parser',
    );
    expect(events.map((e) => e.event)).toContain('http.body_consumed');
  });
});
