/**
 * Configuration over a real stdio child: the key is read on the first tool call (missing →
 * `NOT_CONFIGURED` naming the variable), a bad variable gets a specific `NOT_CONFIGURED` at the
 * call while the server still starts, an origin it cannot reach for a reason that looks like
 * configuration (a name that does not resolve, a certificate for another name) is `NOT_CONFIGURED`
 * naming the origin and the cause, a rotated key makes earlier handles `BINDING_MISMATCH`,
 * another profile or origin sees `HANDLE_NOT_FOUND`, and the key is never written to disk.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/index.js';
import { useStdioStack } from '../support/stdio-stack.js';
import { startMisnamedTlsServer } from '../support/tls-server.js';
import { buildSessMcpBin, errorOf, interactionOf } from './harness.js';

const stdio = useStdioStack();

const surface = {
  mode: 'interactive',
  title: 'Is this fine?',
  source: { kind: 'sess_surface', components: [{ type: 'text', text: 'A small change.' }] },
  actions: [{ id: 'ok', label: 'Fine', intent: 'approve' }],
};

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  }
  return out;
}

/** A file removed since it was listed reads as `undefined`; any other failure stays one. */
function absentAsUndefined(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

describe('configuration of the stdio server', () => {
  it('starts without SESS_API_KEY and answers NOT_CONFIGURED naming it on the first call', async () => {
    const stack = await stdio.start({ client: 'v1', env: { SESS_API_KEY: undefined } });
    const { server, sess } = stack;
    expect(await server.listTools()).toHaveLength(TOOL_NAMES.length);
    const error = errorOf(await server.callTool('sess_request', { interaction: surface }));
    expect(error.code).toBe('NOT_CONFIGURED');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('SESS_API_KEY');
    expect(sess.stats.of().sessionsCreated).toBe(0);
    // The owner reading the host's log of the server's stderr learns it at start, in words.
    expect(server.stderr()).toMatch(
      /^sess-mcp: SESS_API_KEY is not set: every tool call will answer NOT_CONFIGURED/m,
    );
  });

  it('refuses an unexpanded placeholder as the key, saying so at start and at the call, never repeating it', async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal a host left unexpanded.
    const stack = await stdio.start({ client: 'v1', env: { SESS_API_KEY: '${env:SESS_API_KEY}' } });
    const { server, sess } = stack;
    const error = errorOf(await server.callTool('sess_request', { interaction: surface }));
    expect(error.code).toBe('NOT_CONFIGURED');
    expect(error.message).toMatch(
      /^SESS_API_KEY holds a placeholder such as \$\{env:SESS_API_KEY\} that the host did not substitute/,
    );
    expect(server.stderr()).toMatch(/^sess-mcp: SESS_API_KEY holds a placeholder/m);
    expect(sess.stats.of().sessionsCreated).toBe(0);
    expect(sess.stats.requests.create ?? 0).toBe(0);
  });

  it('names each SESS_* variable it does not read at start, with the one probably meant, never a value', async () => {
    const values = ['https://origin-typo-value.example', 'work-profile-typo-value', 'unrelated-value-0001'];
    for (const value of values) stdio.audit.secret(value, "an unknown variable's value");
    const stack = await stdio.start({
      client: 'v1',
      env: { SESS_API_URL: values[0], SESS_MCP_PROFIL: values[1], SESS_SOMETHING_ELSE: values[2] },
    });
    const notes = stack.server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('sess-mcp: '));
    expect(notes).toEqual([
      'sess-mcp: SESS_API_URL is not a variable sess-mcp reads; it is ignored. Did you mean SESS_API_ORIGIN?',
      'sess-mcp: SESS_MCP_PROFIL is not a variable sess-mcp reads; it is ignored. Did you mean SESS_MCP_PROFILE?',
      'sess-mcp: SESS_SOMETHING_ELSE is not a variable sess-mcp reads; it is ignored.',
    ]);
    // Only a warning: the server serves.
    expect(interactionOf(await stack.server.callTool('sess_request', { interaction: surface })).state).toBe(
      'waiting',
    );
  });

  it.each([
    ['SESS_API_ORIGIN', 'https://user:pw-secret-origin@api.sess.si'],
    ['SESS_MCP_STATE_DIR', 'relative/state-dir-value'],
    ['SESS_MCP_MAX_WAIT_MS', '4500000000'],
    ['SESS_MCP_PROFILE', '../escape-profile'],
  ])('reports a bad %s as NOT_CONFIGURED at the call, naming it but not its value', async (name, value) => {
    stdio.audit.secret(value, `${name} value`);
    const stack = await stdio.start({ client: 'v2', env: { [name]: value } });
    const { server, sess } = stack;
    const error = errorOf(await server.callTool('sess_request', { interaction: surface }));
    expect(error.code).toBe('NOT_CONFIGURED');
    expect(error.message).toContain(name);
    expect(error.message).not.toContain(value);
    expect(server.stderr()).toContain(
      `"event":"config_invalid","code":"NOT_CONFIGURED","variable":"${name}"`,
    );
    expect(sess.stats.of().sessionsCreated).toBe(0);
  });

  it('refuses a plain-http origin without the testing flag', async () => {
    const stack = await stdio.start({
      client: 'v1',
      env: { SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: undefined },
    });
    const error = errorOf(await stack.server.callTool('sess_request', { interaction: surface }));
    expect(error.code).toBe('NOT_CONFIGURED');
    expect(error.message).toContain('SESS_API_ORIGIN');
    expect(stack.sess.stats.of().sessionsCreated).toBe(0);
  });

  it.each([
    ['a host name that does not resolve', 'https://sess-mcp-test.invalid', 'its host name does not resolve'],
    [
      'a TLS certificate it trusts (NODE_EXTRA_CA_CERTS) but for another name',
      'tls',
      'its TLS certificate is for another host name',
    ],
  ])(
    'an origin with %s: NOT_CONFIGURED naming it and the cause, with "do not retry"',
    async (_name, given, cause) => {
      const tls = given === 'tls' ? await startMisnamedTlsServer() : undefined;
      try {
        const origin = tls?.origin ?? given;
        const stack = await stdio.start({
          client: 'v1',
          env: {
            SESS_API_ORIGIN: origin,
            ...(tls === undefined ? {} : { NODE_EXTRA_CA_CERTS: tls.certFile }),
          },
        });
        const result = await stack.server.callTool('sess_request', { interaction: surface });
        const error = errorOf(result);
        expect(error.code).toBe('NOT_CONFIGURED');
        expect(error.retryable).toBe(false);
        expect(error.message).toContain(
          `Sess at ${origin} could not be reached while creating the link: ${cause}`,
        );
        expect(error.message).toContain('SESS_API_ORIGIN');
        expect((result.structuredContent as { next: string }).next).toMatch(/^Do not retry/);
        expect(tls?.requests() ?? 0).toBe(0);
      } finally {
        await tls?.close();
      }
    },
  );

  it('passes SESS_EXPECTED_WORKSPACE_ID to the client for a runtime without Sess-Workspace-Id', async () => {
    const stack = await stdio.start({ client: 'v1', sess: { workspaceHeader: false } });
    const { sess } = stack;
    const answer = async () => {
      const created = interactionOf(await stack!.server.callTool('sess_request', { interaction: surface }));
      stdio.audit.url(created.humanUrl!, 'sess link');
      await sess.submitAnswer(created.humanUrl!, { action: 'ok', values: {} });
      return stack!.server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
    };
    const refused = errorOf(await answer());
    expect(refused.code).toBe('NOT_CONFIGURED');
    expect(refused.message).toContain('SESS_EXPECTED_WORKSPACE_ID');
    stack.env = { ...stack.env, SESS_EXPECTED_WORKSPACE_ID: sess.workspaceId };
    await stack.restart();
    expect(interactionOf(await answer()).state).toBe('answered');
  });

  it('passes SESS_RECEIPT_ISSUER to the client when receipts name another issuer', async () => {
    const issuer = 'https://receipts.sess.example';
    const stack = await stdio.start({ client: 'v2', sess: { issuer } });
    const answer = async () => {
      const created = interactionOf(await stack!.server.callTool('sess_request', { interaction: surface }));
      stdio.audit.url(created.humanUrl!, 'sess link');
      await stack!.sess.submitAnswer(created.humanUrl!, { action: 'ok', values: {} });
      return stack!.server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
    };
    expect(errorOf(await answer()).code).toBe('VERIFICATION_FAILED');
    stack.env = { ...stack.env, SESS_RECEIPT_ISSUER: issuer };
    await stack.restart();
    expect(interactionOf(await answer()).state).toBe('answered');
  });

  it('makes earlier handles BINDING_MISMATCH after the key is rotated, and never writes the key', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const { sess } = stack;
    const created = interactionOf(await stack.server.callTool('sess_request', { interaction: surface }));
    stdio.audit.url(created.humanUrl!, 'sess link');

    for (const file of await filesUnder(stack.stateDir)) {
      // The lease's lock file goes once its grace ends: one gone by now held no key.
      const info = await stat(file).catch(absentAsUndefined);
      const text = await readFile(file, 'utf8').catch(absentAsUndefined);
      if (info === undefined || text === undefined) continue;
      expect(text).not.toContain(sess.apiKey);
      if (process.platform !== 'win32') expect(info.mode & 0o077).toBe(0);
    }

    const rotated = sess.createApiKey();
    stdio.audit.secret(rotated, 'rotated api key');
    stack.env = { ...stack.env, SESS_API_KEY: rotated };
    const server = await stack.restart();
    const error = errorOf(await server.callTool('sess_response', { handle: created.handle, revision: 1 }));
    expect(error.code).toBe('BINDING_MISMATCH');
    // The new key works for new interactions.
    expect(interactionOf(await server.callTool('sess_request', { interaction: surface })).state).toBe(
      'waiting',
    );
  });

  it('hides handles of another profile or origin (HANDLE_NOT_FOUND)', async () => {
    const stack = await stdio.start({ client: 'v2' });
    const created = interactionOf(await stack.server.callTool('sess_request', { interaction: surface }));
    stdio.audit.url(created.humanUrl!, 'sess link');

    stack.env = { ...stack.env, SESS_MCP_PROFILE: 'work' };
    let server = await stack.restart({ kill: false });
    expect(
      errorOf(await server.callTool('sess_response', { handle: created.handle, revision: 1 })).code,
    ).toBe('HANDLE_NOT_FOUND');

    // The same runtime under another spelling of loopback is another API origin.
    stack.env = {
      ...stack.env,
      SESS_MCP_PROFILE: 'default',
      SESS_API_ORIGIN: stack.sess.origin.replace('127.0.0.1', 'localhost'),
    };
    server = await stack.restart({ kill: false });
    expect(
      errorOf(await server.callTool('sess_response', { handle: created.handle, revision: 1 })).code,
    ).toBe('HANDLE_NOT_FOUND');
  });

  it('writes nothing but JSON-RPC to stdout (raw pipe, no client library)', async () => {
    const stack = await stdio.start({ client: 'v1', noServer: true });
    const bin = await buildSessMcpBin();
    const child = spawn(process.execPath, [bin], { env: stack.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: string[] = [];
    const err: string[] = [];
    child.stderr.on('data', (c: Buffer) => err.push(c.toString('utf8')));
    stdio.audit.watch(() => err.join(''), 'raw server stderr');
    const answered = new Map<number, (message: Record<string, unknown>) => void>();
    let buffer = '';
    child.stdout.on('data', (c: Buffer) => {
      buffer += c.toString('utf8');
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        out.push(line);
        const message = JSON.parse(line) as Record<string, unknown>;
        if (typeof message.id === 'number') answered.get(message.id)?.(message);
        newline = buffer.indexOf('\n');
      }
    });
    const send = (id: number | undefined, method: string, params: Record<string, unknown>) =>
      new Promise<Record<string, unknown>>((resolve) => {
        if (id !== undefined) answered.set(id, resolve);
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params })}\n`,
        );
        if (id === undefined) resolve({});
      });
    const init = await send(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '0' },
    });
    expect((init.result as { serverInfo: { name: string } }).serverInfo.name).toBe('@sess.si/mcp');
    await send(undefined, 'notifications/initialized', {});
    const list = await send(2, 'tools/list', {});
    expect((list.result as { tools: unknown[] }).tools).toHaveLength(TOOL_NAMES.length);
    const call = await send(3, 'tools/call', { name: 'sess_request', arguments: { interaction: surface } });
    const created = (call.result as { structuredContent: { interaction: { humanUrl: string } } })
      .structuredContent;
    stdio.audit.url(created.interaction.humanUrl, 'sess link');
    child.stdin.end();
    await new Promise((resolve) => child.on('close', resolve));
    expect(out.length).toBe(3);
    for (const line of out) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(buffer).toBe('');
  });

  it('reports an uncaught error as a fixed event, never its message or stack', async () => {
    const leaked = 'sk_uncaught_message_must_not_leak';
    stdio.audit.secret(leaked, 'uncaught error message');
    // A preloaded module throws from a signal handler once the server runs: an uncaught exception.
    const source = `process.on('SIGUSR2', () => { throw new Error('${leaked}'); });`;
    const preload = `data:text/javascript;base64,${Buffer.from(source).toString('base64')}`;
    const stack = await stdio.start({ client: 'v1', env: { NODE_OPTIONS: `--import=${preload}` } });
    process.kill(stack.server.pid, 'SIGUSR2');
    await stack.server.exited();
    expect(stack.server.stderr()).toContain('"event":"uncaught_exception"');
  });

  it('writes fixed events only to stderr', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const created = interactionOf(await stack.server.callTool('sess_request', { interaction: surface }));
    stdio.audit.url(created.humanUrl!, 'sess link');
    errorOf(
      await stack.server.callTool('sess_response', { handle: 'sess_h_unknown_handle_0000', revision: 1 }),
    );
    await stack.server.close();
    const lines = stack.server.stderr().trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      const event = JSON.parse(line) as Record<string, unknown>;
      expect(event.source).toBe('sess-mcp');
      expect(
        Object.keys(event).every((k) =>
          ['source', 'event', 'code', 'tool', 'state', 'ms', 'variable'].includes(k),
        ),
      ).toBe(true);
    }
    expect(stack.server.stderr()).not.toContain(created.handle);
  });
});
