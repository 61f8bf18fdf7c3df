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
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthHttpExample } from '../../examples/oauth-http.js';
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, listedHandles, ok, responseCode } from '../http/harness.js';
import { useSecretsAudit } from '../support/audit.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import {
  type BrowserDesk,
  configFile,
  connectThroughMcpRemote,
  mcpRemoteProxy,
  openDesk,
} from './mcp-remote.js';
import {
  BrowserSignInProvider,
  connectSignedIn,
  type RedirectEndpoint,
  startRedirectEndpoint,
} from './sign-in.js';

const MODES = ['principal', 'grant'] as const;
/** The client id of the agent that identifies itself with a Client ID Metadata Document. */
const CLIENT_METADATA_URL = 'https://agent.example/sess-mcp-test/client.json';
type Mode = (typeof MODES)[number];

if (!HAVE_CHROMIUM && process.env.CI) {
  it('has Chromium in CI', () => {
    throw new Error(`CI must not skip the reconnect suite: no Chromium at ${CHROMIUM}`);
  });
}
const proxy = mcpRemoteProxy();

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
      const { client } = await connectThroughMcpRemote({ proxy: proxy!, url, configDir, desk, user });
      clients.push(client);
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
