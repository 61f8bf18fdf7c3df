/**
 * The same flow through `handler.fetch` on a non-Node runtime: Bun (the `@oven/bun-linux-x64`
 * binary from the npm registry) serves `examples/fetch-edge.ts` with `Bun.serve`; real clients in
 * this process run request → answer → complete against the local Sess runtime. The same handler
 * also runs with the real OpenTelemetry SDK in the process (`test/edge/serve.ts` with `SESS_MCP_TEST_TELEMETRY=1`).
 *
 * Bun is looked for at `$SESS_MCP_BUN`, then `.tmp/bun/node_modules/@oven/bun-linux-x64/bin/bun`
 * (install with `npm install --prefix .tmp/bun @oven/bun-linux-x64@1.4.4`), then on `PATH`.
 * Without it the suite is skipped with that reason, except under `CI=true`, where it fails.
 */
import { describe } from 'vitest';
import {
  edgeFlowTests,
  expectTelemetryExported,
  type RunningRuntime,
  root,
  spawnRuntime,
} from '../edge/runtime.js';
import { findOutsideTool } from '../support/outside-tool.js';

function findBun(): string | undefined {
  return findOutsideTool({
    name: 'Bun 1.4.4',
    paths: [process.env.SESS_MCP_BUN, '.tmp/bun/node_modules/@oven/bun-linux-x64/bin/bun'],
    command: 'bun',
    install: 'npm install --prefix .tmp/bun @oven/bun-linux-x64@1.4.4',
  });
}

const bunPath = findBun();

function startBun(env: Record<string, string>): Promise<RunningRuntime> {
  return spawnRuntime(bunPath!, [`${root}test/edge/serve.ts`], {
    env,
    readPort: (out) => {
      const match = /LISTENING (\d+)/.exec(out);
      return match === null ? undefined : Number(match[1]);
    },
  });
}

describe.skipIf(bunPath === undefined)('handler.fetch under Bun (fetch-edge.ts in Bun.serve)', () => {
  edgeFlowTests({ label: 'bun', start: startBun });
});

describe.skipIf(bunPath === undefined)('handler.fetch under Bun with the OpenTelemetry SDK', () => {
  edgeFlowTests({
    label: 'bun-otel',
    start: (env) => startBun({ ...env, SESS_MCP_TEST_TELEMETRY: '1' }),
    more: expectTelemetryExported,
  });
});
