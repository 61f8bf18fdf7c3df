/**
 * `examples/worker.ts` on workerd, Cloudflare's Workers runtime (the `@cloudflare/workerd-linux-64`
 * binary from the npm registry). The module is bundled with esbuild as `wrangler` would, served by
 * `workerd serve` with a generated config whose bindings come from the environment, and real MCP
 * clients in this process run the full flow against the local Sess runtime. The Worker reaches
 * the runtime on 127.0.0.1 through a network service that allows local addresses. Node
 * compatibility is switched off (`no_nodejs_compat`): the handler needs web APIs only.
 *
 * workerd is looked for at `$SESS_MCP_WORKERD`, then
 * `.tmp/workerd/node_modules/@cloudflare/workerd-linux-64/bin/workerd`, then on `PATH`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { useSecretsAudit } from '../support/audit.js';
import {
  edgeFlowTests,
  findRuntime,
  type RunningRuntime,
  requireRuntime,
  root,
  spawnRuntime,
  useCleanup,
  WORKERD,
  workerdConfig,
  workerdPort,
} from './runtime.js';

const workerd = findRuntime(WORKERD);
const audits = useSecretsAudit();
const cleanup = useCleanup();

/** The workerd config: Node compatibility off, the handler needs web APIs only. */
const CONFIG = workerdConfig({
  flags: {
    comment: 'Node compatibility is on by default from 2026-08-04; the example must not need it.',
    flags: ['no_nodejs_compat'],
  },
});

let dir = '';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sess-workerd-'));
  await build({
    entryPoints: [join(root, 'examples', 'worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser'],
    outfile: join(dir, 'worker.js'),
    logLevel: 'silent',
  });
  writeFileSync(join(dir, 'config.capnp'), CONFIG);
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

function startWorkerd(env: Record<string, string>): Promise<RunningRuntime> {
  return spawnRuntime(workerd!, ['serve', join(dir, 'config.capnp'), '--control-fd=3'], {
    cwd: dir,
    env,
    readPort: workerdPort,
  });
}

describe.runIf(requireRuntime(WORKERD, workerd))('examples/worker.ts on workerd', { timeout: 60_000 }, () => {
  edgeFlowTests({
    label: 'workerd',
    heldWaitWhere: 'in the Worker',
    start: startWorkerd,
    audits,
    cleanup,
    async more(stack) {
      const elsewhere = await fetch(stack.server.url.replace(/\/mcp$/, '/other'));
      expect(elsewhere.status).toBe(404);
      await elsewhere.arrayBuffer();
    },
  });
});
