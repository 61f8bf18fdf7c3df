/**
 * The `sess_list` bounds, on every store: a scope holding 30 000 records of an earlier generation
 * and 30 000 finished records (written straight to the medium, `test/support/bulk-records.ts`),
 * and three current records older than all of them. After one warm-up (the first call after the
 * store is opened, reported, and on the file store at most 2 s for a profile this version wrote,
 * whose summary of its files it keeps; a profile with no summary, as 0.1.0 left one, is read
 * whole once at its first opening, reported), the median of 20 calls with
 * `limit: 1`, walking the listing with each `next_cursor`, is under 50 ms, and no call reads more
 * than one store page. On the memory store the event loop is never held for more than 10 ms
 * during those calls (in one of at most three walks: the monitor also counts waits for a core on
 * a shared machine), and another principal's `tools/list` over HTTP is answered within 50 ms
 * while they run.
 *
 * Upper bounds on a short scale: this file runs apart (`APART` in `vitest.config.ts`).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Binding, HandleStore, HttpBinding } from '../../src/core/contract/ports.js';
import type { ListResult } from '../../src/core/contract/result.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { createSessClient } from '../../src/sess/client.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { httpA } from '../store/fixtures.js';
import {
  createRecords,
  earlierGeneration,
  recordSeries,
  writeRecordFiles,
  writeRecordRows,
} from '../support/bulk-records.js';
import { countingListPages } from '../support/counting-store.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { startTwoPrincipals } from '../support/two-principals.js';

const EARLIER = 30_000;
const FINISHED = 30_000;
const CALLS = 20;
const MEDIAN_MS = 50;
const FIRST_CALL_FILE_MS = 2_000;
const EVENT_LOOP_MAX_MS = 10;
const EVENT_LOOP_WINDOWS = 3;
const OTHER_PRINCIPAL_MS = 50;

const url = process.env.DATABASE_URL;
const tempDir = useTempDirs('sess-mcp-list-bounds-');

/** The records of `binding`'s scope, and the handles 20 calls of `limit: 1` list, in order. */
function scopeRecords(binding: Binding): { records: InteractionRecord[]; listed: string[] } {
  const current = recordSeries(binding, 'waiting', 3, 'cur', '2025-01-01T00:00:00.000Z');
  const earlier = recordSeries(
    earlierGeneration(binding),
    'completed',
    EARLIER,
    'old',
    '2026-01-01T00:00:00.000Z',
  );
  const finished = recordSeries(binding, 'withdrawn', FINISHED, 'fin', '2026-03-01T00:00:00.000Z');
  const listed = [...current.reverse(), ...finished.slice(-(CALLS - 3)).reverse()].map((r) => r.handle);
  return { records: [...current, ...earlier, ...finished], listed };
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The first call, then 20 calls walking the listing: their times, store pages and handles. */
async function walk(binding: Binding, view: HandleStore) {
  const counted = countingListPages(view);
  const sess = createSessClient({ origin: 'https://api.sess.example', credential: () => 'unused' });
  const engine = createSessEngine({
    authority: { resolve: async () => ({ binding, sess, store: counted.store }) },
  });
  const list = async (cursor?: string) => {
    const started = performance.now();
    const result = await engine.call('sess_list', { limit: 1, ...(cursor ? { cursor } : {}) });
    const ms = performance.now() - started;
    const body = result.structuredContent as unknown as ListResult;
    expect(body.items, JSON.stringify(result.structuredContent)).toBeDefined();
    return { ms, body };
  };
  const first = await list();
  const times: number[] = [];
  const pages: number[] = [];
  const handles: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < CALLS; i++) {
    counted.reset();
    const { ms, body } = await list(cursor);
    times.push(ms);
    pages.push(counted.pages());
    handles.push(...body.items.map((item) => item.handle));
    cursor = body.next_cursor;
  }
  return { firstMs: first.ms, times, pages, handles };
}

/** A figure, printed and kept as the test's annotation. */
function say(annotate: (message: string) => Promise<unknown>, figures: string) {
  process.stdout.write(`[list bounds] ${figures}\n`);
  return annotate(figures);
}

function report(
  annotate: (message: string) => Promise<unknown>,
  store: string,
  run: Awaited<ReturnType<typeof walk>>,
) {
  return say(
    annotate,
    `${store}: first call ${run.firstMs.toFixed(1)} ms; median of ${CALLS} ${median(run.times).toFixed(2)} ms, slowest ${Math.max(...run.times).toFixed(2)} ms`,
  );
}

function expectBounded(run: Awaited<ReturnType<typeof walk>>, listed: string[]) {
  expect(run.handles).toEqual(listed);
  expect(
    run.pages.every((n) => n === 1),
    `store pages per call: ${run.pages.join(',')}`,
  ).toBe(true);
  expect(median(run.times)).toBeLessThan(MEDIAN_MS);
}

