/**
 * Real sign-in in front of the HTTP handler, with no double anywhere in the chain:
 * `examples/oauth-http.ts` bundled and run by itself as its own process (configured by its
 * environment, printing its endpoint), a real authorization server (`oidc-provider`: dynamic
 * registration, PKCE, JWT access tokens for the resource), the MCP v2 client's own OAuth flow
 * (`@modelcontextprotocol/client`: 401 → resource metadata → authorization server metadata →
 * registration → authorization code with PKCE → token), headless Chromium signing in and
 * consenting on the authorization server's pages, and the local Sess runtime answering.
 *
 * - The whole Sess flow after sign-in; a token refresh keeps the handles (same grant); revoking
 *   the grant and signing in again with the same client makes older handles `BINDING_MISMATCH`;
 *   another person signed in with that client gets `HANDLE_NOT_FOUND`.
 * - A token without the `sess` scope gets `403 insufficient_scope` naming it; a forged token, an
 *   authorization code used as a token, or a genuine token for another resource gets `401`.
 * - Started in this process as an application would, the example reads each person's Sess
 *   credential from the application's account store; a person without an account gets `401`.
 * - The secrets audit covers the example's stdout and stderr (its diagnostics), this process's
 *   console and the authorization server's errors: no access token, refresh token, authorization
 *   code, Sess key, link or answer value.
 *
 * Without `/usr/bin/chromium` (or `SESS_TEST_CHROMIUM`) the suite is skipped, except under `CI`,
 * where a missing browser fails. It never downloads a browser.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auth } from '@modelcontextprotocol/client';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningOAuthExample,
  type SessAccount,
  startOAuthHttpExample,
} from '../../examples/oauth-http.js';
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, call, ok } from '../http/harness.js';
import { rawExchange } from '../http/helpers.js';
import { type SecretsAudit, useSecretsAudit } from '../support/audit.js';
import { bundleWithPackages } from '../support/bundle.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import {
  BrowserSignInProvider,
  connectSignedIn,
  OtherResourceProvider,
  type RedirectEndpoint,
  startRedirectEndpoint,
} from './sign-in.js';

const SKIP_REASON = `no Chromium at ${CHROMIUM}; run: bash scripts/ci-chromium.sh`;

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');

/** The example running in its own process. */
interface ExampleProcess {
  url: string;
  stdout(): string;
  stderr(): string;
  close(): Promise<void>;
}

/** Bundle the example (npm packages stay external and resolve from this repository). */
async function bundleExample(): Promise<string> {
  return bundleWithPackages(
    join(root, 'examples', 'oauth-http.ts'),
    'sess-mcp-signin-test',
    `oauth-http-${process.pid}.mjs`,
  );
}

