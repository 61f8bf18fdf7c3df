/**
 * Measures 1 (adapter overhead) and 2 (answer latency), in this process against the local Sess
 * runtime on loopback.
 *
 * 1 compares `sess_response` on a saved, answered record through `createSessMcpHttpHandler`
 * with a bare `createMcpHandler` server whose one trivial tool makes as many loopback HTTP round
 * trips as the real call makes to Sess (counted from the runtime's request counters, not assumed).
 * 2 times a person's submit on the answer page until the pending `sess_response` returns.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { startLocalSess } from '../../src/testing/index.js';
import { callTool, resultOf, SURFACE, sessHandler, toolCall, trivialServer } from './mcp.js';
import { interleave, median, now, perCall, percentile } from './stats.js';
import { ms, type Row, times, yesNo } from './table.js';

/**
 * The bare tool's input schema: lets arguments through, as the Sess tools' own schema does (their
 * engine validates), so neither side pays for an SDK-side validator.
 */
const PASS_THROUGH = {
  '~standard': {
    version: 1 as const,
    vendor: 'bench',
    validate: (value: unknown) => ({ value }),
    jsonSchema: {
      input: () => ({ type: 'object' }),
      output: () => ({ type: 'object' }),
    },
  },
};

function totalRequests(requests: Readonly<Record<string, number>>): number {
  return Object.entries(requests)
    .filter(([k]) => k !== 'page')
    .reduce((sum, [, n]) => sum + n, 0);
}

