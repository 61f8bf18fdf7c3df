/**
 * Many records of one binding scope, written straight to a store's medium in bulk, for the
 * `sess_list` bounds and the watchers (a waiting record on a real Session, `waitingRecordOn`): the memory store through its own `create` (it has no other medium), the file
 * store as record files in the store's own envelope and codec, PostgreSQL as one multi-row
 * `INSERT` of the columns the store writes (its own encoding). The engine is not involved.
 *
 * It only writes: what a listing of these records must show is the test's.
 */
import { writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Binding, HandleStoreFactory, SessionView } from '../../src/core/contract/ports.js';
import { bindingScope } from '../../src/core/contract/ports.js';
import type { InteractionRecord, InteractionStateKind } from '../../src/core/model/record.js';
import { isUnfinished } from '../../src/core/model/record.js';
import type { Surface } from '../../src/core/model/surface.js';
import { encodeRecordColumns, RECORD_TEXT_MARKER_JSON } from '../../src/store/postgres/encoding.js';
import { encodeEnvelope, encodeRecordWithCopy } from '../../src/store/record-codec.js';
import { makeRecord } from '../store/fixtures.js';

/** `binding` with another credential or grant generation: the same scope, an earlier key. */
export function earlierGeneration<B extends Binding>(binding: B, generation = 'gen-earlier'): B {
  return binding.kind === 'stdio'
    ? { ...binding, credentialGeneration: generation }
    : { ...binding, grantGeneration: generation };
}

/**
 * `count` records of `binding` in state `kind`, named `<prefix>_<n>`, created a second apart from
 * `from` (so the last is the newest).
 */
export function recordSeries(
  binding: Binding,
  kind: InteractionStateKind,
  count: number,
  prefix: string,
  from: string,
): InteractionRecord[] {
  const start = Date.parse(from);
  const out: InteractionRecord[] = [];
  for (let i = 0; i < count; i++) {
    const createdAt = new Date(start + i * 1000).toISOString();
    out.push(makeRecord(binding, kind, { handle: `${prefix}_${String(i).padStart(6, '0')}`, createdAt }));
  }
  return out;
}

/**
 * A `waiting` record of `binding` on the Session `view` (created with `surface`, at revision 1),
 * as the engine saves one after its create: for a watcher to poll a real Session.
 */
export function waitingRecordOn(
  binding: Binding,
  view: SessionView,
  surface: Surface,
  options: { handle?: string } = {},
): InteractionRecord {
  const record = makeRecord(binding, 'waiting', options);
  const state = record.state as Extract<InteractionRecord['state'], { kind: 'waiting' }>;
  state.session = {
    sessionId: view.sessionId,
    workspaceId: view.workspaceId,
    humanUrl: view.humanUrl,
    expiresAt: view.expiresAt,
  };
  state.surface = surface;
  return record;
}

/** Through the store's own `create`, one after another (the memory store has no other medium). */
export async function createRecords(
  stores: HandleStoreFactory,
  records: readonly InteractionRecord[],
): Promise<void> {
  for (const record of records) await stores.forBinding(record.binding).create(record);
}

/**
 * As record files (version 1) in `directory`, the file store's `directory`, made 0700 when
 * missing, each file 0600 in the store's envelope. Write them before the store reads the profile.
 */
export async function writeRecordFiles(
  directory: string,
  records: readonly InteractionRecord[],
): Promise<void> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  for (const record of records) {
    const { json } = encodeRecordWithCopy(record);
    // Synchronous: tens of thousands of small writes cost less than as many thread-pool round trips.
    writeFileSync(join(directory, `${record.handle}.json`), encodeEnvelope(1, json), { mode: 0o600 });
  }
}

/** Anything that runs a query with parameters (a `pg` pool). */
export interface QueryableLike {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** As rows (version 1) of the migrated table `qualified`, in one `INSERT … SELECT FROM unnest`. */
export async function writeRecordRows(
  db: QueryableLike,
  qualified: string,
  records: readonly InteractionRecord[],
): Promise<void> {
  const columns = {
    handle: [] as string[],
    scope: [] as string[],
    unfinished: [] as boolean[],
    createdAt: [] as string[],
    text: [] as string[],
    kind: [] as string[],
    group: [] as number[],
    generation: [] as string[],
    finished: [] as (number | null)[],
  };
  for (const record of records) {
    const row = encodeRecordColumns(record);
    columns.handle.push(record.handle);
    columns.scope.push(bindingScope(record.binding));
    columns.unfinished.push(isUnfinished(record));
    columns.createdAt.push(row.createdAt);
    columns.text.push(row.text);
    columns.kind.push(row.kind);
    columns.group.push(row.group);
    columns.generation.push(row.generation);
    columns.finished.push(row.finishedAt);
  }
  await db.query(
    `INSERT INTO ${qualified} (handle, scope, version, unfinished, created_at, record, record_text, state_kind, list_group, generation, finished_ms)
     SELECT u.handle, u.scope, 1, u.unfinished, u.created_at, $9::jsonb, u.record_text, u.state_kind, u.list_group, u.generation, u.finished_ms
     FROM unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[], $6::text[], $7::smallint[], $8::text[], $10::bigint[])
       AS u(handle, scope, unfinished, created_at, record_text, state_kind, list_group, generation, finished_ms)`,
    [
      columns.handle,
      columns.scope,
      columns.unfinished,
      columns.createdAt,
      columns.text,
      columns.kind,
      columns.group,
      columns.generation,
      RECORD_TEXT_MARKER_JSON,
      columns.finished,
    ],
  );
}
