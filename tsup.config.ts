import { existsSync } from 'node:fs';
import { defineConfig } from 'tsup';

// Every public subpath is one entry. An entry whose source does not exist yet is skipped,
// so the exports map and this list never need to change shape when it arrives.
const entries: Record<string, string> = {
  index: 'src/index.ts',
  schemas: 'src/schemas/index.ts',
  stdio: 'src/stdio/index.ts',
  sess: 'src/sess/index.ts',
  http: 'src/http/index.ts',
  'store/file': 'src/store/file/index.ts',
  'store/postgres': 'src/store/postgres/index.ts',
  testing: 'src/testing/index.ts',
  'bin/sess-mcp': 'src/stdio/bin.ts',
};

export default defineConfig({
  entry: Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file))),
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // No sourcemaps: they would point into src/, which the tarball does not ship.
  sourcemap: false,
  target: 'node20',
  platform: 'neutral',
  splitting: true,
  treeshake: true,
  external: [/^node:/, '@modelcontextprotocol/server', 'pg', 'valibot', '@valibot/to-json-schema'],
});
