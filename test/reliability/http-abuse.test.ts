/**
 * HTTP abuse the HTTP suite (test/http) does not already cover, against the real handler mounted
 * in a real `node:http` server with the local runtime behind it: many concurrent slow requests
 * while the handler keeps serving a real client; a lying `Content-Length` (shorter or longer than
 * the body); JSON-RPC batch bodies; invalid JSON. Each case checks that no tool ran (no Session
 * was created) and that a normal call still succeeds afterwards.
 *
 * Covered elsewhere (test/http): oversized bodies, a body that never arrives (408), unsafe keys,
 * wrong Host/Origin, authenticate throwing or hanging, cross-principal and cross-workspace handles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveSurface, call, type HttpHarness, startHttpHarness } from '../http/harness.js';
import { connectLegacy, rawExchange, rawJsonBody } from '../http/helpers.js';

const TOKEN = 'abuse-token-0000000001';
const AUTH = { authorization: `Bearer ${TOKEN}` };
let h: HttpHarness;
const tally = { cases: 0, toolsRunByAbuse: 0 };

beforeAll(async () => {
  h = await startHttpHarness({ requestDeadlineMs: 1_500 });
  h.principal(TOKEN);
});
afterAll(async () => {
  console.log(
    `[reliability] http abuse: ${tally.cases} abuse cases, ${tally.toolsRunByAbuse} tool calls run by an abusive request`,
  );
  await h?.close();
});

const head = (length: number | string, extra = '') =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\nConnection: close${extra}`;

const createCall = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'sess_request', arguments: { interaction: approveSurface } },
});

/** A normal client still gets served; returns how long its create took. */
async function servedNormally(): Promise<number> {
  const client = await connectLegacy(h.server.url, AUTH);
  const started = Date.now();
  const outcome = await call(client, 'sess_request', { interaction: approveSurface });
  const took = Date.now() - started;
  await client.close();
  expect(outcome.ok).toBe(true);
  return took;
}

/** Run an abusive exchange and check that no Session came of it. */
async function noToolRan<T>(run: () => Promise<T>): Promise<T> {
  tally.cases += 1;
  const before = h.sess.stats.of().sessionsCreated;
  const out = await run();
  const created = h.sess.stats.of().sessionsCreated - before;
  tally.toolsRunByAbuse += created;
  expect(created).toBe(0);
  return out;
}

