/**
 * What every host suite of the matrix shares: where the host installs live (under `.tmp/`, put
 * there by `.ci/run`), the MCP servers a host connects to with a tap that logs every JSON-RPC
 * message the host sent (stdio: a pass-through process; HTTP: the handler's `fetch` face in a
 * `node:http` server with a bearer check), the scan of a host's files for secrets, and the JSON
 * result a run writes under `.tmp/hosts/` for `render.mjs` to turn into `docs/hosts.md`.
 */
import { type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import { ANSWERED_NEXT } from '../../src/core/contract/result.js';
import {
  createSessMcpHttpHandler,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from '../../src/http/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit, type SecretsAudit } from '../support/audit.js';
import { MARKERS } from './run-flow.js';
import type { FlowName } from './script.js';
import {
  createStandInLog,
  firstInteractionResult,
  type GuidanceReach,
  guidanceReach,
  nextsReached,
  type ResultShape,
  type StandInLog,
  toolResultShape,
} from './stand-in-log.js';

/** The repository root. */
export const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** A distinctive MCP bearer token (the audit looks for it). */
export const BEARER = 'hostmatrix-bearer-7f3a9c51e2d84b60';

/**
 * Find a host install. Under `CI=true` a missing install fails the suite (CI installs every
 * host); elsewhere the suite is skipped with the install command as the reason.
 */
export function requireHost(label: string, path: string, install: string): string | undefined {
  const full = resolve(ROOT, path);
  if (existsSync(full)) return full;
  const message = `${label} is not installed at ${path}; install it with: ${install}`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipping: ${message}`);
  return undefined;
}

/** The built `sess-mcp` bin a stdio host starts (`npm run build` makes it; `npm test` builds first). */
export function builtBin(): string {
  const bin = join(ROOT, 'dist', 'bin', 'sess-mcp.js');
  if (!existsSync(bin)) throw new Error('dist/bin/sess-mcp.js is missing: run `npm run build` first');
  return bin;
}

/** One JSON-RPC message a host sent its MCP server. */
export interface TappedMessage {
  method?: string;
  params?: { name?: string; _meta?: Record<string, unknown> } & Record<string, unknown>;
}

/** Read the pass-through log of the stdio tap (one JSON-RPC message a line). */
export async function readStdioTap(file: string): Promise<TappedMessage[]> {
  const text = existsSync(file) ? await readFile(file, 'utf8') : '';
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as TappedMessage];
      } catch {
        return [];
      }
    });
}

/** Whether a host sent a progress token with its tool calls. */
export function progressTokenOf(messages: readonly TappedMessage[]): 'yes' | 'no' {
  const calls = messages.filter((m) => m.method === 'tools/call');
  return calls.length > 0 && calls.every((m) => m.params?._meta?.progressToken !== undefined) ? 'yes' : 'no';
}

/** A running HTTP MCP endpoint for a host. */
export interface HostHttpServer {
  url: string;
  /** Every JSON-RPC message the host posted. */
  messages: TappedMessage[];
  /** Every response status with the request's method (to spot refused requests). */
  statuses: number[];
  close(): Promise<void>;
}

/**
 * The HTTP face as `examples/node-http.ts` mounts it, at `/mcp`, with one bearer token for the
 * runtime's workspace; the body is read first so the tap can log it, then given to `fetch`.
 * `options` adds handler options as an app would set them (`inputSchemas: 'flat'`).
 */
export async function startHostHttpServer(
  sess: LocalSess,
  options: Pick<SessMcpHttpHandlerOptions, 'inputSchemas'> = {},
): Promise<HostHttpServer> {
  const stores = createMemoryHandleStore();
  const principal: SessHttpPrincipal = {
    workspaceId: sess.workspaceId,
    principalId: 'owner',
    clientId: 'host-matrix',
    grantId: 'grant-1',
    grantGeneration: '1',
    scopes: ['sess'],
    credential: () => sess.apiKey,
  };
  const handler = createSessMcpHttpHandler({
    authenticate: (request) =>
      request.headers.get('authorization') === `Bearer ${BEARER}` ? principal : undefined,
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: ['127.0.0.1', 'localhost'],
    requiredScopes: ['sess'],
    sessOrigin: sess.origin,
    allowInsecureLocalhost: true,
    ...options,
  });
  const messages: TappedMessage[] = [];
  const statuses: number[] = [];
  let port = 0;
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        try {
          const parsed = JSON.parse(body.toString('utf8')) as TappedMessage | TappedMessage[];
          messages.push(...(Array.isArray(parsed) ? parsed : [parsed]));
        } catch {
          // Not JSON: the handler answers it.
        }
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers.set(name, value);
        else if (Array.isArray(value)) headers.set(name, value.join(', '));
      }
      const method = req.method ?? 'GET';
      const response = await handler.fetch(
        new Request(`http://127.0.0.1:${port}${req.url ?? '/'}`, {
          method,
          headers,
          ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
        }),
      );
      statuses.push(response.status);
      const out: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        out[name] = value;
      });
      res.writeHead(response.status, out);
      if (response.body === null) res.end();
      else Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  // Node closes an idle kept-alive socket after 5 s; a host whose next call reuses it just then gets
  // a reset it does not retry (a POST), "fetch failed" (seen on a loaded machine). Hosts keep their
  // connections longer than that, as a deployment's server would.
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    messages,
    statuses,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Every file under `dir` (at most `maxBytes` each), with its path relative to `dir`. */
