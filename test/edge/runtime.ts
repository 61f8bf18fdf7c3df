/**
 * What the edge-runtime suites share: finding a runtime binary installed from the npm registry,
 * running it as a child process that reports its port, and the full tool flow a real MCP client
 * drives against it (request → the person answers on the local Sess runtime → response → complete).
 *
 * A missing binary skips the suite on a developer's machine and fails it under `CI=true`, where
 * `.ci/run` installs every runtime first.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { approveAnswer, approveSurface, ok, type ToolCaller } from '../http/harness.js';
import { connectLegacy, connectModern } from '../http/helpers.js';
import { type SecretsAudit, useSecretsAudit } from '../support/audit.js';
import { type Closable, useCleanup } from '../support/cleanup.js';

/** The repository root, with a trailing slash. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

/** Where to look for one runtime. */
export interface RuntimeSpec {
  /** Shown in messages, e.g. `workerd`. */
  name: string;
  /** Environment variable that names the binary. */
  envVar: string;
  /** Path below the repository root that `.ci/run` installs to. */
  cached: string;
  /** The command `.ci/run` runs to install it, for the message when it is missing. */
  install: string;
}

/** workerd, Cloudflare's Workers runtime, from `@cloudflare/workerd-linux-64`. */
export const WORKERD: RuntimeSpec = {
  name: 'workerd',
  envVar: 'SESS_MCP_WORKERD',
  cached: '.tmp/workerd/node_modules/@cloudflare/workerd-linux-64/bin/workerd',
  install: 'npm install --prefix .tmp/workerd @cloudflare/workerd-linux-64@1.20261117.1',
};

/** Deno, from `@deno/linux-x64-glibc`. */
export const DENO: RuntimeSpec = {
  name: 'deno',
  envVar: 'SESS_MCP_DENO',
  cached: '.tmp/deno/node_modules/@deno/linux-x64-glibc/deno',
  install: 'npm install --prefix .tmp/deno @deno/linux-x64-glibc@2.9.6',
};

/** The port in what `workerd serve --control-fd=3` reports: `{"event":"listen","socket":"http","port":N}`. */
export function workerdPort(out: string): number | undefined {
  const match = /"event":"listen","socket":"http","port":(\d+)/.exec(out);
  return match === null ? undefined : Number(match[1]);
}

/**
 * What a Worker's Cron Trigger is, for a test: a second Worker (`trigger.js`) in front of the main
 * one. A request for `/__scheduled` dispatches one `scheduled` event to the main Worker through
 * its service binding (`Fetcher.scheduled()`, behind workerd's `--experimental`) and answers with
 * its outcome; every other request goes to the main Worker's `fetch`.
 */
export const SCHEDULED_TRIGGER_JS = `export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname !== '/__scheduled') return env.MAIN.fetch(request);
    const result = await env.MAIN.scheduled({ scheduledTime: new Date(), cron: '* * * * *' });
    return Response.json(result);
  },
};
`;

/**
 * A workerd config: one Worker (`worker.js`, embedded), its Sess and bearer bindings read from the
 * environment, one socket on 127.0.0.1 port 0, and an outbound network that reaches local addresses.
 * `extra` adds bindings (capnp lines); `flags` sets `compatibilityFlags` (with its comment line).
 * With `trigger`, the socket serves {@link SCHEDULED_TRIGGER_JS} instead (run workerd with
 * `--experimental` and write `trigger.js` beside the config).
 */
