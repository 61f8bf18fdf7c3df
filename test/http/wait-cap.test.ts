/**
 * Through the HTTP face, no caller holds unbounded upstream waits or requests: waits on one
 * Session share one long-poll at Sess; one binding holds at most `maxConcurrentWaits` of them and
 * another caller is never queued behind it; one person over many OAuth clients holds at most
 * `maxPrincipalWaits`; the handler as a whole at most `maxTotalWaits`, shared fairly; and past
 * `maxQueuedWaits` a caller's wait ends at once (`waiting`, HTTP 200), so its requests held in the
 * queue are bounded. The last two are the reproduction of the handler's wait caps (10 clients of
 * one person held 80 upstream waits, `maxTotalWaits` was ignored, 400 requests were all held).
 * Counted at the local runtime (`pendingWaits`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { watchPeak } from '../support/peak.js';
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

/** Ask `count` questions as `token`; their handles and links. */
async function askMany(h: HttpHarness, token: string, count: number) {
  const asked: { handle: string; humanUrl: string; sessionId: string }[] = [];
  for (let i = 0; i < count; i++) {
    const created = (await tool(h, token, 'sess_request', { interaction: approveSurface })).interaction!;
    const sessionId = h.sess.sessions.byUrl(created.humanUrl)!.view.id;
    asked.push({ ...created, sessionId });
  }
  return asked;
}

/** Upstream waits held at the runtime now for these Sessions. */
function heldFor(h: HttpHarness, asked: { sessionId: string }[]): number {
  return asked.reduce((sum, a) => sum + h.sess.pendingWaits(a.sessionId), 0);
}

describe('the total and per-principal caps and the queue bound of the HTTP handler', () => {
  it('one person through 10 OAuth clients holds maxPrincipalWaits and queues maxQueuedWaits; maxTotalWaits holds the handler and another person gets an even share', async () => {
    // More open interactions than the default quota of 25 per principal: the caps are under test.
    harness = await startHttpHarness({
      maxTotalWaits: 16,
      maxPrincipalWaits: 12,
      requestDeadlineMs: 60_000,
      maxOpenPerPrincipal: 1_000,
    });
    const h = harness;
    const alice: { token: string; asked: Awaited<ReturnType<typeof askMany>> }[] = [];
    for (let c = 1; c <= 10; c++) {
      const token = `alice-c${c}`;
      h.principal(token, { clientId: `c${c}`, grantId: `g-alice-c${c}` });
      alice.push({ token, asked: await askMany(h, token, 12) });
    }
    h.principal('bob-token', { principalId: 'bob' });
    const bobs = await askMany(h, 'bob-token', 8);
    const aliceAsked = alice.flatMap((a) => a.asked);
    const peakAlice = watchPeak(() => heldFor(h, aliceAsked), 2);

    const waits = alice.flatMap(({ token, asked }) =>
      asked.map((a) => tool(h, token, 'sess_response', { handle: a.handle, revision: 1, wait_ms: 45_000 })),
    );
    // 12 run (maxPrincipalWaits), 64 queue (maxQueuedWaits, default) and the other 44 end at once.
    let ended = 0;
    for (const wait of waits) void wait.then(() => (ended += 1));
    await until(() => h.sess.pendingWaits() === 12 && ended === 44, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heldFor(h, aliceAsked)).toBe(12);
    expect(ended).toBe(44);
    expect(peakAlice()).toBe(12);

    // Bob's 8 waits: 4 take the free slots of the total cap, then the shares even out to 8 and 8.
    const bobWaits = bobs.map((a) =>
      tool(h, 'bob-token', 'sess_response', { handle: a.handle, revision: 1, wait_ms: 45_000 }),
    );
    await until(() => heldFor(h, bobs) === 8 && heldFor(h, aliceAsked) === 8, 30_000);
    // A slot handed over ends the holder's upstream wait: the runtime counts it until it sees the
    // connection close, so the total is read once that has settled, not sampled meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([heldFor(h, bobs), heldFor(h, aliceAsked), h.sess.pendingWaits()]).toEqual([8, 8, 16]);

    for (const a of [...bobs, ...aliceAsked]) await h.sess.submitAnswer(a.humanUrl, approveAnswer);
    const states = (await Promise.all([...waits, ...bobWaits])).map(
      (r) => r.interaction?.state ?? r.error?.code,
    );
    expect(states.filter((state) => state === 'answered')).toHaveLength(84);
    expect(states.filter((state) => state === 'waiting')).toHaveLength(44);
    expect(states.slice(120)).toEqual(Array(8).fill('answered'));
  }, 90_000);

  it('400 requests of one caller over 40 handles: past maxQueuedWaits each ends at once as waiting (HTTP 200), at most 144 held', async () => {
    harness = await startHttpHarness({ requestDeadlineMs: 60_000, maxOpenPerPrincipal: 1_000 });
    const h = harness;
    h.principal('alice-token');
    const asked = await askMany(h, 'alice-token', 40);
    let held = 0;
    const ended: string[] = [];
    const calls = Array.from({ length: 400 }, (_, i) => {
      held += 1;
      return tool(h, 'alice-token', 'sess_response', {
        handle: asked[i % 40]!.handle,
        revision: 1,
        wait_ms: 45_000,
      }).then((r) => {
        held -= 1;
        const state = r.interaction?.state ?? `error ${r.error?.code}`;
        ended.push(state);
        return state;
      });
    });
    // 8 running upstream waits of 10 requests each (maxConcurrentWaits 8), and 64 queued
    // (maxQueuedWaits 64): every other request ends at once, long before any wait could (400
    // requests through the whole pipeline take a few seconds on a busy machine: 30 s allowed).
    await until(() => held <= 144, 30_000).catch(() => {
      throw new Error(`still held: ${held}; ended ${ended.length}; upstream ${h.sess.pendingWaits()}`);
    });
    expect(h.sess.pendingWaits()).toBe(8);
    expect(ended).toEqual(Array(256).fill('waiting'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(held).toBe(144);

    for (const a of asked) await h.sess.submitAnswer(a.humanUrl, approveAnswer);
    const states = await Promise.all(calls);
    expect(states.filter((s) => s === 'answered')).toHaveLength(144);
    expect(states.filter((s) => s === 'waiting')).toHaveLength(256);
  }, 90_000);
});