/** Run the bundled example with `env` and wait for the endpoint it prints. */
async function runExample(bundle: string, env: Record<string, string>): Promise<ExampleProcess> {
  const child: ChildProcess = spawn(process.execPath, [bundle], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the example printed no endpoint: ${stderr}`)), 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = /^MCP endpoint: (\S+)$/m.exec(stdout);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited (${code}): ${stderr}`));
    });
  });
  return {
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

if (!HAVE_CHROMIUM) {
  if (process.env.CI) {
    describe('sign-in in front of the HTTP handler', () => {
      it('has Chromium in CI', () => {
        throw new Error(`CI must not skip the sign-in suite: ${SKIP_REASON}`);
      });
    });
  } else {
    process.stderr.write(`Sign-in suite skipped: ${SKIP_REASON}\n`);
    describe.skip(`sign-in in front of the HTTP handler (skipped: ${SKIP_REASON})`, () => {
      it('needs Chromium', () => {});
    });
  }
} else {
  const audits = useSecretsAudit();
  let bundle = '';
  let sess: LocalSess;
  let as: AuthorizationServer;
  let example: ExampleProcess;
  /** The example started in this process, as an application would, with its own account store. */
  let embedded: RunningOAuthExample;
  const embeddedEvents: DiagnosticEvent[] = [];
  /** The application's account store: who has a Sess account, and every lookup and key read. */
  const accounts = new Map<string, SessAccount>();
  const lookups: string[] = [];
  let credentialReads = 0;
  let browser: Browser;
  let redirect: RedirectEndpoint;
  /** What this process wrote through `console` while the suite ran. */
  const consoleLines: string[] = [];
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const originalConsole = consoleMethods.map((m) => console[m]);

  beforeAll(async () => {
    for (const method of consoleMethods) {
      const original = console[method];
      console[method] = (...args: unknown[]) => {
        consoleLines.push(
          args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '),
        );
        original.apply(console, args);
      };
    }
    bundle = await bundleExample();
    sess = await startLocalSess();
    as = await startAuthorizationServer();
    example = await runExample(bundle, {
      OAUTH_ISSUER: as.issuer,
      PORT: '0',
      SESS_API_KEY: sess.apiKey,
      SESS_WORKSPACE_ID: sess.workspaceId,
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_DIAGNOSTICS: '1',
    });
    embedded = await startOAuthHttpExample({
      issuer: as.issuer,
      accounts: {
        find: (issuer, subject) => {
          lookups.push(`${issuer} ${subject}`);
          return accounts.get(subject);
        },
      },
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
      diagnostics: (event) => embeddedEvents.push(event),
    });
    accounts.set('alice', {
      workspaceId: sess.workspaceId,
      credential: () => {
        credentialReads += 1;
        return sess.apiKey;
      },
    });
    await as.serve({
      [example.url]: ['sess', 'notes'],
      [embedded.url]: ['sess'],
      // Another resource of the same authorization server: its tokens are not for this one.
      [`${new URL(example.url).origin}/other`]: ['sess'],
    });
    browser = await launchChromium();
    redirect = await startRedirectEndpoint();
  });

  afterAll(async () => {
    await browser?.close();
    await redirect?.close();
    await example?.close();
    await embedded?.close();
    await as?.close();
    await sess?.close();
    await rm(bundle, { force: true });
    consoleMethods.forEach((method, i) => {
      console[method] = originalConsole[i]!;
    });
  });

  /** Watch every place a secret must not reach, and register the ones every test knows. */
  function audited(): SecretsAudit {
    const audit = audits.current;
    audit.secret(sess.apiKey, 'sess api key');
    audit.watch(() => example.stdout(), 'example stdout');
    audit.watch(() => example.stderr(), 'example stderr (diagnostics)');
    audit.watch(consoleLines, 'test process console');
    audit.watch(as.errors, 'authorization server errors');
    audit.watch(embeddedEvents, 'in-process diagnostics');
    return audit;
  }

  /** Register the tokens and codes a provider holds now. */
  function registerTokens(audit: SecretsAudit, provider: BrowserSignInProvider): void {
    const tokens = provider.tokens();
    if (tokens === undefined) throw new Error('no tokens');
    audit.secret(tokens.access_token, 'access token');
    if (tokens.refresh_token !== undefined) audit.secret(tokens.refresh_token, 'refresh token');
    for (const code of provider.log.codes) audit.secret(code, 'authorization code');
  }

  /** `expected` occurs in `actual` in this order (other entries may come between). */
  function expectInOrder(actual: readonly string[], expected: readonly string[]): void {
    let at = 0;
    for (const entry of actual) if (entry === expected[at]) at += 1;
    expect(expected.slice(at), `requests seen: ${actual.join(', ')}`).toEqual([]);
  }

  /** Connect; when the server asks for sign-in, let the browser sign in and connect again. */
  const connect = (provider: BrowserSignInProvider, url = example.url) => connectSignedIn(provider, url);

  it('signs in from the 401, runs the Sess flow, keeps handles on refresh, refuses them after re-consent and to another person', async () => {
    const audit = audited();
    expect(example.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    // 1. The 401 names the scope it requires and the resource metadata; the metadata names the
    // authorization server.
    const refused = await fetch(example.url, { method: 'POST' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer scope="sess", resource_metadata="/);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(
      refused.headers.get('www-authenticate') ?? '',
    )?.[1];
    expect(metadataUrl).toBe(`${new URL(example.url).origin}/.well-known/oauth-protected-resource/mcp`);
    expect(await (await fetch(metadataUrl!)).json()).toMatchObject({
      resource: example.url,
      authorization_servers: [as.issuer],
      scopes_supported: ['sess'],
    });

    // 2. The client signs in on its own: discovery, registration, PKCE, consent, token.
    const alice = new BrowserSignInProvider(browser, redirect, 'alice');
    const before = as.requests.length;
    const client = await connect(alice);
    const seen = as.requests.slice(before).map((r) => r.replace(/\/(interaction|auth)\/[^/]+$/, '/$1/:uid'));
    expectInOrder(seen, [
      'GET /.well-known/oauth-authorization-server', // the client's discovery (RFC 8414)
      'POST /reg', // dynamic client registration
      'GET /auth', // the browser: authorization request with PKCE and the resource
      'GET /interaction/:uid', // the sign-in page
      'POST /interaction/:uid',
      'GET /auth/:uid',
      'GET /interaction/:uid', // the consent page
      'POST /interaction/:uid',
      'GET /auth/:uid', // redirect to the client with the code
      'POST /token', // the client redeems the code with its PKCE verifier
      'GET /.well-known/oauth-authorization-server', // the resource finds the keys
      'GET /jwks',
    ]);
    registerTokens(audit, alice);
    expect(alice.log.codes).toHaveLength(1);
    expect(alice.log.pages).toHaveLength(2); // the sign-in page, then the consent page
    const authorizationUrl = alice.log.authorizationUrls[0]!;
    expect(authorizationUrl.origin).toBe(as.issuer);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(example.url);
    expect(authorizationUrl.searchParams.get('scope')?.split(' ')).toContain('sess');
    const clientId = alice.clientInformation()!.client_id;
    expect(authorizationUrl.searchParams.get('client_id')).toBe(clientId);
    const first = alice.tokens()!;
    expect(decodeProtectedHeader(first.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    const claims = decodeJwt(first.access_token);
    expect(claims).toMatchObject({ iss: as.issuer, aud: example.url, sub: 'alice', client_id: clientId });
    expect(String(claims.scope).split(' ')).toContain('sess');
    expect(first.refresh_token).toBeDefined();
    const grant = claims.grant_id;
    expect(typeof grant).toBe('string');

    // 3. The Sess flow, with a refresh between the question and the answer.
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audit.url(created.humanUrl!, 'sess link');
    await client.close();
    expect(await auth(alice, { serverUrl: example.url })).toBe('AUTHORIZED');
    registerTokens(audit, alice);
    const refreshed = alice.tokens()!;
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect(decodeJwt(refreshed.access_token).grant_id).toBe(grant);
    expect(alice.log.codes).toHaveLength(1); // no new sign-in

    const afterRefresh = await connect(alice);
    audit.answer(approveAnswer.values, 'answer value');
    await sess.submitAnswer(created.humanUrl!, approveAnswer);
    const answered = await ok(afterRefresh, 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(answered.state).toBe('answered');
    expect(answered.response).toMatchObject({
      action: approveAnswer.action,
      values: approveAnswer.values,
      verified: true,
    });
    const completed = await ok(afterRefresh, 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: answered.response!.eventId,
    });
    expect(completed.state).toBe('completed');
    const open = await ok(afterRefresh, 'sess_request', { interaction: approveSurface });
    audit.url(open.humanUrl!, 'sess link');
    await afterRefresh.close();

    // 4. Revoke the grant at the authorization server, sign in again with the same client.
    const asMetadata = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as {
      revocation_endpoint: string;
      token_endpoint: string;
    };
    const revoked = await fetch(asMetadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: refreshed.refresh_token!,
        token_type_hint: 'refresh_token',
        client_id: clientId,
      }),
    });
    expect(revoked.status).toBe(200);
    const reused = await fetch(asMetadata.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshed.refresh_token!,
        client_id: clientId,
      }),
    });
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
    // The authorization server reports the refused refresh; that one report is expected.
    expect(as.errors.splice(0)).toEqual(['grant.error: InvalidGrant']);
    alice.forgetTokens();
    const reconsented = await connect(alice);
    registerTokens(audit, alice);
    expect(alice.log.codes).toHaveLength(2);
    expect(alice.clientInformation()!.client_id).toBe(clientId); // no second registration
    const regranted = decodeJwt(alice.tokens()!.access_token);
    expect(regranted).toMatchObject({ sub: 'alice', client_id: clientId });
    expect(regranted.grant_id).not.toBe(grant);
    const stale = await call(reconsented, 'sess_response', { handle: open.handle, revision: 1, wait_ms: 0 });
    expect(stale.ok ? 'ok' : stale.error.code).toBe('BINDING_MISMATCH');
    const current = await ok(reconsented, 'sess_request', { interaction: approveSurface });
    audit.url(current.humanUrl!, 'sess link');
    expect(
      (await ok(reconsented, 'sess_response', { handle: current.handle, revision: 1, wait_ms: 0 })).state,
    ).toBe('waiting');
    await reconsented.close();

    // 5. Another person signs in with the same client: none of alice's handles exist for them.
    alice.user = 'bob';
    alice.forgetTokens();
    const bob = await connect(alice);
    registerTokens(audit, alice);
    expect(decodeJwt(alice.tokens()!.access_token)).toMatchObject({ sub: 'bob', client_id: clientId });
    for (const handle of [current.handle, open.handle]) {
      const outcome = await call(bob, 'sess_response', { handle, revision: 1, wait_ms: 0 });
      expect(outcome.ok ? 'ok' : outcome.error.code).toBe('HANDLE_NOT_FOUND');
    }
    await bob.close();

    // The audit had something to read: the handler's diagnostics of this flow.
    expect(example.stderr()).toContain('http.unauthenticated');
    expect(example.stderr()).toContain('tool_result');
    expect(as.errors).toEqual([]);
  }, 120_000);

  it('answers 403 insufficient_scope to a token without the sess scope, 401 to a forged one or one for another resource', async () => {
    const audit = audited();
    const carol = new BrowserSignInProvider(browser, redirect, 'carol');
    // Ask for the other scope only: the client's own flow, driven step by step.
    expect(await auth(carol, { serverUrl: example.url, scope: 'notes' })).toBe('REDIRECT');
    const params = await carol.callbackParams();
    expect(
      await auth(carol, {
        serverUrl: example.url,
        scope: 'notes',
        authorizationCode: params.get('code')!,
        ...(params.get('iss') === null ? {} : { iss: params.get('iss')! }),
      }),
    ).toBe('AUTHORIZED');
    registerTokens(audit, carol);
    const token = carol.tokens()!.access_token;
    expect(String(decodeJwt(token).scope).split(' ')).not.toContain('sess');

    const narrow = await fetch(example.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(narrow.status).toBe(403);
    const challenge = narrow.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="sess"');

    const forged = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    for (const bearer of [forged, carol.log.codes[0]!]) {
      const response = await fetch(example.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(response.status).toBe(401);
    }

    // A genuine token of the same authorization server, but for another resource (RFC 8707).
    const other = `${new URL(example.url).origin}/other`;
    const dave = new OtherResourceProvider(browser, redirect, 'dave', other);
    expect(await auth(dave, { serverUrl: example.url })).toBe('REDIRECT');
    expect(dave.log.authorizationUrls[0]!.searchParams.get('resource')).toBe(other);
    const daveParams = await dave.callbackParams();
    expect(
      await auth(dave, {
        serverUrl: example.url,
        authorizationCode: daveParams.get('code')!,
        ...(daveParams.get('iss') === null ? {} : { iss: daveParams.get('iss')! }),
      }),
    ).toBe('AUTHORIZED');
    registerTokens(audit, dave);
    const foreign = dave.tokens()!.access_token;
    expect(decodeJwt(foreign)).toMatchObject({ aud: other, sub: 'dave' });
    expect(String(decodeJwt(foreign).scope).split(' ')).toContain('sess');
    const misdirected = await fetch(example.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${foreign}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(misdirected.status).toBe(401);
    expect(as.errors).toEqual([]);
  }, 60_000);

  it('in an application: the Sess credential comes from its account store; a person without an account gets 401', async () => {
    const audit = audited();
    const alice = new BrowserSignInProvider(browser, redirect, 'alice');
    const client = await connect(alice, embedded.url);
    registerTokens(audit, alice);
    expect(decodeJwt(alice.tokens()!.access_token).aud).toBe(embedded.url);
    const readsBefore = credentialReads;
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audit.url(created.humanUrl!, 'sess link');
    expect(credentialReads).toBeGreaterThan(readsBefore); // the Sess call used the stored key
    expect(lookups).toContain(`${as.issuer} alice`);
    await client.close();

    const erin = new BrowserSignInProvider(browser, redirect, 'erin');
    expect(await auth(erin, { serverUrl: embedded.url })).toBe('REDIRECT');
    const params = await erin.callbackParams();
    expect(
      await auth(erin, {
        serverUrl: embedded.url,
        authorizationCode: params.get('code')!,
        ...(params.get('iss') === null ? {} : { iss: params.get('iss')! }),
      }),
    ).toBe('AUTHORIZED');
    registerTokens(audit, erin);
    const response = await fetch(embedded.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${erin.tokens()!.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(lookups).toContain(`${as.issuer} erin`);
    expect(embeddedEvents.map((e) => e.event)).toContain('http.unauthenticated');
    expect(as.errors).toEqual([]);
  }, 60_000);

  it('answers Expect: 100-continue at /mcp only after the token check: a request without one gets 401 and never 100 Continue', async () => {
    const { port } = new URL(embedded.url);
    const head = (path: string, authorization: string) =>
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${authorization}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200000\r\nExpect: 100-continue`;
    for (const authorization of ['', 'Authorization: Bearer forged.token.value\r\n']) {
      const seen = await rawExchange(Number(port), head('/mcp', authorization), { maxMs: 3_000 });
      expect(seen.text).not.toMatch(/HTTP\/1\.1 100/);
      expect(seen.status).toBe(401);
      // No token: the scope and the metadata; a token the server refused: invalid_token first.
      expect(seen.text).toMatch(
        authorization === ''
          ? /www-authenticate: Bearer scope="[^"]+", resource_metadata=/i
          : /www-authenticate: Bearer error="invalid_token", scope="[^"]+", resource_metadata=/i,
      );
      expect(seen.bodyBytesSent).toBe(0);
    }
    // Any other path of the example's server still gets 100 Continue, then its own answer.
    const other = await rawExchange(Number(port), head('/elsewhere', ''), { maxMs: 1_000 });
    expect(other.text).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
  });
}
