/**
 * What the edge sweep suites share (`workerd-sweep.test.ts`, `deno-sweep.test.ts`): a handle
 * table of their own in PostgreSQL, waiting interactions of real Sessions of the local runtime
 * written to it as the examples' endpoint would write them, the line a sweep prints, and what the
 * database holds afterwards.
 *
 * The examples' one principal is `owner` (client `edge-example`, grant `edge-grant`, generation
 * `1`); any other principal gets no credential from their `credentialFor`.
 */
import pg from 'pg';
import { expect } from 'vitest';
import type { HttpBinding } from '../../src/core/contract/ports.js';
import type { SweepResult } from '../../src/http/index.js';
import { createSessClient } from '../../src/sess/client.js';
import { createPostgresHandleStore, type PostgresHandleStore } from '../../src/store/postgres/index.js';
import type { LocalSess } from '../../src/testing/index.js';
import { waitingRecordOn } from '../support/bulk-records.js';
import { approveSurface } from '../support/surfaces.js';
import type { Cleanup } from './runtime.js';

/** The binding of the examples' principal `principalId` (`owner` is theirs) on `sess`. */
export function exampleBinding(sess: LocalSess, principalId = 'owner'): HttpBinding {
  return {
    kind: 'http',
    origin: sess.origin,
    workspaceId: sess.workspaceId,
    principalId,
    clientId: 'edge-example',
    grantId: 'edge-grant',
    grantGeneration: '1',
  };
}

/** A migrated handle table of its own, and a client of the database; both dropped by `cleanup`. */
export async function sweepTable(
  databaseUrl: string,
  label: string,
  cleanup: Cleanup,
): Promise<{ table: string; store: PostgresHandleStore; db: pg.Client }> {
  const table = `${label}_sweep_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const store = createPostgresHandleStore({ connectionString: databaseUrl, table });
  await store.migrate();
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  cleanup.push(async () => {
    await store.close();
    const t = `"public"."${table}`;
    await db.query(`DROP TABLE IF EXISTS ${t}", ${t}_keys", ${t}_events", ${t}_deliveries"`);
    await db.end();
  });
  return { table, store, db };
}

/** A waiting interaction of `binding`: a Session created at `sess`, its record written to `store`. */
export async function writeWaiting(
  sess: LocalSess,
  store: PostgresHandleStore,
  binding: HttpBinding,
): Promise<{ handle: string; humanUrl: string }> {
  const client = createSessClient({
    origin: sess.origin,
    credential: () => sess.apiKey,
    allowInsecureLocalhost: true,
  });
  const view = await client.createSession({
    surface: approveSurface,
    idempotencyKey: `sweep-${Math.random().toString(36).slice(2)}`,
  });
  const record = waitingRecordOn(binding, view, approveSurface);
  await store.forBinding(binding).create(record);
  return { handle: record.handle, humanUrl: view.humanUrl };
}

/** The result of the last sweep a runtime printed (`sess-mcp sweep {…}` on stdout). */
export function printedSweep(stdout: string): SweepResult {
  const lines = [...stdout.matchAll(/^sess-mcp sweep (\{.*\})$/gm)];
  expect(lines.length, `no sweep line in: ${stdout}`).toBeGreaterThan(0);
  return JSON.parse(lines[lines.length - 1]![1]!) as SweepResult;
}

/** The state kind of each handle's row, and the delivery of each event to `onEvent`. */
export async function tableState(
  db: pg.Client,
  table: string,
  handles: readonly string[],
): Promise<{ kinds: string[]; delivered: string[] }> {
  const t = `"public"."${table}`;
  const kinds: string[] = [];
  for (const handle of handles) {
    const { rows } = await db.query(`SELECT state_kind FROM ${t}" WHERE handle = $1`, [handle]);
    kinds.push(rows[0]?.state_kind as string);
  }
  const { rows } = await db.query(
    `SELECT d.state, e.event_text FROM ${t}_deliveries" d JOIN ${t}_events" e USING (event_id) WHERE d.sink = 'onEvent'`,
  );
  return {
    kinds,
    delivered: rows.map(
      (row) => `${row.state} ${(JSON.parse(String(row.event_text)) as { handle: string }).handle}`,
    ),
  };
}
