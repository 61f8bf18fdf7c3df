/**
 * Measure 8 (`sess_list`): `engine.call('sess_list', {})` (the first page, default limit 20) and
 * `engine.call('sess_list', { handle })` (inspect) on a profile of 100 unfinished and 5 000
 * finished records, on the file store and on PostgreSQL (skipped, with the reason, when
 * DATABASE_URL is unset). Beside the warm figures, two of the file store without a goal: the
 * first listing of a store object freshly opened over the directory (cold: it reads and decodes
 * every file to summarise them) and a listing once its summary must be taken again (after another
 * store object's change, as after a minute: the files' status, and only changed files read).
 *
 * The records are copies, under new handles and creation times, of real records of four states
 * (bench/lib/sample-record.ts). PostgreSQL gets all of them through the store's `create`. The file
 * store gets the unfinished ones and 20 finished ones through `create` and the other finished
 * ones as the very text its `create` writes (checked against a file it wrote): 5 000 creates
 * through the file store take half a minute on a loaded 2-core machine. The goal is absolute
 * (a median below a number of milliseconds), so there is no baseline: the `baseline` column shows
 * the CPU time of this process per call and the `ratio` column the p90 of the wall times.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  createSessEngine,
  type HandleStore,
  type HandleStoreFactory,
  type InteractionRecord,
  type SessEngine,
  type StdioBinding,
} from '../../src/index.js';
import { createSessClient } from '../../src/sess/index.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';
import { LIST_MEDIAN_MAX_MS } from './goals.js';
import { type SampleRecordSet, sampleRecordSet } from './sample-record.js';
import { cpuMs, median, now, percentile } from './stats.js';
import { ms, type Row, yesNo } from './table.js';

/** The profile: this many unfinished records (the cap of one binding scope) … */
const UNFINISHED = 100;
/** … and this many finished ones. */
const FINISHED = 5_000;
/** Untimed calls of each kind before the trials. */
const WARM_UP = 5;
/** Interleaved trials of each kind (one call each). */
const TRIALS = 40;
/** Fresh store objects opened for the cold figure. */
const COLD_OPENS = 3;
/** Records written at once while filling a store. */
const FILL_BATCH = 50;
/** Finished records the file store is given through `create`; the rest as the text it writes. */
const FINISHED_THROUGH_CREATE = 20;
/** Times the file store's summary is retaken for the "retaken" figure. */
const RETAKES = 3;

const trace = process.env.SESS_BENCH_TRACE === '1';
function note(text: string): void {
  if (trace) process.stderr.write(`\n  8: ${text}`);
}

/** A profile's records, and the handles the inspect trials read (none on the first page). */
interface Profile {
  records: InteractionRecord[];
  inspect: string[];
}

function handle(): string {
  return `sess_h_${randomBytes(16).toString('base64url')}`;
}

/** A copy of `template` under a new handle, created at `createdAt` and changed two minutes later. */
function copyOf(template: InteractionRecord, createdAt: number): InteractionRecord {
  const record = structuredClone(template);
  record.handle = handle();
  record.createdAt = new Date(createdAt).toISOString();
  record.updatedAt = new Date(createdAt + 120_000).toISOString();
  return record;
}

/**
 * 100 unfinished records of the last day (waiting and answered, alternately) and 5 000 finished
 * ones of the weeks before (completed; every tenth withdrawn). The inspect trials alternate
 * between unfinished records the first page does not show and finished ones, a different record
 * each call.
 */
function profileOf(set: SampleRecordSet): Profile {
  const start = Date.now() - 60_000;
  const unfinished = Array.from({ length: UNFINISHED }, (_, i) =>
    copyOf(i % 2 === 0 ? set.waiting : set.answered, start - i * 600_000),
  );
  const finished = Array.from({ length: FINISHED }, (_, i) =>
    copyOf(i % 10 === 0 ? set.withdrawn : set.completed, start - 86_400_000 - i * 600_000),
  );
  const inspect: string[] = [];
  for (let i = 0; inspect.length < WARM_UP + TRIALS; i += 1) {
    inspect.push(unfinished[20 + i]!.handle, finished[(i * 97) % FINISHED]!.handle);
  }
  return { records: [...unfinished, ...finished], inspect };
}

