/**
 * The soak's three instances as real OS processes: `instance.ts` bundled once with esbuild
 * (packages left external, so `pg` resolves from this checkout), each started with its settings
 * in its environment, ready once it prints `ready`. An instance is killed with SIGKILL and
 * started again on the same port, so the balancer's server line stays the same and the new
 * process has a new pid.
 *
 * It starts, kills and restarts processes; what they serve is `instance.ts`'s.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleWithPackages } from '../support/bundle.js';
import { repoRoot } from '../support/repo-files.js';
import type { SoakInstanceSettings } from './instance.js';

/** One instance slot: its name and port, and the process serving it now. */
export interface InstanceSlot {
  readonly name: string;
  readonly port: number;
  /** The pid serving now. */
  pid(): number;
  /** SIGKILL the process; resolves once it is gone. Returns the killed pid. */
  kill(): Promise<number>;
  /** Start a new process on the same port; resolves once it listens. */
  start(): Promise<void>;
  /** End whatever runs (SIGKILL). */
  stop(): Promise<void>;
}

/** The bundled instance and how to start slots of it. */
export interface InstanceFleet {
  slot(settings: SoakInstanceSettings): InstanceSlot;
  /** Remove the bundle. */
  dispose(): Promise<void>;
}

/** Bundle `instance.ts`; `env` is added to every instance's environment. */
export async function prepareFleet(env: Record<string, string>): Promise<InstanceFleet> {
  const file = await bundleWithPackages(
    join(repoRoot, 'test', 'soak', 'instance.ts'),
    'sess-mcp-soak',
    `instance-${process.pid}.mjs`,
  );
  return {
    slot: (settings) => instanceSlot(file, settings, env),
    dispose: () => rm(file, { force: true }),
  };
}

function instanceSlot(
  file: string,
  settings: SoakInstanceSettings,
  env: Record<string, string>,
): InstanceSlot {
  let child: ChildProcess | undefined;
  let first = true;
  const gone = (c: ChildProcess) =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => c.once('exit', () => resolve()));
  return {
    name: settings.name,
    port: settings.port,
    pid: () => child?.pid ?? 0,
    async kill() {
      const c = child!;
      c.kill('SIGKILL');
      await gone(c);
      return c.pid as number;
    },
    async start() {
      const migrate = first && settings.migrate;
      first = false;
      const c = spawn(process.execPath, [file], {
        env: { ...process.env, ...env, SOAK_INSTANCE: JSON.stringify({ ...settings, migrate }) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      await new Promise<void>((resolve, reject) => {
        let out = '';
        let err = '';
        c.stderr?.on('data', (chunk: Buffer) => {
          err = (err + chunk.toString('utf8')).slice(-2_000);
        });
        c.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          if (out.includes('ready\n')) resolve();
        });
        c.once('exit', (code, signal) =>
          reject(
            new Error(`instance ${settings.name} exited (${code ?? signal}) before it was ready: ${err}`),
          ),
        );
      });
    },
    async stop() {
      if (child === undefined) return;
      child.kill('SIGKILL');
      await gone(child);
    },
  };
}
