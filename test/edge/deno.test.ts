/**
 * `examples/deno-server.ts` on Deno (the `@deno/linux-x64-glibc` binary from the npm registry):
 * Deno runs the example's TypeScript as it is and serves it with `Deno.serve`; real MCP clients in
 * this process run the full flow against the local Sess runtime. The example imports the package
 * by its name, which Deno resolves as an application's would: through `package.json` `exports`
 * (here the repository's own, by self-reference) to the built `dist/` (`npm test` builds first),
 * and its other packages from this repository's node_modules.
 *
 * The same handler also runs with the real OpenTelemetry SDK in the process
 * (`test/edge/serve.ts` with `SESS_MCP_TEST_TELEMETRY=1`): the flow runs the same, and the spans and metrics reach it.
 *
 * `--sloppy-imports` lets Deno take the example's `./fetch-edge.js` for `./fetch-edge.ts`. Deno is looked for at `$SESS_MCP_DENO`, then
 * `.tmp/deno/node_modules/@deno/linux-x64-glibc/deno`, then on `PATH`.
 */
import { describe } from 'vitest';
import {
  DENO,
  edgeFlowTests,
  expectTelemetryExported,
  findRuntime,
  type RunningRuntime,
  requireRuntime,
  root,
  spawnRuntime,
} from './runtime.js';

const deno = findRuntime(DENO);

function startDeno(env: Record<string, string>, script: string): Promise<RunningRuntime> {
  return spawnRuntime(
    deno!,
    ['run', '--no-prompt', '--sloppy-imports', '--allow-net=127.0.0.1', '--allow-env', script],
    {
      env: {
        // Deno's own cache stays inside the repository's ignored .tmp, and it asks no registry.
        DENO_DIR: `${root}.tmp/deno/cache`,
        DENO_NO_UPDATE_CHECK: '1',
        PORT: '0',
        HOST: '127.0.0.1',
        MCP_ALLOWED_HOST: '127.0.0.1',
        SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
        ...env,
      },
      readPort: (out) => {
        const match = /LISTENING (\d+)/.exec(out);
        return match === null ? undefined : Number(match[1]);
      },
    },
  );
}

describe.runIf(requireRuntime(DENO, deno))('examples/deno-server.ts on Deno', { timeout: 60_000 }, () => {
  edgeFlowTests({
    label: 'deno',
    heldWaitWhere: 'on Deno',
    start: (env) => startDeno(env, 'examples/deno-server.ts'),
  });
});

describe.runIf(requireRuntime(DENO, deno))(
  'the edge handler on Deno with the OpenTelemetry SDK (test/edge/serve.ts)',
  { timeout: 60_000 },
  () => {
    edgeFlowTests({
      label: 'deno-otel',
      start: (env) => startDeno({ ...env, SESS_MCP_TEST_TELEMETRY: '1' }, 'test/edge/serve.ts'),
      more: expectTelemetryExported,
    });
  },
);
