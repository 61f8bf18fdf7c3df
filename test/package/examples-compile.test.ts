/**
 * The examples the package ships stand on their own: copied out of the packed tarball, installed in
 * a fresh project (`test/support/packed-project.ts`) with the packages they name besides this one,
 * every `examples/*.ts` and `examples/edge/*.ts` compiles with `strict` against the published
 * declarations. Before, they imported `../src/…`, which the tarball does not hold.
 *
 * The repository's own type check maps the package's names to its sources (`paths` in
 * `tsconfig.json`); this is the check against what a user installs.
 *
 * One shipped example is left out here: `wake-openai-agents.ts` imports the OpenAI Agents SDK,
 * which needs Node 22 (this file runs on Node 20) and is no devDependency. Its recipe test
 * type-checks it on Node 22 (`test/recipes/compile.test.ts`).
 */
import { execFile } from 'node:child_process';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PackedProject, packedProject } from '../support/packed-project.js';
import { repoFiles, repoRoot } from '../support/repo-files.js';

const run = promisify(execFile);

/** The shipped examples, as paths below the repository root. */
const shipped = [...repoFiles('examples', /\.ts$/, new Set(['demo', 'snippets']))].sort();

/** Shipped examples whose framework needs Node 22: compiled by their recipe test instead. */
const NODE22_EXAMPLES = ['examples/wake-openai-agents.ts'];

/** The examples compiled here. */
const compiled = shipped.filter((file) => !NODE22_EXAMPLES.includes(file));

/** The packages the examples import besides this one, at the versions this repository tests. */
async function examplePackages(): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  return [
    'pg',
    '@types/pg',
    'jose',
    '@types/node',
    'standardwebhooks',
    '@langchain/core',
    '@langchain/langgraph',
    '@langchain/mcp-adapters',
  ].map((name) => `${name}@${manifest.devDependencies[name]}`);
}

let packed: PackedProject | undefined;

beforeAll(async () => {
  packed = await packedProject('sess-mcp-examples-', {
    manifest: { type: 'module' },
    extra: await examplePackages(),
  });
  // A user copies an example out of the installed package into their own project.
  await cp(
    join(packed.project, 'node_modules', '@sess.si', 'mcp', 'examples'),
    join(packed.project, 'examples'),
    {
      recursive: true,
    },
  );
}, 240_000);

afterAll(async () => {
  await packed?.remove();
});

/** The `.ts` files below `dir`, relative to it. */
async function tsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((name) => name.endsWith('.ts')).sort();
}

describe('the shipped examples, in a fresh project', () => {
  it('are every example of the repository but the demo and the snippets', async () => {
    expect(shipped).toContain('examples/fetch-edge.ts');
    expect(shipped).toContain('examples/edge/worker-postgres.ts');
    const copied = (await tsFiles(join(packed!.project, 'examples'))).map((name) => `examples/${name}`);
    expect(copied).toEqual(shipped);
  });

  it.each(compiled)('%s imports the package by its name, never its sources', async (file) => {
    const source = await readFile(join(packed!.project, file), 'utf8');
    const specifiers = [...source.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    expect(specifiers.length).toBeGreaterThan(0);
    // Node's modules, another example beside it, this package by name, or a package installed above.
    const allowed =
      /^(node:[a-z/]+|\.\/[a-z-]+\.js|@sess\.si\/mcp(\/[a-z/]+)?|pg|jose|standardwebhooks|@langchain\/(core|langgraph|mcp-adapters)(\/[a-z_/]+)?)$/;
    expect(specifiers.filter((specifier) => !allowed.test(specifier))).toEqual([]);
  });

  it('compile with strict against the published declarations', { timeout: 120_000 }, async () => {
    const project = packed!.project;
    const compilerOptions = {
      target: 'ES2022',
      lib: ['ES2023', 'DOM', 'DOM.Iterable'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: compiled }));
    let output = '';
    try {
      await run(
        process.execPath,
        [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project],
        {
          cwd: project,
        },
      );
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  });
});
