/**
 * Measure 7 (idle HTTP requests): `n` `sess_response` waits held as real HTTP requests, each on
 * its own socket, by the Sess handler's `node:http` face (bench/http-waits-child.ts) against the
 * local runtime in another process. The client is this process, so its sockets are not counted.
 *
 * Figure: resident memory per request in flight (RSS with the requests held − RSS before, both
 * after a full collection, over n), as measure 3 but with a socket, an `IncomingMessage` and a
 * `ServerResponse` per wait besides the handler's own state. The requests are dropped, not
 * answered: measure 3 times the answers.
 */
import http from 'node:http';
import { closeChildren, forkBench, message, type RuntimeReady } from './children.js';
import { ms, type Row } from './table.js';

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Requests are sent in batches, each once the runtime holds the previous ones. */
const BATCH = 250;

async function holdRequests(n: number): Promise<Row> {
  const runtime = forkBench('runtime-child');
  let holder: ReturnType<typeof forkBench> | undefined;
  const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const requests: http.ClientRequest[] = [];
  let ended = 0;
  const statuses: Record<string, number> = {};
  try {
    const ready = await message<RuntimeReady>(runtime, 'ready');
    holder = forkBench(
      'http-waits-child',
      [ready.origin, ready.workspaceId, ready.apiKey, String(n)],
      ['--expose-gc'],
    );
    const created = await message<{ handles: string[]; port: number; before: Memory }>(holder, 'created');
    const started = performance.now();
    let held = 0;
    for (let from = 0; from < n; from += BATCH) {
      const to = Math.min(n, from + BATCH);
      for (let i = from; i < to; i += 1) {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: i + 1,
          method: 'tools/call',
          params: {
            name: 'sess_response',
            arguments: { handle: created.handles[i], revision: 1, wait_ms: 45_000 },
          },
        });
        const request = http.request({
          host: '127.0.0.1',
          port: created.port,
          path: '/mcp',
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-11-25',
            authorization: `Bearer p${i}`,
            'content-length': Buffer.byteLength(body),
          },
        });
        // A request that ends before the measurement is counted; a dropped one errors later.
        request.on('response', (response) => {
          response.resume();
          response.on('end', () => {
            ended += 1;
            statuses[String(response.statusCode)] = (statuses[String(response.statusCode)] ?? 0) + 1;
          });
        });
        request.on('error', () => {});
        request.end(body);
        requests.push(request);
      }
      runtime.send({ kind: 'waiting', n: to });
      held = (await message<{ n: number }>(runtime, 'waiting')).n;
    }
    const holdMs = performance.now() - started;
    const measured = message<{ during: Memory; connections: number }>(holder, 'held');
    holder.send({ kind: 'measure' });
    const { during, connections } = await measured;
    const perRequest = (during.rss - created.before.rss) / n / 1024;
    const heapPerRequest =
      (during.heapUsed + during.external - created.before.heapUsed - created.before.external) / n / 1024;
    return {
      measure: `7 idle HTTP requests ×${n.toLocaleString('en')}: RSS per request`,
      subject: `${perRequest.toFixed(1)} KiB`,
      baseline: `heap+ext ${heapPerRequest.toFixed(1)} KiB`,
      ratio: `${held}/${n} held, ${connections} sockets, ${ended} ended${ended === 0 ? '' : ` (HTTP ${JSON.stringify(statuses)})`}, in ${ms(holdMs)}`,
      goal: '—',
      met: '—',
    };
  } finally {
    for (const request of requests) request.destroy();
    agent.destroy();
    await closeChildren([holder, runtime]);
  }
}

/**
 * Measure 7, for each size in turn. The server process holds two descriptors per request (its
 * socket and its Sess long-poll), so a size near half the open-file limit fails with `EMFILE`.
 */
export async function idleHttpRequests(sizes: readonly number[] = [1_000, 5_000]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of sizes) rows.push(await holdRequests(n));
  return rows;
}
