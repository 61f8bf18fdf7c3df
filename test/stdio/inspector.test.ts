/**
 * Outside check over stdio: `@modelcontextprotocol/inspector-cli` 1.0.3 starts `sess-mcp` itself
 * (the bin built from source) as a stdio server, runs `tools/list`, creates a question with
 * `tools/call sess_request`, and reads the person's verified answer with `sess_response`. Each
 * CLI call is its own server process over one state directory, as separate agent turns would be.
 *
 * The CLI is found under `.tmp/conformance/node_modules/inspcli` (`.ci/run` installs it); when it
 * is missing the test says so and skips, except under `CI=true`, where it fails (see
 * `test/support/outside-tool.ts`).
 */
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/index.js';
import { startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface } from '../http/harness.js';
import { createSecretsAudit } from '../support/audit.js';
import { printedInteraction, printedJson, runInspector, toolCall } from '../support/inspector-cli.js';
import { findOutsideTool, INSPECTOR_CLI_TOOL } from '../support/outside-tool.js';
import { buildSessMcpBin, cleanBuilds, tempStateDir } from './harness.js';

const cli = findOutsideTool(INSPECTOR_CLI_TOOL) ?? '';
const available = cli !== '';

afterAll(() => cleanBuilds());

// As installed, it reads `../package.json` from its working directory: run it in its own folder.
const run = (args: string[]) =>
  runInspector(process.execPath, [cli, ...args], { cwd: dirname(cli), env: { PATH: process.env.PATH } });

describe('inspector-cli 1.0.3 over stdio', () => {
  it.skipIf(!available)(
    'tools/list, then tools/call sess_request and sess_response against the sess-mcp bin',
    { timeout: 120_000 },
    async () => {
      const sess = await startLocalSess();
      const state = await tempStateDir();
      const audit = createSecretsAudit();
      try {
        audit.secret(sess.apiKey, 'sess api key');
        const bin = await buildSessMcpBin();
        // The CLI gives a stdio server only a small default environment: pass ours through `env`.
        const target = [
          'env',
          `SESS_API_KEY=${sess.apiKey}`,
          `SESS_API_ORIGIN=${sess.origin}`,
          'SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1',
          `SESS_MCP_STATE_DIR=${state.dir}`,
          process.execPath,
          bin,
        ];
        const listed = await run([...target, '--method', 'tools/list']);
        expect(listed.code, listed.err).toBe(0);
        const names = (printedJson(listed.out).tools as Array<{ name: string }>).map((t) => t.name).sort();
        expect(names).toEqual([...TOOL_NAMES].sort());

        const created = await run([
          ...target,
          ...toolCall('sess_request', `interaction=${JSON.stringify(approveSurface)}`),
        ]);
        expect(created.code, created.err).toBe(0);
        const interaction = printedInteraction(created.out);
        audit.url(interaction.humanUrl, 'sess link');

        await sess.submitAnswer(interaction.humanUrl, approveAnswer);
        audit.answer(approveAnswer.values, 'answer');
        const answered = await run([
          ...target,
          ...toolCall('sess_response', `handle=${interaction.handle}`, 'revision=1', 'wait_ms=2000'),
        ]);
        expect(answered.code, answered.err).toBe(0);
        expect(printedJson(answered.out)).toMatchObject({
          structuredContent: {
            interaction: { state: 'answered', response: { verified: true, values: approveAnswer.values } },
          },
        });
        // Three server processes, one Session: the handle carried over through the state directory.
        expect(sess.stats.of().sessionsCreated).toBe(1);
        audit.text(listed.err + created.err + answered.err, 'inspector and server stderr');
        audit.assertClean();
      } finally {
        await state.remove();
        await sess.close();
      }
    },
  );
});
