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
import { afterEach, describe, expect, it } from 'vitest';
import { startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, ok } from '../http/harness.js';
import { connectLegacy, connectModern } from '../http/helpers.js';
import { useSecretsAudit } from '../support/audit.js';
import {
  DENO,
  findRuntime,
  type RunningRuntime,
  requireRuntime,
  root,
  roundTrip,
  spawnRuntime,
} from './runtime.js';

const deno = findRuntime(DENO);
const audits = useSecretsAudit();
const cleanup: Array<() => Promise<void> | void> = [];
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
    const sess = await startLocalSess();
    cleanup.push(() => sess.close());
    const bearer = 'deno-bearer-token-0123456789';
    audits.current.secret(sess.apiKey, 'sess api key');
    audits.current.secret(bearer, 'mcp bearer token');
    const server = await startDeno({
      SESS_API_KEY: sess.apiKey,
      MCP_BEARER_TOKEN: bearer,
      SESS_API_ORIGIN: sess.origin,
    });
    cleanup.push(() => server.stop());
    audits.current.watch(server.stderr, 'deno stderr');

    const modern = await connectModern(server.url, { authorization: `Bearer ${bearer}` });
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await roundTrip(modern, sess, audits.current);
    await modern.close();

    const legacy = await connectLegacy(server.url, { authorization: `Bearer ${bearer}` });
    await roundTrip(legacy, sess, audits.current);
    await legacy.close();
    expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed', 'completed']);

    const refused = await fetch(server.url, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(refused.status).toBe(401);
    await refused.arrayBuffer();
  });

  it('a sess_response held open on Deno returns the answer given during the wait', async () => {
    const sess = await startLocalSess();
    cleanup.push(() => sess.close());
    const bearer = 'deno-bearer-token-abcdefghij';
    audits.current.secret(sess.apiKey, 'sess api key');
    audits.current.secret(bearer, 'mcp bearer token');
    const server = await startDeno({
      SESS_API_KEY: sess.apiKey,
      MCP_BEARER_TOKEN: bearer,
      SESS_API_ORIGIN: sess.origin,
    });
    cleanup.push(() => server.stop());
    audits.current.watch(server.stderr, 'deno stderr');
    const client = await connectModern(server.url, { authorization: `Bearer ${bearer}` });
    cleanup.push(() => client.close());

    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    const waiting = ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
    await sess.whenWaiting();
    const started = Date.now();
    expect((await sess.submitAnswer(created.humanUrl!, approveAnswer)).status).toBe(303);
    const answered = await waiting;
    expect(answered).toMatchObject({ state: 'answered', response: { verified: true } });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
