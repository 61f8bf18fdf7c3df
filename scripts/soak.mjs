/**
 * `npm run soak`: bundles the soak (test/soak/main.ts and the sources it imports) with esbuild,
 * as bench/run.mjs bundles the benchmarks, and runs it: three instances of the HTTP handler on
 * one PostgreSQL behind HAProxy, through faults. `--duration 60` (the default) or `--duration
 * 600` are passed on. Needs Debian's `haproxy` and PostgreSQL (scripts/ci-postgres.sh).
 *
 * The bundle goes to .tmp/soak-<pid>/main.mjs (packages stay external and resolve from this
 * checkout's node_modules; the soak finds the repository two folders up, as from its own folder
 * test/soak/) and is removed on exit.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.tmp', `soak-${process.pid}`);
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'test', 'soak', 'main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  outfile: join(out, 'main.mjs'),
});
process.env.SESS_SOAK_ROOT = root;
process.on('exit', () => rmSync(out, { recursive: true, force: true }));
await import(pathToFileURL(join(out, 'main.mjs')).href);