export async function readTree(
  dir: string,
  maxBytes = 4_000_000,
): Promise<Array<{ path: string; text: string }>> {
  const out: Array<{ path: string; text: string }> = [];
  const walk = async (d: string): Promise<void> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && entry.name !== 'node_modules') await walk(full);
      } else if (entry.isFile() && (await stat(full)).size <= maxBytes) {
        out.push({ path: relative(dir, full), text: await readFile(full, 'utf8') });
      }
    }
  };
  await walk(dir);
  return out;
}

/** One flow's outcome in a host's run. */
export interface FlowOutcome {
  flow: FlowName;
  pass: boolean;
  /** Why it failed (no secret in it), or what it saw. */
  note: string;
  /** The scripted tool calls the host executed, in order. */
  calls: string[];
  seconds: number;
}

/** The result a host suite writes for the rendered table. */
export interface HostResult {
  host: string;
  version: string;
  transport: 'stdio' | 'HTTP';
  /** What reached the model of a tool result. */
  reachesModel: ResultShape;
  /** Where the result guidance (`next`) reached the model. */
  guidance: GuidanceReach;
  /** Whether the step after an answer (`next` of an `answered` result) reached the model. */
  answeredNext: boolean;
  /** The name the model was offered `sess_request` under (a host may prefix it), if it was. */
  toolName: string;
  progressToken: 'yes' | 'no' | 'not observable';
  /** How long the host lets a call run. */
  callTimeout: string;
  instructions: string;
  toolDescriptions: string;
  flows: FlowOutcome[];
  notes: string[];
  /**
   * Whether a late answer wakes the agent (see docs/wake.md): measured only by the wake suite;
   * `render.mjs` shows "unknown" where it is missing.
   */
  wakes?: string;
  /**
   * What the host costs CI, in seconds: its `npm install` (measured by hand on the 2-core
   * machine, as `.ci/run` installs it) and its suite's wall time when run alone.
   */
  seconds?: { install: number; run: number };
}

