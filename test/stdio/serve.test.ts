/**
 * `serveSessMcpStdio` in-process with its own streams and environment (the embedding path): the
 * options replace `process.stdin/stdout/stderr` and `process.env`, the protocol goes to the given
 * stdout only, diagnostics to the given stderr, and `close()` ends the connection.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { type SessMcpStdioServer, serveSessMcpStdio } from '../../src/stdio/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit } from '../support/audit.js';
import { tempStateDir } from './harness.js';

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

function rpc(stdin: PassThrough, stdout: PassThrough) {
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  const lines: string[] = [];
  let buffer = '';
  stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      lines.push(line);
      const message = JSON.parse(line) as Record<string, unknown>;
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
  });
  let id = 0;
  return {
    lines,
    request(method: string, params: Record<string, unknown>) {
      id += 1;
      const current = id;
      return new Promise<Record<string, unknown>>((resolve) => {
        waiting.set(current, resolve);
        stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: current, method, params })}\n`);
      });
    },
    notify(method: string) {
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
    },
  };
}

async function serve(env: Record<string, string>): Promise<{
  server: SessMcpStdioServer;
  client: ReturnType<typeof rpc>;
  stderr: string[];
}> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr: string[] = [];
  const server = serveSessMcpStdio({ env, stdin, stdout, stderr: { write: (c: string) => stderr.push(c) } });
  cleanup.push(() => server.close());
  const client = rpc(stdin, stdout);
  await client.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'in-process', version: '0' },
  });
  client.notify('notifications/initialized');
  return { server, client, stderr };
}

const surface = {
  mode: 'interactive',
  title: 'Deploy now?',
  source: { kind: 'sess_surface', components: [] },
  actions: [{ id: 'go', label: 'Deploy', intent: 'approve' }],
};

describe('serveSessMcpStdio with its own streams and environment', () => {
  it('serves the tools from the given env, writing protocol to the given stdout only', async () => {
    const sess: LocalSess = await startLocalSess();
    cleanup.push(() => sess.close());
    const state = await tempStateDir();
    cleanup.push(() => state.remove());
    const audit = createSecretsAudit();
    audit.secret(sess.apiKey, 'api key');

    const { client, stderr, server } = await serve({
      SESS_API_KEY: sess.apiKey,
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_STATE_DIR: state.dir,
    });
    audit.watch(stderr, 'stderr');
    const created = await client.request('tools/call', {
      name: 'sess_request',
      arguments: { interaction: surface },
    });
    const interaction = (
      created.result as { structuredContent: { interaction: { humanUrl: string; state: string } } }
    ).structuredContent.interaction;
    expect(interaction.state).toBe('waiting');
    audit.url(interaction.humanUrl, 'sess link');
    expect(sess.stats.of().sessionsCreated).toBe(1);
    expect(client.lines.every((line) => JSON.parse(line).jsonrpc === '2.0')).toBe(true);
    expect(stderr.join('')).toContain('"event":"server_started"');
    await server.close();
    expect(stderr.join('')).toContain('"event":"server_closed"');
    audit.assertClean();
  });

  it.each([
    [{ env: null }, 'env'],
    [{ stdin: {} }, 'stdin'],
    [{ stdout: 'x' }, 'stdout'],
    [{ stderr: {} }, 'stderr'],
  ])('refuses bad options %j with a TypeError naming the option', (options, name) => {
    expect(() => serveSessMcpStdio(options as never)).toThrow(TypeError);
    expect(() => serveSessMcpStdio(options as never)).toThrow(
      new RegExp(`^serveSessMcpStdio: option "${name}" must be `),
    );
  });

  it('answers NOT_CONFIGURED when the given env has no key, even if process.env had one', async () => {
    const state = await tempStateDir();
    cleanup.push(() => state.remove());
    const previous = process.env.SESS_API_KEY;
    process.env.SESS_API_KEY = 'sk_process_env_must_not_be_used';
    cleanup.push(async () => {
      if (previous === undefined) delete process.env.SESS_API_KEY;
      else process.env.SESS_API_KEY = previous;
    });
    const { client } = await serve({ SESS_MCP_STATE_DIR: state.dir });
    const result = await client.request('tools/call', {
      name: 'sess_request',
      arguments: { interaction: surface },
    });
    const error = (result.result as { isError: boolean; structuredContent: { error: { code: string } } })
      .structuredContent.error;
    expect(error.code).toBe('NOT_CONFIGURED');
  });
});
