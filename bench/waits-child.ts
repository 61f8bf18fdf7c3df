/**
 * The handler process of measure 3: the Sess HTTP handler (fetch face, memory store) holding `n`
 * simultaneous `sess_response` waits against a runtime in another process. Driven over IPC by
 * bench/lib/waits.ts; run with `--expose-gc` so resident memory is read after a collection.
 *
 * Steps: first a warm-up outside every figure (create {@link WARM_UP} interactions, report their
 * links, hold a wait on each on `warm-hold` and report `warmed` once the runtime's answers have
 * returned them all), so the figures are those of a process that has run the path before, as
 * the other measures' warm-up calls are; then create `n` interactions (one principal each, so
 * no binding's cap is reached), report their links and the resident memory; on `hold`, start every wait; on `measure`, report the
 * memory with the waits held; then report when the last wait returned, how many were answered,
 * and how every other one ended (its state or its tool error's code).
 */
import { createInteractions, memoryAfterGc, resultOf, sessHandler, toolCall } from './lib/mcp.js';
import { startProfile, stopProfile } from './lib/profile.js';

const [origin, workspaceId, apiKey, count] = process.argv.slice(2) as [string, string, string, string];
const n = Number(count);
const send = (message: unknown) => process.send!(message);
const rig = sessHandler(origin, workspaceId, apiKey);
const memory = memoryAfterGc;
/** Each wait's `wait_ms`: the ceiling, or shorter (`SESS_BENCH_WAIT_MS`) so waits are called again while answers land. */
const WAIT_MS = Number(process.env.SESS_BENCH_WAIT_MS ?? 45_000);

/** Waits held and answered before the measured ones. */
const WARM_UP = 50;
const warm = await createInteractions(rig, WARM_UP, 'w');
const warmHold = new Promise<void>((resolve) => {
  const listener = (message: { kind: string }) => {
    if (message.kind !== 'warm-hold') return;
    process.off('message', listener);
    resolve();
  };
  process.on('message', listener);
});
send({ kind: 'warm', urls: warm.urls });
await warmHold;
await Promise.all(
  warm.handles.map(async (handle, i) => {
    const args = { handle, revision: 1, wait_ms: WAIT_MS };
    await resultOf(await rig.handler.fetch(toolCall('sess_response', args, `w${i}`)));
  }),
);
send({ kind: 'warmed' });

const { handles, urls } = await createInteractions(rig, n);
// Let the creates' sockets and buffers settle before the reading the waits are compared with.
await new Promise((resolve) => setTimeout(resolve, 500));
send({ kind: 'created', urls, before: memory() });

let lastReturned = 0;
/** When each wait returned for good, in the order of the links reported as `created`. */
const returnedAt: number[] = new Array(n);
/** This process's CPU (user + system, ms) since `from`, as `process.cpuUsage()` counts it. */
const cpuSince = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};
let holdStarted = process.cpuUsage();
let holdCpuMs = 0;
let returnStarted = process.cpuUsage();
let answered = 0;
let reissued = 0;
let done = 0;
/** How the waits ended: `answered`, another state, or the tool error's code. */
const outcomes: Record<string, number> = {};

/**
 * One call of `sess_response`, reduced to how it ended: the interaction's state, the tool
 * error's code (`SESS_UNAVAILABLE`, …), or for a failure of the handler itself its fixed first
 * words (`HTTP 500`, `JSON-RPC error`), never a message that could carry a value.
 */
async function waitOnce(i: number): Promise<string> {
  try {
    const args = { handle: handles[i], revision: 1, wait_ms: WAIT_MS };
    const result = await resultOf(await rig.handler.fetch(toolCall('sess_response', args, `p${i}`)));
    if (result.isError === true) {
      const error = result.structuredContent?.error;
      // A protocol error names the check that failed in a fixed word: which one is the finding.
      if (error?.code === 'SESS_PROTOCOL_ERROR') return `${error.code}/${error.reason ?? 'no reason'}`;
      return error?.code ?? 'tool error without a code';
    }
    return result.structuredContent?.interaction?.state ?? 'no interaction';
  } catch (error) {
    return error instanceof Error ? error.message.split(':')[0]!.slice(0, 40) : 'thrown';
  }
}

/** One agent's wait: called again, as an agent would, when the ceiling passes unanswered. */
async function hold(i: number): Promise<void> {
  let outcome = await waitOnce(i);
  while (outcome === 'waiting') {
    reissued += 1;
    outcome = await waitOnce(i);
  }
  if (outcome === 'answered') answered += 1;
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  lastReturned = performance.timeOrigin + performance.now();
  returnedAt[i] = lastReturned;
  done += 1;
  if (done === n) {
    const returnCpuMs = cpuSince(returnStarted);
    await stopProfile('holder-return');
    send({
      kind: 'returned',
      lastReturned,
      returnedAt,
      answered,
      outcomes,
      reissued,
      holdCpuMs,
      returnCpuMs,
    });
  }
}

process.on('message', async (message: { kind: string; from?: number; to?: number }) => {
  if (message.kind === 'hold') {
    if (message.from === 0) {
      await startProfile();
      holdStarted = process.cpuUsage();
    }
    for (let i = message.from!; i < message.to!; i += 1) void hold(i);
  } else if (message.kind === 'measure') {
    await new Promise((resolve) => setTimeout(resolve, 200));
    holdCpuMs = cpuSince(holdStarted);
    await stopProfile('holder-hold');
    send({ kind: 'held', during: memory() });
  } else if (message.kind === 'answering') {
    await startProfile();
    returnStarted = process.cpuUsage();
  } else if (message.kind === 'close') {
    await rig.handler.close();
    process.exit(0);
  }
});
