/**
 * The helper processes of the benchmarks: fork one of the bundled entry points (bench/*.ts, built
 * by bench/run.mjs into `SESS_BENCH_DIR`), wait for one of its IPC messages, and stop it.
 *
 * Only process plumbing; what a child does is in its own file.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

/** Fork the bundled bench entry `name` (e.g. `runtime-child`) with an IPC channel. */
export function forkBench(
  name: string,
  args: readonly string[] = [],
  execArgv: readonly string[] = [],
): ChildProcess {
  const dir = process.env.SESS_BENCH_DIR;
  if (dir === undefined) throw new Error('SESS_BENCH_DIR is unset: run the benchmarks with `npm run bench`');
  return fork(join(dir, `${name}.mjs`), [...args], {
    execArgv: [...execArgv],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

/** The next message of `kind` from `child`; rejects if the child exits first. */
export function message<T>(child: ChildProcess, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { kind: string }) => {
      if (m.kind !== kind) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before "${kind}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Ask each child to close (`{ kind: 'close' }`) and wait until every one has exited. */
export async function closeChildren(children: ReadonlyArray<ChildProcess | undefined>): Promise<void> {
  await Promise.all(
    children.map((child) => {
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.connected) child.send({ kind: 'close' });
      else child.kill();
      return exited;
    }),
  );
}

/** The runtime child's first message (bench/runtime-child.ts). */
export interface RuntimeReady {
  origin: string;
  workspaceId: string;
  apiKey: string;
}
