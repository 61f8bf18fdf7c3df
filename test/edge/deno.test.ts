/**
 * `examples/deno-server.ts` on Deno (the `@deno/linux-x64-glibc` binary from the npm registry):
 * Deno runs the TypeScript sources as they are, resolving packages from this repository's
 * node_modules, and serves them with `Deno.serve`; real MCP clients in this process run the full
 * flow against the local Sess runtime.
 *
 * `--sloppy-imports` lets Deno map the sources' `./x.js` specifiers to `./x.ts`; an application
 * that imports the built package needs no such flag. Deno is looked for at `$SESS_MCP_DENO`, then
 * `.tmp/deno/node_modules/@deno/linux-x64-glibc/deno`, then on `PATH`.
 */
import { describe } from 'vitest';
import {
  DENO,
  edgeFlowTests,
  findRuntime,
  type RunningRuntime,
  requireRuntime,
  root,
  spawnRuntime,
} from './runtime.js';

const deno = findRuntime(DENO);

function startDeno(env: Record<string, string>): Promise<RunningRuntime> {
  return spawnRuntime(
    deno!,
    [
      'run',
      '--no-prompt',
      '--sloppy-imports',
      '--allow-net=127.0.0.1',
      '--allow-env',
      'examples/deno-server.ts',
    ],
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
        const match = /LISTENING (\d+) deno /.exec(out);
        return match === null ? undefined : Number(match[1]);
      },
    },
  );
}

describe.runIf(requireRuntime(DENO, deno))('examples/deno-server.ts on Deno', { timeout: 60_000 }, () => {
  edgeFlowTests({ label: 'deno', heldWaitWhere: 'on Deno', start: startDeno });
});
