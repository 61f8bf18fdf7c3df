/**
 * The local Sess runtime's lifecycle for a suite, in the style of `useSecretsAudit()`: one runtime
 * started before the suite's tests (or before each, with `{ each: true }`) and closed after them;
 * and {@link answerStatus}, the page's status for an answer whichever it is.
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
import type { Answer } from '../../src/core/model/surface.js';
import {
  AnswerRefusedError,
  type LocalSess,
  type LocalSessOptions,
  startLocalSess,
} from '../../src/testing/index.js';

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

/**
 * The page's status for `answer` posted as it is: 303 when it was accepted, else the refusal's
 * status (409, 410, 422). For a race whose either outcome is right; a test that knows the outcome
 * passes `{ expectStatus }` to `submitAnswer` instead.
 */
export async function answerStatus(sess: LocalSess, humanUrl: string, answer: Answer): Promise<number> {
  try {
    return (await sess.submitAnswer(humanUrl, answer)).status;
  } catch (error) {
    if (error instanceof AnswerRefusedError) return error.status;
    throw error;
  }
}
