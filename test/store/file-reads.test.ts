import { describe, expect, it } from 'vitest';
import { createFileHandleStore, type FileStoreFs } from '../../src/store/file/index.js';
import { nodeFileStoreFs } from '../../src/store/file/io.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { makeRecord, stdioA } from './fixtures.js';

const stateDir = useTempDirs('sess-mcp-reads-');

/** A file system that counts record-file reads and status calls (a named double around node's). */
function countingFs() {
  const counts = { readFile: 0, lstat: 0 };
  const isRecord = (path: string) => path.endsWith('.json') && !path.includes('.tmp');
  const counting: FileStoreFs = {
    ...nodeFileStoreFs,
    readFile: (path, encoding) => {
      if (isRecord(path)) counts.readFile++;
      return nodeFileStoreFs.readFile(path, encoding);
    },
    lstat: (path) => {
      if (isRecord(path)) counts.lstat++;
      return nodeFileStoreFs.lstat(path);
    },
  };
  return { counting, counts };
}

describe('file store reads', () => {
  it('reads a record it just updated with one lstat and no readFile', async () => {
    const dir = await stateDir();
    const { counting, counts } = countingFs();
    const view = createFileHandleStore({ stateDir: dir, fs: counting }).forBinding(stdioA);
    const record = makeRecord(stdioA, 'create_intent');
    await view.create(record);
    const waiting = { ...record, state: makeRecord(stdioA, 'waiting').state };
    await view.update(waiting, 1);
    counts.readFile = 0;
    counts.lstat = 0;
    for (let i = 0; i < 5; i++)
      expect(await view.get(record.handle)).toEqual({ version: 2, record: waiting });
    expect(counts).toEqual({ readFile: 0, lstat: 5 });
    // The next update checks the version the same way: no file read either.
    const answered = { ...waiting, state: makeRecord(stdioA, 'answered').state };
    await view.update(answered, 2);
    expect(counts.readFile).toBe(0);
  });

  it('sees a change made through another store object at once (the file status changed)', async () => {
    const dir = await stateDir();
    const { counting, counts } = countingFs();
    const mine = createFileHandleStore({ stateDir: dir, fs: counting }).forBinding(stdioA);
    const theirs = createFileHandleStore({ stateDir: dir }).forBinding(stdioA);
    const record = makeRecord(stdioA, 'create_intent');
    await mine.create(record);
    const waiting = { ...record, state: makeRecord(stdioA, 'waiting').state };
    await mine.update(waiting, 1);
    const answered = { ...waiting, state: makeRecord(stdioA, 'answered').state };
    await theirs.update(answered, 2);
    counts.readFile = 0;
    expect(await mine.get(record.handle)).toEqual({ version: 3, record: answered });
    expect(counts.readFile).toBe(1);
    // A stale write from the first object is refused, not lost over theirs.
    await expect(mine.update({ ...waiting, updatedAt: '2026-12-01T00:00:00.000Z' }, 2)).rejects.toMatchObject(
      {
        code: 'INVALID_STATE',
      },
    );
    expect(await theirs.get(record.handle)).toEqual({ version: 3, record: answered });
  });

  it('hands out copies: changing a returned or a read record changes nothing kept', async () => {
    const dir = await stateDir();
    const view = createFileHandleStore({ stateDir: dir }).forBinding(stdioA);
    const record = makeRecord(stdioA, 'create_intent');
    await view.create(record);
    const waiting = { ...record, state: makeRecord(stdioA, 'waiting').state };
    const kept = structuredClone(waiting);
    const returned = await view.update(waiting, 1);
    returned.record.updatedAt = '2099-01-01T00:00:00.000Z';
    waiting.updatedAt = '2098-01-01T00:00:00.000Z';
    const read = await view.get(record.handle);
    expect(read).toEqual({ version: 2, record: kept });
    if (read !== undefined) read.record.updatedAt = '2097-01-01T00:00:00.000Z';
    expect(await view.get(record.handle)).toEqual({ version: 2, record: kept });
  });
});
