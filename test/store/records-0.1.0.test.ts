/**
 * Records 0.1.0 wrote (`test/fixtures/records-0.1.0`: every state kind, made by the 0.1.0 build)
 * under this version, on the file store and on PostgreSQL: each one reads back exactly as it was
 * written (format 1, no `title`, no `expiresAt`), lists with `listPage` in listing order, and —
 * through the engine on the local Sess runtime — is served, published and completed.
 *
 * Reading and listing use the fixtures unchanged: the record files copied byte for byte into a
 * profile, the rows inserted into a table made by 0.1.0's own `migrate()` DDL (then this
 * version's `migrate()`).
 *
 * Serving needs the Sessions the records name, and those lived in the runtime that generated
 * them: a fresh runtime does not have them, and a receipt only verifies against the key of the
 * runtime that signed it. Rather than teach the runtime to import foreign state, each served
 * record is re-homed: the runtime of the test creates a Session with the fixture's own Surface
 * (and, for an answered record, takes the fixture's own answer), and only the fields that name
 * Sess state — the binding's origin and key generation, the Session reference, the answer's event,
 * receipt and key id — are replaced in the fixture record. Everything else (format 1, no title or
 * expiry, times, handle, key order) stays as 0.1.0 wrote it, and the record is put in place the
 * way 0.1.0 writes it (its envelope text; its `jsonb` row), not through this version's store.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { HandleStoreFactory } from '../../src/core/contract/ports.js';
import { bindingScope } from '../../src/core/contract/ports.js';
import { type InteractionRecord, isUnfinished, RECORD_FORMAT } from '../../src/core/model/record.js';
import { compareListOrder } from '../../src/core/store-kit/kit.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { approveAnswer, followUpSurface, type Harness, startHarness } from '../engine/harness.js';
import { keyOf, listPage, storeFailure } from './contract.js';
import {
  fileFixture010,
  installFileFixtures010,
  installPgFixtures010,
  KINDS_010,
  manifest010,
  type Row010,
} from './fixtures-010.js';

const manifest = await manifest010();

/** The fixture records in listing order. */
function inListingOrder(records: { version: number; record: InteractionRecord }[]) {
  return [...records].sort(compareListOrder);
}

/**
 * The fixture record re-homed onto a Session of `h`'s runtime (see the header): for `waiting` a
 * fresh Session of its Surface, for `answered` one the person answered as the fixture says.
 */
async function rehome(h: Harness, fixture: InteractionRecord): Promise<InteractionRecord> {
  const state = fixture.state;
  if (state.kind !== 'waiting' && state.kind !== 'answered') throw new Error('only a Session record');
  const view = await h.client.createSession({ surface: state.surface, idempotencyKey: randomUUID() });
  const session = {
    sessionId: view.sessionId,
    workspaceId: view.workspaceId,
    humanUrl: view.humanUrl,
    expiresAt: view.expiresAt,
  };
  if (state.kind === 'waiting') return { ...fixture, binding: h.binding, state: { ...state, session } };
  await h.sess.submitAnswer(view.humanUrl, state.response.answer);
  const event = (await h.client.getSession(view.sessionId)).responses[0]!;
  const verified = await h.client.verifyResponse({
    sessionId: view.sessionId,
    revision: 1,
    eventId: event.eventId,
    surface: state.surface,
    answer: event.answer,
    receipt: event.receipt,
  });
  const response = {
    ...state.response,
    eventId: event.eventId,
    answer: event.answer,
    submittedAt: event.submittedAt,
    receipt: event.receipt,
    keyId: verified.keyId,
  };
  return { ...fixture, binding: h.binding, state: { ...state, session, response } };
}

/**
 * Serve, publish and complete re-homed 0.1.0 records through the engine over `stores`; `put`
 * stores a record the way 0.1.0 does, at `version`.
 */
