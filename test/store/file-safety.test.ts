/**
 * The file store in a shared directory (POSIX): it refuses a state or profile directory that
 * another user owns or that group or others may write, and never writes through a symbolic link
 * (`handles.gen`, the lock, its announcement and takeover guard, temp files, record files, the
 * directories below the state directory). A link among the state directory's ancestors stays
 * allowed. Refusals name the path relative to `SESS_MCP_STATE_DIR`, never the full path.
 * The tests run as root, which may chown a directory to another user.
 */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import { createFileHandleStore, type FileStoreFs } from '../../src/store/file/index.js';
import { nodeFileStoreFs } from '../../src/store/file/io.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { makeRecord, stdioA } from './fixtures.js';

const tempDir = useTempDirs('sess-mcp-safety-');

/** A state directory with the default profile's directories, and a victim file outside it. */
async function layout() {
  const root = await tempDir();
  const stateDir = join(root, 'state');
  const profileDir = join(stateDir, 'profiles', 'default');
  await fs.mkdir(join(profileDir, 'handles'), { recursive: true, mode: 0o700 });
  const victim = join(root, 'victim');
  await fs.writeFile(victim, 'precious\n', { mode: 0o600 });
  return { root, stateDir, profileDir, victim };
}

/** The refusal `promise` must end in: non-retryable, naming `where` and no full path. */
async function expectRefusal(promise: Promise<unknown>, where: string, why: string, stateDir: string) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isSessMcpError(error)) throw new Error(`expected a refusal, got ${String(error)}`);
  expect(error).toMatchObject({ code: 'STATE_STORE_ERROR', retryable: false, reason: 'unsafe_path' });
  expect(error.message).toContain(`SESS_MCP_STATE_DIR${where}: it ${why}`);
  expect(error.message).not.toContain(stateDir);
}

describe('file store directory checks', () => {
  for (const [dir, mode] of [
    ['', 0o770],
    ['/profiles', 0o707],
    ['/profiles/default', 0o720],
    ['/profiles/default/handles', 0o702],
  ] as const) {
    it(`refuses SESS_MCP_STATE_DIR${dir} with mode ${mode.toString(8)}, for reads and writes`, async () => {
      const { stateDir } = await layout();
      await fs.chmod(stateDir + dir, mode);
      const view = createFileHandleStore({ stateDir }).forBinding(stdioA);
      const record = makeRecord(stdioA, 'waiting');
      await expectRefusal(view.create(record), dir, 'is writable by group or others', stateDir);
      await expectRefusal(view.get(record.handle), dir, 'is writable by group or others', stateDir);
      await fs.chmod(stateDir + dir, 0o700);
      await view.create(record);
      expect((await view.get(record.handle))?.version).toBe(1);
    });
  }

  it('refuses a profile directory owned by another user', async () => {
    const { stateDir, profileDir } = await layout();
    await fs.chown(profileDir, 12345, 12345);
    const view = createFileHandleStore({ stateDir }).forBinding(stdioA);
    await expectRefusal(
      view.create(makeRecord(stdioA, 'waiting')),
      '/profiles/default',
      'is not owned by the user running the store',
      stateDir,
    );
  });

  it('refuses a handles or profile directory that is a symbolic link', async () => {
    for (const sub of ['profiles/default/handles', 'profiles/default']) {
      const { root, stateDir } = await layout();
      const elsewhere = join(root, 'elsewhere');
      await fs.mkdir(elsewhere, { mode: 0o700 });
      await fs.rm(join(stateDir, sub), { recursive: true });
      await fs.symlink(elsewhere, join(stateDir, sub));
      const view = createFileHandleStore({ stateDir }).forBinding(stdioA);
      await expectRefusal(
        view.create(makeRecord(stdioA, 'waiting')),
        `/${sub}`,
        'is a symbolic link',
        stateDir,
      );
      expect(await fs.readdir(elsewhere)).toEqual([]);
    }
  });

  it('allows a symbolic link among the state directory’s ancestors (as macOS /tmp is)', async () => {
    const root = await tempDir();
    await fs.mkdir(join(root, 'real'), { mode: 0o700 });
    await fs.symlink(join(root, 'real'), join(root, 'link'));
    const stateDir = join(root, 'link', 'state');
    const view = createFileHandleStore({ stateDir }).forBinding(stdioA);
    const record = makeRecord(stdioA, 'waiting');
    await view.create(record);
    expect((await view.get(record.handle))?.version).toBe(1);
    const real = join(root, 'real', 'state', 'profiles', 'default', 'handles', `${record.handle}.json`);
    expect((await fs.lstat(real)).isFile()).toBe(true);
  });
});

describe('file store never writes through a symbolic link', () => {
  for (const file of ['handles.gen', 'handles.lock', 'handles.lock.next', 'handles.lock.takeover']) {
    it(`refuses ${file} as a link and leaves its target alone`, async () => {
      const { stateDir, profileDir, victim } = await layout();
      await fs.symlink(victim, join(profileDir, file));
      // The takeover guard is only looked at when there is a lock to take over.
      if (file === 'handles.lock.takeover')
        await fs.writeFile(join(profileDir, 'handles.lock'), '999999999\n');
      const view = createFileHandleStore({ stateDir }).forBinding(stdioA);
      await expectRefusal(
        view.create(makeRecord(stdioA, 'waiting')),
        `/profiles/default/${file}`,
        'is a symbolic link',
        stateDir,
      );
      expect(await fs.readFile(victim, 'utf8')).toBe('precious\n');
    });
  }

  it('refuses a record file that is a link, on read and on create, and leaves its target alone', async () => {
    const { stateDir, profileDir, victim } = await layout();
    const record = makeRecord(stdioA, 'waiting');
    await fs.symlink(victim, join(profileDir, 'handles', `${record.handle}.json`));
    const view = createFileHandleStore({ stateDir }).forBinding(stdioA);
    const where = `/profiles/default/handles/${record.handle}.json`;
    await expectRefusal(view.get(record.handle), where, 'is a symbolic link', stateDir);
    await expectRefusal(view.create(record), where, 'is a symbolic link', stateDir);
    expect(await fs.readFile(victim, 'utf8')).toBe('precious\n');
  });

  it('does not write a temp file through a link planted at its name', async () => {
    const { stateDir, victim } = await layout();
    // A named double: an attacker who guesses the random temp name plants a link there first.
    const planting: FileStoreFs = {
      ...nodeFileStoreFs,
      open: async (path, flags, mode) => {
        if (path.endsWith('.tmp')) await fs.symlink(victim, path);
        return nodeFileStoreFs.open(path, flags, mode);
      },
    };
    const view = createFileHandleStore({ stateDir, fs: planting }).forBinding(stdioA);
    const error = await view.create(makeRecord(stdioA, 'waiting')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'STATE_STORE_ERROR' });
    expect(await fs.readFile(victim, 'utf8')).toBe('precious\n');
  });
});
