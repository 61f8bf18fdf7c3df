/**
 * The Cron Trigger of `examples/edge/worker-postgres.ts` on workerd: the Worker, bundled as
 * wrangler bundles it for `nodejs_compat`, serves the MCP endpoint with its handles in PostgreSQL;
 * a `scheduled` event, dispatched to it as a Cron Trigger would (`Fetcher.scheduled()` of a
 * trigger Worker in front of it), runs one `sweep` of the watcher. The person answers while no
 * tool call waits; the sweep saves the verified answer, delivers its event to the example's
 * `onEvent`, and leaves the interaction of a principal the example has no credential for alone.
 *
 * Needs `DATABASE_URL` (`scripts/ci-postgres.sh`) and workerd; under `CI=true` either missing
 * fails the suite.
 */
import { describe, expect, it } from 'vitest';
import { approveAnswer, approveSurface, ok } from '../http/harness.js';
import { connectModern } from '../http/helpers.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import { NO_CONTENT, newSecret, startWebhookReceiver, verifyDelivery } from '../support/webhook-receiver.js';
import {
  findRuntime,
  requireWorkerdPostgres,
  SCHEDULED_TRIGGER_JS,
  startEdgeStack,
  useWorkerBundle,
  WORKER_POSTGRES_BUILD,
  WORKERD,
  workerdConfig,
} from './runtime.js';
import { exampleBinding, printedSweep, sweepTable, tableState, writeWaiting } from './sweep-scene.js';

const workerd = findRuntime(WORKERD);
const databaseUrl = process.env.DATABASE_URL;
const audits = useSecretsAudit();
const cleanup = useCleanup();

const ready = requireWorkerdPostgres(workerd);

const startWorker = useWorkerBundle(workerd, {
  prefix: 'sess-workerd-sweep-',
  when: ready,
  build: WORKER_POSTGRES_BUILD,
  config: workerdConfig({
    extra: [
      '(name = "DATABASE_URL", fromEnvironment = "DATABASE_URL")',
      '(name = "HANDLE_TABLE", fromEnvironment = "HANDLE_TABLE")',
      '(name = "SESS_WEBHOOK_URL", fromEnvironment = "SESS_WEBHOOK_URL")',
      '(name = "SESS_WEBHOOK_SECRET", fromEnvironment = "SESS_WEBHOOK_SECRET")',
    ],
    trigger: true,
  }),
  files: { 'trigger.js': SCHEDULED_TRIGGER_JS },
  // Fetcher.scheduled() is experimental in workerd.
  args: ['--experimental'],
});

describe.runIf(ready)('the Cron Trigger of a Worker on workerd', { timeout: 60_000 }, () => {
  it('sweeps: saves a late answer, delivers its event to onEvent and a signed webhook over fetch, skips a principal without a credential', async () => {
    const { table, store, db } = await sweepTable(databaseUrl!, 'workerd', cleanup);
    const receiver = await startWebhookReceiver(NO_CONTENT);
    cleanup.push(() => receiver.close());
    const secret = newSecret();
    audits.current.secret(secret, 'webhook secret');
    audits.current.watch(() => receiver.received.map((r) => r.body), 'webhook bodies');
    const webhookEnv = { SESS_WEBHOOK_URL: receiver.url, SESS_WEBHOOK_SECRET: secret };
    const { sess, server, headers } = await startEdgeStack(
      'workerd',
      'workerd-sweep-bearer-0123456789',
      (env) => startWorker({ DATABASE_URL: databaseUrl!, HANDLE_TABLE: table, ...webhookEnv, ...env }),
      audits.current,
      cleanup,
    );
    audits.current.watch(server.stdout, 'workerd stdout');
    const client = await connectModern(server.url, headers);
    cleanup.push(() => client.close());

    // The agent asks through the Worker, and stops waiting; a stranger's interaction sits beside it.
    const asked = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(asked.humanUrl!, 'sess link');
    const stranger = await writeWaiting(sess, store, exampleBinding(sess, 'stranger'));
    audits.current.url(stranger.humanUrl, 'stranger link');
    audits.current.answer(approveAnswer.values);
    await sess.submitAnswer(asked.humanUrl!, approveAnswer);
    await sess.submitAnswer(stranger.humanUrl, approveAnswer);

    const fired = await fetch(server.url.replace(/\/mcp$/, '/__scheduled'));
    expect(await fired.json()).toEqual({ outcome: 'ok', noRetry: false });
    const swept = printedSweep(server.stdout());
    expect(swept).toMatchObject({
      polled: 1,
      changed: 1,
      skipped: 1,
      failed: 0,
      complete: true,
      delivered: 2,
    });
    // The webhook went out over workerd's fetch (its host allowed by name), signed: the reference
    // verifier takes it, and it names the answered interaction only.
    expect(receiver.received).toHaveLength(1);
    expect(verifyDelivery(receiver.received[0]!, secret)).toMatchObject({
      type: 'answered',
      handle: asked.handle,
      revision: 1,
    });
    expect(server.stdout()).toContain('sess-mcp: answered at revision 1');
    expect(await tableState(db, table, [asked.handle, stranger.handle])).toEqual({
      kinds: ['answered', 'waiting'],
      delivered: [`delivered ${asked.handle}`],
    });
    // The agent's next call reads the verified answer the sweep saved.
    const read = await ok(client, 'sess_response', { handle: asked.handle, revision: 1, wait_ms: 0 });
    expect(read).toMatchObject({
      state: 'answered',
      response: { verified: true, values: approveAnswer.values },
    });
  });
});
