/**
 * Where the wake recipes' agent frameworks come from. LangGraph (`@langchain/langgraph`,
 * `@langchain/core`, `@langchain/mcp-adapters`) runs on Node 20 and is a devDependency of the
 * repository. The OpenAI Agents SDK (`@openai/agents` and `openai`) needs Node ≥ 22, and Mastra
 * (`@mastra/mcp`, `@mastra/core`, of the host matrix) Node ≥ 22.13, so they are no
 * devDependencies: `.ci/run` installs it under `.tmp/recipes` (the versions below), and the recipe
 * tests run in their own step on Node 22.
 *
 * Two readers resolve those packages from `.tmp/recipes`: Vite, through {@link frameworksFrom} in
 * the `recipes` project of `vitest.config.ts`, and TypeScript, through `paths` in
 * `test/recipes/tsconfig.json`. What imports them: the wake recipes and their tests, and the host
 * matrix's OpenAI Agents SDK and Mastra rows (`test/hosts/openai-agents.test.ts`,
 * `test/hosts/mastra.test.ts`), which run in the same step.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';

/** The repository root. */
const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** The folder `.ci/run` installs the Node 22 frameworks into. */
export const RECIPES_PREFIX = join(ROOT, '.tmp', 'recipes');

/** The Node 22 frameworks, at the exact versions `.ci/run` installs; they resolve from there. */
export const NODE22_FRAMEWORKS: Readonly<Record<string, string>> = {
  '@openai/agents': '0.20.0',
  openai: '7.60.0',
  '@mastra/mcp': '2.0.0',
  '@mastra/core': '1.71.0',
};

/** Installed beside them, pinned too: the SDK's peer, at the repository's own version. */
const PINNED_PEERS: Readonly<Record<string, string>> = { zod: '4.6.7' };

/** The packages resolved from {@link RECIPES_PREFIX}. */
const FROM_PREFIX = Object.keys(NODE22_FRAMEWORKS);

/** Every pinned install under {@link RECIPES_PREFIX}. */
const PINNED = { ...NODE22_FRAMEWORKS, ...PINNED_PEERS };

/** The install line `.ci/run` runs (the message of a missing install names it). */
export const INSTALL_LINE = `npm install --prefix .tmp/recipes ${Object.entries(PINNED)
  .map(([name, version]) => `${name}@${version}`)
  .join(' ')}`;

/**
 * Vite resolves each of the Node 22 frameworks (and any subpath of one) as if it were imported
 * from `.tmp/recipes`: the package's own `exports` pick the file, and Node loads it from there,
 * its own dependencies with it.
 */
export function frameworksFrom(prefix = RECIPES_PREFIX): Plugin {
  const anchor = join(prefix, 'package.json');
  return {
    name: 'sess-mcp:recipe-frameworks',
    enforce: 'pre',
    resolveId(id, _importer, options) {
      if (!FROM_PREFIX.some((name) => id === name || id.startsWith(`${name}/`))) return null;
      return this.resolve(id, anchor, { ...options, skipSelf: true });
    },
  };
}

/**
 * Whether the recipes can run here: Node ≥ 22 and the frameworks installed at their versions.
 * Under `CI=true` a missing part fails the suite (`.ci/run` installs everything); elsewhere the
 * suite is skipped with the reason.
 */
export function recipesRunnable(): boolean {
  const problems: string[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  const minor = Number(process.versions.node.split('.')[1]);
  if (major < 22 || (major === 22 && minor < 13)) {
    problems.push(`Node ${process.versions.node} (the OpenAI Agents SDK needs Node 22, Mastra 22.13)`);
  }
  for (const [name, version] of Object.entries(PINNED)) {
    const manifest = join(RECIPES_PREFIX, 'node_modules', name, 'package.json');
    const installed = existsSync(manifest)
      ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
      : 'none';
    if (installed !== version) problems.push(`${name} ${installed} under .tmp/recipes, not ${version}`);
  }
  if (problems.length === 0) return true;
  const message = `the tests of the Node 22 frameworks (the wake recipes, the host matrix's OpenAI Agents SDK and Mastra rows) cannot run: ${problems.join('; ')}; install with: ${INSTALL_LINE}`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipping: ${message}`);
  return false;
}
