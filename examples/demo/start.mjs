/**
 * `npm start`: bundles the demo (`main.ts` and the sources it imports) with esbuild and runs it,
 * so it works right after `npm ci` with no build step and no TypeScript runner.
 *
 * The bundle is written under a name of its own and then renamed into place: two demos started
 * at once never read each other's half-written file. Packages stay external (they load from
 * node_modules); this script does nothing else.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cache = join(root, 'node_modules', '.cache', 'sess-demo');
const bundle = join(cache, 'main.mjs');
const own = join(cache, `main.${process.pid}.mjs`);

mkdirSync(cache, { recursive: true });
await build({
  entryPoints: [join(root, 'examples', 'demo', 'main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  outfile: own,
});
renameSync(own, bundle);
await import(pathToFileURL(bundle).href);
