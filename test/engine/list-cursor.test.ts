/**
 * The `sess_list` cursor's key: a cursor made on one instance pages on another and after a
 * restart (file and PostgreSQL: another store object over the same records; memory: another engine
 * over the same backend, within the process), a cursor under another key is refused, and no
 * refusal carries the key. Then where each durable store keeps the key: the file store's
 * `list-cursor.key` (0600, one key whatever how many processes and store objects make it at once,
 * refused when it is a link, readable by others or not a key) and the PostgreSQL store's key row
 * (made by `migrate()` once, kept by every later `migrate()`, its absence reported as
 * `not_migrated`).
 */
import { createHash, createHmac } from 'node:crypto';
import { chmod, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { HandleStore, HandleStoreFactory } from '../../src/core/contract/ports.js';
import type { ListResult } from '../../src/core/contract/result.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { createSessClient } from '../../src/sess/client.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { storeFailure } from '../store/contract.js';
import { stdioA } from '../store/fixtures.js';
import { runWorkers } from '../store/spawn-worker.js';
import { createRecords, recordSeries } from '../support/bulk-records.js';
import { useTempDirs } from '../support/temp-dirs.js';

const url = process.env.DATABASE_URL;
const tempDir = useTempDirs('sess-mcp-list-cursor-');
const binding = stdioA;
const sess = createSessClient({ origin: 'https://api.sess.example', credential: () => 'unused' });

/** `sess_list` through an engine over `view`: its result, or its error object. */
async function list(view: HandleStore, args: Record<string, unknown>) {
  const engine = createSessEngine({ authority: { resolve: async () => ({ binding, sess, store: view }) } });
  return (await engine.call('sess_list', args)).structuredContent as unknown as ListResult & {
    error?: { code: string; field?: string; message: string };
  };
}

const records = recordSeries(binding, 'waiting', 6, 'c', '2026-01-01T00:00:00.000Z');
const order = records.map((record) => record.handle).reverse();

/** Page 1 on `first`, page 2 on `second` (another instance), page 3 on `third` (a restart). */
async function pagesAcross(first: HandleStoreFactory, second: HandleStoreFactory, third: HandleStoreFactory) {
  const one = await list(first.forBinding(binding), { limit: 2 });
  const two = await list(second.forBinding(binding), { limit: 2, cursor: one.next_cursor });
  const three = await list(third.forBinding(binding), { limit: 2, cursor: two.next_cursor });
  expect([...one.items, ...two.items, ...three.items].map((item) => item.handle)).toEqual(order);
  expect(three.next_cursor).toBeUndefined();
  return one.next_cursor as string;
}

/** A cursor of the current format for the same position, with a MAC under a key of zeros. */
function forged(cursor: string): string {
  const body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
  body[6] = createHmac('sha256', Buffer.alloc(32))
    .update(JSON.stringify(body.slice(0, 6)))
    .digest('base64url');
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** A forged cursor is refused at /cursor, and the message carries no form of the key. */
async function expectRefused(view: HandleStore, cursor: string) {
  const refused = await list(view, { limit: 2, cursor });
  expect(refused.error).toMatchObject({ code: 'INVALID_ARGUMENTS', field: '/cursor' });
  const key = Buffer.from(await (view.listCursorKey as () => Promise<Uint8Array>)());
  for (const form of [key.toString('base64url'), key.toString('hex'), key.toString('base64')])
    expect(refused.error?.message).not.toContain(form);
}

describe('a sess_list cursor pages on another instance and after a restart; a forged one is refused', () => {
  it('memory store: on another engine over the same backend', async () => {
    const stores = createMemoryHandleStore();
    await createRecords(stores, records);
    const cursor = await pagesAcross(stores, stores, stores);
    await expectRefused(stores.forBinding(binding), forged(cursor));
  });

  it('file store: on another store object, and one opened later', async () => {
    const stateDir = await tempDir();
    const first = createFileHandleStore({ stateDir });
    await createRecords(first, records);
    const cursor = await pagesAcross(
      first,
      createFileHandleStore({ stateDir }),
      createFileHandleStore({ stateDir }),
    );
    await expectRefused(createFileHandleStore({ stateDir }).forBinding(binding), forged(cursor));
  });

  describe.runIf(url)('PostgreSQL', () => {
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    const table = `list_cursor_${process.pid}`;
    const opened: ReturnType<typeof createPostgresHandleStore>[] = [];
    const open = () => {
      const store = createPostgresHandleStore({ connectionString: url as string, table });
      opened.push(store);
      return store;
    };
    afterAll(async () => {
      for (const store of opened) await store.close();
      await admin.query(`DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys"`);
      await admin.end();
    });

    it('PostgreSQL store: on another store object, and one opened later', async () => {
      const first = open();
      await first.migrate();
      await createRecords(first, records);
      const cursor = await pagesAcross(first, open(), open());
      await expectRefused(open().forBinding(binding), forged(cursor));
    });

    it('migrate() makes one key row and keeps it; without it a listing says not_migrated', async () => {
      const keyOf = async () => (await admin.query(`SELECT name, key FROM "public"."${table}_keys"`)).rows;
      const before = await keyOf();
      expect(before).toHaveLength(1);
      expect(Buffer.from(before[0].key, 'base64url')).toHaveLength(32);
      await open().migrate();
      await Promise.all([open().migrate(), open().migrate()]);
      expect(await keyOf()).toEqual(before);
      await admin.query(`DELETE FROM "public"."${table}_keys"`);
      const failure = await storeFailure(
        (open().forBinding(binding).listCursorKey as () => Promise<Uint8Array>)(),
      );
      expect([failure.code, failure.reason, failure.retryable]).toEqual([
        'STATE_STORE_ERROR',
        'not_migrated',
        false,
      ]);
      expect(failure.message).toMatch(/migrate\(\)/);
      const listed = await list(open().forBinding(binding), { limit: 2 });
      expect(listed.error).toMatchObject({ code: 'STATE_STORE_ERROR' });
      await open().migrate();
      expect(await keyOf()).toHaveLength(1);
    });
  });
});

describe('the file store’s cursor key file', () => {
  const keyFile = (stateDir: string) => join(stateDir, 'profiles', 'default', 'list-cursor.key');
  const keyOf = (stateDir: string) =>
    (createFileHandleStore({ stateDir }).forBinding(binding).listCursorKey as () => Promise<Uint8Array>)();

  it('is made once, 0600, by many store objects and processes at once: one key, no temp file left', async () => {
    const stateDir = await tempDir();
    const job = {
      store: { kind: 'file', stateDir, profile: 'default' },
      job: 'cursorKey',
      binding,
      count: 1,
    } as const;
    const [inProcess, tallies] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => keyOf(stateDir))),
      runWorkers([job, job, job, job]),
    ]);
    const digest = createHash('sha256')
      .update(inProcess[0] as Uint8Array)
      .digest('hex');
    for (const key of inProcess) expect(Buffer.from(key)).toEqual(Buffer.from(inProcess[0] as Uint8Array));
    expect(tallies).toEqual(Array.from({ length: 4 }, () => ({ [`key:${digest}`]: 1 })));
    expect(((await stat(keyFile(stateDir))).mode & 0o777).toString(8)).toBe('600');
    expect(await readFile(keyFile(stateDir), 'utf8')).toBe(
      `sess-mcp-list-cursor-key/1 ${Buffer.from(inProcess[0] as Uint8Array).toString('base64url')}\n`,
    );
    const left = await readdir(join(stateDir, 'profiles', 'default'));
    expect(left.filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('is refused as a link, readable by others, or not a key, naming the file and never its content', async () => {
    const stateDir = await tempDir();
    const key = Buffer.from(await keyOf(stateDir)).toString('base64url');
    const path = keyFile(stateDir);
    const cases: [string, () => Promise<void>, string][] = [
      ['readable by others', () => chmod(path, 0o644), 'unsafe_path'],
      [
        'not a key',
        () => writeFile(path, `sess-mcp-list-cursor-key/1 ${key.slice(0, 20)}\n`, { mode: 0o600 }),
        'corrupt',
      ],
      [
        'a link',
        async () => {
          await writeFile(`${path}.real`, `sess-mcp-list-cursor-key/1 ${key}\n`, { mode: 0o600 });
          await symlink(`${path}.real`, path);
        },
        'unsafe_path',
      ],
    ];
    for (const [what, make, reason] of cases) {
      await rm(path, { force: true });
      await writeFile(path, `sess-mcp-list-cursor-key/1 ${key}\n`, { mode: 0o600 });
      if (what === 'a link') await rm(path);
      await make();
      const failure = await storeFailure(keyOf(stateDir));
      expect([failure.code, failure.reason, failure.retryable], what).toEqual([
        'STATE_STORE_ERROR',
        reason,
        false,
      ]);
      expect(failure.message, what).toContain('SESS_MCP_STATE_DIR/profiles/default/list-cursor.key');
      expect(failure.message, what).not.toContain(key.slice(0, 20));
    }
  });
});
