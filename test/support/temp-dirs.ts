/**
 * Temporary directories for a suite, in the style of `useCleanup()`: each made on request under
 * the system's temporary directory, all removed after the suite's tests.
 *
 * It only makes and removes them: what a test puts inside, and which modes or links it checks
 * there, is the test's own.
 *
 * @example
 * ```ts
 * const tempDir = useTempDirs('sess-mcp-store-');
 * it('stores', async () => {
 *   const store = createFileHandleStore({ stateDir: await tempDir() });
 * });
 * ```
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Returns a function that makes a fresh directory named `prefix…`; all are removed after the suite.
 * `under` puts them below another directory than the system's temporary one (a test that writes
 * tens of thousands of files uses memory-backed `/dev/shm` where there is one, so it measures the
 * store rather than the disk).
 */
export function useTempDirs(prefix: string, under: string = tmpdir()): () => Promise<string> {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(join(under, prefix));
    dirs.push(dir);
    return dir;
  };
}
