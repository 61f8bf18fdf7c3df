/**
 * The child-process harness of the stdio suite: builds `src/stdio/bin.ts` once per test file with
 * esbuild (into the git-ignored `.tmp/`, so the bundle resolves this checkout's `node_modules`),
 * then spawns it as a real `sess-mcp` process and connects a real MCP client over its stdio — the
 * v1 SDK client (`@modelcontextprotocol/sdk`) or the v2 client (`@modelcontextprotocol/client`).
 *
 * Every server's stderr is captured into the test's secrets audit. Nothing here is a double.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';
import type { SecretsAudit } from '../support/audit.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let built: Promise<string> | undefined;

/** Build the `sess-mcp` bin from source, once per test file. Returns the script path. */
export function buildSessMcpBin(): Promise<string> {
  built ??= (async () => {
    const outdir = join(ROOT, '.tmp', 'stdio-bin', `${process.pid}-${Date.now().toString(36)}`);
    await mkdir(outdir, { recursive: true });
    // Split like the published build, so the records commands load without the MCP SDK.
    await build({
      entryPoints: { 'sess-mcp': join(ROOT, 'src', 'stdio', 'bin.ts') },
      outdir,
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    });
    const outfile = join(outdir, 'sess-mcp.mjs');
    return outfile;
  })();
  return built;
}

/** Remove every bin this process built (call from `afterAll`). */
export async function cleanBuilds(): Promise<void> {
  if (built === undefined) return;
  const file = await built.catch(() => undefined);
  built = undefined;
  if (file !== undefined) await rm(dirname(file), { recursive: true, force: true });
}

/** A fresh state directory under the OS temp dir. */
export async function tempStateDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'sess-mcp-stdio-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The environment of a server under test: nothing inherited from the test process (so no real
 * `SESS_*` setting leaks in), plus what the test gives.
 */
export function serverEnv(vars: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(vars)) if (value !== undefined) env[name] = value;
  return env;
}

/** A tool call's result as both clients return it. */
export interface ToolCallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Options of one tool call. */
export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Request timeout in ms. @default 60 000 */
  timeout?: number;
}

