/**
 * `examples/edge/worker-postgres.ts` on workerd: a Worker that keeps its handles in PostgreSQL
 * with `pg` (through workerd's Node compatibility), bundled as wrangler bundles for
 * `nodejs_compat`, runs the full flow against the local Sess runtime, and its records are in the
 * database afterwards.
 *
 * Needs `DATABASE_URL` (`scripts/ci-postgres.sh`) and workerd; under `CI=true` either missing
 * fails the suite.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { connectModern } from '../http/helpers.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import {
  findRuntime,
  requireWorkerdPostgres,
  roundTrip,
  startEdgeStack,
  useWorkerBundle,
  WORKER_POSTGRES_BUILD,
  WORKERD,
  workerdConfig,
} from './runtime.js';

const workerd = findRuntime(WORKERD);
const databaseUrl = process.env.DATABASE_URL;
const table = `edge_handles_${process.pid}`;
const audits = useSecretsAudit();
const cleanup = useCleanup();

const ready = requireWorkerdPostgres(workerd);

const startWorker = useWorkerBundle(workerd, {
  prefix: 'sess-workerd-pg-',
  when: ready,
  build: WORKER_POSTGRES_BUILD,
  config: workerdConfig({
    extra: [
      '(name = "DATABASE_URL", fromEnvironment = "DATABASE_URL")',
      `(name = "HANDLE_TABLE", text = "${table}")`,
    ],
  }),
});

describe.runIf(ready)('a Worker with the PostgreSQL store on workerd', { timeout: 60_000 }, () => {
  it('runs request → answer → complete with its records in PostgreSQL', async () => {
    const store = createPostgresHandleStore({ connectionString: databaseUrl!, table });
    await store.migrate();
    cleanup.push(() => store.close());
    const { sess, server, headers } = await startEdgeStack(
      'workerd',
      'workerd-pg-bearer-0123456789',
      (env) => startWorker({ DATABASE_URL: databaseUrl!, ...env }),
      audits.current,
      cleanup,
    );
    const client = await connectModern(server.url, headers);
    cleanup.push(() => client.close());
    await roundTrip(client, sess, audits.current);
    expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed']);
    // The record is in PostgreSQL, written by the Worker (this process only created the table).
    const db = new pg.Client({ connectionString: databaseUrl! });
    await db.connect();
    cleanup.push(() => db.end());
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM "public"."${table}"`);
    expect(rows[0].n).toBe(1);
    const t = `"public"."${table}`;
    await db.query(`DROP TABLE ${t}", ${t}_keys", ${t}_events", ${t}_deliveries"`);
  });
});
