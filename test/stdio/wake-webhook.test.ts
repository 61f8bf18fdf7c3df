/**
 * Events of the stdio server delivered as Standard Webhooks, end to end: a real `sess-mcp` child,
 * the local Sess runtime, a receiver on 127.0.0.1, and every delivery verified with the
 * `standardwebhooks` package (the reference verifier), never this package's code. The person
 * answers after the agent's last wait; the watcher saves the answer and its event, and the
 * event reaches the receiver with no tool call. Crash cells kill the server with SIGKILL right
 * after the state change was saved, and right after the receiver took the event; after a restart
 * the event arrives with the same `webhook-id`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useStdioStack } from '../support/stdio-stack.js';
import { approveSurface } from '../support/surfaces.js';
import {
  newSecret,
  type ReceiverExchange,
  startWebhookReceiver,
  verifyDelivery,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';
import { connectStdio, errorOf, interactionOf, runBin } from './harness.js';

const stdio = useStdioStack();

/** Poll `check` every 50 ms until it holds, at most `ms`. */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const receivers: WebhookReceiver[] = [];
async function receiver(reply?: (exchange: ReceiverExchange) => unknown): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(reply as never);
  receivers.push(started);
  return started;
}

/** A stack whose server sends its events to `hook`, signed with `secret`. */
async function startWithWebhook(hook: WebhookReceiver, secret: string, env: Record<string, string> = {}) {
  stdio.audit.secret(secret, 'webhook secret');
  return stdio.start({
    env: {
      SESS_MCP_MAX_WAIT_MS: '300',
      SESS_MCP_WEBHOOK_URL: hook.url,
      SESS_MCP_WEBHOOK_SECRET: secret,
      SESS_MCP_TEST_WEBHOOK_SCALE: '0.0001',
      ...env,
    },
  });
}

/** Ask, wait once (still waiting), and have the person answer later: the handle. */
async function askThenAnswer(stack: Awaited<ReturnType<typeof startWithWebhook>>): Promise<string> {
  const created = interactionOf(await stack.server.callTool('sess_request', { interaction: approveSurface }));
  stdio.audit.url(created.humanUrl!, 'sess link');
  expect(
    interactionOf(await stack.server.callTool('sess_response', { handle: created.handle, revision: 1 }))
      .state,
  ).toBe('waiting');
  const message = 'ship it on friday, zebra';
  stdio.audit.answer({ message });
  await stack.sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message } });
  return created.handle;
}

/** Every request the receiver got, verified by the reference library: the payloads. */
function verifiedPayloads(hook: WebhookReceiver, secret: string): unknown[] {
  for (const received of hook.received)
    stdio.audit.text(received.body + JSON.stringify(received.headers), 'webhook');
  return hook.received.map((received) => verifyDelivery(received, secret));
}

describe('events as webhooks (stdio)', () => {
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  it('a late answer reaches the receiver, signed, a reference only, with no tool call', async () => {
    const secret = newSecret();
    const hook = await receiver();
    const stack = await startWithWebhook(hook, secret);
    const handle = await askThenAnswer(stack);
    await until(() => hook.received.length >= 1);
    const [payload] = verifiedPayloads(hook, secret);
    expect(payload).toEqual({
      eventId: `evt_${handle}_1`,
      type: 'answered',
      handle,
      revision: 1,
      sequence: 1,
      occurredAt: expect.any(String),
    });
    expect(hook.received[0]!.headers['webhook-id']).toBe(`evt_${handle}_1`);
    // Marked delivered once.
    const events = await runBin(['records', 'events'], stack.env);
    expect(events.stdout).toMatch(new RegExp(`evt_${handle}_1 .* delivered `));
  });

  it('a receiver that is down, then back, gets it on a retry', async () => {
    const secret = newSecret();
    const hook = await receiver(({ res, index }) => res.writeHead(index < 2 ? 503 : 204).end());
    const stack = await startWithWebhook(hook, secret);
    const handle = await askThenAnswer(stack);
    await until(() => hook.received.length >= 3);
    const payloads = verifiedPayloads(hook, secret);
    expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([`evt_${handle}_1`]));
    expect(payloads).toHaveLength(3);
  });

  for (const step of ['event.after_state_saved', 'event.after_delivered'] as const) {
    it(`killed at ${step}: after a restart the event arrives with the same webhook-id`, async () => {
      const secret = newSecret();
      const hook = await receiver();
      const stack = await startWithWebhook(hook, secret, { SESS_MCP_TEST_CRASH_AT: step });
      const created = interactionOf(
        await stack.server.callTool('sess_request', { interaction: approveSurface }),
      );
      stdio.audit.url(created.humanUrl!, 'sess link');
      // The watcher starts on this call, and saves the answer when it comes.
      await stack.server.callTool('sess_response', { handle: created.handle, revision: 1 });
      await stack.sess.submitAnswer(created.humanUrl!, {
        action: 'approve',
        values: { message: 'fine by me' },
      });
      // It killed itself at the step (SIGKILL: no orderly close was reported).
      await stack.server.exited();
      expect(stack.server.stderr()).not.toContain('server_closed');
      const before = hook.received.length;
      expect(before).toBe(step === 'event.after_delivered' ? 1 : 0);
      delete stack.env.SESS_MCP_TEST_CRASH_AT;
      await stack.restart({ kill: false });
      await until(() => hook.received.length > before);
      verifiedPayloads(hook, secret);
      expect(hook.received.map((r) => r.headers['webhook-id'])).toEqual(
        hook.received.map(() => `evt_${created.handle}_1`),
      );
    });
  }

  it('two servers on one profile race for the event: delivered with one id, marked once', async () => {
    const secret = newSecret();
    const hook = await receiver();
    const stack = await startWithWebhook(hook, secret);
    const other = await connectStdio({ client: 'v1', env: stack.env, audit: stdio.audit });
    try {
      await other.callTool('sess_list', {});
      const handle = await askThenAnswer(stack);
      await until(() => hook.received.length >= 1);
      await new Promise((r) => setTimeout(r, 1_500));
      verifiedPayloads(hook, secret);
      expect(new Set(hook.received.map((r) => r.headers['webhook-id']))).toEqual(
        new Set([`evt_${handle}_1`]),
      );
      const events = await runBin(['records', 'events'], stack.env);
      expect(events.stdout.match(/ delivered /g)).toHaveLength(1);
    } finally {
      await other.kill();
    }
  });

  it('a bad webhook variable: config_invalid names it, tool calls get NOT_CONFIGURED naming it', async () => {
    const stack = await stdio.start({
      env: { SESS_MCP_WEBHOOK_URL: 'http://hooks.example.com/sess', SESS_MCP_WEBHOOK_SECRET: newSecret() },
    });
    const error = errorOf(await stack.server.callTool('sess_list', {}));
    expect(error.code).toBe('NOT_CONFIGURED');
    expect(error.message).toContain('SESS_MCP_WEBHOOK_URL');
    expect(stack.server.stderr()).toContain('"variable":"SESS_MCP_WEBHOOK_URL"');
  });
});
