/**
 * One process of measure 6: holds one record row and, on `{ kind: 'run', mode, ms }`, updates it
 * for `ms` milliseconds either through the PostgreSQL store's compare-and-set (`store`) or with a
 * bare `UPDATE … WHERE handle = $1 AND version = $n` that writes the same columns with the same
 * values (`bare`: the marker in `record`, the text in `record_text`, `unfinished`, `created_at`,
 * `written_at`) but checks nothing else, then reports how many updates it made and the CPU time
 * this process spent on them. Driven over IPC by bench/lib/postgres.ts; deletes its row on close.
 *
 * Both sides send unnamed statements, which the server parses and plans at every update: neither
 * is prepared, so the two pay the same for it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { InteractionRecord } from '../src/index.js';
import { createPostgresHandleStore } from '../src/store/postgres.js';

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
const updateBare = async () => {
  const { rows } = await bare.query(
    `UPDATE ${stores.table}
     SET record = $2::jsonb, record_text = $3, version = version + 1, unfinished = $4, created_at = $5,
         written_at = now()
     WHERE handle = $1 AND version = $6 RETURNING version`,
    [record.handle, marker, text, unfinished, createdAt, version],
  );
  if (rows.length !== 1) throw new Error('bare update lost its row');
  version = Number(rows[0].version);
};
await updateStore();
await updateBare();

process.on('message', async (message: { kind: string; mode?: 'store' | 'bare'; ms?: number }) => {
  if (message.kind === 'run') {
    const step = message.mode === 'store' ? updateStore : updateBare;
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
