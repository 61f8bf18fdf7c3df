/**
 * What a test opened, closed after it: the `useSecretsAudit()` of servers, clients, runtimes and
 * temporary directories. Push each thing as it is opened (an object with `close()`, or a function
 * that cleans up); after each test they are closed one at a time, the last opened first.
 *
 * It does not swallow errors: a close that throws fails the test's clean-up.
 *
 * @example
 * ```ts
 * const open = useCleanup();
 * it('serves', async () => {
 *   const h = await startHttpHarness();
 *   open.push(h, () => rm(dir, { recursive: true, force: true }));
 * });
 * ```
 */
import { afterEach } from 'vitest';

/** Something to close after a test: an object with `close()`, or a clean-up function. */
export type Closable = { close(): unknown } | (() => unknown);

/** A list whose entries are closed after each test, last first; returns the list to push onto. */
export function useCleanup<T extends Closable = Closable>(): T[] {
  const open: T[] = [];
  afterEach(async () => {
    while (open.length > 0) {
      const next = open.pop()!;
      await (typeof next === 'function' ? next() : next.close());
    }
  });
  return open;
}
