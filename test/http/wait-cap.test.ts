/**
 * Through the HTTP face, one caller cannot hold unbounded upstream waits: waits on one Session
 * share one long-poll at Sess, and one binding holds at most `maxConcurrentWaits` of them, while
 * another caller is never queued behind it. Counted at the local runtime (`pendingWaits`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { approveAnswer, approveSurface } from '../support/surfaces.js';
import { type HttpHarness, startHttpHarness } from './harness.js';

let harness: HttpHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** What the tests read of a tool result. */
interface ToolOutput {
  interaction?: { handle: string; humanUrl: string; state: string };
  error?: { code: string };
}

let nextId = 1;
/** One stateless 2025-11-25 `tools/call` through `handler.fetch`; returns `structuredContent`. */
async function tool(h: HttpHarness, token: string, name: string, args: unknown): Promise<ToolOutput> {
  const response = await h.handler.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    }),
  );
  const text = await response.text();
  expect(response.status).toBe(200);
  const json = text.startsWith('{')
    ? text
    : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  const result = (JSON.parse(json) as { result: { structuredContent: ToolOutput } }).result;
  return result.structuredContent;
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting for the condition');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the wait cap of the HTTP handler', () => {
  it('24 concurrent waits of one caller on one handle share one upstream wait, and all get the answer', async () => {
    harness = await startHttpHarness();
    const h = harness;
    h.principal('alice-token');
    const created = (await tool(h, 'alice-token', 'sess_request', { interaction: approveSurface }))
      .interaction!;
    const waits = Array.from({ length: 24 }, () =>
      tool(h, 'alice-token', 'sess_response', { handle: created.handle, revision: 1, wait_ms: 8_000 }),
    );
    await until(() => h.sess.pendingWaits() === 1 && (h.sess.stats.requests.wait ?? 0) >= 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(h.sess.pendingWaits()).toBe(1);
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const states = (await Promise.all(waits)).map((r) => r.interaction?.state ?? r.error?.code);
    expect(states).toEqual(Array(24).fill('answered'));
  });

  it('one caller holds at most maxConcurrentWaits upstream waits; another caller is not queued behind it', async () => {
    harness = await startHttpHarness({ maxConcurrentWaits: 3 });
    const h = harness;
    h.principal('alice-token');
    h.principal('bob-token', { principalId: 'bob' });
    const mine: { handle: string; humanUrl: string }[] = [];
    for (let i = 0; i < 6; i++)
      mine.push((await tool(h, 'alice-token', 'sess_request', { interaction: approveSurface })).interaction!);
    const bobs = (await tool(h, 'bob-token', 'sess_request', { interaction: approveSurface })).interaction!;
    const waits = mine.map((created: { handle: string }) =>
      tool(h, 'alice-token', 'sess_response', { handle: created.handle, revision: 1, wait_ms: 8_000 }),
    );
    await until(() => h.sess.pendingWaits() === 3);
    const bobWait = tool(h, 'bob-token', 'sess_response', {
      handle: bobs.handle,
      revision: 1,
      wait_ms: 8_000,
    });
    await until(() => h.sess.pendingWaits() === 4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(h.sess.pendingWaits()).toBe(4);
    for (const created of [...mine, bobs]) await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const states = (await Promise.all([...waits, bobWait])).map((r) => r.interaction?.state ?? r.error?.code);
    expect(states).toEqual(Array(7).fill('answered'));
  });
});
