/**
 * Bundling a TypeScript entry point with esbuild for a test that runs it as a real child process:
 * the local runtime's CLI, an example, a store worker.
 *
 * @example
 * ```ts
 * const bin = await bundleForNode('src/stdio/bin.ts', join(dir, 'sess-mcp.mjs'));
 * const cli = spawn(process.execPath, [bin, 'local']);
 * ```
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { REPO_ROOT } from './outside-tool.js';

/** Bundle `entry` to `outfile` as one ESM file for Node; `extra` adds or overrides options. */
export async function bundleForNode(
  entry: string,
  outfile: string,
  extra: BuildOptions = {},
): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    ...extra,
  });
  return outfile;
}

/**
 * Bundle `entry` for Node 20 with its npm packages left external, to `name` inside the
 * repository's `node_modules/.cache/<cache>` (so those packages resolve from this checkout).
 */
export async function bundleWithPackages(
  entry: string,
  cache: string,
  name: string,
  extra: BuildOptions = {},
): Promise<string> {
  const dir = join(REPO_ROOT, 'node_modules', '.cache', cache);
  await mkdir(dir, { recursive: true });
  return bundleForNode(entry, join(dir, name), { target: 'node20', packages: 'external', ...extra });
}