export function workerdConfig(options: {
  extra?: string[];
  flags?: { comment: string; flags: string[] };
  trigger?: boolean;
}): string {
  const flags =
    options.flags === undefined
      ? ''
      : `  # ${options.flags.comment}\n  compatibilityFlags = [${options.flags.flags.map((f) => `"${f}"`).join(', ')}],\n`;
  const bindings = [
    ...(options.extra ?? []),
    '(name = "SESS_API_KEY", fromEnvironment = "SESS_API_KEY")',
    '(name = "SESS_WORKSPACE_ID", fromEnvironment = "SESS_WORKSPACE_ID")',
    '(name = "MCP_BEARER_TOKEN", fromEnvironment = "MCP_BEARER_TOKEN")',
    '(name = "SESS_API_ORIGIN", fromEnvironment = "SESS_API_ORIGIN")',
    '(name = "MCP_ALLOWED_HOST", text = "127.0.0.1")',
    '(name = "SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST", text = "1")',
  ];
  const trigger = options.trigger === true;
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .mainWorker),${trigger ? '\n    (name = "trigger", worker = .triggerWorker),' : ''}
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "${trigger ? 'trigger' : 'main'}") ],
);${
    trigger
      ? `
const triggerWorker :Workerd.Worker = (
  modules = [ (name = "trigger.js", esModule = embed "trigger.js") ],
  compatibilityDate = "2026-11-01",
  compatibilityFlags = ["service_binding_extra_handlers"],
  bindings = [ (name = "MAIN", service = "main") ],
);`
      : ''
  }
const mainWorker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2026-11-01",
${flags}  bindings = [
${bindings.map((b) => `    ${b},`).join('\n')}
  ],
  globalOutbound = "internet",
);
`;
}

/** The binary's path, or `undefined` when none is found (`$envVar`, the cached install, `PATH`). */
export function findRuntime(spec: RuntimeSpec): string | undefined {
  for (const candidate of [process.env[spec.envVar], `${root}${spec.cached}`]) {
    if (candidate && existsSync(candidate)) return candidate;
  }
  try {
    return execFileSync('which', [spec.name], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the suite runs: `true` when the binary is there. Without it, under `CI=true` this adds
 * one failing test that says how to install it; elsewhere the suite is skipped.
 */
export function requireRuntime(spec: RuntimeSpec, path: string | undefined): boolean {
  if (path !== undefined) return true;
  if (process.env.CI === 'true') {
    it(`finds ${spec.name}`, () => {
      throw new Error(`${spec.name} is missing: set ${spec.envVar} or run ${spec.install}`);
    });
  }
  return false;
}

/**
 * Whether a suite of the Worker with the PostgreSQL store runs: workerd found and `DATABASE_URL`
 * set. Under `CI=true` a missing `DATABASE_URL` adds one failing test that says how to start one.
 */
export function requireWorkerdPostgres(workerd: string | undefined): boolean {
  const ready = requireRuntime(WORKERD, workerd);
  if (ready && process.env.DATABASE_URL === undefined && process.env.CI === 'true') {
    it('has DATABASE_URL', () => {
      throw new Error('DATABASE_URL is missing: run scripts/ci-postgres.sh');
    });
  }
  return ready && process.env.DATABASE_URL !== undefined;
}

/**
 * `examples/edge/worker-postgres.ts` bundled as wrangler bundles it for `nodejs_compat`: Node's
 * built-ins come from workerd, the rest is bundled.
 */
export const WORKER_POSTGRES_BUILD: WorkerBundle['build'] = {
  entryPoints: [join(root, 'examples', 'edge', 'worker-postgres.ts')],
  platform: 'node',
  conditions: ['workerd', 'worker'],
  external: ['cloudflare:sockets', 'node:*'],
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire('/');" },
};

/** A runtime serving the MCP endpoint. */
export interface RunningRuntime {
  url: string;
  stderr(): string;
  /** What it wrote on stdout so far (workerd's `console.log`). */
  stdout(): string;
  stop(): Promise<void>;
}

/**
 * Spawn a runtime and wait for its port, which `readPort` finds in what it prints on stdout or
 * on the extra pipe at fd 3. Rejects with its stderr when it exits first.
 */
export async function spawnRuntime(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd?: string; readPort(output: string): number | undefined },
): Promise<RunningRuntime> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd ?? root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const onData = (d: Buffer) => {
        out += d.toString();
        const port = options.readPort(out);
        if (port !== undefined) resolve(port);
      };
      child.stdout!.on('data', onData);
      (child.stdio[3] as NodeJS.ReadableStream).on('data', onData);
      child.once('exit', (code) => reject(new Error(`${command} exited (${code}): ${stderr}`)));
      child.once('error', reject);
    });
    return { url: `http://127.0.0.1:${port}/mcp`, stderr: () => stderr, stdout: () => stdout, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One interaction from request to complete, the person answering through the runtime's page. */
