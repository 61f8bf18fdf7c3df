/**
 * Optional profiles of a benchmark child, for finding where its time and memory go. Set
 * `SESS_BENCH_PROFILE=<directory>` and the measure 3 children write, per phase, a V8 CPU profile
 * (`<name>.cpuprofile`, open it in Chrome DevTools or summarise it with `node bench/profile-top.mjs`)
 * and a sampling heap profile of what is still alive at the end of the phase
 * (`<name>.heapprofile`). Unset, every function here does nothing.
 *
 * It measures nothing the table prints: a profiled run is slower, so its figures are not comparable.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.SESS_BENCH_PROFILE;
/** True when `SESS_BENCH_PROFILE` names a directory to write profiles to. */
export const profiling = dir !== undefined;
let session: Session | undefined;

function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session!.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

/** Start a CPU profile and a sampling heap profile (no-op without `SESS_BENCH_PROFILE`). */
export async function startProfile(): Promise<void> {
  if (dir === undefined) return;
  if (session === undefined) {
    session = new Session();
    session.connect();
    await post('Profiler.enable');
    await post('HeapProfiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 500 });
  }
  await post('Profiler.start');
  await post('HeapProfiler.startSampling', { samplingInterval: 4096 });
}

/** Stop both profiles and write them as `<name>.cpuprofile` and `<name>.heapprofile`. */
export async function stopProfile(name: string): Promise<void> {
  if (dir === undefined || session === undefined) return;
  const { profile } = await post<{ profile: unknown }>('Profiler.stop');
  (globalThis as { gc?: () => void }).gc?.();
  const heap = await post<{ profile: unknown }>('HeapProfiler.stopSampling');
  writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  writeFileSync(join(dir, `${name}.heapprofile`), JSON.stringify(heap.profile));
}
