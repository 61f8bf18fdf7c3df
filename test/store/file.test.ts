/**
 * The file store on a real temp directory: the contract suite, then the layout and modes, atomic
 * writes (a crash between the temp write and the rename), the profile lock, two OS processes on
 * one profile, the owner's records access, and the classification of file-system failures
 * (through a named double of `fs`, since the tests run as root and cannot be denied access).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bindingScope, MAX_UNFINISHED } from '../../src/core/contract/ports.js';
import {
  createFileHandleStore,
  type FileStoreFileLike,
  type FileStoreFs,
  openProfileRecords,
} from '../../src/store/file/index.js';
import { nodeFileStoreFs } from '../../src/store/file/io.js';
import { LEASE_GRACE_MS } from '../../src/store/file/lock.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { type ContractBackend, describeHandleStoreContract, listPage, storeFailure } from './contract.js';
import { httpA, makeRecord, newHandle, stdioA } from './fixtures.js';
import { describeEventOutboxContract } from './outbox-contract.js';
import { describePruneContract } from './prune-contract.js';
import { describeReadyContract } from './ready-contract.js';
import { killAfterWrites, raceCompareAndSet, runWorkers, sumTallies } from './spawn-worker.js';
import { describeWaitingContract } from './waiting-contract.js';

const tempStateDir = useTempDirs('sess-mcp-store-');

/**
 * A named double of the store's default file system that fails the calls `fail` picks with
 * `code`: the seam production runs, so every fault goes through the path production takes. The
 * calls of an open file are named `write`, `fsync`, `truncate` and `close`, with the file's path.
 */
function failingFs(fail: (call: string, path: string) => string | undefined): FileStoreFs {
  const check = (call: string, path: string) => {
    const code = fail(call, path);
    if (code !== undefined) throw Object.assign(new Error(`${code}: injected by the test double`), { code });
  };
  const wrap =
    <A extends unknown[], R>(call: string, real: (path: string, ...rest: A) => Promise<R>) =>
    async (path: string, ...rest: A): Promise<R> => {
      check(call, path);
      return real(path, ...rest);
    };
  const real = nodeFileStoreFs;
  const failingFile = (path: string, file: FileStoreFileLike): FileStoreFileLike => ({
    ...file,
    writeFile: async (data, options) => {
      check('write', path);
      return file.writeFile(data, options);
    },
    sync: async () => {
      check('fsync', path);
      return file.sync();
    },
    truncate: async (length) => {
      check('truncate', path);
      return file.truncate(length);
    },
    close: async () => {
      await file.close();
      check('close', path);
    },
  });
  return {
    readFile: wrap('readFile', real.readFile),
    readdir: wrap('readdir', real.readdir),
    mkdir: wrap('mkdir', real.mkdir),
    open: wrap('open', async (path: string, flags: string | number, mode?: number) =>
      failingFile(path, await real.open(path, flags, mode)),
    ),
    rename: wrap('rename', real.rename),
    link: wrap('link', real.link),
    unlink: wrap('unlink', real.unlink),
    stat: wrap('stat', real.stat),
    lstat: wrap('lstat', real.lstat),
  };
}

/** A file store on `profile` of `stateDir`, a stdio binding of that profile and its view. */
function openProfile(stateDir: string, profile: string) {
  const store = createFileHandleStore({ stateDir, profile });
  const binding = { ...stdioA, profile };
  return { store, binding, view: store.forBinding(binding) };
}

/** A file store backend of its own for a contract suite. */
async function fileBackend(): Promise<ContractBackend> {
  const stateDir = await tempStateDir();
  const store = createFileHandleStore({ stateDir, profile: 'default' });
  return {
    factory: store,
    async corrupt(binding, handle, kind) {
      await fs.mkdir(store.directory, { recursive: true });
      const text =
        kind === 'garbled'
          ? '{"format":1,"version":1,"record":{"format":1,"handle":"'
          : JSON.stringify({ format: 2, version: 1, record: makeRecord(binding, 'waiting', { handle }) });
      await fs.writeFile(join(store.directory, `${handle}.json`), text, { mode: 0o600 });
    },
    async broken(binding) {
      return createFileHandleStore({ stateDir, profile: 'default', fs: failingFs(() => 'EIO') }).forBinding(
        binding,
      );
    },
    reopen: async () => createFileHandleStore({ stateDir, profile: 'default' }),
  };
}

