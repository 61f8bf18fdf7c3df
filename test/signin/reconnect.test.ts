/**
 * Reconnecting through a real agent-side OAuth client that registers anew on a fresh connection:
 * mcp-remote 0.15.1 (a stdio proxy, driven by the MCP v1 SDK's `Client` over
 * `StdioClientTransport`), in front of `examples/oauth-http.ts`, with the `oidc-provider`
 * authorization server of this folder (dynamic client registration) and headless Chromium
 * signing in and consenting when mcp-remote opens the browser (`BROWSER`, a small script that
 * hands the authorization URL to this process).
 *
 * One authorization server and one example server per `binding` option value, in this process:
 * - `'principal'`: mcp-remote with a fresh config directory (a new registration) lists the open
 *   interaction another registration of the same person made and reads its answer;
 * - `'grant'` (the default): the fresh registration lists nothing and gets `HANDLE_NOT_FOUND`;
 * - under both: the first registration's grant revoked and consented again makes the handle
 *   `BINDING_MISMATCH`; another person gets `HANDLE_NOT_FOUND`.
 *
 * And an agent with a Client ID Metadata Document (the MCP v2 client's `clientMetadataUrl`; the
 * authorization server reads the document from the test, not from the network), installed afresh
 * and signing in again, keeps its handles under the default binding: same client id, and the
 * authorization server gives the person's grant back (`rememberGrants`).
 *
 * Without Chromium or the mcp-remote install the suite is skipped (with the install command),
 * except under `CI`, where either fails.
 */
import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthHttpExample } from '../../examples/oauth-http.js';
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { requireHost } from '../hosts/matrix.js';
import { approveAnswer, approveSurface, listedHandles, ok, responseCode } from '../http/harness.js';
import { useSecretsAudit } from '../support/audit.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import {
  BrowserSignInProvider,
  connectSignedIn,
  type RedirectEndpoint,
  signInAndConsent,
  startRedirectEndpoint,
} from './sign-in.js';

const INSTALL = 'npm install --prefix .tmp/mcp-remote --no-audit --no-fund mcp-remote@0.15.1';
const MODES = ['principal', 'grant'] as const;
/** The client id of the agent that identifies itself with a Client ID Metadata Document. */
const CLIENT_METADATA_URL = 'https://agent.example/sess-mcp-test/client.json';
type Mode = (typeof MODES)[number];

if (!HAVE_CHROMIUM && process.env.CI) {
  it('has Chromium in CI', () => {
    throw new Error(`CI must not skip the reconnect suite: no Chromium at ${CHROMIUM}`);
  });
}
const proxy = HAVE_CHROMIUM
  ? requireHost('mcp-remote 0.15.1', '.tmp/mcp-remote/node_modules/mcp-remote/dist/proxy.js', INSTALL)
  : undefined;

/** Where mcp-remote's `BROWSER` hands authorization URLs: each launch signs in as its person. */
interface BrowserDesk {
  /** The `BROWSER` script for a launch that signs in as `user`. */
  script(user: string): Promise<string>;
  /** The sign-ins started, for `await`ing their end and failing on theirs. */
  signIns: Promise<unknown>[];
  close(): Promise<void>;
}

