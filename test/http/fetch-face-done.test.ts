/**
 * The fetch face hands a 2025-era answer over as the SDK made it and learns from the SDK when it
 * is done (the SDK closes the request's server once the stream has been read, cancelled or has
 * failed). What must hold whatever the mechanism: the request's bookkeeping (deadline,
 * cancellation entry, `close()`'s reach) ends exactly once, only when the body is done, and a
 * wait still ends at the deadline, on a disconnect and when the body is cancelled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InteractionResult } from '../../src/index.js';
import { approveSurface, type HttpHarness, startHttpHarness } from './harness.js';
import { legacyPost } from './helpers.js';

const open: HttpHarness[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

const TOKEN = 'fetch-face-done-token';
const HEADERS = { authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': '2025-11-25' };
let nextId = 1;

async function harness(requestDeadlineMs = 10_000): Promise<HttpHarness> {
  const h = await startHttpHarness({ requestDeadlineMs });
  open.push(h);
  h.principal(TOKEN);
  return h;
}

function toolCall(h: HttpHarness, name: string, args: unknown, signal?: AbortSignal): Request {
  const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } };
  const request = legacyPost(`${h.server.url}/mcp`, body, HEADERS);
  return signal === undefined ? request : new Request(request, { signal });
}

/** The one JSON-RPC result of an SSE answer. */
async function resultOf(
  response: Response,
): Promise<{ structuredContent?: { interaction?: InteractionResult } }> {
  const text = await response.text();
  const line = text.split('\n').find((l) => l.startsWith('data: '));
  if (line === undefined) throw new Error('no event in the answer');
  return JSON.parse(line.slice(6)).result;
}

const doneCount = (h: HttpHarness) => h.events.filter((e) => e.event === 'http.request_done').length;

/** Let the loop run a few turns (the SDK's teardown is asynchronous). */
const turns = async (n = 20) => {
  for (let i = 0; i < n; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

async function created(h: HttpHarness): Promise<InteractionResult> {
  const response = await h.handler.fetch(toolCall(h, 'sess_request', { interaction: approveSurface }));
  const interaction = (await resultOf(response)).structuredContent?.interaction;
  if (interaction === undefined) throw new Error('no interaction');
  return interaction;
}

describe('the fetch face, 2025-era answers', () => {
  it('ends the bookkeeping once, when the event stream has been read', async () => {
    const h = await harness();
    const body = { jsonrpc: '2.0', id: nextId++, method: 'tools/list' };
    const response = await h.handler.fetch(legacyPost(`${h.server.url}/mcp`, body, HEADERS));
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await turns();
    expect(doneCount(h)).toBe(0);
    expect(await response.text()).toContain('sess_response');
    await turns();
    expect(doneCount(h)).toBe(1);
  });

  it('a held wait whose body the caller cancels ends, and close() does not wait for it', async () => {
    const h = await harness();
    const interaction = await created(h);
    const before = doneCount(h);
    const response = await h.handler.fetch(
      toolCall(h, 'sess_response', { handle: interaction.handle, revision: 1, wait_ms: 30_000 }),
    );
    await h.sess.whenWaiting(undefined, 1);
    expect(doneCount(h)).toBe(before);
    await response.body!.cancel();
    for (let i = 0; i < 100 && h.sess.pendingWaits() > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(h.sess.pendingWaits()).toBe(0);
    await turns();
    expect(doneCount(h)).toBe(before + 1);
    const started = Date.now();
    await h.handler.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(doneCount(h)).toBe(before + 1);
  });

  it('the deadline ends a held wait as needs_resume; the request is done once its answer is read', async () => {
    const h = await harness(800);
    const interaction = await created(h);
    const before = doneCount(h);
    const started = Date.now();
    const response = await h.handler.fetch(
      toolCall(h, 'sess_response', { handle: interaction.handle, revision: 1, wait_ms: 20_000 }),
    );
    const result = await resultOf(response);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.structuredContent?.interaction?.state).toBe('needs_resume');
    await turns();
    expect(doneCount(h)).toBe(before + 1);
  });

  it('a disconnect ends a held wait; the next call resumes it', async () => {
    const h = await harness();
    const interaction = await created(h);
    const before = doneCount(h);
    const client = new AbortController();
    const response = await h.handler.fetch(
      toolCall(
        h,
        'sess_response',
        { handle: interaction.handle, revision: 1, wait_ms: 30_000 },
        client.signal,
      ),
    );
    await h.sess.whenWaiting(undefined, 1);
    client.abort();
    await response.body?.cancel().catch(() => {});
    for (let i = 0; i < 100 && h.sess.pendingWaits() > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(h.sess.pendingWaits()).toBe(0);
    expect(doneCount(h)).toBe(before + 1);

    const again = await resultOf(
      await h.handler.fetch(
        toolCall(h, 'sess_response', { handle: interaction.handle, revision: 1, wait_ms: 0 }),
      ),
    );
    expect(again.structuredContent?.interaction?.state).toBe('waiting');
  });
});
