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
import { afterEach, describe, it } from 'vitest';
import { useSecretsAudit } from '../support/audit.js';
import {
  bothClientsRoundTrip,
  type Cleanup,
  DENO,
  findRuntime,
  heldWaitAnswered,
  type RunningRuntime,
  requireRuntime,
  root,
  spawnRuntime,
  startEdgeStack,
} from './runtime.js';

const deno = findRuntime(DENO);
const audits = useSecretsAudit();
const cleanup: Cleanup = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

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
  it('a 2026-07-28 client and a 2025 client run request → answer → complete; a wrong token gets 401', async () => {
    const stack = await startEdgeStack(
      'deno',
      'deno-bearer-token-0123456789',
      startDeno,
      audits.current,
      cleanup,
    );
    await bothClientsRoundTrip(stack, audits.current);
  });

  it('a sess_response held open on Deno returns the answer given during the wait', async () => {
    const stack = await startEdgeStack(
      'deno',
      'deno-bearer-token-abcdefghij',
      startDeno,
      audits.current,
      cleanup,
    );
    await heldWaitAnswered(stack, audits.current, cleanup);
  });
});
