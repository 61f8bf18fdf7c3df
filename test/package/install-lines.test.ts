/**
 * The README's install lines run exactly as written, against the packed tarball: the package is
 * packed as npm would publish it and installed into a fresh project (its dependencies from the
 * registry; `test/support/packed-project.ts`), and there:
 *
 * - the `command` and `args` of the README's client configuration (`npx -y @sess.si/mcp`) are
 *   started by an MCP client, which lists the tools and starts a request against the local
 *   runtime;
 * - the README's Claude Code line (`claude mcp add … -- npx -y @sess.si/mcp`) is run by a real
 *   Claude Code, whose `claude mcp list` must find the server connected;
 * - `npx sess-mcp local`, the README's way to start the local runtime, prints its origin;
 * - the README's `node:http` mount of the HTTP handler, copied from README.md with only the two
 *   changes its own comment asks for against the local runtime (and a free port), runs in the
 *   project against that runtime, and an MCP client lists the tools and starts a request.
 *
 * The lines are read from README.md, never written here.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/index.js';
import { requireHost } from '../hosts/matrix.js';
import { approveSurface, ok } from '../http/harness.js';
import { connectModern } from '../http/helpers.js';
import { type PackedProject, packedProject } from '../support/packed-project.js';
import { repoRoot } from '../support/repo-files.js';

const run = promisify(execFile);
const KEY = 'sk_test_install_lines_not_a_real_key';
const claude = requireHost(
  'Claude Code',
  '.tmp/claude-code-2.1.332/node_modules/@anthropic-ai/claude-code-linux-x64/claude',
  'npm install --prefix .tmp/claude-code-2.1.332 @anthropic-ai/claude-code@2.1.332',
);

/** The README's fenced blocks of `language`, in order. */
function fences(readme: string, language: string): string[] {
  return [...readme.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((m) => m[1]!);
}

/** A shell line as words (the README's lines quote nothing). */
function words(line: string): string[] {
  expect(line, 'a README install line with quotes: split it as a shell would').not.toMatch(/["'\\$]/);
  return line.trim().split(/\s+/);
}

/** A port free on 127.0.0.1 a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `npx sess-mcp local`, the README's way to start the local runtime, in the project: the
 * variables it prints, and how to stop it.
 */
async function startLocal(): Promise<{ vars: Record<string, string>; stop(): Promise<void> }> {
  const command = /`(npx sess-mcp local)`/.exec(readme)?.[1];
  expect(command, 'the README names `npx sess-mcp local`').toBeDefined();
  const [npx, ...args] = words(command!);
  // Its own process group: npx runs the command as its child, and both must stop at the end.
  const child: ChildProcess = spawn(npx!, args, {
    cwd: project,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
  };
  try {
    const vars = await new Promise<Record<string, string>>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const found = Object.fromEntries(
          [...out.matchAll(/^(SESS_[A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]),
        );
        if (
          /^http:\/\/127\.0\.0\.1:\d+$/.test(found.SESS_API_ORIGIN ?? '') &&
          found.SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST
        ) {
          resolve(found);
        }
      });
      child.once('exit', (code) => reject(new Error(`npx sess-mcp local exited with ${code}`)));
    });
    return { vars, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

let packed: PackedProject | undefined;
let project = '';
let readme = '';
/** What every command of the fresh project runs with: no key but the test's, a private state. */
let env: Record<string, string> = {};

beforeAll(async () => {
  readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
  packed = await packedProject('sess-mcp-install-');
  project = packed.project;
  env = {
    PATH: process.env.PATH!,
    HOME: join(packed.dir, 'home'),
    SESS_API_KEY: KEY,
    SESS_MCP_STATE_DIR: join(packed.dir, 'state'),
  };
  await run('mkdir', ['-p', env.HOME!]);
}, 240_000);

afterAll(async () => {
  await packed?.remove();
});

describe("the README's install lines, against the packed tarball in a fresh project", () => {
  it("the client configuration's command starts the stdio server: an MCP client lists the tools and starts a request", async () => {
    const config = fences(readme, 'json')
      .map((text) => JSON.parse(text) as { mcpServers?: Record<string, { command: string; args: string[] }> })
      .find((parsed) => parsed.mcpServers?.sess !== undefined);
    const server = config?.mcpServers?.sess;
    expect(server, 'the README shows an mcpServers entry named sess').toBeDefined();
    expect([server!.command, ...server!.args].join(' ')).toBe('npx -y @sess.si/mcp');
    expect(readme).toContain(
      `run \`${[server!.command, ...server!.args].join(' ')}\` as a local (stdio) server`,
    );

    // Against the local runtime, with the variables it prints (the README's way to try it).
    const local = await startLocal();
    const client = new Client({ name: 'install-lines', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: server!.command,
      args: server!.args,
      cwd: project,
      env: { ...env, ...local.vars },
      stderr: 'pipe',
    });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
      const created = await ok(client, 'sess_request', { interaction: approveSurface });
      expect(created.state).toBe('waiting');
      expect(created.humanUrl?.startsWith(`${local.vars.SESS_API_ORIGIN}/`)).toBe(true);
    } finally {
      await client.close();
      await local.stop();
    }
  }, 60_000);

  it.skipIf(claude === undefined)(
    'the Claude Code line adds the server, and Claude Code finds it connected',
    async () => {
      const line = fences(readme, 'sh')
        .flatMap((block) => block.split('\n'))
        .find((text) => text.startsWith('claude mcp add'));
      expect(line, 'the README shows a `claude mcp add` line').toBeDefined();
      const [, ...args] = words(line!);
      expect(args.slice(args.indexOf('--') + 1).join(' ')).toBe('npx -y @sess.si/mcp');
      const claudeEnv = {
        ...env,
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      };
      await run('git', ['init', '-q'], { cwd: project });
      await run(claude!, args, { cwd: project, env: claudeEnv });
      const { stdout } = await run(claude!, ['mcp', 'list'], {
        cwd: project,
        env: claudeEnv,
        timeout: 90_000,
      });
      expect(stdout).toMatch(/^sess: npx -y @sess\.si\/mcp - ✔ Connected$/m);
    },
    120_000,
  );

  it('npx sess-mcp local starts the local runtime and prints its origin', async () => {
    const local = await startLocal();
    try {
      // It answers there: an unknown path is a 404 of the runtime, not a refused connection.
      expect((await fetch(`${local.vars.SESS_API_ORIGIN}/not-a-path`)).status).toBe(404);
    } finally {
      await local.stop();
    }
  }, 60_000);

  it("the README's node:http mount, run in the project against `sess-mcp local`, serves the tools", async () => {
    const sample = fences(readme, 'ts').find(
      (text) => text.includes("import http from 'node:http'") && text.includes('handler.node(req, res)'),
    );
    expect(sample, 'the README shows the node:http mount').toBeDefined();
    const local = await startLocal();
    const port = await freePort();
    try {
      // The two changes the sample's own comment asks for against the local runtime, and a free
      // port: nothing else is edited, so a changed sample fails here rather than drifting.
      const forLocal =
        /^(\s*)\/\/\s+sessOrigin: 'http:\/\/127\.0\.0\.1:<its port>', allowInsecureLocalhost: true,$/m;
      expect(sample).toMatch(forLocal);
      expect(sample).toContain(".listen(8080, '127.0.0.1')");
      const code = sample!
        .replace(forLocal, `$1sessOrigin: '${local.vars.SESS_API_ORIGIN}', allowInsecureLocalhost: true,`)
        .replace(".listen(8080, '127.0.0.1')", `.listen(${port}, '127.0.0.1')`);
      await writeFile(join(project, 'mount.mjs'), code);
      const token = 'readme-mount-token-0123456789';
      const server = spawn(process.execPath, ['mount.mjs'], {
        cwd: project,
        env: {
          ...env,
          MCP_TOKEN: token,
          SESS_API_KEY: local.vars.SESS_API_KEY!,
          SESS_WORKSPACE_ID: local.vars.SESS_EXPECTED_WORKSPACE_ID!,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      server.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      try {
        const url = `http://127.0.0.1:${port}/mcp`;
        await expect
          .poll(
            () =>
              fetch(url).then(
                (r) => r.status,
                () => 0,
              ),
            { timeout: 20_000, interval: 100 },
          )
          .not.toBe(0);
        const client = await connectModern(url, { authorization: `Bearer ${token}` });
        try {
          const { tools } = await client.listTools();
          expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
          const created = await ok(client, 'sess_request', { interaction: approveSurface });
          expect(created.state).toBe('waiting');
          expect(created.humanUrl?.startsWith(`${local.vars.SESS_API_ORIGIN}/`)).toBe(true);
          const read = await ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 0 });
          expect(read.state).toBe('waiting');
        } finally {
          await client.close();
        }
      } catch (error) {
        throw new Error(`${(error as Error).message}\nthe mount's stderr:\n${stderr}`);
      } finally {
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGTERM');
        await exited;
      }
    } finally {
      await local.stop();
    }
  }, 90_000);
});
