import { existsSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { frameworksFrom } from './test/recipes/frameworks.js';
import { LongPolesFirst } from './test/support/long-poles-first.js';

/**
 * Test files that bound a time from above on a short scale (a lease handed over within its grace,
 * a refusal within half a second, a hostile form answered within 100 ms). They run after the
 * rest, one file at a time, so no other file's load moves their clocks and their bounds stay
 * honest. A file whose bounds are seconds wide, or only from below, does not belong here.
 */
const APART = [
  'test/engine/list-bounds.test.ts',
  'test/engine/wait-fairness.test.ts',
  'test/engine/waits.test.ts',
  'test/http/fetch-face-done.test.ts',
  'test/http/pipeline.test.ts',
  'test/http/watcher-load.test.ts',
  'test/reliability/http-abuse.test.ts',
  'test/sess/client.test.ts',
  'test/sess/node-transport.test.ts',
  'test/store/file-grace.test.ts',
  'test/store/file-lease.test.ts',
  'test/testing/hostile-form.test.ts',
  'test/testing/wait-expiry.test.ts',
];

/**
 * Files whose verdict does not depend on the Node that runs them: `.ci/run` runs them on Node 20
 * only and leaves them out of its runs on the other Nodes (which set `SESS_MCP_OTHER_NODE`). The
 * strict-consumer check is TypeScript's compile of the declarations, and its three compiles are the
 * costliest file of the suite; the examples' check is a compile too, in a project installed from
 * the packed tarball. The README's install lines are checked against the packed tarball and the
 * README's words (npm's install, Claude Code's `mcp add`): what they show is in the tarball
 * and the README, whatever Node runs them. The retention bounds count what 20 000 writes and
 * prunes leave through the stores' own code, the same on every Node; the prune contract suite
 * still runs on each. The two-instance file holds PostgreSQL's cap and quota across two processes:
 * in the other Nodes' runs (twelve workers on two cores at once) its 150 concurrent creates went
 * past the instances' 20 s query timeout. The two file-fencing files check the order of a lease
 * handover's writes, each step paused by the store's own write seam: the same `fs` calls the file
 * store's contract suite (`file.test.ts`) makes on every Node, and the longest files of the other
 * Nodes' runs (about 70 and 55 s there).
 */
const ONE_NODE = [
  'test/package/strict-consumer.test.ts',
  'test/package/examples-compile.test.ts',
  'test/package/install-lines.test.ts',
  'test/store/retention-bounds.test.ts',
  'test/store/two-instances.test.ts',
  'test/store/file-fencing.test.ts',
  'test/store/file-fencing-engine.test.ts',
];
const OTHER_NODE = process.env.SESS_MCP_OTHER_NODE === '1';

/**
 * The hosted-agent wake recipes (`examples/wake-*.ts`, tested in `test/recipes/`) drive agent
 * frameworks, one of which (the OpenAI Agents SDK) needs Node 22 and is installed under
 * `.tmp/recipes` rather than as a devDependency (`test/recipes/frameworks.ts`). The host matrix's
 * row of that SDK (`test/hosts/openai-agents.test.ts`) needs it too, and its Mastra row
 * (`test/hosts/mastra.test.ts`) needs Node 22.13, installed there too. They never run in the default
 * projects: `.ci/run` runs them in a step of their own on Node 22, with `SESS_MCP_RECIPES=1`, which
 * makes the `recipes` project the only one.
 */
const RECIPES = [
  'test/recipes/**/*.test.ts',
  'test/hosts/openai-agents.test.ts',
  'test/hosts/mastra.test.ts',
];
const RECIPES_RUN = process.env.SESS_MCP_RECIPES === '1';

// A renamed file left in a list would run in neither group, or on every Node: refuse it.
for (const file of [...APART, ...ONE_NODE]) {
  if (!existsSync(new URL(file, import.meta.url))) {
    throw new Error(`vitest.config.ts: a list names ${file}, which does not exist`);
  }
}

/**
 * Most test files wait: on child processes (hosts, stdio servers, crash cells), on a browser, on
 * PostgreSQL, on held waits of the local runtime. They run side by side, more of them than there
 * are cores, because each spends most of its time waiting.
 *
 * Six, also for `npm test`: with eight, a fresh-clone run took as long (655 s) and two CLI hosts'
 * first flows, started together with the other long files, did not make their first call within
 * the person's two minutes.
 */
const SIDE_BY_SIDE_WORKERS = 6;

export default defineConfig({
  // The shipped examples import the package by its name; `paths` in tsconfig.json maps each name
  // to its entry's source, here as for the type check, esbuild and Bun.
  resolve: { tsconfigPaths: true },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker runs its files one after another in one module cache: each file no longer pays
    // for importing the package and its dependencies again (about 0.6 CPU-seconds a file here).
    // So no file may replace a module or a global for the files after it, which
    // test/package/shared-workers.test.ts checks.
    isolate: false,
    sequence: { sequencer: LongPolesFirst },
    projects: RECIPES_RUN
      ? [
          {
            extends: true,
            // The Node 22 frameworks resolve from `.tmp/recipes`.
            plugins: [frameworksFrom()],
            test: { name: 'recipes', include: RECIPES, maxWorkers: 3 },
          },
        ]
      : [
          {
            extends: true,
            test: {
              name: 'side-by-side',
              include: ['test/**/*.test.ts'],
              exclude: [...configDefaults.exclude, ...RECIPES, ...APART, ...(OTHER_NODE ? ONE_NODE : [])],
              maxWorkers: SIDE_BY_SIDE_WORKERS,
              sequence: { groupOrder: 0 },
            },
          },
          {
            extends: true,
            test: {
              name: 'apart',
              include: APART,
              maxWorkers: 1,
              sequence: { groupOrder: 1 },
            },
          },
        ],
  },
});