describe('HTTP abuse', () => {
  it('40 concurrent slow (trickled) requests: a real client is served meanwhile; each slow one ends 408', async () => {
    const body = new TextEncoder().encode(JSON.stringify(createCall(1)));
    tally.cases += 1;
    const before = h.sess.stats.of().sessionsCreated;
    const slow = await (async () => {
      const slowOnes = Array.from({ length: 40 }, () =>
        rawExchange(h.server.port, head(body.byteLength), {
          // One byte every 200 ms: the whole body would take minutes.
          chunks: Array.from(body.subarray(0, 100), (b) => Uint8Array.of(b)),
          chunkEveryMs: 200,
          maxMs: 6_000,
        }),
      );
      // While they trickle, a normal client creates a link promptly.
      const took = await servedNormally();
      expect(took).toBeLessThan(3_000);
      return Promise.all(slowOnes);
    })();
    // Only the normal client's create ran.
    const created = h.sess.stats.of().sessionsCreated - before;
    tally.toolsRunByAbuse += created - 1;
    expect(created).toBe(1);
    for (const seen of slow) {
      expect(seen.status).toBe(408);
      expect(seen.closed).toBe(true);
    }
  }, 30_000);

  it('a Content-Length longer than the body: 408 at the deadline, nothing runs', async () => {
    const body = JSON.stringify(createCall(2));
    const seen = await noToolRan(() =>
      rawExchange(h.server.port, head(body.length + 500), {
        chunks: [new TextEncoder().encode(body)],
        maxMs: 5_000,
      }),
    );
    expect(seen.status).toBe(408);
    expect(seen.closed).toBe(true);
  });

  it('a Content-Length shorter than the body: the truncated JSON is a parse error, the rest is not a request', async () => {
    const body = JSON.stringify(createCall(3));
    const seen = await noToolRan(() =>
      rawExchange(h.server.port, head(Math.floor(body.length / 2)), {
        chunks: [new TextEncoder().encode(body)],
        maxMs: 3_000,
      }),
    );
    expect(seen.status).toBeGreaterThanOrEqual(400);
    expect(seen.status).toBeLessThan(500);
    expect(seen.text).not.toContain('humanUrl');
  });

  it('a non-numeric and a negative Content-Length are refused', async () => {
    for (const length of ['abc', '-5', '12, 13']) {
      const seen = await noToolRan(() =>
        rawExchange(h.server.port, head(length), {
          chunks: [new TextEncoder().encode(JSON.stringify(createCall(4)))],
          maxMs: 3_000,
        }),
      );
      expect(seen.status, length).toBeGreaterThanOrEqual(400);
      expect(seen.status, length).toBeLessThan(500);
    }
  });

  // Batching was removed from MCP in 2025-06-18: such a batch is refused whole (400, nothing run).
  it('a JSON-RPC batch under 2025-11-25 (no batching since 2025-06-18) is refused whole; no call in it runs', async () => {
    const batch = JSON.stringify([createCall(5), createCall(6)]);
    const seen = await noToolRan(() =>
      rawExchange(h.server.port, head(Buffer.byteLength(batch), '\r\nMCP-Protocol-Version: 2025-11-25'), {
        chunks: [new TextEncoder().encode(batch)],
        maxMs: 3_000,
      }),
    );
    expect(seen.text).not.toContain('humanUrl');
    expect(seen.status).toBe(400);
    expect(seen.text).toContain('-32600');
  });

  it('a batch without a protocol version header (2025-03-26 assumed, batching allowed): each call runs once, answered by id', async () => {
    tally.cases += 1;
    const before = h.sess.stats.of().sessionsCreated;
    const batch = JSON.stringify([createCall(8), createCall(9)]);
    const seen = await rawExchange(h.server.port, head(Buffer.byteLength(batch)), {
      chunks: [new TextEncoder().encode(batch)],
      maxMs: 3_000,
    });
    expect(seen.status).toBe(200);
    // Answered as an event stream, one message per call, each by its own id.
    expect(seen.text).toMatch(/"id":8/);
    expect(seen.text).toMatch(/"id":9/);
    expect(h.sess.stats.of().sessionsCreated - before).toBeLessThanOrEqual(2);
  });

  it.each([
    ['no protocol version header', ''],
    ['MCP-Protocol-Version: 2025-03-26', '\r\nMCP-Protocol-Version: 2025-03-26'],
  ])(
    'a 100-call batch of sess_response (%s): every call answered, no MaxListenersExceededWarning',
    async (_name, extra) => {
      tally.cases += 1;
      const client = await connectLegacy(h.server.url, AUTH);
      const created = await call(client, 'sess_request', { interaction: approveSurface });
      await client.close();
      if (!created.ok) throw new Error(created.error.code);
      const { handle, revision } = created.interaction;
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.name);
      process.on('warning', onWarning);
      try {
        const batch = JSON.stringify(
          Array.from({ length: 100 }, (_, i) => ({
            jsonrpc: '2.0',
            id: 100 + i,
            method: 'tools/call',
            params: { name: 'sess_response', arguments: { handle, revision, wait_ms: 300 } },
          })),
        );
        const seen = await rawExchange(h.server.port, head(Buffer.byteLength(batch), extra), {
          chunks: [new TextEncoder().encode(batch)],
          maxMs: 5_000,
        });
        expect(seen.status).toBe(200);
        const ids = new Set([...seen.text.matchAll(/"id":(\d+)/g)].map((m) => Number(m[1])));
        expect([...ids].filter((id) => id >= 100 && id < 200)).toHaveLength(100);
        expect(seen.text).not.toContain('"isError":true');
        // Node emits the warning on the next tick after the listener that crossed the limit.
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.filter((name) => name === 'MaxListenersExceededWarning')).toEqual([]);
    },
  );

  it.each([
    ['truncated JSON', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sess_request"'],
    ['not JSON at all', 'sess_request please'],
    ['a JSON string', '"tools/call"'],
    ['an empty batch', '[]'],
    ['deep nesting', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
  ])('%s: a JSON-RPC error or 4xx, nothing runs', async (_name, text) => {
    const seen = await noToolRan(() =>
      rawExchange(h.server.port, head(Buffer.byteLength(text)), {
        chunks: [new TextEncoder().encode(text)],
        maxMs: 3_000,
      }),
    );
    if (seen.status === 200) expect(rawJsonBody(seen.text)).toMatchObject({ error: expect.any(Object) });
    else {
      expect(seen.status).toBeGreaterThanOrEqual(400);
      expect(seen.status).toBeLessThan(500);
    }
  });

  it('after all that, the handler still serves a normal client', async () => {
    expect(await servedNormally()).toBeLessThan(3_000);
  });
});
