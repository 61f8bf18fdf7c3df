/**
 * `npm run bench`: bundles the benchmark entry points (bench/*.ts and the sources they import)
 * with esbuild and runs the main one, so it works with no build step and no TypeScript runner.
 *
 * Bundles go under node_modules/.cache/sess-bench/<pid>/ so two runs never share a file; packages
 * stay external. This script measures nothing itself and reads none of the flags (`--only`,
 * `--runs`, …): bench/main.ts does, through bench/lib/args.ts.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'node_modules', '.cache', 'sess-bench', String(process.pid));
const entries = readdirSync(join(root, 'bench'))
  .filter((name) => name.endsWith('.ts'))
  .map((name) => ({ in: join(root, 'bench', name), out: name.replace(/\.ts$/, '') }));
// The real command, bundled from source the same way as the bare server it is compared with.
entries.push({ in: join(root, 'src', 'stdio', 'bin.ts'), out: 'sess-mcp' });

mkdirSync(out, { recursive: true });
await build({
  entryPoints: entries,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  outdir: out,
  outExtension: { '.js': '.mjs' },
  splitting: false,
});
process.env.SESS_BENCH_DIR = out;
process.env.SESS_BENCH_ROOT = root;
const cleanup = () => rmSync(out, { recursive: true, force: true });
process.on('exit', cleanup);
const main = process.argv[2]?.endsWith('.ts') ? process.argv[2].replace(/\.ts$/, '') : 'main';
await import(pathToFileURL(join(out, `${main}.mjs`)).href);