async function openDesk(browser: Browser, dir: () => Promise<string>): Promise<BrowserDesk> {
  const users = new Map<string, string>();
  const signIns: Promise<unknown>[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      const user = users.get(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
      if (req.method !== 'POST' || user === undefined) return void res.writeHead(404).end();
      res.writeHead(204).end();
      // mcp-remote's callback listens on localhost: consent ends once the browser is sent there.
      signIns.push(signInAndConsent(browser, new URL(body), user, (u) => u.pathname === '/oauth/callback'));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const desk = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let launches = 0;
  return {
    signIns,
    async script(user) {
      const launch = `launch${++launches}`;
      users.set(launch, user);
      const path = join(await dir(), `browser-${launch}.sh`);
      const send = `fetch(process.argv[1], { method: 'POST', body: process.argv[2] }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
      await writeFile(path, `#!/bin/sh\nexec "${process.execPath}" -e "${send}" "${desk}/${launch}" "$1"\n`);
      await chmod(path, 0o700);
      return path;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The one file of mcp-remote's config directory whose name ends with `suffix`, parsed. */
async function configFile(
  configDir: string,
  suffix: string,
): Promise<{ path: string; json: Record<string, string> }> {
  const dir = join(configDir, 'mcp-remote-v1');
  const name = (await readdir(dir)).find((entry) => entry.endsWith(suffix));
  if (name === undefined) throw new Error(`mcp-remote kept no ${suffix}`);
  const path = join(dir, name);
  return { path, json: JSON.parse(await readFile(path, 'utf8')) as Record<string, string> };
}

/** An agent host with a Client ID Metadata Document: its client id is the document's URL. */
class MetadataDocumentProvider extends BrowserSignInProvider {
  readonly clientMetadataUrl = CLIENT_METADATA_URL;
}

describe.skipIf(proxy === undefined)(
  'reconnecting through mcp-remote 0.15.1 (a new registration per connection)',
  () => {
    const audits = useSecretsAudit();
    const tempDir = useTempDirs('sess-mcp-reconnect-');
    let sess: LocalSess;
    let as: AuthorizationServer;
    let browser: Browser;
    let desk: BrowserDesk;
    let redirect: RedirectEndpoint;
    const examples = new Map<Mode, Awaited<ReturnType<typeof startOAuthHttpExample>>>();
    const events: DiagnosticEvent[] = [];
    const clients: Client[] = [];

    beforeAll(async () => {
      [sess, as, browser] = await Promise.all([
        startLocalSess(),
        startAuthorizationServer(),
        launchChromium(),
      ]);
      desk = await openDesk(browser, tempDir);
      const account = { workspaceId: sess.workspaceId, credential: () => sess.apiKey };
      for (const binding of MODES) {
        examples.set(
          binding,
          await startOAuthHttpExample({
            issuer: as.issuer,
            accounts: { find: () => account },
            sessOrigin: sess.origin,
            allowInsecureLocalhost: true,
            diagnostics: (event) => events.push(event),
            binding,
          }),
        );
      }
      redirect = await startRedirectEndpoint();
      // The agent's metadata document, as it would publish it at its URL.
      const document = {
        client_id: CLIENT_METADATA_URL,
        client_name: 'sess-mcp test agent',
        redirect_uris: [redirect.url],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
      await as.serve(Object.fromEntries([...examples.values()].map((example) => [example.url, ['sess']])), {
        clientMetadataDocuments: { [CLIENT_METADATA_URL]: document },
        rememberGrants: true,
      });
    });

    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => {});
      for (const example of examples.values()) await example.close();
      await desk?.close();
      await redirect?.close();
      await browser?.close();
      await as?.close();
      await sess?.close();
    });

    /** mcp-remote for `url` with `configDir`, signing in as `user` when it opens the browser. */
    async function connect(url: string, configDir: string, user: string): Promise<Client> {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [proxy!, url, '--allow-http'],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: configDir,
          MCP_REMOTE_CONFIG_DIR: configDir,
          BROWSER: await desk.script(user),
        },
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const client = new Client({ name: 'reconnect-test', version: '1.0.0' });
      clients.push(client);
      try {
        await client.connect(transport);
      } catch (error) {
        throw new Error(`mcp-remote did not connect: ${String(error)}\n${stderr}`);
      }
      return client;
    }

    /** Register mcp-remote's stored tokens of `configDir` with the audit. */
    async function audited(configDir: string): Promise<void> {
      const { json } = await configFile(configDir, '_tokens.json');
      audits.current.secret(json.access_token!, 'access token');
      if (json.refresh_token !== undefined) audits.current.secret(json.refresh_token, 'refresh token');
    }

    /** Revoke the grant of `configDir`'s registration at the authorization server, and forget its tokens. */
    async function revoke(configDir: string): Promise<void> {
      const tokens = await configFile(configDir, '_tokens.json');
      const { json: client } = await configFile(configDir, '_client_info.json');
      const metadata = (await (await fetch(`${as.issuer}/.well-known/openid-configuration`)).json()) as {
        revocation_endpoint: string;
      };
      const body = new URLSearchParams({
        token: tokens.json.refresh_token ?? tokens.json.access_token!,
        client_id: client.client_id!,
      });
      if (client.client_secret !== undefined) body.set('client_secret', client.client_secret);
      const revoked = await fetch(metadata.revocation_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(revoked.status).toBe(200);
      // The access token stays valid until it expires (the resource does not introspect): mcp-remote
      // forgets it, keeps its registration, and signs in again.
      await rm(tokens.path);
    }

    /** One binding's story, from the first registration to another person. */
    async function story(mode: Mode): Promise<void> {
      const url = examples.get(mode)!.url;

      // alice, first registration: an open interaction.
      const firstDir = await tempDir();
      const first = await connect(url, firstDir, 'alice');
      await audited(firstDir);
      const open = await ok(first, 'sess_request', { interaction: approveSurface });
      audits.current.url(open.humanUrl!, 'sess link');
      await first.close();
      const firstClient = (await configFile(firstDir, '_client_info.json')).json.client_id;

      // alice, a fresh config directory: a new registration.
      const freshDir = await tempDir();
      const fresh = await connect(url, freshDir, 'alice');
      await audited(freshDir);
      expect((await configFile(freshDir, '_client_info.json')).json.client_id).not.toBe(firstClient);
      if (mode === 'principal') {
        expect(await listedHandles(fresh)).toEqual([open.handle]);
        audits.current.answer(approveAnswer.values, 'answer value');
        await sess.submitAnswer(open.humanUrl!, approveAnswer);
        const answered = await ok(fresh, 'sess_response', {
          handle: open.handle,
          revision: 1,
          wait_ms: 5_000,
        });
        expect(answered.state).toBe('answered');
        expect(answered.response).toMatchObject({ values: approveAnswer.values, verified: true });
      } else {
        expect(await listedHandles(fresh)).toEqual([]);
        expect(await responseCode(fresh, open.handle)).toBe('HANDLE_NOT_FOUND');
      }
      await fresh.close();

      // The first registration's grant revoked, and consented again with that registration.
      await revoke(firstDir);
      const again = await connect(url, firstDir, 'alice');
      await audited(firstDir);
      expect((await configFile(firstDir, '_client_info.json')).json.client_id).toBe(firstClient);
      expect(await responseCode(again, open.handle)).toBe('BINDING_MISMATCH');
      expect(await listedHandles(again)).toEqual([]);
      await again.close();

      // Another person.
      const bobDir = await tempDir();
      const bob = await connect(url, bobDir, 'bob');
      await audited(bobDir);
      expect(await responseCode(bob, open.handle)).toBe('HANDLE_NOT_FOUND');
      expect(await listedHandles(bob)).toEqual([]);
      await bob.close();
    }

    // The two bindings' stories run side by side: each waits mostly on its sign-ins.
    it("'principal' keeps the handle for a fresh registration of the same person, 'grant' does not; under both, the same registration revoked and consented again gets BINDING_MISMATCH, another person HANDLE_NOT_FOUND", async () => {
      const started = performance.now();
      audits.current.secret(sess.apiKey, 'sess api key');
      audits.current.watch(events, 'diagnostics');
      audits.current.watch(as.errors, 'authorization server errors');
      const outcomes = await Promise.allSettled(MODES.map((mode) => story(mode)));
      await Promise.all(desk.signIns);
      outcomes.forEach((outcome, index) => {
        if (outcome.status === 'rejected') {
          throw new Error(`binding '${MODES[index]}': ${String(outcome.reason)}`, { cause: outcome.reason });
        }
      });
      expect(as.errors).toEqual([]);
      process.stderr.write(`reconnect: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    }, 120_000);

    it('a client with a Client ID Metadata Document keeps its handles under the default binding: installed afresh, it signs in again and reaches them', async () => {
      const url = examples.get('grant')!.url;
      const before = as.requests.length;
      const first = new MetadataDocumentProvider(browser, redirect, 'carol');
      const client = await connectSignedIn(first, url);
      expect(as.requests.slice(before)).not.toContain('POST /reg'); // no registration
      const claims = decodeJwt(first.tokens()!.access_token);
      expect(claims).toMatchObject({ sub: 'carol', client_id: CLIENT_METADATA_URL });
      audits.current.secret(first.tokens()!.access_token, 'access token');
      const open = await ok(client, 'sess_request', { interaction: approveSurface });
      audits.current.url(open.humanUrl!, 'sess link');
      await client.close();

      // Installed afresh: no registration, no token kept. The same client id, and the grant the
      // person consented to: the same grant generation.
      const fresh = new MetadataDocumentProvider(browser, redirect, 'carol');
      const again = await connectSignedIn(fresh, url);
      audits.current.secret(fresh.tokens()!.access_token, 'access token');
      expect(decodeJwt(fresh.tokens()!.access_token)).toMatchObject({
        client_id: CLIENT_METADATA_URL,
        grant_id: claims.grant_id,
      });
      expect(await listedHandles(again)).toEqual([open.handle]);
      expect(await responseCode(again, open.handle)).toBe('ok:waiting');
      await again.close();
      expect(as.errors).toEqual([]);
    }, 60_000);
  },
);
