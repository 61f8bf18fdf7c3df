/**
 * The README's install lines run exactly as written, against the packed tarball: the package is
 * packed as npm would publish it and installed into a fresh project (its dependencies from the
 * registry; `test/support/packed-project.ts`), and there:
 *
 * - the `command` and `args` of the README's client configuration (`npx -y @sess.si/mcp`) are
 *   started by an MCP client, which lists the tools;
 * - the README's Claude Code line (`claude mcp add … -- npx -y @sess.si/mcp`) is run by a real
 *   Claude Code, whose `claude mcp list` must find the server connected;
 * - `npx sess-mcp local`, the README's way to start the local runtime, prints its origin.
 *
 * The lines are read from README.md, never written here.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/index.js';
import { requireHost } from '../hosts/matrix.js';
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
  it("the client configuration's command starts the stdio server, and an MCP client lists the tools", async () => {
    const config = fences(readme, 'json')
      .map((text) => JSON.parse(text) as { mcpServers?: Record<string, { command: string; args: string[] }> })
      .find((parsed) => parsed.mcpServers?.sess !== undefined);
    const server = config?.mcpServers?.sess;
    expect(server, 'the README shows an mcpServers entry named sess').toBeDefined();
    expect([server!.command, ...server!.args].join(' ')).toBe('npx -y @sess.si/mcp');
    expect(readme).toContain(
      `run \`${[server!.command, ...server!.args].join(' ')}\` as a local (stdio) server`,
    );

    const client = new Client({ name: 'install-lines', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: server!.command,
      args: server!.args,
      cwd: project,
      env,
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    } finally {
      await client.close();
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
    try {
      const origin = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          const found = /^SESS_API_ORIGIN=(http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
          if (found) resolve(found[1]!);
        });
        child.once('exit', (code) => reject(new Error(`npx sess-mcp local exited with ${code}: ${out}`)));
      });
      // It answers there: an unknown path is a 404 of the runtime, not a refused connection.
      expect((await fetch(`${origin}/not-a-path`)).status).toBe(404);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(-child.pid!, 'SIGTERM');
        await exited;
      }
    }
  }, 60_000);
});
