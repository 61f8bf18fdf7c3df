/**
 * The outside-tool helper the conformance, Inspector, Bun and published-bin suites use: it finds
 * a candidate file or a command on PATH, skips (returns undefined) when the tool is missing
 * outside CI, and fails with a clear message under CI=true.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findOutsideTool, isCi } from '../support/outside-tool.js';

const dir = mkdtempSync(join(tmpdir(), 'outside-tool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const present = join(dir, 'present-tool');
writeFileSync(present, '#!/bin/sh\n');
chmodSync(present, 0o755);
const missing = join(dir, 'missing-tool');
const spec = (paths: Array<string | undefined>, command?: string) => ({
  name: 'example-tool 1.0.0',
  paths,
  ...(command === undefined ? {} : { command }),
  install: 'npm install --prefix .tmp/example example-tool@1.0.0',
});

describe('findOutsideTool', () => {
  it('returns the first candidate that exists, skipping unset ones', () => {
    expect(findOutsideTool(spec([undefined, missing, present]), { CI: 'true' })).toBe(present);
  });

  it('falls back to the command on PATH', () => {
    expect(findOutsideTool(spec([missing], 'present-tool'), { PATH: `/nonexistent:${dir}` })).toBe(present);
  });

  it('returns undefined for a missing tool outside CI, so the suite can skip', () => {
    expect(findOutsideTool(spec([missing], 'missing-tool'), { PATH: dir })).toBeUndefined();
    expect(findOutsideTool(spec([missing]), { CI: 'false' })).toBeUndefined();
  });

  it('throws under CI=true for a missing tool, naming it, where it looked and how to install it', () => {
    expect(() => findOutsideTool(spec([missing], 'missing-tool'), { CI: 'true', PATH: dir })).toThrow(
      /^example-tool 1\.0\.0 is missing \(looked for .*missing-tool, missing-tool on PATH\)\. Under CI=true .* npm install --prefix \.tmp\/example example-tool@1\.0\.0$/,
    );
  });

  it.each([
    [{ CI: 'true' }, true],
    [{ CI: '1' }, true],
    [{ CI: '' }, false],
    [{ CI: 'false' }, false],
    [{ CI: '0' }, false],
    [{}, false],
  ])('isCi(%j) is %s', (env, expected) => {
    expect(isCi(env)).toBe(expected);
  });
});
