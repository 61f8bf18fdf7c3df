/**
 * The local Sess runtime's lifecycle for a suite, in the style of `useSecretsAudit()`: one runtime
 * started before the suite's tests (or before each, with `{ each: true }`) and closed after them.
 *
 * @example
 * ```ts
 * const sess = useLocalSess();
 * it('creates a Session', async () => {
 *   const res = await fetch(`${sess().origin}/v1/sessions`, { … });
 * });
 * ```
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type LocalSess, type LocalSessOptions, startLocalSess } from '../../src/testing/index.js';

/** Options of {@link useLocalSess}: the runtime's own, plus whether each test gets a fresh one. */
export interface UseLocalSessOptions extends LocalSessOptions {
  /** A fresh runtime for every test instead of one for the suite. @default false */
  each?: boolean;
}

/** Start a local runtime for the suite (or each test); returns a getter for the running one. */
export function useLocalSess(options: UseLocalSessOptions = {}): () => LocalSess {
  const { each = false, ...runtime } = options;
  let current: LocalSess | undefined;
  const start = async () => {
    current = await startLocalSess(runtime);
  };
  const stop = async () => {
    await current?.close();
    current = undefined;
  };
  if (each) {
    beforeEach(start);
    afterEach(stop);
  } else {
    beforeAll(start);
    afterAll(stop);
  }
  return () => {
    if (current === undefined)
      throw new Error('useLocalSess: the runtime runs only inside the suite’s tests');
    return current;
  };
}
