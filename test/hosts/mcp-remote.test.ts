/**
 * mcp-remote 0.15.1 as desktop hosts use it for a remote server: the MCP v1 SDK's `Client` over
 * `StdioClientTransport` spawns `mcp-remote <url>`, which signs in (dynamic client registration,
 * headless Chromium consenting when it opens the browser) to `examples/oauth-http.ts` with the
 * `oidc-provider` authorization server of `test/signin/`, and proxies every message.
 *
 * mcp-remote has no model: the desktop host behind it decides what its model sees. So the "host"
 * here is the SDK client itself, making the calls the matrix's script picks from what the client
 * received (the instructions of `initialize`, the tools list, each call result as mcp-remote handed
 * it over: the content blocks and `structuredContent`). The row says what crosses the proxy, and
 * whether mcp-remote cuts a 45 s call.
 *
 * Without Chromium or the mcp-remote install the suite is skipped (with the install command),
 * except under `CI`, where either fails.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOAuthHttpExample } from '../../examples/oauth-http.js';
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { connectLegacy } from '../http/helpers.js';
import { type AuthorizationServer, startAuthorizationServer } from '../signin/authorization-server.js';
import {
  type BrowserDesk,
  configFile,
  connectThroughMcpRemote,
  MCP_REMOTE_VERSION,
  mcpRemoteProxy,
  openDesk,
} from '../signin/mcp-remote.js';
import { createSecretsAudit, type SecretsAudit } from '../support/audit.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { useTempDirs } from '../support/temp-dirs.js';
import {
  expectFullRun,
  type FlowOutcome,
  type HostResult,
  keysOnlyAudit,
  ROOT,
  reachOf,
  requestBodies,
  toolDescriptionsIn,
  writeHostResult,
} from './matrix.js';
import { MARKERS, probeLongCall, runFlow } from './run-flow.js';
import { FLOWS, type FlowName, nextStep, promptFor } from './script.js';
import { createStandInLog, type StandInLog } from './stand-in-log.js';

if (!HAVE_CHROMIUM && process.env.CI) {
  it('has Chromium in CI', () => {
    throw new Error(`CI must not skip the mcp-remote row: no Chromium at ${CHROMIUM}`);
  });
}
const proxy = mcpRemoteProxy();

/**
 * How long the SDK client lets a call run: far above the probe's 45 s (its default is 60 s), so
 * that a cut the row sees is mcp-remote's.
 */
const CLIENT_TIMEOUT_MS = 120_000;

