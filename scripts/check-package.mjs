#!/usr/bin/env node
// Packs the package as npm would publish it, then runs publint and @arethetypeswrong/cli on that
// tarball. Part of `npm run check`; expects `npm run build` to have run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'sess-mcp-pack-'));
try {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { encoding: 'utf8' });
  const [{ filename }] = JSON.parse(out);
  const tarball = join(dir, filename);
  const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
  run('npx', ['--no-install', 'publint', '--strict', tarball]);
  // The bin entries are not importable modules; attw checks the exports map.
  run('npx', ['--no-install', 'attw', tarball, '--profile', 'node16']);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