/** A connected client with its server child process. */
export interface StdioSession {
  readonly era: 'v1' | 'v2' | 'v2-modern';
  /** The server's pid. */
  readonly pid: number;
  /** The server's stderr so far. */
  stderr(): string;
  listTools(): Promise<Array<{ name: string; inputSchema: unknown; description?: string; title?: string }>>;
  callTool(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<ToolCallResult>;
  /** The protocol version the v2 client negotiated (undefined for v1, which has no getter). */
  protocolVersion(): string | undefined;
  /** The server's `initialize` answer: name/version and instructions. */
  serverInfo(): { name?: string; version?: string; instructions?: string };
  /** Kill the server with SIGKILL and wait until it is gone. */
  kill(): Promise<void>;
  /** Close the client (stdin closes; the server exits by itself). Waits for the exit. */
  close(): Promise<void>;
  /** Resolves with the exit code/signal once the server process ends. */
  exited(): Promise<{ code: number | null; signal: string | null }>;
}

/** Options of {@link connectStdio}. */
export interface ConnectOptions {
  /** `v1`: SDK 1.x client; `v2`: 2.x client (2025 era); `v2-modern`: 2.x with version negotiation `auto`. */
  client?: 'v1' | 'v2' | 'v2-modern';
  env: Record<string, string>;
  audit: SecretsAudit;
}

function waitForExit(pid: number): Promise<{ code: number | null; signal: string | null }> {
  // The clients own the ChildProcess; poll the pid (cheap, no fixed sleep on the happy path).
  return new Promise((resolvePromise) => {
    const check = () => {
      try {
        process.kill(pid, 0);
        setTimeout(check, 10);
      } catch {
        resolvePromise({ code: null, signal: null });
      }
    };
    check();
  });
}

/** What both client generations offer, reduced to what the tests use. */
interface ClientLike {
  listTools(): Promise<{ tools: unknown[] }>;
  call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolCallResult>;
  getServerVersion(): { name?: string; version?: string } | undefined;
  getInstructions(): string | undefined;
  protocolVersion(): string | undefined;
  close(): Promise<void>;
}

function requestOptions(call: CallOptions) {
  return {
    timeout: call.timeout ?? 60_000,
    ...(call.signal === undefined ? {} : { signal: call.signal }),
    ...(call.onprogress === undefined ? {} : { onprogress: call.onprogress }),
  };
}

/** Spawn `sess-mcp` and connect a client to it over stdio. */
export async function connectStdio(options: ConnectOptions): Promise<StdioSession> {
  const bin = await buildSessMcpBin();
  const era = options.client ?? 'v1';
  const params = {
    command: process.execPath,
    args: [bin],
    env: options.env,
    stderr: 'pipe' as const,
    cwd: ROOT,
  };
  const chunks: string[] = [];
  options.audit.watch(() => chunks.join(''), 'server stderr');
  const onStderr = (chunk: Buffer) => chunks.push(chunk.toString('utf8'));

  let client: ClientLike;
  let pid: number;
  if (era === 'v1') {
    const transport = new V1StdioClientTransport(params);
    transport.stderr?.on('data', onStderr);
    const v1 = new V1Client({ name: 'stdio-test-v1', version: '1.0.0' }, { capabilities: {} });
    await v1.connect(transport);
    pid = transport.pid!;
    client = {
      listTools: () => v1.listTools(),
      call: async (name, args, call) =>
        (await v1.callTool({ name, arguments: args }, undefined, requestOptions(call))) as ToolCallResult,
      getServerVersion: () => v1.getServerVersion(),
      getInstructions: () => v1.getInstructions(),
      protocolVersion: () => undefined,
      close: () => v1.close(),
    };
  } else {
    const transport = new V2StdioClientTransport(params);
    transport.stderr?.on('data', onStderr);
    const v2 = new V2Client(
      { name: 'stdio-test-v2', version: '1.0.0' },
      era === 'v2-modern' ? { capabilities: {}, versionNegotiation: { mode: 'auto' } } : { capabilities: {} },
    );
    await v2.connect(transport);
    pid = transport.pid!;
    client = {
      listTools: () => v2.listTools(),
      call: async (name, args, call) =>
        (await v2.callTool({ name, arguments: args }, requestOptions(call))) as ToolCallResult,
      getServerVersion: () => v2.getServerVersion(),
      getInstructions: () => v2.getInstructions(),
      // Protected in 2.4.0; read for the era assertion only.
      protocolVersion: () =>
        (v2 as unknown as { _negotiatedProtocolVersion?: string })._negotiatedProtocolVersion,
      close: () => v2.close(),
    };
  }

  let exit: Promise<{ code: number | null; signal: string | null }> | undefined;
  const exited = () => {
    exit ??= waitForExit(pid);
    return exit;
  };
  return {
    era,
    pid,
    stderr: () => chunks.join(''),
    protocolVersion: () => client.protocolVersion(),
    listTools: async () => (await client.listTools()).tools as never,
    callTool: (name, args, call = {}) => client.call(name, args, call),
    serverInfo() {
      const info = client.getServerVersion();
      const instructions = client.getInstructions();
      return {
        ...(info?.name === undefined ? {} : { name: info.name }),
        ...(info?.version === undefined ? {} : { version: info.version }),
        ...(instructions === undefined ? {} : { instructions }),
      };
    },
    exited,
    async kill() {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await exited();
      await client.close().catch(() => undefined);
    },
    async close() {
      await client.close();
      await exited();
    },
  };
}

/** Run the built bin once (the records CLI, `--help`) and collect its output. */
export async function runBin(
  args: string[],
  env: Record<string, string>,
  options: { input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = await buildSessMcpBin();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env,
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) =>
      resolvePromise({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    child.stdin.end(options.input ?? '');
  });
}

/** The `interaction` of a successful result, or the `error` of a failed one. */
export function interactionOf(result: ToolCallResult): Record<string, unknown> & {
  handle: string;
  revision: number;
  state: string;
  humanUrl?: string;
  response?: {
    eventId: string;
    revision: number;
    action: string;
    values: Record<string, unknown>;
    verified: boolean;
    actorAssurance: string;
  };
  ask?: {
    id: string;
    open: boolean;
    max: number;
    started: number;
    answered: number;
    answers: Array<Record<string, unknown>>;
  };
} {
  if (result.isError)
    throw new Error(`tool error: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  const interaction = (result.structuredContent as { interaction?: unknown } | undefined)?.interaction;
  if (interaction === undefined) throw new Error('result without structuredContent.interaction');
  return interaction as never;
}

/** The error object of a failed result. */
export function errorOf(result: ToolCallResult): {
  code: string;
  message: string;
  retryable: boolean;
  reason?: string;
  state?: string;
} {
  if (!result.isError)
    throw new Error(`expected a tool error, got ${JSON.stringify(result.structuredContent)}`);
  return (result.structuredContent as { error: never }).error;
}

/**
 * `sess_publish` of `interaction` as the next revision after the answer a `sess_response` returned
 * (`answered`: its handle, revision and response event id).
 */
export function publishAfter(
  server: Pick<StdioSession, 'callTool'>,
  answered: { handle: string; revision: number; response?: { eventId: string } },
  interaction: unknown,
): Promise<ToolCallResult> {
  if (answered.response === undefined) throw new Error('publishAfter needs an answered interaction');
  return server.callTool('sess_publish', {
    handle: answered.handle,
    expected_revision: answered.revision,
    response_event_id: answered.response.eventId,
    interaction,
  });
}
