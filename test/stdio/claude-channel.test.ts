/**
 * Claude Code's channel, at the protocol level (Claude Code refuses channels under API-key
 * authentication, so no real host can show it here): with `SESS_MCP_CLAUDE_CHANNEL=1` the
 * `sess-mcp` server declares `experimental['claude/channel']` and, when a late answer is saved,
 * sends `notifications/claude/channel` naming the handle and the call to make, never a value or a
 * link. Without it, neither. A real MCP client (SDK v1) over stdio, the local Sess runtime.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_CHANNEL_METHOD } from '../../src/stdio/claude-channel.js';
import { startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit } from '../support/audit.js';
import { approveSurface } from '../support/surfaces.js';
import { buildSessMcpBin, cleanBuilds, serverEnv, tempStateDir } from './harness.js';

afterAll(cleanBuilds);
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A v1 client on a fresh `sess-mcp`, every notification it gets recorded. */
async function connect(channel: boolean) {
  const sess = await startLocalSess();
  const state = await tempStateDir();
  closers.push(
    () => sess.close(),
    () => state.remove(),
  );
  const audit = createSecretsAudit();
  audit.secret(sess.apiKey, 'api key');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [await buildSessMcpBin()],
    env: serverEnv({
      SESS_API_KEY: sess.apiKey,
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_STATE_DIR: state.dir,
      SESS_MCP_MAX_WAIT_MS: '300',
      ...(channel ? { SESS_MCP_CLAUDE_CHANNEL: '1' } : {}),
    }),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'channel-test', version: '1.0.0' }, { capabilities: {} });
  const notifications: { method: string; params?: unknown }[] = [];
  client.fallbackNotificationHandler = async (notification) => {
    notifications.push(notification);
  };
  await client.connect(transport);
  closers.push(() => client.close());
  return { sess, client, notifications, audit };
}

const structured = (result: unknown) =>
  (result as { structuredContent: { interaction: { handle: string; humanUrl?: string; state: string } } })
    .structuredContent.interaction;

describe('Claude Code channel (opt-in)', () => {
  it('declares claude/channel and pushes the late answer as a channel message naming the call', async () => {
    const { sess, client, notifications, audit } = await connect(true);
    expect(client.getServerCapabilities()?.experimental).toEqual({ 'claude/channel': {} });
    const created = structured(
      await client.callTool({ name: 'sess_request', arguments: { interaction: approveSurface } }),
    );
    audit.url(created.humanUrl!, 'sess link');
    expect(
      structured(
        await client.callTool({ name: 'sess_response', arguments: { handle: created.handle, revision: 1 } }),
      ).state,
    ).toBe('waiting');
    const message = 'channel answer, zebra crossing';
    audit.answer({ message });
    await sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message } });
    const end = Date.now() + 20_000;
    while (!notifications.some((n) => n.method === CLAUDE_CHANNEL_METHOD) && Date.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    const pushed = notifications.filter((n) => n.method === CLAUDE_CHANNEL_METHOD);
    expect(pushed).toHaveLength(1);
    expect(pushed[0]!.params).toEqual({
      content: `Sess: interaction ${created.handle} is answered. Call sess_response {"handle":"${created.handle}","revision":1} now and act only on its verified result.`,
      meta: {
        source: 'sess',
        event: 'answered',
        handle: created.handle,
        event_id: `evt_${created.handle}_1`,
      },
    });
    audit.text(JSON.stringify(notifications), 'notifications');
    audit.assertClean();
  });

  it('without SESS_MCP_CLAUDE_CHANNEL: no capability, no channel message', async () => {
    const { sess, client, notifications, audit } = await connect(false);
    expect(client.getServerCapabilities()?.experimental).toBeUndefined();
    const created = structured(
      await client.callTool({ name: 'sess_request', arguments: { interaction: approveSurface } }),
    );
    audit.url(created.humanUrl!, 'sess link');
    await client.callTool({ name: 'sess_response', arguments: { handle: created.handle, revision: 1 } });
    await sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message: 'fine by me' } });
    // The watcher saves the answer; nothing is pushed.
    const answered = structured(
      await client.callTool({
        name: 'sess_response',
        arguments: { handle: created.handle, revision: 1, wait_ms: 10_000 },
      }),
    );
    expect(answered.state).toBe('answered');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(notifications.filter((n) => n.method === CLAUDE_CHANNEL_METHOD)).toEqual([]);
  });
});
