/**
 * What the edge-runtime suites share: finding a runtime binary installed from the npm registry,
 * running it as a child process that reports its port, and the full tool flow a real MCP client
 * drives against it (request → the person answers on the local Sess runtime → response → complete).
 *
 * A missing binary skips the suite on a developer's machine and fails it under `CI=true`, where
 * `.ci/run` installs every runtime first.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { LocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, ok, type ToolCaller } from '../http/harness.js';
import type { SecretsAudit } from '../support/audit.js';

/** The repository root, with a trailing slash. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/** Where to look for one runtime. */
export interface RuntimeSpec {
  /** Shown in messages, e.g. `workerd`. */
  name: string;
  /** Environment variable that names the binary. */
  envVar: string;
  /** Path below the repository root that `.ci/run` installs to. */
  cached: string;
  /** The command `.ci/run` runs to install it, for the message when it is missing. */
  install: string;
}

/** workerd, Cloudflare's Workers runtime, from `@cloudflare/workerd-linux-64`. */
export const WORKERD: RuntimeSpec = {
  name: 'workerd',
  envVar: 'SESS_MCP_WORKERD',
  cached: '.tmp/workerd/node_modules/@cloudflare/workerd-linux-64/bin/workerd',
  install: 'npm install --prefix .tmp/workerd @cloudflare/workerd-linux-64@1.20261117.1',
};

/** Deno, from `@deno/linux-x64-glibc`. */
export const DENO: RuntimeSpec = {
  name: 'deno',
  envVar: 'SESS_MCP_DENO',
  cached: '.tmp/deno/node_modules/@deno/linux-x64-glibc/deno',
  install: 'npm install --prefix .tmp/deno @deno/linux-x64-glibc@2.9.6',
};

/** The port in what `workerd serve --control-fd=3` reports: `{"event":"listen","socket":"http","port":N}`. */
export function workerdPort(out: string): number | undefined {
  const match = /"event":"listen","socket":"http","port":(\d+)/.exec(out);
  return match === null ? undefined : Number(match[1]);
}

/** The binary's path, or `undefined` when none is found (`$envVar`, the cached install, `PATH`). */
export function findRuntime(spec: RuntimeSpec): string | undefined {
  for (const candidate of [process.env[spec.envVar], `${root}${spec.cached}`]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  try {
    return execFileSync('which', [spec.name], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the suite runs: `true` when the binary is there. Without it, under `CI=true` this adds
 * one failing test that says how to install it; elsewhere the suite is skipped.
 */
export function requireRuntime(spec: RuntimeSpec, path: string | undefined): boolean {
  if (path !== undefined) return true;
  if (process.env.CI === 'true') {
    it(`finds ${spec.name}`, () => {
      throw new Error(`${spec.name} is missing: set ${spec.envVar} or run ${spec.install}`);
    });
  }
  return false;
}

/** A runtime serving the MCP endpoint. */
export interface RunningRuntime {
  url: string;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Spawn a runtime and wait for its port, which `readPort` finds in what it prints on stdout or
 * on the extra pipe at fd 3. Rejects with its stderr when it exits first.
 */
export async function spawnRuntime(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd?: string; readPort(output: string): number | undefined },
): Promise<RunningRuntime> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd ?? root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer) => {
        out += d.toString();
        const port = options.readPort(out);
        if (port !== undefined) resolve(port);
      };
      child.stdout!.on('data', onData);
      (child.stdio[3] as NodeJS.ReadableStream).on('data', onData);
      child.once('exit', (code) => reject(new Error(`${command} exited (${code}): ${stderr}`)));
      child.once('error', reject);
    });
    return { url: `http://127.0.0.1:${port}/mcp`, stderr: () => stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One interaction from request to complete, the person answering through the runtime's page. */
export async function roundTrip(client: ToolCaller, sess: LocalSess, audit: SecretsAudit): Promise<void> {
  const created = await ok(client, 'sess_request', { interaction: approveSurface });
  audit.url(created.humanUrl!, 'sess link');
  const page = await sess.submitAnswer(created.humanUrl!, approveAnswer);
  expect(page.status).toBe(303);
  const answered = await ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
  expect(answered).toMatchObject({
    state: 'answered',
    response: { verified: true, values: approveAnswer.values },
  });
  const completed = await ok(client, 'sess_complete', {
    handle: created.handle,
    expected_revision: 1,
    response_event_id: answered.response!.eventId,
  });
  expect(completed.state).toBe('completed');
}
