/**
 * Outside check: the MCP Inspector CLI (`@modelcontextprotocol/inspector-cli` 1.0.3, a 2025-era
 * client) runs `tools/list` and `tools/call` against the handler mounted in `node:http`, and the
 * person's answer comes back through `sess_response`.
 *
 * The CLI is found at `.tmp/conformance/node_modules/inspcli` (install with `npm install --prefix
 * .tmp/conformance inspcli@npm:@modelcontextprotocol/inspector-cli@1.0.3`). Without it the suite
 * is skipped with that reason.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { useSecretsAudit } from '../support/audit.js';
import { approveAnswer, approveSurface, type HttpHarness, startHttpHarness } from './harness.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cliDir = join(root, '.tmp/conformance/node_modules/inspcli');
const cli = join(cliDir, 'build/index.js');
const audits = useSecretsAudit();
const open: HttpHarness[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

function inspector(
  url: string,
  token: string,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    // As installed, the CLI reads `../package.json` from its working directory: run it in its own folder.
    execFile(
      process.execPath,
      [cli, url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args],
      { cwd: join(cliDir, 'build'), timeout: 60_000 },
      (error, out, err) => resolve({ code: error === null ? 0 : 1, out, err }),
    );
  });
}

describe.skipIf(!existsSync(cli))('MCP Inspector CLI against handler.node', () => {
  it('tools/list, then tools/call sess_request and sess_response', { timeout: 120_000 }, async () => {
    const h = await startHttpHarness();
    open.push(h);
    const token = 'inspector-bearer-token-0123456789';
    h.principal(token);
    audits.current.secret(token, 'mcp bearer token');
    audits.current.secret(h.sess.apiKey, 'sess api key');
    audits.current.watch(h.events, 'http diagnostics');

    const listed = await inspector(h.server.url, token, ['--method', 'tools/list']);
    expect(listed.code, listed.err).toBe(0);
    const names = (JSON.parse(listed.out) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names.sort()).toEqual([
      'sess_ask',
      'sess_complete',
      'sess_publish',
      'sess_request',
      'sess_response',
    ]);

    const created = await inspector(h.server.url, token, [
      '--method',
      'tools/call',
      '--tool-name',
      'sess_request',
      '--tool-arg',
      `interaction=${JSON.stringify(approveSurface)}`,
    ]);
    expect(created.code, created.err).toBe(0);
    const interaction = (
      JSON.parse(created.out) as { structuredContent: { interaction: { handle: string; humanUrl: string } } }
    ).structuredContent.interaction;
    audits.current.url(interaction.humanUrl, 'sess link');
    audits.current.watch(() => created.err + listed.err, 'inspector stderr');

    await h.sess.submitAnswer(interaction.humanUrl, approveAnswer);
    audits.current.answer(approveAnswer.values, 'answer');
    const answered = await inspector(h.server.url, token, [
      '--method',
      'tools/call',
      '--tool-name',
      'sess_response',
      '--tool-arg',
      `handle=${interaction.handle}`,
      'revision=1',
      'wait_ms=2000',
    ]);
    expect(answered.code, answered.err).toBe(0);
    expect(JSON.parse(answered.out)).toMatchObject({
      structuredContent: { interaction: { state: 'answered', response: { values: approveAnswer.values } } },
    });
  });
});
