/**
 * `examples/worker.ts` on workerd, Cloudflare's Workers runtime (the `@cloudflare/workerd-linux-64`
 * binary from the npm registry). The module is bundled with esbuild as `wrangler` would, served by
 * `workerd serve` with a generated config whose bindings come from the environment, and real MCP
 * clients in this process run the full flow against the local Sess runtime. The Worker reaches
 * the runtime on 127.0.0.1 through a network service that allows local addresses. Node
 * compatibility is switched off (`no_nodejs_compat`): the handler needs web APIs only.
 *
 * The same handler runs a second time with the real OpenTelemetry SDK bundled into the Worker and
 * its providers in the `telemetry` option (`test/edge/telemetry-worker.ts`): the flow runs the
 * same, and the spans and metrics reach the SDK. The first run has `@opentelemetry/api` and no
 * SDK, as a Worker without one has.
 *
 * workerd is looked for at `$SESS_MCP_WORKERD`, then
 * `.tmp/workerd/node_modules/@cloudflare/workerd-linux-64/bin/workerd`, then on `PATH`.
 */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  edgeFlowTests,
  expectTelemetryExported,
  findRuntime,
  requireRuntime,
  root,
  useWorkerBundle,
  WORKERD,
  workerdConfig,
} from './runtime.js';

const workerd = findRuntime(WORKERD);

/**
 * The Worker module `entry` (below the repository) bundled as `wrangler` would, with Node
 * compatibility off: the handler needs web APIs only.
 */
function workerBundle(entry: string[], prefix: string) {
  return useWorkerBundle(workerd, {
    prefix,
    build: {
      entryPoints: [join(root, ...entry)],
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'browser'],
    },
    config: workerdConfig({
      flags: {
        comment: 'Node compatibility is on by default from 2026-08-04; the example must not need it.',
        flags: ['no_nodejs_compat'],
      },
    }),
  });
}

const startWorkerd = workerBundle(['examples', 'worker.ts'], 'sess-workerd-');
const startWithTelemetry = workerBundle(['test', 'edge', 'telemetry-worker.ts'], 'sess-workerd-otel-');

describe.runIf(requireRuntime(WORKERD, workerd))('examples/worker.ts on workerd', { timeout: 60_000 }, () => {
  edgeFlowTests({
    label: 'workerd',
    heldWaitWhere: 'in the Worker',
    start: startWorkerd,
    async more(stack) {
      const elsewhere = await fetch(stack.server.url.replace(/\/mcp$/, '/other'));
      expect(elsewhere.status).toBe(404);
      await elsewhere.arrayBuffer();
    },
  });
});

describe.runIf(requireRuntime(WORKERD, workerd))(
  'examples/fetch-edge.ts on workerd with the OpenTelemetry SDK in the Worker',
  { timeout: 60_000 },
  () => {
    edgeFlowTests({
      label: 'workerd-otel',
      start: startWithTelemetry,
      more: expectTelemetryExported,
    });
  },
);
