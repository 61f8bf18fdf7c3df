/**
 * One process of measure 6: holds one record row and, on `{ kind: 'run', mode, ms }`, updates it
 * for `ms` milliseconds either through the PostgreSQL store's compare-and-set (`store`) or with a
 * bare `UPDATE … WHERE version = $n` of the same bytes on the same table (`bare`), then reports
 * how many updates it made. Driven over IPC by bench/lib/postgres.ts; deletes its row on close.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { InteractionRecord } from '../src/core/record.js';
import { createPostgresHandleStore } from '../src/store/postgres.js';
import { encodeRecordColumns } from '../src/store/postgres-encoding.js';

const url = process.env.DATABASE_URL!;
const record = JSON.parse(process.argv[2]!) as InteractionRecord;
record.handle = `sess_h_${randomBytes(16).toString('base64url')}`;
const stores = createPostgresHandleStore({ connectionString: url });
await stores.migrate();
const store = stores.forBinding(record.binding);
let version = (await store.create(record)).version;
const bare = new pg.Pool({ connectionString: url });
const { text } = encodeRecordColumns(record);

const updateStore = async () => {
  version = (await store.update(record, version)).version;
};
const updateBare = async () => {
  const { rows } = await bare.query(
    `UPDATE "public"."sess_mcp_handles" SET record_text = $2, version = version + 1, written_at = now()
     WHERE handle = $1 AND version = $3 RETURNING version`,
    [record.handle, text, version],
  );
  if (rows.length !== 1) throw new Error('bare update lost its row');
  version = Number(rows[0].version);
};
await updateStore();
await updateBare();

process.on('message', async (message: { kind: string; mode?: 'store' | 'bare'; ms?: number }) => {
  if (message.kind === 'run') {
    const step = message.mode === 'store' ? updateStore : updateBare;
    const end = performance.now() + message.ms!;
    let count = 0;
    while (performance.now() < end) {
      await step();
      count += 1;
    }
    process.send!({ kind: 'ran', count });
  } else if (message.kind === 'close') {
    await store.delete(record.handle);
    await stores.close();
    await bare.end();
    process.exit(0);
  }
});
process.send!({ kind: 'ready' });
