/**
 * The records 0.1.0 wrote (`test/fixtures/records-0.1.0`, see its README): where they are, and
 * how a test puts them where this version finds them, unchanged: the record files into a profile's
 * handles directory, the rows into a table made as 0.1.0's `migrate()` made it.
 */

import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Binding } from '../../src/core/contract/ports.js';
import type { InteractionRecord, InteractionStateKind } from '../../src/core/model/record.js';
import { FORMAT_1_KINDS } from './fixtures.js';

/** The fixture directory. */
export const FIXTURES_010 = fileURLToPath(new URL('../fixtures/records-0.1.0/', import.meta.url));

/** One set of fixtures: the binding it was written under and the handle of each state kind. */
export interface FixtureSet010 {
  binding: Binding;
  handles: Record<string, string>;
}

/** `manifest.json`. */
export interface Manifest010 {
  generatedBy: string;
  file: FixtureSet010;
  postgres: FixtureSet010;
}

/** One row of `postgres/rows.json`. */
export interface Row010 {
  handle: string;
  scope: string;
  version: number;
  unfinished: boolean;
  created_at: string;
  record: InteractionRecord;
  written_at: string;
}

/** Every state kind 0.1.0 writes, as the fixtures hold them: the kinds of record format 1. */
export const KINDS_010: readonly InteractionStateKind[] = FORMAT_1_KINDS;

export async function manifest010(): Promise<Manifest010> {
  return JSON.parse(await readFile(join(FIXTURES_010, 'manifest.json'), 'utf8')) as Manifest010;
}

/** The envelope of one fixture record file, parsed. */
export async function fileFixture010(
  handle: string,
): Promise<{ format: number; version: number; record: InteractionRecord }> {
  return JSON.parse(await readFile(join(FIXTURES_010, 'file', 'handles', `${handle}.json`), 'utf8'));
}

/**
 * Copy every fixture record file, byte for byte, into `handlesDir` (made 0700; files 0600, as the
 * file store keeps them). Returns the file names.
 */
export async function installFileFixtures010(handlesDir: string): Promise<string[]> {
  await mkdir(handlesDir, { recursive: true, mode: 0o700 });
  const source = join(FIXTURES_010, 'file', 'handles');
  const names = (await readdir(source)).filter((name) => name.endsWith('.json')).sort();
  for (const name of names) {
    await writeFile(join(handlesDir, name), await readFile(join(source, name)), { mode: 0o600 });
    await chmod(join(handlesDir, name), 0o600);
  }
  return names;
}

export async function rows010(): Promise<Row010[]> {
  return JSON.parse(await readFile(join(FIXTURES_010, 'postgres', 'rows.json'), 'utf8')) as Row010[];
}

/** Something that runs SQL (a `pg` Pool). */
interface Sql {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/**
 * Make `public.<table>` as 0.1.0's `migrate()` made it (`postgres/table.sql`) and insert every
 * fixture row as it was (the record into the `jsonb` column).
 */
export async function installPgFixtures010(sql: Sql, table: string): Promise<Row010[]> {
  const ddl = (await readFile(join(FIXTURES_010, 'postgres', 'table.sql'), 'utf8')).replaceAll(
    '{{table}}',
    table,
  );
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean))
    await sql.query(statement);
  const rows = await rows010();
  for (const row of rows) {
    await sql.query(
      `INSERT INTO "public"."${table}" (handle, scope, version, unfinished, created_at, record, written_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
      [
        row.handle,
        row.scope,
        row.version,
        row.unfinished,
        row.created_at,
        JSON.stringify(row.record),
        row.written_at,
      ],
    );
  }
  return rows;
}
