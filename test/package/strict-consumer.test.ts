/**
 * The built declarations pass a strict consumer: a project outside the repository imports every
 * entry of the package (from its `exports` map) and compiles with `strict`, `skipLibCheck: false`
 * and `exactOptionalPropertyTypes`, under `moduleResolution` `bundler`, `node16` as an ES module
 * and `node16` as CommonJS (which reads the `.d.cts` files). The repository's own type check skips
 * library checks, so only this catches a declaration that fails in a consumer's compiler (a type
 * too deep to instantiate, an interface that does not extend its base under exact optionals).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/repo-files.js';

const run = promisify(execFile);
let dir = '';
let entries: string[] = [];

beforeAll(async () => {
  const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, unknown>;
  };
  entries = Object.keys(manifest.exports)
    .filter((key) => key !== './package.json')
    .map((key) => `${manifest.name}${key.slice(1)}`);
  dir = await mkdtemp(join(tmpdir(), 'sess-mcp-strict-'));
  await mkdir(join(dir, 'node_modules', '@sess.si'), { recursive: true });
  // The package as a consumer's node_modules holds it; its dependencies resolve from the checkout.
  await symlink(repoRoot, join(dir, 'node_modules', '@sess.si', 'mcp'), 'dir');
  const imports = entries.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
  const list = entries.map((_, i) => `entry${i}`).join(', ');
  await writeFile(join(dir, 'consumer.ts'), `${imports}\nexport const entries = [${list}];\n`);
});

afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

/** Compile the consumer with `resolution` as an ES module or CommonJS project; tsc's output. */
async function compile(resolution: 'bundler' | 'node16', type: 'module' | 'commonjs'): Promise<string> {
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type }));
  const compilerOptions = {
    strict: true,
    skipLibCheck: false,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    target: 'ES2022',
    module: resolution === 'bundler' ? 'ESNext' : 'Node16',
    moduleResolution: resolution,
    types: ['node'],
    typeRoots: [join(repoRoot, 'node_modules', '@types')],
  };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
  try {
    await run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir]);
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

describe('a strict consumer of every entry', () => {
  it('imports every entry of the exports map', () => {
    expect(entries).toContain('@sess.si/mcp');
    expect(entries).toContain('@sess.si/mcp/http');
    expect(entries.length).toBeGreaterThanOrEqual(8);
  });

  it.each([
    ['bundler', 'module'],
    ['node16', 'module'],
    ['node16', 'commonjs'],
  ] as const)(
    'compiles with moduleResolution %s as %s: strict, skipLibCheck false, exactOptionalPropertyTypes',
    async (resolution, type) => {
      expect(await compile(resolution, type)).toBe('');
    },
    // A full compile of every declaration file: under a loaded CI run one took over 120 s.
    240_000,
  );
});
