/**
 * The two `sess_list` reproductions of the finding, each with its scenario, ending bounded or
 * refused:
 *
 * - earlier generation: records of the caller's scope under an earlier key generation (30 000 on
 *   the memory store, 3 000 on the file and PostgreSQL stores, as the reproduction's recorded
 *   runs had them; `list-bounds.test.ts` has 30 000 on every store), and 3 current ones older
 *   than all of them. Every store (memory, file and, with `DATABASE_URL`, PostgreSQL) lists the
 *   current ones in one store page, with `limit` 20 and 1, instead of paging through every
 *   earlier record.
 * - forged cursor: over HTTP with the memory store, a caller holding 15 000 finished records
 *   computes a cursor with `startedAt` in 1970 (the unkeyed digest of the old format, or the
 *   current format with a MAC under a key of her choosing, or a real cursor with its `startedAt`
 *   changed). Each is refused (`INVALID_ARGUMENTS` at `/cursor`). A real cursor whose listing
 *   started before every record changed still pages, at most three store pages a call.
 *
 * Counted, not timed: the times are `list-bounds.test.ts`'s, which runs apart.
 */
import { createHash, createHmac } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Binding,
  bindingGeneration,
  bindingScope,
  type HandleStore,
} from '../../src/core/contract/ports.js';
import type { ListResult } from '../../src/core/contract/result.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { LIST_PAGE_BUDGET } from '../../src/core/engine/list.js';
import { createSessClient } from '../../src/sess/client.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { stdioA } from '../store/fixtures.js';
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

const url = process.env.DATABASE_URL;
const tempDir = useTempDirs('sess-mcp-list-proofs-');

describe('proof: sess_list after a key rotation (records of the earlier generation)', () => {
  const now = { ...stdioA, credentialGeneration: 'g-new' };
  /** The 3 current records and `earlier` records of the earlier generation, all newer. */
  const recordsWith = (earlier: number) => [
    ...recordSeries(now, 'completed', 3, 'cur', '2025-01-01T00:00:00.000Z'),
    ...recordSeries(earlierGeneration(now, 'g-old'), 'completed', earlier, 'old', '2026-01-01T00:00:00.000Z'),
  ];
  const current = ['cur_000002', 'cur_000001', 'cur_000000'];

  /** `sess_list` with `limit` 20 and 1 over `view`: the handles listed and the store pages read. */
  async function listings(view: HandleStore) {
    const counted = countingListPages(view);
    const sess = createSessClient({ origin: 'https://api.sess.example', credential: () => 'unused' });
    const engine = createSessEngine({
      authority: { resolve: async () => ({ binding: now, sess, store: counted.store }) },
    });
    const out: { limit: number; handles: string[]; pages: number; more: boolean }[] = [];
    for (const limit of [20, 1]) {
      counted.reset();
      const body = (await engine.call('sess_list', { limit })).structuredContent as unknown as ListResult;
      out.push({
        limit,
        handles: body.items.map((item) => item.handle),
        pages: counted.pages(),
        more: body.next_cursor !== undefined,
      });
    }
    return out;
  }

  const expected = [
    { limit: 20, handles: current, pages: 1, more: false },
    { limit: 1, handles: current.slice(0, 1), pages: 1, more: true },
  ];

  it('memory store, 30 000 earlier records: the current records in one store page', async () => {
    const stores = createMemoryHandleStore();
    await createRecords(stores, recordsWith(30_000));
    expect(await listings(stores.forBinding(now))).toEqual(expected);
  });

  it('file store, 3 000 earlier records: the current records in one store page', async () => {
    const stateDir = await tempDir();
    await writeRecordFiles(createFileHandleStore({ stateDir }).directory, recordsWith(3_000));
    expect(await listings(createFileHandleStore({ stateDir }).forBinding(now))).toEqual(expected);
  });

  describe.runIf(url)('PostgreSQL', () => {
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    const table = `list_proof_${process.pid}`;
    afterAll(async () => {
      await admin.query(`DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys"`);
      await admin.end();
    });

    it('PostgreSQL store, 3 000 earlier records: the current records in one store page', async () => {
      const stores = createPostgresHandleStore({ connectionString: url as string, table });
      try {
        await stores.migrate();
        await writeRecordRows(admin, `"public"."${table}"`, recordsWith(3_000));
        expect(await listings(stores.forBinding(now))).toEqual(expected);
      } finally {
        await stores.close();
      }
    });
  });
});

