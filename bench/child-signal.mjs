/**
 * Loaded into measure 9's `sess-mcp` servers with `node --import bench/child-signal.mjs`, so the
 * real command can be looked into from outside at two moments, each marked by a `SIGUSR2`:
 *
 * 1. the idle window starts: with `SESS_BENCH_PROFILE=<directory>`, a V8 CPU profile starts, and
 *    a sampling heap profile of every allocation (those collected since included);
 * 2. it ends (the bench has read its CPU and memory): the profiles are written as
 *    `<SESS_BENCH_PROFILE_NAME>.cpuprofile` and `.heapprofile`; then the heap is collected the
 *    way V8 does under memory pressure (it also gives the free heap pages back), and the
 *    process's memory before and a second after is written to `SESS_BENCH_MEMORY` (JSON).
 *
 * A profiler started from outside is needed because a server never exits on its own while
 * interactions wait (the bench's client ends it with a signal), so `--cpu-prof` would write
 * nothing. The inspector session is opened only at the first moment that needs it. It measures
 * nothing the table prints before the second signal, and changes nothing else in the process.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const profiles = process.env.SESS_BENCH_PROFILE;
const name = process.env.SESS_BENCH_PROFILE_NAME ?? `child-${process.pid}`;
const memoryFile = process.env.SESS_BENCH_MEMORY;

let session;
function post(method, params) {
  if (session === undefined) {
    session = new Session();
    session.connect();
  }
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))),
  );
}

const memory = () => {
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapTotal, heapUsed, external, arrayBuffers };
};

async function startProfiles() {
  await post('Profiler.enable');
  await post('HeapProfiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}

async function writeProfiles() {
  const { profile } = await post('Profiler.stop');
  writeFileSync(join(profiles, `${name}.cpuprofile`), JSON.stringify(profile));
  const heap = await post('HeapProfiler.stopSampling');
  writeFileSync(join(profiles, `${name}.heapprofile`), JSON.stringify(heap.profile));
}

let marks = 0;
async function mark() {
  marks += 1;
  if (marks === 1) {
    if (profiles !== undefined) await startProfiles();
    return;
  }
  if (marks !== 2) return;
  if (profiles !== undefined) await writeProfiles();
  const before = memory();
  await post('HeapProfiler.collectGarbage');
  // V8 unmaps the freed pages from a background task: let it run first.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after = memory();
  if (memoryFile !== undefined) writeFileSync(memoryFile, JSON.stringify({ before, after }));
}

process.on('SIGUSR2', () => {
  mark().catch((error) => process.stderr.write(`child-signal: ${error}\n`));
});
