/**
 * One process of measure 6: holds one record row and, on `{ kind: 'run', mode, ms }`, updates it
 * for `ms` milliseconds either through the PostgreSQL store's compare-and-set (`store`) or with a
 * bare `UPDATE … WHERE handle = $1 AND version = $n` that writes the same columns with the same
 * values (`bare`: the marker in `record`, the text in `record_text`, `unfinished`, `created_at`,
 * `written_at`) but checks nothing else, then reports how many updates it made and the CPU time
 * this process spent on them. Driven over IPC by bench/lib/postgres.ts; deletes its row on close.
 *
 * The store prepares its statements (its default with its own pool): each connection parses and
 * plans them once. The bare statement is sent unnamed (`bare`), parsed and planned at every
 * update as a hand-written query usually is, and, for comparison outside the goal, named
 * (`prepared`), as the store sends its own.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { InteractionRecord } from '../src/index.js';
import { createPostgresHandleStore } from '../src/store/postgres/index.js';

const url = process.env.DATABASE_URL!;
const record = JSON.parse(process.argv[2]!) as InteractionRecord;
record.handle = `sess_h_${randomBytes(16).toString('base64url')}`;
const stores = createPostgresHandleStore({ connectionString: url });
await stores.migrate();
const store = stores.forBinding(record.binding);
let version = (await store.create(record)).version;
const bare = new pg.Pool({ connectionString: url });
// The bare baseline writes the same column values the store wrote for this record, read back
// once, so it needs none of the store's own code.
const written = await bare.query(
  `SELECT record::text AS marker, record_text, unfinished, created_at FROM ${stores.table} WHERE handle = $1`,
  [record.handle],
);
const { marker, record_text: text, unfinished, created_at: createdAt } = written.rows[0];

const updateStore = async () => {
  version = (await store.update(record, version)).version;
};
const bareText = `UPDATE ${stores.table}
     SET record = $2::jsonb, record_text = $3, version = version + 1, unfinished = $4, created_at = $5,
         written_at = now()
     WHERE handle = $1 AND version = $6 RETURNING version`;
const bareUpdate = (name?: string) => async () => {
  const values = [record.handle, marker, text, unfinished, createdAt, version];
  const { rows } = await (name === undefined
    ? bare.query(bareText, values)
    : bare.query({ name, text: bareText, values }));
  if (rows.length !== 1) throw new Error('bare update lost its row');
  version = Number(rows[0].version);
};
const steps = { store: updateStore, bare: bareUpdate(), prepared: bareUpdate('bench_bare_update') };
for (const step of Object.values(steps)) await step();

process.on('message', async (message: { kind: string; mode?: keyof typeof steps; ms?: number }) => {
  if (message.kind === 'run') {
    const step = steps[message.mode!];
    const cpu = process.cpuUsage();
    const end = performance.now() + message.ms!;
    let count = 0;
    while (performance.now() < end) {
      await step();
      count += 1;
    }
    const { user, system } = process.cpuUsage(cpu);
    process.send!({ kind: 'ran', count, cpuMs: (user + system) / 1000 });
  } else if (message.kind === 'close') {
    await store.delete(record.handle);
    await stores.close();
    await bare.end();
    process.exit(0);
  }
});
process.send!({ kind: 'ready' });
