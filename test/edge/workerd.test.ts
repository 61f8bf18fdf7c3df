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
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, ok } from '../http/harness.js';
import { connectLegacy, connectModern } from '../http/helpers.js';
import { useSecretsAudit } from '../support/audit.js';
import {
  findRuntime,
  type RunningRuntime,
  requireRuntime,
  root,
  roundTrip,
  spawnRuntime,
  WORKERD,
  workerdPort,
} from './runtime.js';

const workerd = findRuntime(WORKERD);
const audits = useSecretsAudit();
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

/** The workerd config: one Worker, its bindings read from the environment, one socket on port 0. */
const CONFIG = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .mainWorker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const mainWorker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2026-11-01",
  # Node compatibility is on by default from 2026-08-04; the example must not need it.
  compatibilityFlags = ["no_nodejs_compat"],
  bindings = [
    (name = "SESS_API_KEY", fromEnvironment = "SESS_API_KEY"),
    (name = "MCP_BEARER_TOKEN", fromEnvironment = "MCP_BEARER_TOKEN"),
    (name = "SESS_API_ORIGIN", fromEnvironment = "SESS_API_ORIGIN"),
    (name = "MCP_ALLOWED_HOST", text = "127.0.0.1"),
    (name = "SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST", text = "1"),
  ],
  globalOutbound = "internet",
);
`;

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
  it('a 2026-07-28 client and a 2025 client run request → answer → complete; a wrong token gets 401', async () => {
    const sess = await startLocalSess();
    cleanup.push(() => sess.close());
    const bearer = 'workerd-bearer-token-0123456789';
    audits.current.secret(sess.apiKey, 'sess api key');
    audits.current.secret(bearer, 'mcp bearer token');
    const worker = await startWorkerd({
      SESS_API_KEY: sess.apiKey,
      MCP_BEARER_TOKEN: bearer,
      SESS_API_ORIGIN: sess.origin,
    });
    cleanup.push(() => worker.stop());
    audits.current.watch(worker.stderr, 'workerd stderr');

    const modern = await connectModern(worker.url, { authorization: `Bearer ${bearer}` });
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await roundTrip(modern, sess, audits.current);
    await modern.close();

    const legacy = await connectLegacy(worker.url, { authorization: `Bearer ${bearer}` });
    await roundTrip(legacy, sess, audits.current);
    await legacy.close();
    expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed', 'completed']);

    const refused = await fetch(worker.url, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(refused.status).toBe(401);
    await refused.arrayBuffer();
    const elsewhere = await fetch(worker.url.replace(/\/mcp$/, '/other'));
    expect(elsewhere.status).toBe(404);
    await elsewhere.arrayBuffer();
  });

  it('a sess_response held open in the Worker returns the answer given during the wait', async () => {
    const sess = await startLocalSess();
    cleanup.push(() => sess.close());
    const bearer = 'workerd-bearer-token-abcdefghij';
    audits.current.secret(sess.apiKey, 'sess api key');
    audits.current.secret(bearer, 'mcp bearer token');
    const worker = await startWorkerd({
      SESS_API_KEY: sess.apiKey,
      MCP_BEARER_TOKEN: bearer,
      SESS_API_ORIGIN: sess.origin,
    });
    cleanup.push(() => worker.stop());
    audits.current.watch(worker.stderr, 'workerd stderr');
    const client = await connectModern(worker.url, { authorization: `Bearer ${bearer}` });
    cleanup.push(() => client.close());

    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    const waiting = ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
    await sess.whenWaiting();
    const started = Date.now();
    expect((await sess.submitAnswer(created.humanUrl!, approveAnswer)).status).toBe(303);
    const answered = await waiting;
    expect(answered).toMatchObject({ state: 'answered', response: { verified: true } });
    // The wait ended on the answer, not on its 20 s deadline.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
