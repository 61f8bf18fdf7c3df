/**
 * The published bin as npm installs it: `dist/bin/sess-mcp.js` (built by `npm test`'s `pretest`)
 * starts with `#!/usr/bin/env node`, is executable, is what package.json's `bin` names, and serves
 * every tool when run directly — the way `npx -y @sess.si/mcp` runs it.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/core/contract/schemas.js';
import { startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit } from '../support/audit.js';
import { findOutsideTool } from '../support/outside-tool.js';
import { tempStateDir } from './harness.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'dist', 'bin', 'sess-mcp.js');
const built =
  findOutsideTool({
    name: 'the built bin dist/bin/sess-mcp.js',
    paths: [BIN],
    install: 'npm run build (npm test runs it first, as pretest)',
  }) !== undefined;

describe.skipIf(!built)(
  `the published bin${built ? '' : ' (skipped: dist/bin/sess-mcp.js not built; run npm run build)'}`,
  () => {
    it('is package.json bin.sess-mcp, has the node shebang and is executable', async () => {
      const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
        bin: Record<string, string>;
      };
      expect(resolve(ROOT, pkg.bin['sess-mcp']!)).toBe(BIN);
      expect((await readFile(BIN, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
      if (process.platform !== 'win32') expect((await stat(BIN)).mode & 0o111).not.toBe(0);
    });

    it('serves every tool when executed directly', async () => {
      const sess = await startLocalSess();
      const state = await tempStateDir();
      const audit = createSecretsAudit();
      audit.secret(sess.apiKey, 'api key');
      const transport = new StdioClientTransport({
        command: BIN,
        env: {
          PATH: dirname(process.execPath),
          SESS_API_KEY: sess.apiKey,
          SESS_API_ORIGIN: sess.origin,
          SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
          SESS_MCP_STATE_DIR: state.dir,
        },
        stderr: 'pipe',
      });
      const stderr: string[] = [];
      transport.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')));
      audit.watch(stderr, 'published bin stderr');
      const client = new Client({ name: 'published-bin', version: '1.0.0' }, { capabilities: {} });
      try {
        await client.connect(transport);
        expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
        const result = await client.callTool({
          name: 'sess_ask',
          arguments: {
            question: 'Does the packaged bin work?',
            fields: [{ name: 'ok', label: 'OK?', type: 'boolean' }],
          },
        });
        const interaction = (result.structuredContent as { interaction: { state: string; humanUrl: string } })
          .interaction;
        expect(interaction.state).toBe('waiting');
        audit.url(interaction.humanUrl, 'sess link');
        expect(sess.stats.of().sessionsCreated).toBe(1);
      } finally {
        await client.close();
        await sess.close();
        await state.remove();
      }
      audit.assertClean();
    });
  },
);