async function serveThroughEngine(
  stores: HandleStoreFactory,
  fixtures: Record<'waiting' | 'answered', { record: InteractionRecord; version: number }>,
  put: (record: InteractionRecord, version: number) => Promise<void>,
): Promise<void> {
  const h = await startHarness({ stores });
  try {
    const answered = fixtures.answered.record;
    const waiting = await rehome(h, fixtures.waiting.record);
    const toPublish = await rehome(h, { ...answered, handle: `${answered.handle}_p` });
    const toComplete = await rehome(h, { ...answered, handle: `${answered.handle}_c` });
    for (const record of [waiting, toPublish, toComplete]) {
      expect(record.format).toBe(1);
      expect('title' in record || 'expiresAt' in record).toBe(false);
      await put(record, (record.state.kind === 'waiting' ? fixtures.waiting : fixtures.answered).version);
      expect((await h.record(record.handle))?.record).toEqual(record);
    }
    const waitingVersion = fixtures.waiting.version;

    // Waiting: the person answers, sess_response returns the verified answer.
    if (waiting.state.kind !== 'waiting') throw new Error('unreachable');
    await h.sess.submitAnswer(waiting.state.session.humanUrl, approveAnswer);
    const served = await h.ok('sess_response', { handle: waiting.handle, revision: 1, wait_ms: 5_000 });
    expect(served.state).toBe('answered');
    expect(served.response).toMatchObject({ ...approveAnswer, verified: true });
    const saved = await h.record(waiting.handle);
    expect(saved?.version).toBe(waitingVersion + 1);
    expect(saved?.record).toMatchObject({ format: RECORD_FORMAT, createdAt: waiting.createdAt });
    expect(saved?.record.state.kind).toBe('answered');

    // Answered: served again as it was saved, then published.
    if (toPublish.state.kind !== 'answered') throw new Error('unreachable');
    const eventId = toPublish.state.response.eventId;
    const again = await h.ok('sess_response', { handle: toPublish.handle, revision: 1, wait_ms: 1_000 });
    expect(again).toMatchObject({ state: 'answered', response: { eventId, verified: true } });
    const published = await h.ok('sess_publish', {
      handle: toPublish.handle,
      expected_revision: 1,
      response_event_id: eventId,
      interaction: followUpSurface,
    });
    expect(published).toMatchObject({ revision: 2, state: 'waiting' });
    const afterPublish = (await h.record(toPublish.handle))?.record;
    expect(afterPublish).toMatchObject({ format: RECORD_FORMAT, state: { kind: 'waiting', revision: 2 } });

    // Answered: completed; the link and answer leave the record.
    if (toComplete.state.kind !== 'answered') throw new Error('unreachable');
    const completed = await h.ok('sess_complete', {
      handle: toComplete.handle,
      expected_revision: 1,
      response_event_id: toComplete.state.response.eventId,
    });
    expect(completed).toMatchObject({ revision: 1, state: 'completed' });
    const afterComplete = await h.record(toComplete.handle);
    expect(afterComplete?.record).toMatchObject({ format: RECORD_FORMAT, state: { kind: 'completed' } });
    expect(JSON.stringify(afterComplete)).not.toContain(toComplete.state.session.humanUrl);
    expect(h.sess.sessions.get(toComplete.state.session.sessionId)?.view.status).toBe('completed');
  } finally {
    await h.close();
  }
}

const temps: string[] = [];
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});
async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sess-mcp-010-'));
  temps.push(dir);
  return dir;
}

