/**
 * Measures 1 (adapter overhead) and 2 (answer latency).
 *
 * 1 compares `sess_response` on a saved, answered record through `createSessMcpHttpHandler`
 * with a bare `createMcpHandler` server whose one trivial tool makes the same Sess requests
 * (method, path, headers) to a server in its own process that answers them with the very
 * responses the runtime sent (recorded once, replayed), so both sides read the same bytes. The
 * runtime runs in a process of its own as well (bench/runtime-child.ts), so its work (Session
 * views, signing) is not counted against the adapter: the CPU figure is this process's alone.
 * 2 times the pending `sess_response` until it returns `answered`, from the moment the runtime
 * committed the answer (`sess.onAnswer`: the goal applies to this figure, since before it the
 * clock counts the local runtime's own form handling and receipt signing, Sess's work rather than
 * the adapter's) and from the person's submit on the answer page. The runtime runs in its own
 * process here too (the runtime child notes the submit and the commit on the machine's monotonic
 * clock, which this process reads as well), so the page's post and the runtime's work stay off
 * the handler's thread. Breakdown trials between the timed ones note the handler's Sess requests
 * and store write in between.
 */
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import type { ReplayedResponse } from '../replay-child.js';
import { closeChildren, forkBench, message, type RuntimeReady } from './children.js';
import { ADAPTER_OVERHEAD_MAX, ANSWER_LATENCY_OVER_RTT_MS, atMostTimes } from './goals.js';
import { callTool, resultOf, SURFACE, sessHandler, toolCall, trivialServer } from './mcp.js';
import { profiling, startProfile, stopProfile } from './profile.js';
import { type Cost, costPerCall, interleave, median, medianOf, now, percentile, procCpuMs } from './stats.js';
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

/** One Sess request the handler made and the runtime's response to it. */
interface Exchange extends ReplayedResponse {
  requestHeaders: Array<[string, string]>;
  requestBody: string | undefined;
}

/**
 * Run `fn` with `globalThis.fetch` recording every request and response (the handler builds its
 * Sess client per request, from `globalThis.fetch`), then restore it. Only for the one recording
 * call: the measured calls run with the real `fetch`.
 */
async function recordingSess(origin: string, fn: () => Promise<unknown>): Promise<Exchange[]> {
  const original = globalThis.fetch;
  const exchanges: Exchange[] = [];
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await original(input, init);
    const url = new URL(request.url);
    if (url.origin === origin) {
      exchanges.push({
        method: request.method,
        path: `${url.pathname}${url.search}`,
        requestHeaders: [...request.headers],
        requestBody: typeof init?.body === 'string' ? init.body : undefined,
        status: response.status,
        headers: [...response.headers],
        body: await response.clone().text(),
      });
    }
    return response;
  };
  try {
    await fn();
  } finally {
    globalThis.fetch = original;
  }
  return exchanges;
}

/** Trials of measure 1 (each `CALLS` calls of either side), interleaved. */
const TRIALS = 21;
const CALLS = 30;
/**
 * Calls of each side, alternating, before the trials: a long-running server's code is compiled
 * by the time it serves most calls, and the subject runs more code than the bare tool, which
 * V8 takes more calls to optimise.
 */
const WARM_UP_CALLS = 400;

/** Start (`1`) or stop and write (`0`) the runtime child's CPU profile of measure 1. */
async function toggleRuntimeProfile(runtime: ReturnType<typeof forkBench>, n: 0 | 1): Promise<void> {
  const done = message(runtime, 'profiled');
  runtime.send({ kind: 'profile', n });
  await done;
}