/** Write a host's result to `.tmp/hosts/<slug>.json`. */
export async function writeHostResult(slug: string, result: HostResult): Promise<void> {
  const dir = join(ROOT, '.tmp', 'hosts');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `${slug}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

/** The installed version of an npm package of this checkout. */
export async function packageVersion(name: string): Promise<string> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/**
 * Poll `read` every `intervalMs` until it returns a value; rejects naming `what` after
 * `timeoutMs`. `read` may throw to give up at once (a host showing a dialog nobody will answer).
 */
export async function pollUntil<T>(
  read: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  what: string,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A stack of clean-ups run in reverse order after the file's tests. */
export function useCleanupStack(): Array<() => Promise<void>> {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    while (cleanup.length > 0) await cleanup.pop()?.();
  });
  return cleanup;
}

/**
 * Run a host's command to its end, killed after `timeoutMs`; resolves with stdout and stderr on a
 * zero exit, rejects naming `label`, the exit and a bounded piece of stderr (`errTail`: its end,
 * else its start) otherwise.
 */
export function runHostCommand(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { label: string; timeoutMs: number; errTail?: boolean },
): Promise<{ out: string; err: string }> {
  const { label, timeoutMs, errTail = false, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ out, err });
      else
        reject(
          new Error(
            `${label} exited with ${code ?? signal}: ${errTail ? err.slice(-300) : err.slice(0, 300)}`,
          ),
        );
    });
  });
}

/**
 * What every HTTP host run starts from: a local runtime, the handler on `node:http`, an audit
 * that knows the Sess API key and the bearer token, and an empty stand-in log. Both servers are
 * closed through `cleanup`.
 */
export async function startHttpHostRun(
  cleanup: Array<() => Promise<void>>,
  options: Pick<SessMcpHttpHandlerOptions, 'inputSchemas'> = {},
): Promise<{ sess: LocalSess; server: HostHttpServer; audit: SecretsAudit; log: StandInLog }> {
  const sess = await startLocalSess();
  cleanup.push(() => sess.close());
  const server = await startHostHttpServer(sess, options);
  cleanup.push(() => server.close());
  const audit = createSecretsAudit();
  audit.secret(sess.apiKey, 'sess api key');
  audit.secret(BEARER, 'mcp bearer token');
  return { sess, server, audit, log: createStandInLog() };
}

/** A host's temporary `HOME` and project directory, removed through `cleanup`. */
export interface HostPlace {
  home: string;
  project: string;
}

/** Make a fresh {@link HostPlace}; `name` goes into the directory names (`hosts-<name>-home-…`). */
export async function hostPlace(cleanup: Array<() => Promise<void>>, name: string): Promise<HostPlace> {
  const home = await mkdtemp(join(tmpdir(), `hosts-${name}-home-`));
  const project = await mkdtemp(join(tmpdir(), `hosts-${name}-project-`));
  cleanup.push(async () => {
    await rm(home, { recursive: true, force: true });
    await rm(project, { recursive: true, force: true });
  });
  return { home, project };
}

/** How a stdio host starts the server: the built bin behind the tap, and the server's variables. */
export interface HostStdioServer {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Where the tap logs what the host sent (read it with {@link readStdioTap}). */
  tap: string;
  /** Where the tap copies the server's stderr, when asked for (`stderr: true`). */
  stderr?: string;
}

/** What a suite adds to the stdio server a host configures. */
export interface HostStdioServerOptions {
  /** More server variables (`SESS_MCP_MAX_WAIT_MS`, …). */
  env?: Record<string, string>;
  /** Copy the server's stderr to a file under `home` too (it still goes to the host). */
  stderr?: boolean;
}

/** The `sess-mcp` server a stdio host configures, bound to `sess`, its state and tap under `home`. */
export function hostStdioServer(
  sess: LocalSess,
  home: string,
  options: HostStdioServerOptions = {},
): HostStdioServer {
  const tap = join(home, 'tap.jsonl');
  const stderr = options.stderr === true ? join(home, 'server-stderr.log') : undefined;
  return {
    command: process.execPath,
    args: [join(ROOT, 'test/hosts/stdio-tap.mjs'), builtBin()],
    env: {
      SESS_API_KEY: sess.apiKey,
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_STATE_DIR: join(home, 'sess-state'),
      // The flows count the upstream waits of the host's own calls (the person answers during the
      // second): no background watcher adds its own. The wake cell runs with one (`options.env`).
      SESS_MCP_WATCH: '0',
      ...options.env,
      HOST_MATRIX_TAP: tap,
      ...(stderr === undefined ? {} : { HOST_MATRIX_STDERR: stderr }),
    },
    tap,
    ...(stderr === undefined ? {} : { stderr }),
  };
}

/** The `claude mcp add` arguments that make `server` the project's stdio server `sess` (Claude Code). */
export function claudeMcpAddStdio(server: HostStdioServer): string[] {
  return [
    'mcp',
    'add',
    '--scope',
    'local',
    'sess',
    ...Object.entries(server.env).flatMap(([name, value]) => ['-e', `${name}=${value}`]),
    '--',
    server.command,
    ...server.args,
  ];
}

/**
 * Give Claude Code's files of a run to the audits: everything under its home and project to
 * `audit`, but its transcript (`~/.claude/projects/`, `~/.claude/sessions/`) to `keysOnly`, and not
 * where `claude mcp add` stores what it was given (`~/.claude.json` and the host's backups of it).
 */
export async function auditClaudeCodeFiles(
  where: HostPlace,
  audit: SecretsAudit,
  keysOnly: SecretsAudit,
): Promise<void> {
  const storesConfig = (path: string) =>
    path === '.claude.json' || path.startsWith('.claude/backups/.claude.json.backup');
  const transcript = (path: string) =>
    path.startsWith('.claude/projects/') || path.startsWith('.claude/sessions/');
  for (const file of [...(await readTree(where.home)), ...(await readTree(where.project))]) {
    if (storesConfig(file.path)) continue;
    (transcript(file.path) ? keysOnly : audit).text(file.text, `host file ${file.path}`);
  }
}

/** Every model request's body, as one text (to look for the markers in). */
export function requestBodies(log: StandInLog): string {
  return log.requests.map((r) => r.body).join('\n');
}

/** What of the results reached the model, and whether the host sent progress tokens. */
export function reachOf(
  log: StandInLog,
  messages: readonly TappedMessage[],
): Pick<HostResult, 'reachesModel' | 'guidance' | 'answeredNext' | 'toolName' | 'progressToken'> {
  const offered = log.requests.flatMap((r) => r.toolNames).find((name) => name.endsWith('sess_request'));
  // A host that defers its MCP tools (Claude Code's ToolSearch) names them in the prompt instead.
  const named = /\b(\w+_sess_request)\b/.exec(requestBodies(log).replaceAll('\\n', '\n'))?.[1];
  return {
    toolName: offered ?? (named === undefined ? 'not offered' : `${named} (deferred: named in the prompt)`),
    reachesModel: toolResultShape(firstInteractionResult(log)),
    guidance: guidanceReach(log),
    answeredNext: nextsReached(log).includes(ANSWERED_NEXT),
    progressToken: progressTokenOf(messages),
  };
}

/** Where the tool descriptions showed in `bodies` (the model requests). */
export function toolDescriptionsIn(bodies: string): string {
  return bodies.includes(MARKERS.description) ? 'in the tools list' : 'not sent to the model';
}

/**
 * The audit of a host's transcript and of what reached its model: links and answers may show
 * there, the Sess API key (and over HTTP the bearer token) never. It already holds the model
 * requests of `log`.
 */
export function keysOnlyAudit(
  sess: LocalSess,
  log: StandInLog,
  options: { bearer?: boolean } = {},
): SecretsAudit {
  const keysOnly = createSecretsAudit();
  keysOnly.secret(sess.apiKey, 'sess api key');
  if (options.bearer !== false) keysOnly.secret(BEARER, 'mcp bearer token');
  keysOnly.text(requestBodies(log), 'model requests');
  return keysOnly;
}

/** Every flow of a run passed (each failure names its flow and note). */
export function expectEveryFlowPassed(flows: readonly FlowOutcome[]): void {
  for (const flow of flows)
    expect({ flow: flow.flow, note: flow.note, pass: flow.pass }).toMatchObject({ pass: true });
}

/**
 * What a full run of every flow must show: every flow passed, something of a result and its
 * guidance reached the model, and the long call was measured.
 */
export function expectFullRun(result: HostResult): void {
  expectEveryFlowPassed(result.flows);
  expect(result.reachesModel).not.toBe('none');
  // The guidance of a result reaches the model, in the part of the result this host forwards.
  expect(result.guidance).not.toBe('none');
  // Whatever part it forwards, the model read what to do after an answer.
  expect(result.answeredNext, 'the next step after an answer reached the model').toBe(true);
  expect(result.callTimeout).not.toMatch(/^not measured/);
}