describe('0.1.0 records on the file store', () => {
  const { binding, handles } = manifest.file;

  async function loadFixtures() {
    return Promise.all(KINDS_010.map((kind) => fileFixture010(handles[kind]!)));
  }

  it('has one fixture of every state kind 0.1.0 writes, made by 0.1.0', async () => {
    expect(manifest.generatedBy).toMatch(/^@sess\.si\/mcp 0\.1\.0 \(commit 8dccd42/);
    expect(Object.keys(handles).sort()).toEqual([...KINDS_010].sort());
    for (const [i, fixture] of (await loadFixtures()).entries()) {
      expect([fixture.format, fixture.record.format, fixture.record.state.kind]).toEqual([
        1,
        1,
        KINDS_010[i],
      ]);
    }
  });

  it('reads every fixture exactly as 0.1.0 wrote it, and counts the unfinished ones', async () => {
    const dir = await stateDir();
    const stores = createFileHandleStore({ stateDir: dir, profile: 'default' });
    expect(await installFileFixtures010(stores.directory)).toHaveLength(KINDS_010.length);
    const view = stores.forBinding(binding);
    for (const fixture of await loadFixtures()) {
      const read = await view.get(fixture.record.handle);
      expect(read).toEqual({ version: fixture.version, record: fixture.record });
      expect(read?.record.title).toBeUndefined();
    }
    const fixtures = await loadFixtures();
    expect(await view.countUnfinished()).toBe(fixtures.filter((f) => isUnfinished(f.record)).length);
    expect((await view.listUnfinished()).map((r) => r.record.handle).sort()).toEqual(
      fixtures
        .filter((f) => isUnfinished(f.record))
        .map((f) => f.record.handle)
        .sort(),
    );
  });

  it('lists every fixture with listPage in listing order, without a title, and pages through them', async () => {
    const dir = await stateDir();
    const stores = createFileHandleStore({ stateDir: dir, profile: 'default' });
    await installFileFixtures010(stores.directory);
    const view = stores.forBinding(binding);
    const expected = inListingOrder(
      (await loadFixtures()).map((f) => ({ version: f.version, record: f.record })),
    );
    const page = await listPage(view, { limit: 100 });
    expect(page).toEqual({ records: expected, more: false });
    for (const entry of page.records)
      expect([entry.record.format, entry.record.title]).toEqual([1, undefined]);
    const first = await listPage(view, { limit: 4 });
    const second = await listPage(view, { limit: 100, after: keyOf(first.records.at(-1)!.record) });
    expect([...first.records, ...second.records]).toEqual(expected);
    const answered = await listPage(view, { limit: 100, kinds: ['answered', 'waiting'] });
    expect(answered.records.map((r) => r.record.state.kind).sort()).toEqual(['answered', 'waiting']);
  });

  it('serves, publishes and completes 0.1.0 records through the engine', async () => {
    const dir = await stateDir();
    const stores = createFileHandleStore({ stateDir: dir, profile: 'default' });
    await serveThroughEngine(
      stores,
      { waiting: await fileFixture010(handles.waiting!), answered: await fileFixture010(handles.answered!) },
      async (record, version) => {
        // The envelope exactly as 0.1.0's file store writes it.
        await mkdir(stores.directory, { recursive: true, mode: 0o700 });
        await writeFile(
          join(stores.directory, `${record.handle}.json`),
          `{"format":1,"version":${version},"record":${JSON.stringify(record)}}\n`,
          { mode: 0o600 },
        );
      },
    );
  });
});

const url = process.env.DATABASE_URL;
const SKIP_REASON = 'DATABASE_URL is unset; run: eval "$(bash scripts/ci-postgres.sh)"';

if (url === undefined || url === '') {
  if (process.env.CI) {
    describe('0.1.0 records on PostgreSQL', () => {
      it('has a database in CI', () => {
        throw new Error(`CI must not skip the PostgreSQL suite: ${SKIP_REASON}`);
      });
    });
  } else {
    process.stderr.write(`0.1.0 records on PostgreSQL skipped: ${SKIP_REASON}\n`);
    describe.skip(`0.1.0 records on PostgreSQL (skipped: ${SKIP_REASON})`, () => {
      it('needs DATABASE_URL', () => {});
    });
  }
} else {
  describe('0.1.0 records on PostgreSQL', () => {
    const admin = new pg.Pool({ connectionString: url, max: 2 });
    const tables: string[] = [];
    const { binding, handles } = manifest.postgres;
    afterAll(async () => {
      for (const table of tables)
        await admin.query(`DROP TABLE IF EXISTS "public"."${table}", "public"."${table}_keys"`);
      await admin.end();
    });

    /** A 0.1.0 table holding the fixture rows, and this version's store on it (migrated). */
    async function fixtureTable() {
      const table = `f010_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      tables.push(table);
      const rows = await installPgFixtures010(admin, table);
      const stores = createPostgresHandleStore({ connectionString: url, table });
      return { table, rows, stores };
    }
    const byKind = (rows: Row010[], kind: string) => rows.find((row) => row.handle === handles[kind])!;

    it('has one row of every state kind 0.1.0 writes', async () => {
      const { rows, stores } = await fixtureTable();
      expect(Object.keys(handles).sort()).toEqual([...KINDS_010].sort());
      expect(rows.map((row) => row.record.state.kind).sort()).toEqual([...KINDS_010].sort());
      for (const row of rows) expect(row.scope).toBe(bindingScope(binding));
      await stores.close();
    });

    it('says not_migrated until migrate(), then reads every row exactly as 0.1.0 wrote it', async () => {
      const { rows, stores } = await fixtureTable();
      const view = stores.forBinding(binding);
      const early = await storeFailure(view.get(handles.waiting!));
      expect([early.reason, early.retryable]).toEqual(['not_migrated', false]);
      await stores.migrate();
      for (const kind of KINDS_010) {
        const row = byKind(rows, kind);
        const read = await view.get(row.handle);
        expect(read).toEqual({ version: row.version, record: row.record });
        expect([read?.record.format, read?.record.title]).toEqual([1, undefined]);
      }
      expect(await view.countUnfinished()).toBe(rows.filter((row) => row.unfinished).length);
      await stores.close();
    });

    it('lists every row with listPage in listing order, without a title', async () => {
      const { rows, stores } = await fixtureTable();
      await stores.migrate();
      const view = stores.forBinding(binding);
      const expected = inListingOrder(rows.map((row) => ({ version: row.version, record: row.record })));
      expect(await listPage(view, { limit: 100 })).toEqual({ records: expected, more: false });
      const first = await listPage(view, { limit: 5 });
      expect(first.more).toBe(true);
      const rest = await listPage(view, { limit: 100, after: keyOf(first.records.at(-1)!.record) });
      expect([...first.records, ...rest.records]).toEqual(expected);
      const finished = await listPage(view, { limit: 100, kinds: ['completed', 'expired', 'ask_closed'] });
      expect(finished.records).toEqual(expected.filter((entry) => !isUnfinished(entry.record)));
      expect(finished.records).toHaveLength(3);
      await stores.close();
    });

    it('serves, publishes and completes 0.1.0 rows through the engine', async () => {
      const { table, rows, stores } = await fixtureTable();
      await stores.migrate();
      await serveThroughEngine(
        stores,
        { waiting: byKind(rows, 'waiting'), answered: byKind(rows, 'answered') },
        async (record, version) => {
          // The row exactly as 0.1.0's store inserts it: the record in the jsonb column (in place
          // of the fixture row of that handle).
          await admin.query(`DELETE FROM "public"."${table}" WHERE handle = $1`, [record.handle]);
          await admin.query(
            `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record)
             VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
            [
              record.handle,
              bindingScope(record.binding),
              version,
              isUnfinished(record),
              record.createdAt,
              JSON.stringify(record),
            ],
          );
        },
      );
      await stores.close();
    });
  });
}