export async function roundTrip(client: ToolCaller, sess: LocalSess, audit: SecretsAudit): Promise<void> {
  const created = await ok(client, 'sess_request', { interaction: approveSurface });
  audit.url(created.humanUrl!, 'sess link');
  const page = await sess.submitAnswer(created.humanUrl!, approveAnswer);
  expect(page.status).toBe(303);
  const answered = await ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
  expect(answered).toMatchObject({
    state: 'answered',
    response: { verified: true, values: approveAnswer.values },
  });
  const completed = await ok(client, 'sess_complete', {
    handle: created.handle,
    expected_revision: 1,
    response_event_id: answered.response!.eventId,
  });
  expect(completed.state).toBe('completed');
}

/** Cleanups a suite runs after each test, last first (`useCleanup()` of `test/support`). */
export type Cleanup = Closable[];

/** A local Sess runtime and an MCP server started over it. */
export interface EdgeStack {
  sess: LocalSess;
  server: RunningRuntime;
  /** The request headers that carry the bearer. */
  headers: { authorization: string };
}

/**
 * Start a local Sess runtime and a server over it (`start` gets the Sess key, origin and the
 * bearer as environment); both secrets and the server's stderr go to the audit, and both are
 * stopped by `cleanup`.
 */
export async function startEdgeStack(
  label: string,
  bearer: string,
  start: (env: Record<string, string>) => Promise<RunningRuntime>,
  audit: SecretsAudit,
  cleanup: Cleanup,
): Promise<EdgeStack> {
  const sess = await startLocalSess();
  cleanup.push(() => sess.close());
  audit.secret(sess.apiKey, 'sess api key');
  audit.secret(bearer, 'mcp bearer token');
  const server = await start({
    SESS_API_KEY: sess.apiKey,
    SESS_WORKSPACE_ID: sess.workspaceId,
    MCP_BEARER_TOKEN: bearer,
    SESS_API_ORIGIN: sess.origin,
  });
  cleanup.push(() => server.stop());
  audit.watch(server.stderr, `${label} stderr`);
  return { sess, server, headers: { authorization: `Bearer ${bearer}` } };
}

/**
 * A 2026-07-28 client and a 2025 client each run {@link roundTrip}; both Sessions end completed,
 * and a wrong bearer gets 401.
 */
export async function bothClientsRoundTrip(stack: EdgeStack, audit: SecretsAudit): Promise<void> {
  const { sess, server, headers } = stack;
  const modern = await connectModern(server.url, headers);
  expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  await roundTrip(modern, sess, audit);
  await modern.close();

  const legacy = await connectLegacy(server.url, headers);
  await roundTrip(legacy, sess, audit);
  await legacy.close();
  expect(sess.sessions.list().map((s) => s.view.status)).toEqual(['completed', 'completed']);

  const refused = await fetch(server.url, { method: 'POST', headers: { authorization: 'Bearer nope' } });
  expect(refused.status).toBe(401);
  await refused.arrayBuffer();
}

