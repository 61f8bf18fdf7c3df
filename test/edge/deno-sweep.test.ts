/**
 * `examples/deno-sweep.ts` on Deno against PostgreSQL: the cron side of a Deno deployment, run
 * once (`--once`, what its `Deno.cron` runs every minute) as a child process, with the local Sess
 * runtime in this process. The person answers while no tool call waits; the sweep saves the
 * verified answer, delivers its event to the example's `onEvent`, and leaves the interaction of a
 * principal the example has no credential for alone.
 *
 * Deno resolves the package's names through `package.json` `exports` to the built `dist/` (`npm
 * test` builds first) and `pg` from this repository's node_modules. Needs `DATABASE_URL` and Deno;
 * under `CI=true` either missing fails the suite.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startLocalSess } from '../../src/testing/index.js';
import { approveAnswer } from '../http/harness.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import { DENO, findRuntime, requireRuntime, root } from './runtime.js';
import { exampleBinding, printedSweep, sweepTable, tableState, writeWaiting } from './sweep-scene.js';

const run = promisify(execFile);
const deno = findRuntime(DENO);
const databaseUrl = process.env.DATABASE_URL;
const audits = useSecretsAudit();
const cleanup = useCleanup();

const ready = requireRuntime(DENO, deno);
if (ready && databaseUrl === undefined && process.env.CI === 'true') {
  it('has DATABASE_URL', () => {
    throw new Error('DATABASE_URL is missing: run scripts/ci-postgres.sh');
  });
}

/** Run one sweep of the example (`--once`) to its exit; what it printed. */
async function sweepOnce(env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return run(
    deno!,
    [
      'run',
      '--no-prompt',
      '--allow-net=127.0.0.1',
      '--allow-env',
      '--allow-sys',
      'examples/deno-sweep.ts',
      '--once',
    ],
    {
      cwd: root,
      timeout: 30_000,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        // Deno's own cache stays inside the repository's ignored .tmp, and it asks no registry.
        DENO_DIR: `${root}.tmp/deno/cache`,
        DENO_NO_UPDATE_CHECK: '1',
        ...env,
      },
    },
  );
}

describe.runIf(ready && databaseUrl !== undefined)(
  'examples/deno-sweep.ts on Deno',
  { timeout: 60_000 },
  () => {
    it('sweeps once: saves a late answer, delivers its event, skips a principal without a credential', async () => {
      const sess = await startLocalSess();
      cleanup.push(() => sess.close());
      audits.current.secret(sess.apiKey, 'sess api key');
      const { table, store, db } = await sweepTable(databaseUrl!, 'deno', cleanup);
      const owner = await writeWaiting(sess, store, exampleBinding(sess));
      const stranger = await writeWaiting(sess, store, exampleBinding(sess, 'stranger'));
      const unanswered = await writeWaiting(sess, store, exampleBinding(sess));
      for (const made of [owner, stranger, unanswered]) audits.current.url(made.humanUrl, 'sess link');
      audits.current.answer(approveAnswer.values);
      await sess.submitAnswer(owner.humanUrl, approveAnswer);
      await sess.submitAnswer(stranger.humanUrl, approveAnswer);

      const { stdout, stderr } = await sweepOnce({
        DATABASE_URL: databaseUrl!,
        HANDLE_TABLE: table,
        SESS_API_KEY: sess.apiKey,
        SESS_WORKSPACE_ID: sess.workspaceId,
        SESS_API_ORIGIN: sess.origin,
        SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      });
      audits.current.text(stdout, 'deno stdout');
      audits.current.text(stderr, 'deno stderr');
      expect(printedSweep(stdout)).toMatchObject({
        polled: 2,
        changed: 1,
        skipped: 1,
        failed: 0,
        complete: true,
        delivered: 1,
      });
      expect(stdout).toContain('sess-mcp: answered at revision 1');
      expect(await tableState(db, table, [owner.handle, stranger.handle, unanswered.handle])).toEqual({
        kinds: ['answered', 'waiting', 'waiting'],
        delivered: [`delivered ${owner.handle}`],
      });
    });
  },
);
