/**
 * The file store's summary of a profile kept between processes (`handles.summary`): written by a
 * store object that decoded the profile's files, it lets the next one decode only what changed
 * since, and it is only a cache: a missing or garbled one is ignored and written again, a record
 * changed or removed since is listed as it is now, and an entry that lies about a file it still
 * matches by key is corrected when the listing reads that file.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HandleStore, ListPage } from '../../src/core/contract/ports.js';
import { createFileHandleStore, type FileStoreFs } from '../../src/store/file/index.js';
import { nodeFileStoreFs } from '../../src/store/file/io.js';
import { recordSeries, writeRecordFiles } from '../support/bulk-records.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { listPage } from './contract.js';
import { stateOf, stdioA } from './fixtures.js';

const tempDir = useTempDirs('sess-mcp-file-summary-');
const binding = stdioA;
/** 300 records: more than a scan decodes before it writes the summary again (256). */
const records = recordSeries(binding, 'waiting', 300, 'sum', '2026-01-01T00:00:00.000Z');
const newestFirst = records.map((record) => record.handle).reverse();

const handles = (page: ListPage) => page.records.map((entry) => entry.record.handle);
const open = (stateDir: string): HandleStore => createFileHandleStore({ stateDir }).forBinding(binding);
const summaryPath = (stateDir: string) => join(stateDir, 'profiles', 'default', 'handles.summary');

async function profileWithSummary(): Promise<string> {
  const stateDir = await tempDir();
  await writeRecordFiles(createFileHandleStore({ stateDir }).directory, records);
  expect(handles(await listPage(open(stateDir), { limit: 100 }))).toEqual(newestFirst.slice(0, 100));
  return stateDir;
}

describe('the file store’s summary of a profile (handles.summary)', () => {
  it('is written, 0600, by the store object that decoded the files, and read by the next', async () => {
    const stateDir = await profileWithSummary();
    expect(((await stat(summaryPath(stateDir))).mode & 0o777).toString(8)).toBe('600');
    const summary = JSON.parse(await readFile(summaryPath(stateDir), 'utf8')) as { files: unknown[] };
    expect(summary.files).toHaveLength(300);
    // Another store object lists the same, and counts the same, reading only the page's files
    // (a named double around the default file system counts the record files read).
    let recordReads = 0;
    const counting: FileStoreFs = {
      ...nodeFileStoreFs,
      readFile: (path, encoding) => {
        if (path.endsWith('.json')) recordReads += 1;
        return nodeFileStoreFs.readFile(path, encoding);
      },
    };
    const again = createFileHandleStore({ stateDir, fs: counting }).forBinding(binding);
    expect(handles(await listPage(again, { limit: 100 }))).toEqual(newestFirst.slice(0, 100));
    expect(await again.countUnfinished()).toBe(300);
    expect(recordReads).toBe(100);
  });

  it('lists what changed since as it is now: a record moved on by another store object, a file removed', async () => {
    const stateDir = await profileWithSummary();
    const writer = open(stateDir);
    const moved = records[299]!;
    await writer.update({ ...moved, state: stateOf('expired') }, 1);
    await rm(join(createFileHandleStore({ stateDir }).directory, `${records[298]!.handle}.json`));
    const reader = open(stateDir);
    const page = await listPage(reader, { limit: 100, kinds: ['waiting'] });
    expect(handles(page)).toEqual(newestFirst.slice(2, 102));
    expect(handles(await listPage(reader, { limit: 100, kinds: ['expired'] }))).toEqual([moved.handle]);
    expect(await reader.countUnfinished()).toBe(298);
  });

  it('is ignored when garbled, and written again', async () => {
    const stateDir = await profileWithSummary();
    await writeFile(summaryPath(stateDir), '{"format":1,"files":[["x"', { mode: 0o600 });
    expect(handles(await listPage(open(stateDir), { limit: 100 }))).toEqual(newestFirst.slice(0, 100));
    expect(JSON.parse(await readFile(summaryPath(stateDir), 'utf8')).files).toHaveLength(300);
  });

  it('an entry that lies about a file is corrected when a listing reads the file', async () => {
    const stateDir = await profileWithSummary();
    const summary = JSON.parse(await readFile(summaryPath(stateDir), 'utf8')) as {
      format: 1;
      files: unknown[][];
    };
    const newest = records[299]!.handle;
    // The entry of the newest record, under its true file key, now says it is finished.
    for (const entry of summary.files) if (entry[0] === newest) entry[4] = 'completed';
    await writeFile(summaryPath(stateDir), JSON.stringify(summary), { mode: 0o600 });
    const reader = open(stateDir);
    expect(handles(await listPage(reader, { limit: 2, kinds: ['completed'] }))).toEqual([]);
    expect(handles(await listPage(reader, { limit: 100, kinds: ['waiting'] }))).toEqual(
      newestFirst.slice(0, 100),
    );
  });
});