/** Write `records` through the store's `create`, `FILL_BATCH` at a time. */
async function fill(store: HandleStore, records: readonly InteractionRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += FILL_BATCH) {
    await Promise.all(records.slice(i, i + FILL_BATCH).map((record) => store.create(record)));
  }
}

/**
 * The text the file store's `create` writes for `record` (version 1): its envelope around the
 * record's JSON. Checked against a file `create` wrote before it is used (`fillFiles`).
 */
function fileTextOf(record: InteractionRecord): string {
  return `{"format":1,"version":1,"record":${JSON.stringify(record)}}\n`;
}

/**
 * Fill a file store: the unfinished records and the first `FINISHED_THROUGH_CREATE` finished
 * ones through its `create` (the real file system, fsyncs and all), the other finished ones as
 * the text `create` writes, once a file `create` wrote has been checked to hold exactly that text.
 */
async function fillFiles(stateDir: string, binding: StdioBinding, profile: Profile): Promise<void> {
  const files = createFileHandleStore({ stateDir });
  const throughCreate = profile.records.slice(0, UNFINISHED + FINISHED_THROUGH_CREATE);
  await fill(files.forBinding(binding), throughCreate);
  const last = throughCreate[throughCreate.length - 1]!;
  if (readFileSync(join(files.directory, `${last.handle}.json`), 'utf8') !== fileTextOf(last)) {
    throw new Error('the file store no longer writes the text this measure writes for it');
  }
  const rest = profile.records.slice(throughCreate.length);
  for (let i = 0; i < rest.length; i += FILL_BATCH) {
    await Promise.all(
      rest
        .slice(i, i + FILL_BATCH)
        .map((record) =>
          writeFile(join(files.directory, `${record.handle}.json`), fileTextOf(record), { mode: 0o600 }),
        ),
    );
  }
}

/** An engine over `stores`' view of `binding`; `sess_list` sends nothing to Sess. */
function engineOver(stores: HandleStoreFactory, binding: StdioBinding): SessEngine {
  const store = stores.forBinding(binding);
  // A real client that is never called: sess_list reads the local records only.
  const sess = createSessClient({
    origin: binding.apiOrigin,
    credential: () => 'sk_bench_not_used',
    allowInsecureLocalhost: true,
  });
  return createSessEngine({ authority: { resolve: async () => ({ binding, sess, store }) } });
}

/** One timed call: wall and CPU of this process, and the number of items it listed. */
interface Timed {
  wall: number;
  cpu: number;
  items: number;
  more: boolean;
}

async function timed(engine: SessEngine, args: Record<string, unknown>): Promise<Timed> {
  const cpuBefore = cpuMs();
  const start = now();
  const result = await engine.call('sess_list', args);
  const wall = now() - start;
  const cpu = cpuMs() - cpuBefore;
  if (result.isError === true) throw new Error(`sess_list: ${result.content[0]?.text.slice(0, 200)}`);
  const body = result.structuredContent as { items: unknown[]; next_cursor?: string };
  return { wall, cpu, items: body.items.length, more: body.next_cursor !== undefined };
}

/** The first page and inspect, warmed up, then `TRIALS` of each, interleaved; their rows. */
async function warmRows(engine: SessEngine, profile: Profile, label: string): Promise<Row[]> {
  let next = 0;
  const inspect = () => timed(engine, { handle: profile.inspect[next++]! });
  const page = () => timed(engine, {});
  for (let i = 0; i < WARM_UP; i += 1) {
    const first = await page();
    if (first.items !== 20 || !first.more) throw new Error(`first page listed ${first.items} items`);
    await inspect();
  }
  const pages: Timed[] = [];
  const inspects: Timed[] = [];
  for (let i = 0; i < TRIALS; i += 1) {
    if (i % 2 === 0) {
      pages.push(await page());
      inspects.push(await inspect());
    } else {
      inspects.push(await inspect());
      pages.push(await page());
    }
  }
  if (inspects.some((t) => t.items !== 1)) throw new Error('an inspect listed other than one item');
  return [
    rowOf(`8 sess_list, ${label}: first page (20 of ${UNFINISHED}+${FINISHED})`, pages),
    rowOf(`8 sess_list, ${label}: inspect`, inspects),
  ];
}