/** Measure 1. */
export async function adapterOverhead(): Promise<Row[]> {
  const runtime = forkBench('runtime-child');
  let replay: ReturnType<typeof forkBench> | undefined;
  let rig: ReturnType<typeof sessHandler> | undefined;
  try {
    const ready = await message<RuntimeReady>(runtime, 'ready');
    rig = sessHandler(ready.origin, ready.workspaceId, ready.apiKey);
    const fetchSess = rig.handler.fetch;
    const created = await callTool(fetchSess, 'sess_request', { interaction: SURFACE });
    const answered = message<{ refused: number }>(runtime, 'answered');
    runtime.send({ kind: 'answer', urls: [created.humanUrl!] });
    if ((await answered).refused !== 0) throw new Error('the runtime refused the answer');
    const args = { handle: created.handle, revision: 1, wait_ms: 5_000 };
    const first = await callTool(fetchSess, 'sess_response', args);
    if (first.state !== 'answered') throw new Error(`expected answered, got ${first.state}`);
    const exchanges = await recordingSess(ready.origin, async () => {
      const again = await callTool(fetchSess, 'sess_response', args);
      if (again.state !== 'answered') throw new Error(`expected answered, got ${again.state}`);
    });
    if (exchanges.length === 0) throw new Error('the repeat made no Sess request');

    replay = forkBench('replay-child');
    const replayReady = message<{ origin: string }>(replay, 'ready');
    replay.send({
      kind: 'responses',
      responses: exchanges.map(({ method, path, status, headers, body }) => ({
        method,
        path,
        status,
        headers,
        body,
      })),
    });
    const replayOrigin = (await replayReady).origin;

    const bare = createMcpHandler(() => {
      const server = new McpServer({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.registerTool(
        'trivial',
        { description: 'The same Sess requests, replayed.', inputSchema: PASS_THROUGH },
        async () => {
          for (const exchange of exchanges) {
            const init: RequestInit = { method: exchange.method, headers: exchange.requestHeaders };
            if (exchange.requestBody !== undefined) init.body = exchange.requestBody;
            const r = await fetch(`${replayOrigin}${exchange.path}`, init);
            JSON.parse(await r.text());
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
    for (let i = 0; i < WARM_UP_CALLS; i += 1) {
      await subject();
      await baseline();
    }
    if (profiling) {
      // SESS_BENCH_PROFILE: one profile of each side, outside the timed trials.
      for (const [name, side] of [
        ['adapter-subject', subject],
        ['adapter-baseline', baseline],
      ] as const) {
        const runtimeSide = name === 'adapter-subject';
        if (runtimeSide) await toggleRuntimeProfile(runtime, 1);
        await startProfile();
        for (let i = 0; i < 500; i += 1) await side();
        await stopProfile(name);
        if (runtimeSide) await toggleRuntimeProfile(runtime, 0);
      }
    }
    // Each helper idles while the other side runs, so its CPU over all trials is its own side's.
    const runtimeCpu = procCpuMs(runtime.pid!);
    const replayCpu = procCpuMs(replay.pid!);
    const r = await interleave<Cost>(
      TRIALS,
      () => costPerCall(CALLS, subject),
      () => costPerCall(CALLS, baseline),
    );
    const calls = TRIALS * CALLS;
    const runtimePerCall = (procCpuMs(runtime.pid!) - runtimeCpu) / calls;
    const replayPerCall = (procCpuMs(replay.pid!) - replayCpu) / calls;
    const wall = { s: medianOf(r.subject, 'wall'), b: medianOf(r.baseline, 'wall') };
    const cpu = { s: medianOf(r.subject, 'cpu'), b: medianOf(r.baseline, 'cpu') };
    const bytes = exchanges.reduce((sum, e) => sum + Buffer.byteLength(e.body), 0);
    const label = `1 adapter overhead (sess_response, ${exchanges.length} Sess trips, ${bytes} B)`;
    return [
      {
        measure: `${label}: wall`,
        subject: `${ms(wall.s)}/call`,
        baseline: `${ms(wall.b)}/call`,
        ratio: times(wall.s / wall.b),
        goal: atMostTimes(ADAPTER_OVERHEAD_MAX),
        met: yesNo(wall.s / wall.b <= ADAPTER_OVERHEAD_MAX),
      },
      {
        measure: `${label}: CPU of the MCP process`,
        subject: `${ms(cpu.s)}/call`,
        baseline: `${ms(cpu.b)}/call`,
        ratio: times(cpu.s / cpu.b),
        goal: atMostTimes(ADAPTER_OVERHEAD_MAX),
        met: yesNo(cpu.s / cpu.b <= ADAPTER_OVERHEAD_MAX),
      },
      {
        measure: '1 Sess server CPU (runtime vs replay, not in the ratios)',
        subject: `${ms(runtimePerCall)}/call`,
        baseline: `${ms(replayPerCall)}/call`,
        ratio: `mean of ${calls}`,
        goal: '—',
        met: '—',
      },
    ];
  } finally {
    await rig?.handler.close();
    await closeChildren([replay, runtime]);
  }
}

/** Loopback round trips (a small POST to a trivial server), in ms: `n` samples after `warm` unsampled. */
async function loopbackRtts(url: string, n: number, warm = 0): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < warm + n; i += 1) {
    const t = now();
    const r = await fetch(url, { method: 'POST', body: '{}' });
    await r.text();
    if (i >= warm) samples.push(now() - t);
  }
  return samples;
}

/** The moments of one answer's way, in ms (`now()`), for the breakdown of measure 2. */
interface AnswerTimes {
  /** `sess.submitAnswer` called (the person's form post starts). */
  submit: number;
  /** The runtime committed the answer (receipt signed) and woke the Session's waits. */
  committed: number;
  /** The answer page's post answered (its `303`), as the person's browser sees it. */
  submitted: number;
  /** The held wait's response (its headers) reached the handler's Sess client. */
  waitReturned: number;
  /** The confirming read sent, after the receipt check. */
  confirmSent: number;
  /** The confirming read's response (its headers) reached the handler. */
  confirmReturned: number;
  /** The store's compare-and-set of the answered record called. */
  storeStarted: number;
  /** That compare-and-set done. */
  storeDone: number;
  /** The `sess_response` result reached the MCP client. */
  returned: number;
}

/** Timed trials of measure 2 (half as many breakdown trials run between them). */
const ANSWER_TRIALS = 150;

/**
 * Run `fn` with `globalThis.fetch` noting when the handler's Sess requests to `origin` for
 * `sessionId` left and when their responses arrived (only for the breakdown pass: the timed
 * trials run with the real `fetch`).
 */
async function timingSess<T>(
  origin: string,
  note: (kind: 'waitReturned' | 'confirmSent' | 'confirmReturned', path: string) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const original = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(`${origin}/v1/sessions/`)) return original(input, init);
    const path = url.slice(origin.length);
    const isWait = path.includes('/wait');
    if (!isWait) note('confirmSent', path);
    const response = await original(input, init);
    note(isWait ? 'waitReturned' : 'confirmReturned', path);
    return response;
  };
  try {
    return await fn();
  } finally {
    globalThis.fetch = original;
  }
}

/** Milliseconds on the machine's monotonic clock, the runtime child's clock too (measure 2). */
const hr = () => Number(process.hrtime.bigint()) / 1e6;

/** Measure 2. */
export async function answerLatency(): Promise<Row[]> {
  const runtime = forkBench('runtime-child');
  const ready = await message<RuntimeReady>(runtime, 'ready');
  const rig = sessHandler(ready.origin, ready.workspaceId, ready.apiKey);
  const trivial = await trivialServer();
  const fetchSess = rig.handler.fetch;
  let principal = 0;
  const fresh = async () => {
    const p = `p${principal++}`;
    const created = await callTool(fetchSess, 'sess_request', { interaction: SURFACE }, p);
    return { p, created };
  };
  /**
   * Long-poll: submit once the wait is held; the runtime child notes when the submit started,
   * when it committed the answer and when the page answered, this process when the wait
   * returned (and, through `current`, the moments a breakdown trial notes in between).
   */
  let current: Partial<AnswerTimes> & { sessionId?: string } = {};
  rig.onStore((phase) => {
    if (current.sessionId !== undefined) current[phase === 'start' ? 'storeStarted' : 'storeDone'] = hr();
  });
  const waiting = async (): Promise<AnswerTimes> => {
    const { p, created } = await fresh();
    const pending = callTool(
      fetchSess,
      'sess_response',
      { handle: created.handle, revision: 1, wait_ms: 30_000 },
      p,
    );
    const held = message<{ sessionId: string }>(runtime, 'held');
    runtime.send({ kind: 'hold', url: created.humanUrl });
    const { sessionId } = await held;
    const times: Partial<AnswerTimes> & { sessionId?: string } = { sessionId };
    current = times;
    const returned = pending.then((result) => {
      times.returned = hr();
      return result;
    });
    runtime.send({ kind: 'submit', url: created.humanUrl });
    const result = await returned;
    current = {};
    const reported = message<{ submit: number; committed: number; submitted: number }>(runtime, 'times');
    runtime.send({ kind: 'times' });
    Object.assign(times, await reported);
    if (result.state !== 'answered') throw new Error(`expected answered, got ${result.state}`);
    return times as AnswerTimes;
  };
  /** A client polling every second with wait_ms 0, its phase random against the submit. */
  const polling = async (): Promise<number> => {
    const { p, created } = await fresh();
    const args = { handle: created.handle, revision: 1, wait_ms: 0 };
    let submitted = Number.NaN;
    const offset = Math.random() * 1000;
    setTimeout(() => {
      submitted = now();
      runtime.send({ kind: 'submit', url: created.humanUrl });
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
    const rtts = await loopbackRtts(trivial.url, 20, 20);
    if (profiling) {
      // SESS_BENCH_PROFILE: one profile of as many answers, outside the timed trials.
      await startProfile();
      for (let i = 0; i < ANSWER_TRIALS; i += 1) await waiting();
      await stopProfile('answer-latency');
    }
    // The timed trials, a breakdown trial after every second one, and loopback round trips
    // between them, so the three see the same load. A breakdown trial times the handler's Sess
    // requests through a wrapped `fetch`; the timed trials run with the real one.
    const long: AnswerTimes[] = [];
    const broken: AnswerTimes[] = [];
    const noteSess = (kind: 'waitReturned' | 'confirmSent' | 'confirmReturned', path: string) => {
      if (current.sessionId !== undefined && path.includes(current.sessionId)) current[kind] = hr();
    };
    for (let i = 0; i < ANSWER_TRIALS; i += 1) {
      long.push(await waiting());
      if (i % 2 === 1) {
        broken.push(await timingSess(ready.origin, noteSess, waiting));
        rtts.push(...(await loopbackRtts(trivial.url, 10)));
      }
    }
    const polls: number[] = [];
    // Two polling clients at once halves the wall time; each still polls once a second.
    for (let i = 0; i < 8; i += 1) polls.push(...(await Promise.all([polling(), polling()])));
    const rttMedian = median(rtts);
    // The goal applies to the time from the runtime's commit of the answer: before it, the clock
    // counts the local runtime's own form handling (the page's form post, parsing, the receipt's
    // signing), work a real Sess does on its own servers before the answer exists.
    const fromCommit = long.map((t) => t.returned - t.committed);
    const fromSubmit = long.map((t) => t.returned - t.submit);
    const p50 = median(fromCommit);
    const p99 = percentile(fromCommit, 99);
    const submit50 = median(fromSubmit);
    const poll50 = median(polls);
    // Median and mean of each step: the means add up to the mean of the whole, the medians do not.
    const step = (from: keyof AnswerTimes, to: keyof AnswerTimes) => {
      const spans = broken.map((t) => t[to] - t[from]);
      return `${ms(median(spans))} (${ms(spans.reduce((a, b) => a + b, 0) / spans.length)})`;
    };
    process.stderr.write(
      `\n  2 breakdown (median (mean) of ${broken.length}): submit→commit ${step('submit', 'committed')}, ` +
        `commit→wait response at handler ${step('committed', 'waitReturned')}, ` +
        `→confirming read sent ${step('waitReturned', 'confirmSent')}, ` +
        `→its response ${step('confirmSent', 'confirmReturned')}, ` +
        `→store update ${step('confirmReturned', 'storeStarted')}, ` +
        `store update ${step('storeStarted', 'storeDone')}, ` +
        `→MCP result ${step('storeDone', 'returned')}; ` +
        `commit→MCP result ${step('committed', 'returned')}, commit→submit answered ${step('committed', 'submitted')}\n`,
    );
    return [
      {
        measure: '2 answer latency p50, from the answer committed (vs loopback RTT)',
        subject: ms(p50),
        baseline: `RTT ${ms(rttMedian)}`,
        ratio: `RTT + ${ms(p50 - rttMedian)}`,
        goal: `≤ RTT + ${ANSWER_LATENCY_OVER_RTT_MS} ms`,
        met: yesNo(p50 <= rttMedian + ANSWER_LATENCY_OVER_RTT_MS),
      },
      {
        measure: '2 answer latency p99, from the answer committed',
        subject: ms(p99),
        baseline: `RTT ${ms(rttMedian)}`,
        ratio: `RTT + ${ms(p99 - rttMedian)}`,
        goal: '—',
        met: '—',
      },
      {
        measure: '2 answer latency p50, from the submit (runtime included)',
        subject: ms(submit50),
        baseline: `RTT ${ms(rttMedian)}`,
        ratio: `RTT + ${ms(submit50 - rttMedian)}`,
        goal: '—',
        met: '—',
      },
      {
        measure: '2 answer latency p50 from the submit vs 1 s polling',
        subject: ms(submit50),
        baseline: `${ms(poll50)} (p50 of ${polls.length})`,
        ratio: times(submit50 / poll50),
        goal: '—',
        met: '—',
      },
    ];
  } finally {
    await rig.handler.close();
    await trivial.close();
    await closeChildren([runtime]);
  }
}
