/**
 * The test files run in shared workers (`isolate: false` in `vitest.config.ts`): the files a worker
 * runs one after another share its module cache and its globals. So no test file may replace a
 * module or a global for the files after it: no `vi.mock`, `vi.doMock`, `vi.stubGlobal`,
 * `vi.stubEnv` or fake timers. A test that must change a global (`globalThis.fetch`,
 * `process.env`) puts it back in a `finally` or a clean-up, which this file checks as well.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoFiles, repoRoot } from '../support/repo-files.js';

const REPLACES_FOR_LATER_FILES = /\bvi\s*\.\s*(mock|doMock|stubGlobal|stubEnv|useFakeTimers)\s*\(/;
/** Where a test puts a global back: a `finally`, or a clean-up that runs after the test. */
const RESTORES = /\bfinally\b|cleanup\.push\(|afterEach\(|onTestFinished\(/;
/** An assignment to a global the next file would see. */
const SETS_A_GLOBAL = /(globalThis\.\w+|process\.env\.\w+|process\.env\[[^\]]+\])\s*=(?!=)/g;

/**
 * Files that never run in a test worker: each is bundled and started as a process of its own by
 * the tests that use it, so what it sets is that process's alone (the store worker shifts its own
 * wall clock for the clock-step cells).
 */
const OWN_PROCESS = new Set(['test/store/worker.ts']);

const testFiles = [...repoFiles('test', /\.(ts|mts|mjs)$/, new Set(['fixtures']))].filter(
  (file) => file !== 'test/package/shared-workers.test.ts' && !OWN_PROCESS.has(file),
);

describe('test files share their worker', () => {
  it('lists the test files it checks', () => {
    expect(testFiles.length).toBeGreaterThan(100);
  });

  it.each(testFiles)('%s replaces no module and no global for the files after it', (file) => {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    expect(REPLACES_FOR_LATER_FILES.exec(text)?.[0]).toBeUndefined();
    for (const set of text.matchAll(SETS_A_GLOBAL)) {
      const name = set[1]!;
      // An assignment inside a `finally` or a clean-up is the putting back itself.
      if (RESTORES.test(text.slice(Math.max(0, set.index - 160), set.index))) continue;
      const after = text.slice(set.index + set[0].length);
      const restore = RESTORES.exec(after);
      const putBack =
        restore !== null &&
        (after.slice(restore.index).includes(`${name} =`) ||
          after.slice(restore.index).includes(`delete ${name}`));
      expect(putBack, `${name} is set without being put back in a finally or a clean-up`).toBe(true);
    }
  });
});
