/**
 * The local Sess runtime in a process of its own (measures 1, 2 and 3), so its memory and CPU are
 * not counted against the handler under test. Driven over IPC: `{ kind: 'waiting', n }` answers
 * once `n` waits are held; `{ kind: 'answer', urls }` submits an answer on every link and reports
 * when each and the last was accepted (bench/lib/waits.ts, measure 1). For measure 2, one answer at a
 * time: `{ kind: 'hold', url }` answers `held` (with the Session id) once a wait on that link's
 * Session is held; `{ kind: 'submit', url }` submits an answer on it; `{ kind: 'times' }` answers,
 * once that submit is done, when it started, when the runtime committed the answer and when the
 * page answered, on the machine's monotonic clock (`process.hrtime`, the same in every process).
 * `{ kind: 'profile', n: 1 }` starts a CPU profile (under `SESS_BENCH_PROFILE`), `n: 0` writes it
 * as `adapter-runtime`; both answer `profiled`.
 */
import { startLocalSess } from '../src/testing/index.js';
import { startProfile, stopProfile } from './lib/profile.js';

const sess = await startLocalSess({ plan: { maxOpenSessions: 50_000 } });
const send = (message: unknown) => process.send!(message);
let profiling = false;

/** Milliseconds on the machine's monotonic clock, comparable across processes. */
const hr = () => Number(process.hrtime.bigint()) / 1e6;
/** Measure 2's answer in progress: its Session, and when its submit started and it was committed. */
let answer: { sessionId: string; submit: number; committed: number; submitted?: Promise<number> } | undefined;
sess.onAnswer((sessionId) => {
  if (answer?.sessionId === sessionId) answer.committed = hr();
});

process.on('message', async (message: { kind: string; n?: number; urls?: string[]; url?: string }) => {
  if (message.kind === 'hold') {
    const sessionId = sess.sessions.byUrl(message.url!)!.view.id;
    await sess.whenWaiting(sessionId, 1);
    send({ kind: 'held', sessionId });
  } else if (message.kind === 'submit') {
    const sessionId = sess.sessions.byUrl(message.url!)!.view.id;
    const current: NonNullable<typeof answer> = { sessionId, submit: hr(), committed: Number.NaN };
    answer = current;
    current.submitted = sess.submitAnswer(message.url!, { action: 'go', values: {} }).then(() => hr());
  } else if (message.kind === 'times') {
    const current = answer!;
    const submitted = await current.submitted!;
    send({ kind: 'times', submit: current.submit, committed: current.committed, submitted });
  } else if (message.kind === 'waiting') {
    if (!profiling) {
      profiling = true;
      await startProfile();
    }
    // Every wait held, or the count stuck for 5 s (then the report says how many were held).
    let last = -1;
    let since = performance.now();
    const started = since;
    while (sess.pendingWaits() < message.n!) {
      const held = sess.pendingWaits();
      if (held !== last) {
        last = held;
        since = performance.now();
      } else if ((held > 0 && performance.now() - since > 5_000) || performance.now() - started > 120_000)
        break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    send({ kind: 'waiting', n: sess.pendingWaits() });
  } else if (message.kind === 'answer') {
    const urls = message.urls!;
    await stopProfile('runtime-hold');
    await startProfile();
    const cpu = process.cpuUsage();
    const started = performance.timeOrigin + performance.now();
    let next = 0;
    let refused = 0;
    /** When each link's answer was accepted, in the order of `urls`. */
    const acceptedAt: number[] = new Array(urls.length);
    const worker = async () => {
      while (next < urls.length) {
        const i = next++;
        const page = await sess.submitAnswer(urls[i]!, { action: 'go', values: {} });
        acceptedAt[i] = performance.timeOrigin + performance.now();
        if (page.status !== 303) refused += 1;
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const done = performance.timeOrigin + performance.now();
    const used = process.cpuUsage(cpu);
    await stopProfile('runtime-answer');
    // A later round (after measure 3's warm-up) profiles its own hold again.
    profiling = false;
    send({ kind: 'answered', started, done, refused, cpuMs: (used.user + used.system) / 1000, acceptedAt });
  } else if (message.kind === 'profile') {
    // Measure 1 under SESS_BENCH_PROFILE: the runtime's side of the profiled repeat calls.
    if (message.n === 1) await startProfile();
    else await stopProfile('adapter-runtime');
    send({ kind: 'profiled' });
  } else if (message.kind === 'close') {
    await sess.close();
    process.exit(0);
  }
});
send({ kind: 'ready', origin: sess.origin, workspaceId: sess.workspaceId, apiKey: sess.apiKey });
