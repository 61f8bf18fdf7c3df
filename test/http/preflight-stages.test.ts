/**
 * Each preflight stage alone: a request context built by hand, one stage run on it, and what it
 * answers — `undefined` to let the request on (with what it adds to the context), or its refusal
 * (status, diagnostics event, whether the connection closes). The end-to-end tests
 * (`shell.test.ts`, `preflight.test.ts`, `test/reliability/http-abuse.test.ts`) run the same
 * stages through both faces.
 */
import { describe, expect, it } from 'vitest';
import { SESS_ID_RULE } from '../../src/core/contract/rules.js';
import { RECEIVED_VALUE_MAX, receivedValue } from '../../src/faces/visible.js';
import type { BodyRead, IncomingRequest } from '../../src/http/incoming.js';
import {
  resolveHttpOptions,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from '../../src/http/options.js';
import { authenticationStage, scopeStage } from '../../src/http/preflight/auth.js';
import { bodyStage } from '../../src/http/preflight/body.js';
import type { PreflightContext, PreflightStage, Refusal } from '../../src/http/preflight/context.js';
import { eraStage, requestEra } from '../../src/http/preflight/era.js';
import { hostAllowed, hostStage } from '../../src/http/preflight/host.js';
import { methodStage } from '../../src/http/preflight/method.js';
import { originStage } from '../../src/http/preflight/origin.js';
import { parseBody, unsafeKeyStage } from '../../src/http/preflight/unsafe-keys.js';
import { PREFLIGHT_STAGES, runPreflight } from '../../src/http/preflight.js';
import { MINIMAL_HTTP_OPTIONS } from './helpers.js';

const principal: SessHttpPrincipal = {
  workspaceId: 'ws_1',
  principalId: 'alice',
  clientId: 'client_1',
  grantId: 'grant_1',
  grantGeneration: '1',
  scopes: ['sess'],
  credential: () => 'sess-key-never-used-here',
};

interface Setup {
  options?: Partial<SessMcpHttpHandlerOptions>;
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  host?: string;
  /** What `readBody` answers; a string is read as the body. */
  body?: string | BodyRead;
  stopped?: boolean;
  closing?: boolean;
}

/** A context as the pipeline builds it, and how often the body was read. */
function contextOf(setup: Setup = {}): { ctx: PreflightContext; reads: () => number } {
  let reads = 0;
  const stop = new AbortController();
  const closing = new AbortController();
  if (setup.stopped === true || setup.closing === true) stop.abort();
  if (setup.closing === true) closing.abort();
  const incoming: IncomingRequest = {
    method: setup.method ?? 'POST',
    url: setup.url ?? 'http://localhost/mcp',
    headers: new Headers(setup.headers ?? { host: 'localhost', 'content-type': 'application/json' }),
    ...(setup.host === undefined ? {} : { host: setup.host }),
    disconnected: new AbortController().signal,
    async readBody(limit) {
      reads += 1;
      const body = setup.body ?? '{}';
      if (typeof body !== 'string') return body;
      const bytes = new TextEncoder().encode(body);
      return bytes.byteLength > limit ? { kind: 'too_large' } : { kind: 'ok', bytes };
    },
  };
  const ctx: PreflightContext = {
    options: resolveHttpOptions({ ...MINIMAL_HTTP_OPTIONS, ...setup.options }),
    incoming,
    stop: stop.signal,
    closing: closing.signal,
    hostVerdicts: new Map(),
  };
  return { ctx, reads: () => reads };
}

/** Run one stage to its end. */
async function run(stage: PreflightStage, ctx: PreflightContext): Promise<Refusal | undefined> {
  return await stage(ctx);
}

/** The refusal's status, event and connection verdict. */
function summary(refused: Refusal | undefined) {
  return refused === undefined
    ? undefined
    : { status: refused.response.status, event: refused.event, close: refused.closeConnection };
}

describe('the Host stage', () => {
  it('lets an allowed Host on, and remembers the verdict', () => {
    const { ctx } = contextOf();
    expect(hostStage(ctx)).toBeUndefined();
    expect([...ctx.hostVerdicts]).toEqual([['80 localhost', true]]);
  });

  it('refuses a Host not on the allowlist with 403, and does not remember it', () => {
    const { ctx } = contextOf({ headers: { host: 'rebind.example' } });
    const refused = hostStage(ctx);
    expect(summary(refused)).toEqual({ status: 403, event: 'http.host_rejected', close: true });
    // The diagnostic names the option to change and the Host it got; the answer says neither.
    expect(refused?.about).toEqual({ variable: 'allowedHosts', received: 'rebind.example' });
    expect(ctx.hostVerdicts.size).toBe(0);
  });

  it('takes the host a face knows when the headers carry none, and refuses when there is none', () => {
    expect(hostStage(contextOf({ headers: {}, host: 'localhost' }).ctx)).toBeUndefined();
    expect(summary(hostStage(contextOf({ headers: {} }).ctx))?.event).toBe('http.host_rejected');
  });

  it('matches an entry with a port on that port only, the scheme giving the default', () => {
    const options = { allowedHosts: ['mcp.example.com:80'] };
    expect(hostStage(contextOf({ options, headers: { host: 'mcp.example.com' } }).ctx)).toBeUndefined();
    expect(hostStage(contextOf({ options, headers: { host: 'mcp.example.com:80' } }).ctx)).toBeUndefined();
    const https = contextOf({
      options,
      url: 'https://mcp.example.com/mcp',
      headers: { host: 'mcp.example.com' },
    });
    expect(summary(hostStage(https.ctx))?.status).toBe(403);
    expect(hostAllowed('mcp.example.com:8443', ['mcp.example.com:80'], '80')).toBe(false);
    expect(hostAllowed('MCP.example.com:8443', ['mcp.example.com'], '443')).toBe(true);
    expect(hostAllowed('mcp.example.com/x', ['mcp.example.com'], '80')).toBe(false);
  });
});

describe('the Origin stage', () => {
  const options = { allowedOrigins: ['https://app.example.com'] };

  it('lets a request without Origin on', () => {
    expect(originStage(contextOf({ options }).ctx)).toBeUndefined();
  });

  it('lets an allowed Origin on, in any case', () => {
    const headers = { host: 'localhost', origin: 'HTTPS://APP.example.com' };
    expect(originStage(contextOf({ options, headers }).ctx)).toBeUndefined();
  });

  it('refuses any other Origin with 403, naming allowedOrigins and the Origin it got', () => {
    const headers = { host: 'localhost', origin: 'https://evil.example' };
    const refused = originStage(contextOf({ options, headers }).ctx);
    expect(summary(refused)).toEqual({
      status: 403,
      event: 'http.origin_rejected',
      close: true,
    });
    expect(refused?.about).toEqual({ variable: 'allowedOrigins', received: 'https://evil.example' });
  });
});

describe('the value a refused Host or Origin diagnostic carries', () => {
  // What a request can carry in a header value (`Headers` refuses NUL, CR and LF), and what the
  // diagnostic holds for it: controls written as \uXXXX, at most 200 characters.
  const cases: Array<[string, string, string]> = [
    [
      'an escape sequence',
      'evil\u001b[2J\u001b]0;owned\u0007.example',
      'evil\\u001b[2J\\u001b]0;owned\\u0007.example',
    ],
    ['a one-byte CSI (obs-text)', 'evil\u009b31m.example', 'evil\\u009b31m.example'],
    ['a tab and DEL', 'evil\t\u007f.example', 'evil\\u0009\\u007f.example'],
    ['8 000 characters', `${'a'.repeat(8_000)}.example`, `${'a'.repeat(200)}…`],
  ];

  it.each(cases)('a Host with %s', async (_name, host, received) => {
    const refused = hostStage(contextOf({ headers: { host } }).ctx);
    expect(summary(refused)?.status).toBe(403);
    expect(refused?.about).toEqual({ variable: 'allowedHosts', received });
    // The answer's body is fixed words: nothing of the Host goes back.
    expect(await refused?.response.text()).not.toMatch(/evil|aaaa/);
  });

  it.each(cases)('an Origin with %s', (_name, origin, received) => {
    const headers = { host: 'localhost', origin };
    const refused = originStage(contextOf({ headers }).ctx);
    expect(refused?.about).toEqual({ variable: 'allowedOrigins', received });
  });

  it('writes bidi controls, separators and lone surrogates visibly, and never cuts a pair', () => {
    expect(receivedValue('a\u202eb\u2066c\u2028d\u061ce')).toBe('a\\u202eb\\u2066c\\u2028d\\u061ce');
    expect(receivedValue('x\ud800y\udc00z')).toBe('x\\ud800y\\udc00z');
    const astral = '😀'.repeat(300);
    expect(receivedValue(astral)).toBe(`${'😀'.repeat(RECEIVED_VALUE_MAX)}…`);
    expect(receivedValue('a'.repeat(RECEIVED_VALUE_MAX))).toBe('a'.repeat(RECEIVED_VALUE_MAX));
  });
});

describe('the method stage', () => {
  it('builds the one Request of the exchange, with the host a face knows', () => {
    const { ctx } = contextOf({ headers: { 'content-type': 'application/json' }, host: 'localhost' });
    expect(methodStage(ctx)).toBeUndefined();
    expect(ctx.request?.method).toBe('POST');
    expect(ctx.request?.headers.get('host')).toBe('localhost');
    expect(ctx.request?.headers.get('content-type')).toBe('application/json');
  });

  it('refuses a method fetch cannot carry with 405 and Allow: POST', () => {
    const { ctx } = contextOf({ method: 'CONNECT' });
    const refused = methodStage(ctx);
    expect(summary(refused)).toEqual({ status: 405, event: 'http.method_rejected', close: true });
    expect(refused?.response.headers.get('allow')).toBe('POST');
    expect(ctx.request).toBeUndefined();
  });
});

describe('the authentication stage', () => {
  function authenticated(authenticate: SessMcpHttpHandlerOptions['authenticate'], setup: Setup = {}) {
    const { ctx } = contextOf({ ...setup, options: { ...setup.options, authenticate } });
    methodStage(ctx);
    return ctx;
  }

  it('answers synchronously for a synchronous authenticate, and keeps a snapshot of the principal', () => {
    const scopes = ['sess'];
    const ctx = authenticated(() => ({ ...principal, scopes }));
    expect(authenticationStage(ctx)).toBeUndefined();
    expect(ctx.principal).toMatchObject({ workspaceId: 'ws_1', principalId: 'alice', scopes: ['sess'] });
    scopes.push('admin');
    expect(ctx.principal?.scopes).toEqual(['sess']);
  });

  it('hands authenticate the request without a body, and takes an asynchronous answer', async () => {
    let seen: Request | undefined;
    const ctx = authenticated(async (request) => {
      seen = request;
      return principal;
    });
    expect(await run(authenticationStage, ctx)).toBeUndefined();
    expect(seen).toBe(ctx.request);
    expect(seen?.body).toBeNull();
    expect(ctx.principal?.grantId).toBe('grant_1');
  });

  it('refuses a request without a principal with 401 and a Bearer challenge', async () => {
    const ctx = authenticated(() => undefined, {
      options: { resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource' },
    });
    const refused = await run(authenticationStage, ctx);
    expect(summary(refused)).toEqual({ status: 401, event: 'http.unauthenticated', close: true });
    expect(refused?.response.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"',
    );
  });

  it('answers 500 when authenticate throws or rejects, without its message', async () => {
    for (const authenticate of [
      () => {
        throw new Error('secret detail');
      },
      () => Promise.reject(new Error('secret detail')),
    ]) {
      const refused = await run(authenticationStage, authenticated(authenticate));
      expect(summary(refused)).toEqual({ status: 500, event: 'http.authenticate_failed', close: true });
      expect(await refused!.response.text()).not.toContain('secret');
    }
  });

  it('answers 500 when authenticate returns something that is not a principal, naming the field and what it must be', async () => {
    const ctx = authenticated(() => ({ ...principal, grantGeneration: '' }));
    const refused = await run(authenticationStage, ctx);
    expect(summary(refused)?.event).toBe('http.principal_invalid');
    expect(refused?.about).toEqual({ field: 'grantGeneration', expected: 'a non-empty string' });
    const cases: Array<[unknown, { field: string; expected: string }]> = [
      // A JWT claim that is a number, as a token library returns it.
      [
        { ...principal, grantGeneration: 3 },
        { field: 'grantGeneration', expected: 'a non-empty string' },
      ],
      [
        { ...principal, workspaceId: undefined },
        { field: 'workspaceId', expected: `a Sess workspace id, ${SESS_ID_RULE.text}` },
      ],
      // A label is not a workspace id: the key's workspace is checked against it.
      [
        { ...principal, workspaceId: 'Acme Corp' },
        { field: 'workspaceId', expected: `a Sess workspace id, ${SESS_ID_RULE.text}` },
      ],
      [
        { ...principal, scopes: 'sess' },
        { field: 'scopes', expected: 'an array of strings' },
      ],
      [
        { ...principal, credential: 'sk_key' },
        { field: 'credential', expected: 'a function' },
      ],
      ['a string', { field: 'principal', expected: 'an object' }],
    ];
    for (const [given, about] of cases) {
      expect(
        (
          await run(
            authenticationStage,
            authenticated(() => given as never),
          )
        )?.about,
      ).toEqual(about);
    }
  });

  it('answers 503 when authenticate has not answered by the deadline, and says so when the handler closed', async () => {
    const never = () => new Promise<undefined>(() => {});
    expect(summary(await run(authenticationStage, authenticated(never, { stopped: true })))).toEqual({
      status: 503,
      event: 'http.authenticate_timeout',
      close: true,
    });
    expect(summary(await run(authenticationStage, authenticated(never, { closing: true })))?.event).toBe(
      'http.closed',
    );
  });
});

describe('the scope stage', () => {
  it('lets a principal holding every required scope on', () => {
    const { ctx } = contextOf({ options: { requiredScopes: ['sess'] } });
    ctx.principal = principal;
    expect(scopeStage(ctx)).toBeUndefined();
  });

  it('refuses a principal missing one with 403 insufficient_scope naming every required scope', () => {
    const { ctx } = contextOf({ options: { requiredScopes: ['sess', 'sess:ask'] } });
    ctx.principal = principal;
    const refused = scopeStage(ctx);
    expect(summary(refused)).toEqual({ status: 403, event: 'http.insufficient_scope', close: true });
    expect(refused?.response.headers.get('www-authenticate')).toContain('scope="sess sess:ask"');
  });
});

describe('the WWW-Authenticate challenges (RFC 6750 §3, RFC 9728)', () => {
  const META = 'https://mcp.example.com/.well-known/oauth-protected-resource';
  /** RFC 9110 §11.3: `Bearer`, then comma-separated auth-params, each value a quoted-string. */
  const GRAMMAR = /^Bearer(?: [a-z_]+="(?:[^"\\]|\\.)*"(?:, [a-z_]+="(?:[^"\\]|\\.)*")*)?$/;
  const authorization = {
    host: 'localhost',
    'content-type': 'application/json',
    authorization: 'Bearer expired-or-forged',
  };
  const cases: Array<{
    name: string;
    setup: Setup;
    principal?: SessHttpPrincipal;
    status: number;
    challenge: string;
  }> = [
    {
      name: 'no token, no scopes required',
      setup: { options: { resourceMetadataUrl: META } },
      status: 401,
      challenge: `Bearer resource_metadata="${META}"`,
    },
    { name: 'no token, no metadata', setup: {}, status: 401, challenge: 'Bearer' },
    {
      name: 'no token, scopes required',
      setup: { options: { resourceMetadataUrl: META, requiredScopes: ['sess', 'sess:ask'] } },
      status: 401,
      challenge: `Bearer scope="sess sess:ask", resource_metadata="${META}"`,
    },
    {
      name: 'an invalid token, scopes required',
      setup: { headers: authorization, options: { resourceMetadataUrl: META, requiredScopes: ['sess'] } },
      status: 401,
      challenge: `Bearer error="invalid_token", scope="sess", resource_metadata="${META}"`,
    },
    {
      name: 'an invalid token, nothing else',
      setup: { headers: authorization },
      status: 401,
      challenge: 'Bearer error="invalid_token"',
    },
    {
      name: 'a missing scope',
      setup: {
        headers: authorization,
        options: { resourceMetadataUrl: META, requiredScopes: ['sess', 'sess:ask'] },
      },
      principal,
      status: 403,
      challenge: `Bearer error="insufficient_scope", scope="sess sess:ask", resource_metadata="${META}"`,
    },
  ];
  it.each(cases)(
    '$name: $status with its challenge',
    async ({ setup, principal: given, status, challenge }) => {
      const { ctx } = contextOf({ ...setup, options: { ...setup.options, authenticate: () => given } });
      methodStage(ctx);
      const refused = (await run(authenticationStage, ctx)) ?? scopeStage(ctx);
      expect(refused?.response.status).toBe(status);
      const header = refused?.response.headers.get('www-authenticate') ?? '';
      expect(header).toBe(challenge);
      expect(header).toMatch(GRAMMAR);
      expect(await refused!.response.json()).toMatchObject({
        error: status === 401 ? 'invalid_token' : 'insufficient_scope',
      });
    },
  );
});

describe('the body stage', () => {
  it('reads nothing for a method other than POST', async () => {
    const { ctx, reads } = contextOf({ method: 'GET' });
    expect(await run(bodyStage, ctx)).toBeUndefined();
    expect(reads()).toBe(0);
    expect(ctx.bytes).toBeUndefined();
  });

  it('reads and parses a JSON body once', async () => {
    const { ctx, reads } = contextOf({ body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(await run(bodyStage, ctx)).toBeUndefined();
    expect(reads()).toBe(1);
    expect(ctx.parsed).toEqual({ ok: true, value: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    expect(ctx.bytes?.byteLength).toBe(40);
  });

  it('lets a body that is not JSON on, for the SDK to answer', async () => {
    const { ctx } = contextOf({ body: '{not json' });
    expect(await run(bodyStage, ctx)).toBeUndefined();
    expect(ctx.parsed).toEqual({ ok: false });
  });

  it('refuses a declared length over maxBodyBytes with 413 before reading', async () => {
    const headers = { host: 'localhost', 'content-type': 'application/json', 'content-length': '11' };
    const { ctx, reads } = contextOf({ options: { maxBodyBytes: 10 }, headers });
    expect(summary(await run(bodyStage, ctx))).toEqual({
      status: 413,
      event: 'http.body_too_large',
      close: true,
    });
    expect(reads()).toBe(0);
  });

  it('refuses a media type that is not JSON with 415 before reading', async () => {
    const { ctx, reads } = contextOf({ headers: { host: 'localhost', 'content-type': 'text/plain' } });
    expect(summary(await run(bodyStage, ctx))?.status).toBe(415);
    expect(reads()).toBe(0);
  });

  it('refuses what the read reports: too large, stopped by the deadline or the close, unreadable', async () => {
    const cases: Array<[Setup, { status: number; event: string; close: boolean }]> = [
      [
        { options: { maxBodyBytes: 4 }, body: '{"a":1}' },
        { status: 413, event: 'http.body_too_large', close: true },
      ],
      [{ body: { kind: 'stopped' } }, { status: 408, event: 'http.body_timeout', close: true }],
      [
        { body: { kind: 'stopped' }, closing: true },
        { status: 503, event: 'http.closed', close: true },
      ],
      [{ body: { kind: 'failed' } }, { status: 400, event: 'http.body_failed', close: true }],
      [{ body: { kind: 'consumed' } }, { status: 400, event: 'http.body_consumed', close: true }],
    ];
    for (const [setup, expected] of cases) {
      expect(summary(await run(bodyStage, contextOf(setup).ctx))).toEqual(expected);
    }
  });
});

describe('the unsafe-key stage', () => {
  it('lets a body without an unsafe key on, and one that is not JSON', () => {
    const { ctx } = contextOf();
    expect(unsafeKeyStage(ctx)).toBeUndefined();
    ctx.parsed = parseBody('{"a":{"b":[1]}}');
    expect(unsafeKeyStage(ctx)).toBeUndefined();
    ctx.parsed = parseBody('{no');
    expect(unsafeKeyStage(ctx)).toBeUndefined();
  });

  it('refuses a key named __proto__, constructor or prototype anywhere, in the request era', async () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const { ctx } = contextOf();
      const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"x":[{"${key}":1}]}}}`;
      ctx.parsed = parseBody(body);
      const refused = unsafeKeyStage(ctx);
      const era = requestEra(ctx.incoming.headers, JSON.parse(body));
      expect(summary(refused)).toEqual({
        status: era === 'legacy' ? 200 : 400,
        event: 'http.unsafe_key',
        close: false,
      });
      const answer = (await refused!.response.json()) as {
        id: unknown;
        error: { code: number; data: unknown };
      };
      expect(answer.id).toBe(7);
      expect(answer.error.code).toBe(-32602);
      expect(answer.error.data).toEqual({ unsafeKey: key });
    }
  });
});

describe('the era stage', () => {
  const batch = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]';

  it('refuses a batch from a client whose protocol version has no batching', () => {
    const headers = { host: 'localhost', 'mcp-protocol-version': '2025-06-18' };
    const { ctx } = contextOf({ headers });
    ctx.parsed = parseBody(batch);
    expect(summary(eraStage(ctx))).toEqual({ status: 400, event: 'http.batch_refused', close: false });
  });

  it('lets a batch from a 2025-03-26 client on, and a single message from any', () => {
    const { ctx } = contextOf();
    ctx.parsed = parseBody(batch);
    expect(eraStage(ctx)).toBeUndefined();
    const modern = contextOf({ headers: { host: 'localhost', 'mcp-protocol-version': '2025-06-18' } }).ctx;
    modern.parsed = parseBody('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(eraStage(modern)).toBeUndefined();
  });
});

describe('the preflight', () => {
  it('runs every stage in order and lets a good request on, synchronously while nothing waits', async () => {
    const { ctx } = contextOf({ method: 'GET', options: { authenticate: () => principal } });
    expect(runPreflight(ctx)).toBeUndefined();
    expect(ctx.principal?.principalId).toBe('alice');
    const post = contextOf({ options: { authenticate: () => principal } }).ctx;
    expect(await runPreflight(post)).toBeUndefined();
    expect(post.parsed).toEqual({ ok: true, value: {} });
  });

  it('stops at the first refusal: nothing after it runs', () => {
    let authenticated = 0;
    const { ctx, reads } = contextOf({
      headers: { host: 'rebind.example' },
      options: {
        authenticate: () => {
          authenticated += 1;
          return principal;
        },
      },
    });
    expect(summary(runPreflight(ctx) as Refusal | undefined)?.event).toBe('http.host_rejected');
    expect(authenticated).toBe(0);
    expect(reads()).toBe(0);
  });

  it('lists the checks in the order the handler applies them', () => {
    expect(PREFLIGHT_STAGES).toEqual([
      hostStage,
      originStage,
      methodStage,
      authenticationStage,
      scopeStage,
      bodyStage,
      unsafeKeyStage,
      eraStage,
    ]);
  });
});