/** The text of a result's text blocks, and the result as mcp-remote handed it over (JSON). */
interface Received {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * The scripted host over one mcp-remote connection: each turn lists the tools, then asks the script
 * for the next step from the instructions, the prompt and the results so far, logging each step as
 * a model request (its body: what a host could give its model), until the script ends the turn.
 */
function scriptedHost(client: Client, log: StandInLog) {
  const instructions = client.getInstructions() ?? '';
  return async (flow: FlowName): Promise<void> => {
    const { tools } = await client.listTools();
    const toolNames = tools.map((t) => t.name);
    const prompt = promptFor(flow);
    const toolResults: string[] = [];
    for (let turn = 0; turn < 24; turn += 1) {
      const step = nextStep({ promptText: `${instructions}\n${prompt}`, toolNames, toolResults });
      log.requests.push({
        api: 'mcp-remote',
        body: JSON.stringify({ instructions, prompt, tools, toolResults }),
        toolNames,
        toolResults: [...toolResults],
        step,
      });
      if (step.kind === 'text') return;
      const result = (await client.callTool({ name: step.name, arguments: step.arguments }, undefined, {
        timeout: CLIENT_TIMEOUT_MS,
      })) as Received;
      toolResults.push(
        JSON.stringify({
          content: result.content ?? [],
          ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
          ...(result.isError === true ? { isError: true } : {}),
        }),
      );
    }
  };
}

describe.skipIf(proxy === undefined)(`mcp-remote ${MCP_REMOTE_VERSION}`, () => {
  const tempDir = useTempDirs('sess-mcp-hosts-mcp-remote-');
  let sess: LocalSess;
  let probeSess: LocalSess;
  let as: AuthorizationServer;
  let browser: Browser;
  let desk: BrowserDesk;
  let example: Awaited<ReturnType<typeof startOAuthHttpExample>>;
  let probeExample: Awaited<ReturnType<typeof startOAuthHttpExample>>;
  const events: DiagnosticEvent[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    [sess, probeSess, as, browser] = await Promise.all([
      startLocalSess(),
      startLocalSess(),
      startAuthorizationServer(),
      launchChromium(),
    ]);
    desk = await openDesk(browser, tempDir);
    // The probe's server and runtime are their own, so its unanswered question is never taken
    // for a flow's.
    const start = (runtime: LocalSess) =>
      startOAuthHttpExample({
        issuer: as.issuer,
        accounts: { find: () => ({ workspaceId: runtime.workspaceId, credential: () => runtime.apiKey }) },
        sessOrigin: runtime.origin,
        allowInsecureLocalhost: true,
        diagnostics: (event) => events.push(event),
      });
    [example, probeExample] = await Promise.all([start(sess), start(probeSess)]);
    await as.serve({ [example.url]: ['sess'], [probeExample.url]: ['sess'] });
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await example?.close();
    await probeExample?.close();
    await desk?.close();
    await browser?.close();
    await as?.close();
    await probeSess?.close();
    await sess?.close();
  });

  /** mcp-remote signed in as `user`, its stored tokens handed to `audit` as secrets. */
  async function connect(url: string, user: string, audit: SecretsAudit) {
    const configDir = await tempDir();
    const connection = await connectThroughMcpRemote({
      proxy: proxy!,
      url,
      configDir,
      desk,
      user,
      clientName: 'host-matrix',
    });
    clients.push(connection.client);
    const { json } = await configFile(configDir, '_tokens.json');
    audit.secret(json.access_token!, `${user}'s access token`);
    if (json.refresh_token !== undefined) audit.secret(json.refresh_token, `${user}'s refresh token`);
    return { ...connection, accessToken: json.access_token! };
  }

  it('runs every flow through mcp-remote with a scripted host, lets a 45 s call run, and no key or token reaches what the host received', async () => {
    const audit = createSecretsAudit();
    audit.secret(sess.apiKey, 'sess api key');
    audit.secret(probeSess.apiKey, 'sess api key of the probe');
    audit.watch(events, 'diagnostics');
    const [flowsConnection, probeConnection] = await Promise.all([
      connect(example.url, 'alice', audit),
      connect(probeExample.url, 'bob', audit),
    ]);
    await Promise.all(desk.signIns);
    const log = createStandInLog();
    const probeLog = createStandInLog();
    const host = scriptedHost(flowsConnection.client, log);
    const probeHost = scriptedHost(probeConnection.client, probeLog);

    const probe = probeLongCall(probeLog, () => probeHost('long'));
    const flows: FlowOutcome[] = [];
    for (const flow of FLOWS) flows.push(await runFlow(sess, flow, log, audit, () => host(flow)));
    const callTimeout = await probe;

    // What crosses the proxy unchanged: the same client connected straight to the server with
    // mcp-remote's own token (same grant, so the same handles) gets the same instructions, tools
    // and list result.
    const direct = await connectLegacy(example.url, {
      authorization: `Bearer ${flowsConnection.accessToken}`,
    });
    clients.push(direct);
    const viaProxy = flowsConnection.client;
    const unchanged =
      isDeepStrictEqual(direct.getInstructions(), viaProxy.getInstructions()) &&
      isDeepStrictEqual(await direct.listTools(), await viaProxy.listTools()) &&
      isDeepStrictEqual(
        await direct.callTool({ name: 'sess_list', arguments: {} }),
        await viaProxy.callTool({ name: 'sess_list', arguments: {} }),
      );
    audit.text(`${flowsConnection.stderr()}\n${probeConnection.stderr()}`, 'mcp-remote stderr');

    const keysOnly = keysOnlyAudit(sess, log, { bearer: false });
    keysOnly.secret(probeSess.apiKey, 'sess api key of the probe');
    keysOnly.text(requestBodies(probeLog), 'what the probe host received');
    const instructions = flowsConnection.client.getInstructions() ?? '';
    const version = (
      JSON.parse(
        await readFile(join(ROOT, '.tmp/mcp-remote/node_modules/mcp-remote/package.json'), 'utf8'),
      ) as { version: string }
    ).version;
    const result: HostResult = {
      host: 'mcp-remote (what desktop hosts run for a remote server)',
      version: `mcp-remote ${version} (Node ${process.versions.node}), driven by \`@modelcontextprotocol/sdk\` \`Client\` over stdio`,
      transport: 'HTTP',
      ...reachOf(log, []),
      progressToken: 'not observable',
      callTimeout,
      instructions: instructions.includes(MARKERS.instructions)
        ? `in the \`initialize\` result mcp-remote hands its local client, whole (${instructions.length} characters); what reaches a model is the desktop host's choice`
        : 'not handed to the local client',
      toolDescriptions: `${toolDescriptionsIn(requestBodies(log)).replace('in the tools list', 'in the tools list mcp-remote hands its local client')}`,
      flows,
      notes: [
        'a proxy with no model: the "host" is the SDK client making the calls the script picks, and "what reaches the model" is what mcp-remote handed that client, the text block and `structuredContent` both; the desktop host behind it picks what its model sees',
        unchanged
          ? 'passed through unchanged: the same client connected straight to the server with mcp-remote’s token got the same instructions, tools list and `sess_list` result'
          : 'NOT passed through unchanged: a client connected straight to the server with mcp-remote’s token got other instructions, tools or `sess_list` result',
        'tool names unprefixed: mcp-remote lists the server’s tools as they are (a desktop host may prefix them, as Claude Code does)',
        `the sign-in: mcp-remote registers a client (dynamic client registration), opens \`BROWSER\` with the authorization URL, and keeps the tokens under \`MCP_REMOTE_CONFIG_DIR\`; headless Chromium signs in and consents`,
        `the long-call probe ran beside the flows through a second mcp-remote to a second server of the example (a runtime of its own); the SDK client's own timeout was raised to ${CLIENT_TIMEOUT_MS / 1000} s, so a cut would be mcp-remote's`,
      ],
    };
    await writeHostResult('mcp-remote-http', result);
    await writeHostResult('mcp-remote-http.model-log', log.requests as never);
    expectFullRun(result);
    expect(result.toolName).toBe('sess_request');
    expect(unchanged, 'what mcp-remote hands over equals what the server sends').toBe(true);
    expect(as.errors).toEqual([]);
    audit.assertClean();
    keysOnly.assertClean();
  }, 150_000);
});
