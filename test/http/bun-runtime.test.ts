/**
 * The same flow through `handler.fetch` on a non-Node runtime: Bun (the `@oven/bun-linux-x64`
 * binary from the npm registry) serves `examples/fetch-edge.ts` with `Bun.serve`; real clients in
 * this process run request → answer → complete against the local Sess runtime.
 *
 * Bun is looked for at `$SESS_MCP_BUN`, then `.tmp/bun/node_modules/@oven/bun-linux-x64/bin/bun`
 * (install with `npm install --prefix .tmp/bun @oven/bun-linux-x64@1.4.4`), then on `PATH`.
 * Without it the suite is skipped with that reason, except under `CI=true`, where it fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { useSecretsAudit } from '../support/audit.js';
import { findOutsideTool } from '../support/outside-tool.js';
import { approveAnswer, approveSurface, ok, type ToolCaller } from './harness.js';
import { connectLegacy, connectModern } from './helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function findBun(): string | undefined {
  return findOutsideTool({
    name: 'Bun 1.4.4',
    paths: [process.env.SESS_MCP_BUN, '.tmp/bun/node_modules/@oven/bun-linux-x64/bin/bun'],
    command: 'bun',
    install: 'npm install --prefix .tmp/bun @oven/bun-linux-x64@1.4.4',
  });
}

const bunPath = findBun();
const audits = useSecretsAudit();
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

async function startBun(sess: LocalSess, bearer: string): Promise<{ url: string; stderr: () => string }> {
  const child: ChildProcess = spawn(bunPath!, [`${root}test/http/bun-server.ts`], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      SESS_API_KEY: sess.apiKey,
      MCP_BEARER_TOKEN: bearer,
      SESS_API_ORIGIN: sess.origin,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /LISTENING (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`bun exited (${code}): ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stderr: () => stderr };
}

async function roundTrip(client: ToolCaller, sess: LocalSess): Promise<void> {
  const created = await ok(client, 'sess_request', { interaction: approveSurface });
  audits.current.url(created.humanUrl!, 'sess link');
  await sess.submitAnswer(created.humanUrl!, approveAnswer);
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

describe.skipIf(bunPath === undefined)('handler.fetch under Bun (fetch-edge.ts in Bun.serve)', () => {
  it('a 2026-07-28 client and a 2025 client run request → answer → complete', async () => {
    const sess = await startLocalSess();
    cleanup.push(() => sess.close());
    const bearer = 'bun-bearer-token-0123456789';
    audits.current.secret(sess.apiKey, 'sess api key');
    audits.current.secret(bearer, 'mcp bearer token');
    const bun = await startBun(sess, bearer);
    audits.current.watch(bun.stderr, 'bun stderr');

    const modern = await connectModern(bun.url, { authorization: `Bearer ${bearer}` });
    expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await roundTrip(modern, sess);
    await modern.close();

    const legacy = await connectLegacy(bun.url, { authorization: `Bearer ${bearer}` });
    await roundTrip(legacy, sess);
    await legacy.close();
    expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed', 'completed']);

    const refused = await fetch(bun.url, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(refused.status).toBe(401);
  });
});
