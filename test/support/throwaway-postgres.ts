/**
 * A PostgreSQL cluster of a test's own, for a test that stops or restarts its database: started
 * by `scripts/ci-postgres.sh` in a directory of its own (so the cluster other suites share through
 * `DATABASE_URL` is never touched), restarted, stopped and removed by the same script.
 *
 * It only starts, restarts and stops the cluster: what runs against it is the test's own. Starting takes
 * about two seconds (`initdb`), so a suite starts it early and awaits it where it is needed.
 *
 * @example
 * ```ts
 * const cluster = startThrowawayPostgres();
 * it('…', async () => {
 *   const { url, stop } = await cluster;
 *   await stop();
 * });
 * ```
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './repo-files.js';

const run = promisify(execFile);

/** A running throwaway cluster. */
export interface ThrowawayPostgres {
  /** The connection string of its test database. */
  readonly url: string;
  /** Restart the server (a fast shutdown, then a start on the same port and data). */
  restart(): Promise<void>;
  /** Stop the server and remove its directory. Idempotent. */
  stop(): Promise<void>;
}

/** Start a cluster of its own (its directory under the system's temporary directory). */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const parent = await mkdtemp(join(tmpdir(), 'sess-mcp-throwaway-pg-'));
  // As root the script runs the cluster as `postgres`, which must reach the directory below.
  await chmod(parent, 0o711);
  const env = { ...process.env, SESS_PG_DIR: join(parent, 'cluster') };
  const script = join(repoRoot, 'scripts/ci-postgres.sh');
  let url: string | undefined;
  try {
    const { stdout } = await run('bash', [script], { env, timeout: 120_000 });
    url = /export DATABASE_URL=(\S+)/.exec(stdout)?.[1];
    if (url === undefined) throw new Error('ci-postgres.sh printed no DATABASE_URL');
  } catch (error) {
    // A cluster that did not start leaves nothing behind.
    await run('bash', [script, '--stop'], { env, timeout: 60_000 }).catch(() => {});
    await rm(parent, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: url as string,
    async restart() {
      await run('bash', [script, '--restart'], { env, timeout: 120_000 });
    },
    stop() {
      stopped ??= run('bash', [script, '--stop'], { env, timeout: 60_000 }).then(() =>
        rm(parent, { recursive: true, force: true }),
      );
      return stopped;
    },
  };
}