const binding: HttpBinding = { ...httpA, grantId: 'grant_list_bounds' };

describe('sess_list bounds: 30 000 earlier-generation and 30 000 finished records', () => {
  it('memory store: median under 50 ms, event loop held at most 10 ms', async ({ annotate }) => {
    const stores = createMemoryHandleStore();
    const { records, listed } = scopeRecords(binding);
    await createRecords(stores, records);
    // The delay monitor also counts the time this process waits for a core. On a machine shared
    // with other work that alone can pass 10 ms once, so the walk is measured up to three times;
    // a listing that holds the loop itself exceeds the bound in every one.
    const held: number[] = [];
    for (let window = 0; window < EVENT_LOOP_WINDOWS; window++) {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const run = await walk(binding, stores.forBinding(binding));
      delay.disable();
      await report(annotate, 'memory', run);
      expectBounded(run, listed);
      held.push(delay.max / 1e6);
      if (held.at(-1)! <= EVENT_LOOP_MAX_MS) break;
    }
    await say(
      annotate,
      `memory: event loop delay at most ${held.map((ms) => ms.toFixed(2)).join(', then ')} ms`,
    );
    expect(Math.min(...held)).toBeLessThanOrEqual(EVENT_LOOP_MAX_MS);
  });

  it('memory store over HTTP: another principal’s tools/list is answered within 50 ms meanwhile', async ({
    annotate,
  }) => {
    const stores = createMemoryHandleStore();
    const http = await startTwoPrincipals(stores);
    try {
      // The binding the handler gives mallory, learnt from one call; her records go under it.
      expect((await http.list({ limit: 1 })).items).toEqual([]);
      await createRecords(stores, scopeRecords(http.bindings[0] as Binding).records);
      await http.list({ limit: 1 });
      let listing = true;
      const pings: number[] = [];
      const pinging = (async () => {
        while (listing) {
          const ping = await http.post('alice', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
          expect(ping.status).toBe(200);
          pings.push(ping.ms);
        }
      })();
      let cursor: string | undefined;
      for (let i = 0; i < CALLS; i++) {
        const content = await http.list({ limit: 1, ...(cursor ? { cursor } : {}) });
        cursor = content.next_cursor;
        expect(cursor, JSON.stringify(content)).toBeDefined();
      }
      listing = false;
      await pinging;
      const slowest = Math.max(...pings);
      await say(
        annotate,
        `memory over HTTP: ${pings.length} tools/list of another principal, slowest ${slowest.toFixed(1)} ms`,
      );
      expect(pings.length).toBeGreaterThan(0);
      expect(slowest).toBeLessThan(OTHER_PRINCIPAL_MS);
    } finally {
      await http.close();
    }
  });

  it('file store: first call after opening at most 2 s, median under 50 ms', async ({ annotate }) => {
    const stateDir = await tempDir();
    const { records, listed } = scopeRecords(binding);
    await writeRecordFiles(createFileHandleStore({ stateDir }).directory, records);
    // Files with no summary beside them, as 0.1.0 left a profile: the first opening decodes every
    // one (reported, not bounded) and leaves the summary this version keeps from then on.
    const cold = await walk(binding, createFileHandleStore({ stateDir }).forBinding(binding));
    await report(annotate, 'file, first opening of a profile without a summary (0.1.0)', cold);
    expectBounded(cold, listed);
    // Opened again, as after a restart: a profile this version wrote. The first call takes the
    // status of every file and decodes none.
    const run = await walk(binding, createFileHandleStore({ stateDir }).forBinding(binding));
    await report(annotate, 'file, first call after opening a profile this version wrote', run);
    expectBounded(run, listed);
    expect(run.firstMs).toBeLessThanOrEqual(FIRST_CALL_FILE_MS);
  });

  describe.runIf(url)('PostgreSQL', () => {
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    const table = `list_bounds_${process.pid}`;
    afterAll(async () => {
      await admin.query(`DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys"`);
      await admin.end();
    });

    it('PostgreSQL store: median under 50 ms', async ({ annotate }) => {
      const setup = createPostgresHandleStore({ connectionString: url as string, table });
      await setup.migrate();
      await setup.close();
      const { records, listed } = scopeRecords(binding);
      await writeRecordRows(admin, `"public"."${table}"`, records);
      const stores = createPostgresHandleStore({ connectionString: url as string, table });
      try {
        const run = await walk(binding, stores.forBinding(binding));
        await report(annotate, 'PostgreSQL', run);
        expectBounded(run, listed);
      } finally {
        await stores.close();
      }
    });
  });
});
