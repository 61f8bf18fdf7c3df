/**
 * The local Sess runtime in a process of its own for measure 3, so its memory and CPU are not
 * counted against the handler that holds the waits. Driven over IPC by bench/lib/waits.ts:
 * `{ kind: 'waiting', n }` answers once `n` waits are held; `{ kind: 'answer', urls }` submits an
 * answer on every link and reports when the last was accepted.
 */
import { startLocalSess } from '../src/testing/index.js';
import { startProfile, stopProfile } from './lib/profile.js';

const sess = await startLocalSess({ plan: { maxOpenSessions: 50_000 } });
const send = (message: unknown) => process.send!(message);
let profiling = false;

process.on('message', async (message: { kind: string; n?: number; urls?: string[] }) => {
  if (message.kind === 'waiting') {
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
    const worker = async () => {
      while (next < urls.length) {
        const url = urls[next++]!;
        const page = await sess.submitAnswer(url, { action: 'go', values: {} });
        if (page.status !== 303) refused += 1;
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const done = performance.timeOrigin + performance.now();
    const used = process.cpuUsage(cpu);
    await stopProfile('runtime-answer');
    send({ kind: 'answered', started, done, refused, cpuMs: (used.user + used.system) / 1000 });
  } else if (message.kind === 'close') {
    await sess.close();
    process.exit(0);
  }
});
send({ kind: 'ready', origin: sess.origin, workspaceId: sess.workspaceId, apiKey: sess.apiKey });