describe('proof: a cursor the caller computes herself (HTTP, memory store, 15 000 finished records)', () => {
  it('is refused in every form; a real cursor pages at most three store pages a call', async () => {
    const stores = createMemoryHandleStore();
    const counters: ReturnType<typeof countingListPages>[] = [];
    const http = await startTwoPrincipals(stores, (view) => {
      const counted = countingListPages(view);
      counters.push(counted);
      return counted.store;
    });
    /** mallory's `sess_list`: its structuredContent and the store pages it read. */
    const list = async (args: Record<string, unknown>) => {
      const content = (await http.list(args)) as unknown as ListResult & { error?: unknown };
      return { content, pages: counters.at(-1)?.pages() ?? 0 };
    };
    try {
      expect((await list({ limit: 1 })).content.items).toEqual([]);
      const mallory = http.bindings[0] as Binding;
      await createRecords(
        stores,
        recordSeries(mallory, 'withdrawn', 15_000, 'm', '2026-01-01T00:00:00.000Z'),
      );

      const key = {
        group: 0,
        createdAt: '9999-12-31T23:59:59.999Z',
        handle: 'sess_h_zzzzzzzzzzzzzzzzzzzzzz',
      };
      const startedAt = '1970-01-01T00:00:00.000Z';
      const scope = bindingScope(mallory);
      const encode = (body: unknown[]) => Buffer.from(JSON.stringify(body)).toString('base64url');
      // The old format: an unkeyed SHA-256 of values her own token and account reveal.
      const v1Body = [1, null, key.group, key.createdAt, key.handle, startedAt];
      const digest = createHash('sha256')
        .update(JSON.stringify([...v1Body, scope, bindingGeneration(mallory)]))
        .digest('base64url');
      // The current format, with a MAC under a key she chose.
      const v2Body = [2, null, key.group, key.createdAt, key.handle, startedAt];
      const guessed = createHmac('sha256', Buffer.alloc(32))
        .update(JSON.stringify([...v2Body, scope, bindingGeneration(mallory)]))
        .digest('base64url');
      // A real cursor with its startedAt moved to 1970, the MAC kept.
      const real = (await list({ limit: 1 })).content.next_cursor as string;
      const realBody = JSON.parse(Buffer.from(real, 'base64url').toString('utf8')) as unknown[];
      realBody[5] = startedAt;
      for (const cursor of [encode([...v1Body, digest]), encode([...v2Body, guessed]), encode(realBody)]) {
        const { content, pages } = await list({ limit: 1, cursor });
        expect(content.error).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/cursor' });
        expect(pages).toBe(0);
      }

      // A real cursor, then every record changed after its listing started: each call still
      // reads at most three store pages, and the walk ends.
      const started = (await list({ limit: 1 })).content as ListResult;
      for (const record of recordSeries(mallory, 'withdrawn', 15_000, 'm', '2026-01-01T00:00:00.000Z')) {
        const view = stores.forBinding(mallory);
        await view.update({ ...record, updatedAt: '2099-01-01T00:00:00.000Z' }, 1);
      }
      let cursor = started.next_cursor;
      let calls = 0;
      let mostPages = 0;
      while (cursor !== undefined) {
        const { content, pages } = await list({ limit: 1, cursor });
        expect(content.items).toEqual([]);
        mostPages = Math.max(mostPages, pages);
        cursor = content.next_cursor;
        calls += 1;
      }
      expect(mostPages).toBeLessThanOrEqual(LIST_PAGE_BUDGET);
      // 1 record asked for, then two pages of 100 a call: 201 records examined a call at most.
      expect(calls).toBe(Math.ceil((15_000 - 1) / (1 + 2 * 100)));
      const ping = await http.post('alice', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
      expect(ping.status).toBe(200);
    } finally {
      await http.close();
    }
  });
});
