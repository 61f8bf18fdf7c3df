/**
 * A fresh project with the package installed from its packed tarball, as a user's project gets it
 * from the registry: `npm pack` (what npm would publish), then `npm install` of that tarball and
 * its dependencies, in a new temporary directory outside the repository. The tests that hold the
 * published package to what the README and the examples promise start here.
 *
 * It runs nothing in the project and judges nothing: each test does that.
 *
 * @example
 * ```ts
 * const packed = await packedProject('sess-mcp-install-');
 * await run('npx', ['-y', '@sess.si/mcp', '--help'], { cwd: packed.project });
 * await packed.remove();
 * ```
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './repo-files.js';

const run = promisify(execFile);

/** A fresh project holding the packed package. */
export interface PackedProject {
  /** The temporary directory: the tarball, the project and anything else a test puts there. */
  dir: string;
  /** The project: a `package.json` of its own and a `node_modules` with the package installed. */
  project: string;
  /** Remove the whole temporary directory. */
  remove(): Promise<void>;
}

/** What the fresh project is made with. */
export interface PackedProjectOptions {
  /** Its `package.json` besides `name` and `private`, e.g. `{ type: 'module' }`. */
  manifest?: Record<string, unknown>;
  /** More packages installed beside the tarball, as `name@version`. */
  extra?: readonly string[];
}

/**
 * Pack the repository as npm would publish it and install the tarball, with `extra`, into a new
 * project below a temporary directory named with `prefix`.
 */
export async function packedProject(
  prefix: string,
  options: PackedProjectOptions = {},
): Promise<PackedProject> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const project = join(dir, 'project');
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
    cwd: repoRoot,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  await mkdir(project, { recursive: true });
  const manifest = { name: 'fresh-project', private: true, ...options.manifest };
  await writeFile(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const install = [
    'install',
    '--no-audit',
    '--no-fund',
    '--prefer-offline',
    join(dir, packed!.filename),
    ...(options.extra ?? []),
  ];
  // A registry install can time out once: run it again once.
  await run('npm', install, { cwd: project }).catch(() => run('npm', install, { cwd: project }));
  return { dir, project, remove: () => rm(dir, { recursive: true, force: true }) };
}