/** Measure 1. */
export async function adapterOverhead(): Promise<Row[]> {
  const sess = await startLocalSess();
  const rig = sessHandler(sess.origin, sess.workspaceId, sess.apiKey);
  const trivial = await trivialServer();
  const fetchSess = rig.handler.fetch;
  try {
    const created = await callTool(fetchSess, 'sess_request', { interaction: SURFACE });
    await sess.submitAnswer(created.humanUrl!, { action: 'go', values: {} });
    const args = { handle: created.handle, revision: 1, wait_ms: 5_000 };
    const first = await callTool(fetchSess, 'sess_response', args);
    if (first.state !== 'answered') throw new Error(`expected answered, got ${first.state}`);
    const before = totalRequests(sess.stats.requests);
    const again = await callTool(fetchSess, 'sess_response', args);
    if (again.state !== 'answered') throw new Error(`expected answered, got ${again.state}`);
    const trips = totalRequests(sess.stats.requests) - before;

    const bare = createMcpHandler(() => {
      const server = new McpServer({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.registerTool(
        'trivial',
        { description: 'Loopback round trips.', inputSchema: PASS_THROUGH },
        async () => {
          for (let i = 0; i < trips; i += 1) {
            const r = await fetch(trivial.url, {
              method: 'POST',
              body: '{}',
              headers: { 'content-type': 'application/json' },
            });
            await r.json();
          }
          return {
            content: [{ type: 'text', text: 'ok' }],
            structuredContent: { interaction: { state: 'answered' } },
          };
        },
      );
      return server;
    });
    const fetchBare = bare.fetch as (r: Request) => Promise<Response>;
    const subject = async () => resultOf(await fetchSess(toolCall('sess_response', args)));
    const baseline = async () => resultOf(await fetchBare(toolCall('trivial', args)));
    for (let i = 0; i < 40; i += 1) {
      await subject();
      await baseline();
    }
    const calls = 20;
    const r = await interleave(
      15,
      () => perCall(calls, subject),
      () => perCall(calls, baseline),
    );
    const s = median(r.subject);
    const b = median(r.baseline);
    return [
      {
        measure: `1 adapter overhead (sess_response, ${trips} Sess trips)`,
        subject: `${ms(s)}/call`,
        baseline: `${ms(b)}/call`,
        ratio: times(s / b),
        goal: '≤ 1.15×',
        met: yesNo(s / b <= 1.15),
      },
    ];
  } finally {
    await rig.handler.close();
    await trivial.close();
    await sess.close();
  }
}

/** Median loopback round trip (a small POST to a trivial server), in ms. */
async function loopbackRtt(url: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    const t = now();
    const r = await fetch(url, { method: 'POST', body: '{}' });
    await r.text();
    if (i >= 20) samples.push(now() - t);
  }
  return median(samples);
}

/** Measure 2. */
export async function answerLatency(): Promise<Row[]> {
  const sess = await startLocalSess({ plan: { maxOpenSessions: 10_000 } });
  const rig = sessHandler(sess.origin, sess.workspaceId, sess.apiKey);
  const trivial = await trivialServer();
  const fetchSess = rig.handler.fetch;
  let principal = 0;
  const fresh = async () => {
    const p = `p${principal++}`;
    const created = await callTool(fetchSess, 'sess_request', { interaction: SURFACE }, p);
    const sessionId = sess.sessions.byUrl(created.humanUrl!)!.view.id;
    return { p, created, sessionId };
  };
  /** Long-poll: submit once the wait is held, time until the wait returns. */
  const waiting = async (): Promise<number> => {
    const { p, created, sessionId } = await fresh();
    const pending = callTool(
      fetchSess,
      'sess_response',
      { handle: created.handle, revision: 1, wait_ms: 30_000 },
      p,
    );
    await sess.whenWaiting(sessionId, 1);
    const t = now();
    await sess.submitAnswer(created.humanUrl!, { action: 'go', values: {} });
    const result = await pending;
    const elapsed = now() - t;
    if (result.state !== 'answered') throw new Error(`expected answered, got ${result.state}`);
    return elapsed;
  };
  /** A client polling every second with wait_ms 0, its phase random against the submit. */
  const polling = async (): Promise<number> => {
    const { p, created } = await fresh();
    const args = { handle: created.handle, revision: 1, wait_ms: 0 };
    let submitted = Number.NaN;
    const offset = Math.random() * 1000;
    setTimeout(() => {
      submitted = now();
      void sess.submitAnswer(created.humanUrl!, { action: 'go', values: {} });
    }, offset);
    for (;;) {
      const started = now();
      const result = await callTool(fetchSess, 'sess_response', args, p);
      if (result.state === 'answered') return now() - submitted;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (now() - started))));
    }
  };
  try {
    for (let i = 0; i < 10; i += 1) await waiting();
    const rtt = await loopbackRtt(trivial.url);
    const long: number[] = [];
    for (let i = 0; i < 150; i += 1) long.push(await waiting());
    const polls: number[] = [];
    // Two polling clients at once halves the wall time; each still polls once a second.
    for (let i = 0; i < 8; i += 1) polls.push(...(await Promise.all([polling(), polling()])));
    const rtt2 = await loopbackRtt(trivial.url);
    const rttMedian = (rtt + rtt2) / 2;
    const p50 = median(long);
    const p99 = percentile(long, 99);
    const poll50 = median(polls);
    return [
      {
        measure: '2 answer latency p50 (vs loopback RTT)',
        subject: ms(p50),
        baseline: `RTT ${ms(rttMedian)}`,
        ratio: `RTT + ${ms(p50 - rttMedian)}`,
        goal: '≤ 1 RTT + 5 ms',
        met: yesNo(p50 <= rttMedian + 5),
      },
      {
        measure: '2 answer latency p99',
        subject: ms(p99),
        baseline: `RTT ${ms(rttMedian)}`,
        ratio: `RTT + ${ms(p99 - rttMedian)}`,
        goal: '—',
        met: '—',
      },
      {
        measure: '2 answer latency p50 vs 1 s polling',
        subject: ms(p50),
        baseline: `${ms(poll50)} (p50 of ${polls.length})`,
        ratio: times(p50 / poll50),
        goal: '—',
        met: '—',
      },
    ];
  } finally {
    await rig.handler.close();
    await trivial.close();
    await sess.close();
  }
}
