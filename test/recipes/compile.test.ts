/**
 * The wake recipes type-check with `strict`, the OpenAI Agents SDK's types included: the
 * repository's `tsconfig.json` leaves out what imports that SDK (it is installed under
 * `.tmp/recipes`, not as a devDependency), and `test/recipes/tsconfig.json` adds it back, with
 * `paths` to the installed SDK, over both recipe examples and these tests.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/repo-files.js';
import { recipesRunnable } from './frameworks.js';

const run = promisify(execFile);

describe.skipIf(!recipesRunnable())('the wake recipes', () => {
  it('type-check with the frameworks installed for them', { timeout: 120_000 }, async () => {
    let output = '';
    try {
      await run(
        process.execPath,
        [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'test/recipes/tsconfig.json'],
        { cwd: repoRoot },
      );
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });
});
