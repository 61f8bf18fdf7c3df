/**
 * Retention keeps a store bounded: 20 000 interactions finish over the test, 1000 a second of
 * their own time, with a 1 s retention, and after each second a watcher's retention pass runs
 * (`prunePass`, what `createSessMcpWatcher` and the stdio watcher run: batches of 100, at most
 * 1000 records a pass). Throughout, the store holds at most 2000 records (the second that just
 * finished and the one before it) and, for the memory store, at most 2000 outbox events; at the
 * end exactly the last second's 1000.
 *
 * The records are written straight to each store's medium (`test/support/bulk-records.ts`; the
 * memory store through its own `create`), finished at times of their own, so no clock is waited
 * for and each store's run stays within a few seconds (the file store's profile is in `/dev/shm`
 * where there is one: the test measures the store, not the disk).
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { HandleStoreFactory } from '../../src/core/contract/ports.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { prunePass, RETENTION_BATCH, RETENTION_BATCHES_PER_PASS } from '../../src/faces/wake/retention.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { createRecords, writeRecordFiles, writeRecordRows } from '../support/bulk-records.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { httpA, makeRecord, stdioA } from './fixtures.js';

const TOTAL = 20_000;
const PER_SECOND = 1_000;
const RETENTION_MS = 1_000;
/** The most records a store may hold after any pass: the second just finished and the one before. */
const BOUND = 2 * PER_SECOND;
const T0 = Date.UTC(2001, 0, 1);

// 20 000 file creates cost the disk about 1.5 ms each on a loaded machine, 0.07 ms in memory.
const tempStateDir = useTempDirs('sess-mcp-retention-', existsSync('/dev/shm') ? '/dev/shm' : tmpdir());

/** The records that finish in second `second` (1000 of them, a millisecond apart), one event each. */
function finishedIn(second: number, binding = httpA): InteractionRecord[] {
  const out: InteractionRecord[] = [];
  for (let i = 0; i < PER_SECOND; i++) {
    const n = second * PER_SECOND + i;
    const updatedAt = new Date(T0 + second * 1000 + i).toISOString();
    const record = makeRecord(binding, i % 3 === 0 ? 'expired' : 'completed', {
      handle: `sh_ret_${String(n).padStart(6, '0')}`,
      createdAt: new Date(T0 + second * 1000 - 60_000).toISOString(),
    });
    record.updatedAt = updatedAt;
    record.events = [{ type: 'answered', revision: 1, sequence: 1, occurredAt: updatedAt }];
    out.push(record);
  }
  return out;
}

/**
 * Run the 20 seconds: write each second's records, then one retention pass at the end of that
 * second; `held()` must stay within {@link BOUND} after every pass. Returns the largest seen.
 */
async function finishOverTime(
  stores: HandleStoreFactory,
  write: (records: InteractionRecord[]) => Promise<void>,
  held: () => Promise<number>,
): Promise<number> {
  expect(RETENTION_BATCH * RETENTION_BATCHES_PER_PASS).toBeGreaterThanOrEqual(PER_SECOND);
  const prune = stores.prune?.bind(stores);
  if (prune === undefined) throw new Error('the store has no prune');
  let most = 0;
  for (let second = 0; second < TOTAL / PER_SECOND; second++) {
    await write(finishedIn(second));
    await prunePass(prune, RETENTION_MS, T0 + (second + 1) * 1000);
    const now = await held();
    most = Math.max(most, now);
    expect(now, `after second ${second}`).toBeLessThanOrEqual(BOUND);
  }
  expect(await held()).toBe(PER_SECOND);
  return most;
}

// Writing 20 000 records takes seconds (the file store's most), and longer on a loaded machine:
// each case has 90 s. It bounds counts, never time.
describe(`retention keeps a store bounded: ${TOTAL} interactions finished over the test, retention ${RETENTION_MS} ms`, {
  timeout: 90_000,
}, () => {
  it(`memory: at most ${BOUND} records and ${BOUND} outbox events held`, async () => {
    const stores = createMemoryHandleStore();
    const outbox = stores.outbox?.();
    const view = stores.forBinding(httpA);
    const count = async () => {
      let records = 0;
      let after: Parameters<NonNullable<typeof view.listPage>>[0]['after'];
      for (;;) {
        const page = await view.listPage!({ limit: 100, ...(after === undefined ? {} : { after }) });
        records += page.records.length;
        const last = page.records.at(-1)?.record;
        if (!page.more || last === undefined) break;
        after = { group: 2, createdAt: last.createdAt, handle: last.handle };
      }
      const events = (await outbox!.entries('webhook', TOTAL)).length;
      expect(events).toBeLessThanOrEqual(BOUND);
      return records;
    };
    const most = await finishOverTime(stores, (records) => createRecords(stores, records), count);
    process.stderr.write(`retention bounds, memory: at most ${most} records held\n`);
  });

  it(`file: at most ${BOUND} record files`, async () => {
    const stateDir = await tempStateDir();
    const stores = createFileHandleStore({ stateDir, profile: 'default' });
    const files = async () =>
      (await readdir(stores.directory)).filter((name) => name.endsWith('.json')).length;
    const rebound = (records: InteractionRecord[]) =>
      records.map((record) => ({ ...record, binding: stdioA }) as InteractionRecord);
    const most = await finishOverTime(
      stores,
      (records) => writeRecordFiles(stores.directory, rebound(records)),
      files,
    );
    process.stderr.write(`retention bounds, file: at most ${most} record files\n`);
  });

  const url = process.env.DATABASE_URL;
  describe.runIf(url)('postgres', () => {
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    const table = `retention_${process.pid}`;
    const qualified = `"public"."${table}"`;
    afterAll(async () => {
      await admin.query(
        `DROP TABLE IF EXISTS ${qualified}, "public"."${table}_keys", "public"."${table}_events", "public"."${table}_deliveries"`,
      );
      await admin.end();
    });

    it(`at most ${BOUND} rows`, async () => {
      const stores = createPostgresHandleStore({ connectionString: url as string, table });
      try {
        await stores.migrate();
        const rows = async () =>
          Number((await admin.query(`SELECT count(*)::int AS n FROM ${qualified}`)).rows[0].n);
        const most = await finishOverTime(
          stores,
          (records) => writeRecordRows(admin, qualified, records),
          rows,
        );
        process.stderr.write(`retention bounds, postgres: at most ${most} rows\n`);
      } finally {
        await stores.close();
      }
    });
  });
});