function rowOf(measure: string, trials: readonly Timed[]): Row {
  const wall = median(trials.map((t) => t.wall));
  return {
    measure,
    subject: ms(wall),
    baseline: `CPU ${ms(median(trials.map((t) => t.cpu)))}`,
    ratio: `p90 ${ms(
      percentile(
        trials.map((t) => t.wall),
        90,
      ),
    )}`,
    goal: `< ${LIST_MEDIAN_MAX_MS} ms`,
    met: yesNo(wall < LIST_MEDIAN_MAX_MS),
  };
}

async function fileRows(set: SampleRecordSet, profile: Profile): Promise<Row[]> {
  const stateDir = mkdtempSync(join(tmpdir(), 'sess-bench-list-'));
  try {
    let t = now();
    await fillFiles(stateDir, set.binding, profile);
    note(`file store filled in ${((now() - t) / 1000).toFixed(1)} s`);
    t = now();
    const cold: Timed[] = [];
    let engine: SessEngine | undefined;
    for (let i = 0; i < COLD_OPENS; i += 1) {
      engine = engineOver(createFileHandleStore({ stateDir }), set.binding);
      cold.push(await timed(engine, {}));
    }
    note(`cold opens in ${((now() - t) / 1000).toFixed(1)} s`);
    const rows = await warmRows(engine!, profile, 'file store');
    // Another store object (as another process would) adds a record: the timed store's summary
    // is no longer current and is taken again, from the files' status and the changed file only.
    // A summary older than a minute is retaken the same way.
    const other = createFileHandleStore({ stateDir }).forBinding(set.binding);
    const retaken: Timed[] = [];
    for (let i = 0; i < RETAKES; i += 1) {
      await other.create(copyOf(set.completed, Date.now() - 30 * 86_400_000));
      retaken.push(await timed(engine!, {}));
    }
    rows.push(
      extraRow(`8 sess_list, file store: first page, cold (median of ${COLD_OPENS} fresh opens)`, cold),
      extraRow(`8 sess_list, file store: first page, summary retaken (median of ${RETAKES})`, retaken),
    );
    return rows;
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** A row without a goal: the median wall and CPU of a few calls. */
function extraRow(measure: string, calls: readonly Timed[]): Row {
  return {
    measure,
    subject: ms(median(calls.map((c) => c.wall))),
    baseline: `CPU ${ms(median(calls.map((c) => c.cpu)))}`,
    ratio: '—',
    goal: '—',
    met: '—',
  };
}

async function postgresRows(set: SampleRecordSet, profile: Profile, url: string): Promise<Row[]> {
  const table = `bench_list_${process.pid}`;
  const stores = createPostgresHandleStore({ connectionString: url, table });
  try {
    await stores.migrate();
    const t = now();
    // Every record through the store's `create`.
    await fill(stores.forBinding(set.binding), profile.records);
    note(`PostgreSQL filled in ${((now() - t) / 1000).toFixed(1)} s`);
    return await warmRows(engineOver(stores, set.binding), profile, 'PostgreSQL');
  } finally {
    await stores.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS "${table}"`);
    await client.end();
  }
}

/** Measure 8. */
export async function listBench(): Promise<Row[]> {
  const set = await sampleRecordSet();
  const profile = profileOf(set);
  const rows = await fileRows(set, profile);
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') {
    rows.push({
      measure: '8 sess_list, PostgreSQL',
      subject: 'skipped',
      baseline: 'DATABASE_URL is unset',
      ratio: '—',
      goal: `< ${LIST_MEDIAN_MAX_MS} ms`,
      met: '—',
    });
  } else {
    rows.push(...(await postgresRows(set, profile, url)));
  }
  return rows;
}