/** A `sess_response` held open returns the answer given during the wait, not at its 20 s deadline. */
export async function heldWaitAnswered(
  stack: EdgeStack,
  audit: SecretsAudit,
  cleanup: Cleanup,
): Promise<void> {
  const { sess, server, headers } = stack;
  const client = await connectModern(server.url, headers);
  cleanup.push(() => client.close());

  const created = await ok(client, 'sess_request', { interaction: approveSurface });
  audit.url(created.humanUrl!, 'sess link');
  const waiting = ok(client, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
  await sess.whenWaiting();
  const started = Date.now();
  expect((await sess.submitAnswer(created.humanUrl!, approveAnswer)).status).toBe(303);
  const answered = await waiting;
  expect(answered).toMatchObject({ state: 'answered', response: { verified: true } });
  expect(Date.now() - started).toBeLessThan(10_000);
}

/** What {@link edgeFlowTests} needs of a suite. */
export interface EdgeFlowSuite {
  /** The runtime's name in bearers and audit labels, e.g. `deno`. */
  label: string;
  /** Where the held wait runs, in its test name (`on Deno`); without it that test is left out. */
  heldWaitWhere?: string;
  /** Start the server with the Sess key, origin and bearer as environment. */
  start(env: Record<string, string>): Promise<RunningRuntime>;
  /** More checks on the running stack after the two-client round. */
  more?(stack: EdgeStack): Promise<void>;
}

/**
 * The flow tests every runtime suite runs: {@link bothClientsRoundTrip}, then
 * {@link heldWaitAnswered}. Each test has its own secrets audit, checked after its clean-ups ran.
 */
export function edgeFlowTests(suite: EdgeFlowSuite): void {
  const audits = useSecretsAudit();
  const cleanup = useCleanup();
  const stack = (bearer: string) =>
    startEdgeStack(
      suite.label,
      `${suite.label}-bearer-token-${bearer}`,
      suite.start,
      audits.current,
      cleanup,
    );
  it('a 2026-07-28 client and a 2025 client run request → answer → complete; a wrong token gets 401', async () => {
    const running = await stack('0123456789');
    await bothClientsRoundTrip(running, audits.current);
    await suite.more?.(running);
  });
  const where = suite.heldWaitWhere;
  if (where === undefined) return;
  it(`a sess_response held open ${where} returns the answer given during the wait`, async () => {
    await heldWaitAnswered(await stack('abcdefghij'), audits.current, cleanup);
  });
}

/** A Worker module bundled for workerd, with the config that serves it. */
export interface WorkerBundle {
  /** The temporary directory's name prefix, e.g. `sess-workerd-`. */
  prefix: string;
  /** The module's esbuild options; an ESM bundle to `worker.js`, silently, is added here. */
  build: Omit<BuildOptions, 'bundle' | 'format' | 'outfile' | 'logLevel'>;
  /** The `config.capnp` text (`workerdConfig`). */
  config: string;
  /** Bundle only when the suite runs. @default true */
  when?: boolean;
  /** More files written beside the config (name → text), such as `trigger.js`. */
  files?: Record<string, string>;
  /** More arguments of `workerd serve`, such as `--experimental`. */
  args?: string[];
}

/**
 * Bundle the Worker into a temporary directory before the file's tests (removed after them);
 * returns how to start `workerd serve` on it with `env` as its bindings' environment.
 */
export function useWorkerBundle(
  workerd: string | undefined,
  bundle: WorkerBundle,
): (env: Record<string, string>) => Promise<RunningRuntime> {
  let dir = '';
  beforeAll(async () => {
    if (bundle.when === false) return;
    dir = mkdtempSync(join(tmpdir(), bundle.prefix));
    await build({
      ...bundle.build,
      bundle: true,
      format: 'esm',
      outfile: join(dir, 'worker.js'),
      logLevel: 'silent',
    });
    writeFileSync(join(dir, 'config.capnp'), bundle.config);
    for (const [name, text] of Object.entries(bundle.files ?? {})) writeFileSync(join(dir, name), text);
  });
  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });
  return (env) =>
    spawnRuntime(workerd!, ['serve', ...(bundle.args ?? []), join(dir, 'config.capnp'), '--control-fd=3'], {
      cwd: dir,
      env,
      readPort: workerdPort,
    });
}

/**
 * What `telemetry-worker.ts` exported after the flow (its `/telemetry` answer): the spans of the
 * tool calls, Sess calls and store operations, and the metrics, reached the SDK in the runtime.
 */
export async function expectTelemetryExported(stack: EdgeStack): Promise<void> {
  const response = await fetch(stack.server.url.replace(/\/mcp$/, '/telemetry'));
  const exported = (await response.json()) as { spans: string[]; metrics: string[] };
  expect(exported.spans).toEqual(
    expect.arrayContaining([
      'sess_mcp.tool sess_request',
      'sess_mcp.tool sess_response',
      'sess_mcp.tool sess_complete',
      'sess_mcp.sess createSession',
      'sess_mcp.sess verifyResponse',
      'sess_mcp.store create',
    ]),
  );
  expect(exported.metrics).toEqual(
    expect.arrayContaining([
      'sess_mcp.tool.duration',
      'sess_mcp.sess.duration',
      'sess_mcp.receipt.verifications',
    ]),
  );
}