describeHandleStoreContract('file', fileBackend);
describeWaitingContract('file', fileBackend);
describeReadyContract('file', async () => {
  const stateDir = await tempStateDir();
  return {
    factory: createFileHandleStore({ stateDir, profile: 'default' }),
    // A state directory others may write is refused, though the store checked it before.
    unready: async () => {
      await fs.chmod(stateDir, 0o777);
      return 'unsafe_path';
    },
  };
});
describePruneContract('file', fileBackend);

describeEventOutboxContract('file', async () => {
  const stateDir = await tempStateDir();
  return {
    factory: createFileHandleStore({ stateDir, profile: 'default' }),
    reopen: async () => createFileHandleStore({ stateDir, profile: 'default' }),
  };
});

describe('file store', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await tempStateDir();
  });

  it('lists a record another store object changed, and a file changed in place by hand', async () => {
    const store = createFileHandleStore({ stateDir, profile: 'listing' });
    const other = createFileHandleStore({ stateDir, profile: 'listing' });
    const binding = { ...stdioA, profile: 'listing' };
    const view = store.forBinding(binding);
    const records = [1, 2, 3].map((i) =>
      makeRecord(binding, 'waiting', { createdAt: `2026-01-01T00:00:0${i}.000Z` }),
    );
    for (const record of records) await view.create(record);
    const kinds = async () =>
      (await listPage(view, { limit: 10 })).records.map((r) => [r.record.handle, r.record.state.kind]);
    expect(await kinds()).toEqual(records.map((r) => [r.handle, 'waiting']).reverse());
    // Another store object (as another process would) finishes the newest one.
    await other
      .forBinding(binding)
      .update({ ...records[2]!, state: makeRecord(binding, 'completed').state }, 1);
    expect(await kinds()).toEqual([
      [records[1]!.handle, 'waiting'],
      [records[0]!.handle, 'waiting'],
      [records[2]!.handle, 'completed'],
    ]);
    // The owner rewrites a file in place (no lock, no change announced): still listed as it is now.
    const path = join(store.directory, `${records[0]!.handle}.json`);
    const blocked = { ...records[0]!, state: makeRecord(binding, 'blocked').state };
    await fs.writeFile(path, `{"format":1,"version":1,"record":${JSON.stringify(blocked)}}\n`);
    expect(await kinds()).toEqual([
      [records[1]!.handle, 'waiting'],
      [records[0]!.handle, 'blocked'],
      [records[2]!.handle, 'completed'],
    ]);
  });

  it('writes one 0600 file per handle under <stateDir>/profiles/<profile>/handles, directories 0700', async () => {
    const store = createFileHandleStore({ stateDir, profile: 'work' });
    const binding = { ...stdioA, profile: 'work' };
    const record = makeRecord(binding, 'waiting');
    await store.forBinding(binding).create(record);
    const path = join(stateDir, 'profiles', 'work', 'handles', `${record.handle}.json`);
    expect(store.directory).toBe(join(stateDir, 'profiles', 'work', 'handles'));
    expect((await fs.stat(path)).mode & 0o777).toBe(0o600);
    for (const dir of ['profiles', 'profiles/work', 'profiles/work/handles']) {
      expect((await fs.stat(join(stateDir, dir))).mode & 0o777).toBe(0o700);
    }
    expect(JSON.parse(await fs.readFile(path, 'utf8'))).toEqual({ format: 1, version: 1, record });
    await store.forBinding(binding).update({ ...record, updatedAt: 'later' }, 1);
    expect(JSON.parse(await fs.readFile(path, 'utf8')).version).toBe(2);
    expect((await fs.stat(path)).mode & 0o777).toBe(0o600);
    // Nothing else is left in the directory: no temp file, no lock.
    expect(await fs.readdir(store.directory)).toEqual([`${record.handle}.json`]);
  });

  it('survives a crash between the temp write and the rename: the old record stands, the temp is swept', async () => {
    const { store, binding, view } = openProfile(stateDir, 'crash');
    const record = makeRecord(binding, 'waiting');
    await view.create(record);
    // What a crash leaves: a half-written temp file of the next version beside the record.
    const temp = join(store.directory, `.${record.handle}.999999-abcdef.tmp`);
    await fs.writeFile(temp, '{"format":1,"version":2,"rec', { mode: 0o600 });
    const restarted = createFileHandleStore({ stateDir, profile: 'crash' }).forBinding(binding);
    expect(await restarted.get(record.handle)).toEqual({ version: 1, record });
    expect(await restarted.countUnfinished()).toBe(1);
    // The next change (holding the lock, no write is in flight) removes the leftover.
    await restarted.update({ ...record, updatedAt: 'after the crash' }, 1);
    await expect(fs.stat(temp)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await restarted.get(record.handle))?.version).toBe(2);
  });

  it('writes whole or not at all: a failed rename leaves the old record and no temp file', async () => {
    const binding = { ...stdioA, profile: 'rename' };
    const good = createFileHandleStore({ stateDir, profile: 'rename' });
    const record = makeRecord(binding, 'waiting');
    await good.forBinding(binding).create(record);
    const failing = createFileHandleStore({
      stateDir,
      profile: 'rename',
      fs: failingFs((call) => (call === 'rename' ? 'ENOSPC' : undefined)),
    }).forBinding(binding);
    const error = await storeFailure(
      failing.update({ ...record, state: makeRecord(binding, 'expired').state }, 1),
    );
    expect(error.code).toBe('STATE_STORE_ERROR');
    expect(error.retryable).toBe(true);
    expect(await good.forBinding(binding).get(record.handle)).toEqual({ version: 1, record });
    expect(await fs.readdir(good.directory)).toEqual([`${record.handle}.json`]);
    // A create that cannot be written leaves nothing either.
    const other = makeRecord(binding, 'waiting');
    await storeFailure(failing.create(other));
    expect(await good.forBinding(binding).get(other.handle)).toBeUndefined();
  });

  it('writes whole or not at all when any step of a record write fails: open, write, fsync, close, rename, the directory fsync', async () => {
    const binding = { ...stdioA, profile: 'steps' };
    const good = createFileHandleStore({ stateDir, profile: 'steps' });
    const record = makeRecord(binding, 'waiting');
    await good.forBinding(binding).create(record);
    const temp = (path: string) => path.endsWith('.tmp');
    const handles = (path: string) => path.endsWith('/handles');
    const steps: [string, (call: string, path: string) => boolean][] = [
      ['open the temp file', (call, path) => call === 'open' && temp(path)],
      ['write the temp file', (call, path) => call === 'write' && temp(path)],
      ['fsync the temp file', (call, path) => call === 'fsync' && temp(path)],
      ['close the temp file', (call, path) => call === 'close' && temp(path)],
      ['rename', (call) => call === 'rename'],
      ['fsync the directory', (call, path) => call === 'fsync' && handles(path)],
    ];
    for (const [step, picks] of steps) {
      const failing = createFileHandleStore({
        stateDir,
        profile: 'steps',
        fs: failingFs((call, path) => (picks(call, path) ? 'EIO' : undefined)),
      }).forBinding(binding);
      const seen = await failing.get(record.handle);
      const error = await storeFailure(
        failing.update({ ...record, updatedAt: `after a failed ${step}` }, seen?.version ?? 0),
      );
      expect(error.code, step).toBe('STATE_STORE_ERROR');
      expect(error.retryable, step).toBe(true);
      expect(error.message, step).toContain('EIO');
      // Whole or not at all: the record read back is the old one or the new one, never a mix,
      // and no temp file is left.
      const after = await good.forBinding(binding).get(record.handle);
      expect([record.updatedAt, `after a failed ${step}`], step).toContain(after?.record.updatedAt);
      expect(await fs.readdir(good.directory), step).toEqual([`${record.handle}.json`]);
    }
  });

  it('classifies file-system failures: transient ones retryable, permission and layout ones not', async () => {
    const binding = { ...stdioA, profile: 'errors' };
    for (const [code, retryable] of [
      ['EIO', true],
      ['EMFILE', true],
      ['ENOSPC', true],
      ['EAGAIN', true],
      ['EACCES', false],
      ['EPERM', false],
      ['ENOTDIR', false],
    ] as const) {
      const view = createFileHandleStore({
        stateDir,
        profile: 'errors',
        fs: failingFs(() => code),
      }).forBinding(binding);
      for (const call of [() => view.get(newHandle()), () => view.create(makeRecord(binding, 'waiting'))]) {
        const error = await storeFailure(call());
        expect(error.code).toBe('STATE_STORE_ERROR');
        expect(error.retryable, code).toBe(retryable);
        expect(error.message).toContain(code);
        expect(error.message).not.toContain(stateDir);
      }
    }
  });

  it('never puts record contents into an error message', async () => {
    const store = createFileHandleStore({ stateDir, profile: 'secrets' });
    const binding = { ...stdioA, profile: 'secrets' };
    const handle = newHandle();
    await fs.mkdir(store.directory, { recursive: true });
    const record = makeRecord(binding, 'answered', { handle });
    const broken = JSON.stringify({
      format: 1,
      version: 1,
      record: { ...record, state: { ...record.state, revision: 'x' } },
    });
    await fs.writeFile(join(store.directory, `${handle}.json`), broken);
    const error = await storeFailure(store.forBinding(binding).get(handle));
    expect(error.reason).toBe('corrupt');
    expect(error.message).toContain('state.revision');
    for (const secret of ['secret-link-token', 'secret answer text', 'eyJhbGciOiJFZERTQSJ9', handle]) {
      expect(error.message).not.toContain(secret);
    }
  });

  it('makes its directories again when the owner removed the whole profile between changes', async () => {
    const { store, binding, view } = openProfile(stateDir, 'removed');
    const record = makeRecord(binding, 'waiting');
    await view.create(record);
    await fs.rm(join(stateDir, 'profiles', 'removed'), { recursive: true });
    expect(await view.get(record.handle)).toBeUndefined();
    // The first change may fail (retryable) on the vanished directory; the next one recreates it.
    await view.create(makeRecord(binding, 'waiting')).catch((error: unknown) => {
      expect(error).toMatchObject({ code: 'STATE_STORE_ERROR', retryable: true });
    });
    await view.create(record);
    expect((await view.get(record.handle))?.version).toBe(1);
    expect((await fs.stat(store.directory)).mode & 0o777).toBe(0o700);
  });

  it('skips unreadable files when listing and counting, so one bad file does not stop the profile', async () => {
    const { store, binding, view } = openProfile(stateDir, 'skip');
    const record = makeRecord(binding, 'waiting');
    await view.create(record);
    await fs.writeFile(join(store.directory, `${newHandle()}.json`), 'not json');
    await fs.writeFile(join(store.directory, 'not a handle.json'), '{}');
    await fs.writeFile(join(store.directory, 'notes.txt'), 'ignored');
    expect(await view.countUnfinished()).toBe(1);
    expect((await view.listUnfinished()).map((r) => r.record.handle)).toEqual([record.handle]);
  });

  it('notices record files the owner removed by hand: the cap frees their places', async () => {
    const { store, binding, view } = openProfile(stateDir, 'byhand');
    const records = Array.from({ length: MAX_UNFINISHED }, () => makeRecord(binding, 'waiting'));
    for (const record of records) await view.create(record);
    expect((await storeFailure(view.create(makeRecord(binding, 'waiting')))).code).toBe('STATE_STORE_FULL');
    // The owner procedure: remove the file to retire the handle, with no tool involved. A person
    // does that long after the last write; directory mtimes are only as fine as the kernel tick.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await fs.unlink(join(store.directory, `${records[7]!.handle}.json`));
    expect(await view.get(records[7]!.handle)).toBeUndefined();
    expect(await view.countUnfinished()).toBe(MAX_UNFINISHED - 1);
    await view.create(makeRecord(binding, 'waiting'));
    expect((await storeFailure(view.create(makeRecord(binding, 'waiting')))).code).toBe('STATE_STORE_FULL');
  });

  it('sees what another store object (another process) wrote, in counts and reads', async () => {
    const binding = { ...stdioA, profile: 'two' };
    const one = createFileHandleStore({ stateDir, profile: 'two' }).forBinding(binding);
    const two = createFileHandleStore({ stateDir, profile: 'two' }).forBinding(binding);
    const record = makeRecord(binding, 'waiting');
    await one.create(record);
    expect(await two.countUnfinished()).toBe(1);
    await two.update({ ...record, state: makeRecord(binding, 'completed').state }, 1);
    expect(await one.countUnfinished()).toBe(0);
    expect((await one.get(record.handle))?.version).toBe(2);
    expect(await one.delete(record.handle, 2)).toBe(true);
    expect(await two.get(record.handle)).toBeUndefined();
  });

  it('waits for a profile lock held by a live process and takes over the lock of a dead one', async () => {
    const { binding, view } = openProfile(stateDir, 'locked');
    await view.create(makeRecord(binding, 'waiting'));
    const lock = join(stateDir, 'profiles', 'locked', 'handles.lock');
    // A live holder (the parent of this process): the create waits until the lock is released.
    await fs.writeFile(lock, `${process.ppid}\n`);
    let done = false;
    const waiting = view.create(makeRecord(binding, 'waiting')).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(done).toBe(false);
    await fs.unlink(lock);
    await waiting;
    expect(await view.countUnfinished()).toBe(2);
    // A dead holder: taken over at once.
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = child.pid!;
    await new Promise((resolve) => child.once('exit', resolve));
    await fs.writeFile(lock, `${deadPid}\n`);
    await view.create(makeRecord(binding, 'waiting'));
    expect(await view.countUnfinished()).toBe(3);
    // Released once the lease's grace after the last change is over.
    await new Promise((resolve) => setTimeout(resolve, LEASE_GRACE_MS + 50));
    await expect(fs.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('two processes on one profile race 200 compare-and-set writes: no lost update', async () => {
    const { tallies, total, finalVersion } = await raceCompareAndSet(
      createFileHandleStore({ stateDir, profile: 'race' }),
      { kind: 'file', stateDir, profile: 'race' },
    );
    expect((total.ok ?? 0) + (total['INVALID_STATE:stale_version'] ?? 0)).toBe(200);
    expect(finalVersion - 1).toBe(total.ok);
    expect(tallies.every((t) => (t.ok ?? 0) > 0)).toBe(true);
  });

  it(`150 concurrent creates from two processes on one profile leave exactly ${MAX_UNFINISHED}`, async () => {
    const setup = createFileHandleStore({ stateDir, profile: 'cap' });
    const job = {
      store: { kind: 'file' as const, stateDir, profile: 'cap' },
      job: 'create' as const,
      binding: httpA,
      count: 75,
    };
    expect(sumTallies(await runWorkers([job, job]))).toEqual({ ok: MAX_UNFINISHED, STATE_STORE_FULL: 50 });
    expect(await setup.forBinding(httpA).countUnfinished()).toBe(MAX_UNFINISHED);
  });

  it('refuses bad options with a TypeError naming the option', () => {
    expect(() => createFileHandleStore({ stateDir: 'relative/dir' })).toThrow(/option "stateDir"/);
    expect(() => createFileHandleStore({ stateDir, profile: '../escape' })).toThrow(/option "profile"/);
    expect(() => createFileHandleStore({ stateDir, profile: '' })).toThrow(/option "profile"/);
    expect(() => createFileHandleStore({ stateDir, profile: 'a/b' })).toThrow(/option "profile"/);
    const store = createFileHandleStore({ stateDir, profile: 'one' });
    expect(() => store.forBinding({ ...stdioA, profile: 'two' })).toThrow(/binding\.profile/);
  });
});

describe('openProfileRecords', () => {
  it('lists records by state (unreadable ones flagged), reads one and retires one', async () => {
    const stateDir = await tempStateDir();
    const store = createFileHandleStore({ stateDir, profile: 'default' });
    const view = store.forBinding(stdioA);
    const blocked = makeRecord(stdioA, 'blocked');
    const waiting = makeRecord(stdioA, 'waiting');
    const done = makeRecord(stdioA, 'completed');
    const foreign = makeRecord(httpA, 'create_unknown');
    for (const record of [blocked, waiting, done]) await view.create(record);
    await store.forBinding(httpA).create(foreign);
    const garbled = newHandle();
    await fs.writeFile(join(store.directory, `${garbled}.json`), '{"format":1,');
    const future = newHandle();
    await fs.writeFile(join(store.directory, `${future}.json`), '{"format":7}');

    const records = openProfileRecords({ stateDir, profile: 'default' });
    expect(records.directory).toBe(store.directory);
    const list = await records.list();
    expect(list.map((r) => [r.handle, r.state ?? r.problem])).toEqual([
      [blocked.handle, 'blocked'],
      [waiting.handle, 'waiting'],
      [done.handle, 'completed'],
      [foreign.handle, 'create_unknown'],
      ...[
        [garbled, 'corrupt'],
        [future, 'unsupported_version'],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    ]);
    const first = list[0]!;
    expect(first).toMatchObject({
      version: 1,
      unfinished: true,
      blockedCode: 'MUTATION_REJECTED',
      reason: 'conflict',
      sessionId: 'ses_1',
      bindingKind: 'stdio',
      origin: stdioA.apiOrigin,
      path: join(store.directory, `${blocked.handle}.json`),
    });
    // A listing never carries the link or the answer.
    expect(JSON.stringify(list)).not.toMatch(/secret/);

    expect(await records.read(foreign.handle)).toEqual({ version: 1, record: foreign });
    expect(await records.read('../../etc/passwd')).toBeUndefined();
    expect(records.pathOf('../x')).toBeUndefined();
    expect((await storeFailure(records.read(garbled))).retryable).toBe(false);

    expect(await records.remove(blocked.handle, { expectedVersion: 2 })).toBe(false);
    expect(await records.remove(blocked.handle, { expectedVersion: 1 })).toBe(true);
    expect(await records.remove(garbled)).toBe(true);
    expect(await records.remove(garbled)).toBe(false);
    expect(await view.get(blocked.handle)).toBeUndefined();
    expect((await records.list()).map((r) => r.handle)).not.toContain(garbled);
    expect(await view.countUnfinished()).toBe(1);
    expect(bindingScope(stdioA)).not.toBe(bindingScope(httpA));
  });
});

describe('file store after SIGKILL', () => {
  it('a process killed in the middle of writing leaves a readable record and a lock others take over', async () => {
    const stateDir = await tempStateDir();
    const setup = createFileHandleStore({ stateDir, profile: 'killed' });
    const record = makeRecord(httpA, 'waiting');
    await setup.forBinding(httpA).create(record);
    let version = 1;
    for (let round = 0; round < 3; round++) {
      await killAfterWrites(
        {
          store: { kind: 'file', stateDir, profile: 'killed' },
          job: 'cas',
          binding: httpA,
          handle: record.handle,
          count: 1_000_000,
          concurrency: 2,
          progress: true,
        },
        15 + round * 7,
      );
      // A fresh store (a restarted server) reads a whole record at a version at least as far
      // as the writes the killed process reported…
      const restarted = createFileHandleStore({ stateDir, profile: 'killed' }).forBinding(httpA);
      const current = await restarted.get(record.handle);
      expect(current?.record.handle).toBe(record.handle);
      expect(current!.version).toBeGreaterThanOrEqual(version + 15 + round * 7);
      version = current!.version;
      // …and writes at once, whatever lock or temp file the killed process left behind.
      expect((await restarted.update(current!.record, version)).version).toBe(version + 1);
      version++;
      const names = await fs.readdir(setup.directory);
      expect(names).toEqual([`${record.handle}.json`]);
    }
  });
});

describe('the per-principal quota across store objects', () => {
  it('counts the open records a later store object knows only from handles.summary', async () => {
    const stateDir = await tempStateDir();
    const alice = { ...httpA, principalId: 'alice-summary' };
    const limits = { maxOpenPerPrincipal: 5 };
    const first = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(alice);
    // Enough files that a scan writes handles.summary, and old enough that a later one trusts it.
    for (let i = 0; i < 300; i++) await first.create(makeRecord(alice, 'completed'));
    for (let i = 0; i < 5; i++) await first.create(makeRecord(alice, 'waiting'), limits);
    const handles = join(stateDir, 'profiles', 'default', 'handles');
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const name of await fs.readdir(handles)) await fs.utimes(join(handles, name), hourAgo, hourAgo);
    await createFileHandleStore({ stateDir, profile: 'default' }).forBinding(alice).countUnfinished();
    await fs.access(join(stateDir, 'profiles', 'default', 'handles.summary'));
    // A third store object, through another client of the same person: its summary is read back.
    const other = { ...alice, clientId: 'client_other', grantId: 'grant_other' };
    const third = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(other);
    const refused = await storeFailure(third.create(makeRecord(other, 'waiting'), limits));
    expect(refused.code).toBe('PRINCIPAL_QUOTA_REACHED');
  });
});
