/**
 * {@link serveSessMcpStdio}: the Sess tools over stdio for an owner's own private MCP client.
 * It reads the configuration from the environment (never from arguments), builds one engine over
 * the file store and the Sess client, and serves it with the SDK's `serveStdio`. stdout carries
 * the protocol only; diagnostics go to stderr as fixed event names and codes.
 *
 * It decides nothing about interactions itself (the engine does) and reads no file but through
 * the file store and the credential key.
 */

import type { McpServer } from '@modelcontextprotocol/server';
import { type StdioServerHandle, StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { optionNames, readOptions } from '../core/contract/options.js';
import { createSessMcpServer } from '../faces/sess-server.js';
import { createWakeDelivery, onEventSink } from '../faces/wake/delivery.js';
import { createWebhookSender } from '../faces/wake/webhook-sender.js';
import { createWebhookSink } from '../faces/wake/webhook-sink.js';
import {
  type Authority,
  createSessEngine,
  type DiagnosticsSink,
  type DurableStep,
  type EventDelivery,
  type EventSink,
  isSessMcpError,
  SessMcpError,
  TOOLS_CONTRACT_VERSION,
  WAIT_CEILING_MS,
  type WakeEvent,
} from '../index.js';
import { createFileHandleStore, ProfileWakeFiles } from '../store/file/index.js';
import { createStdioAuthority } from './authority.js';
import { createClaudeChannelSink } from './claude-channel.js';
import { configVariableOf, type EnvLike, readStdioConfig, type StdioConfig } from './config.js';
import { createStderrDiagnostics } from './diagnostics.js';
import { type WakeCommandTarget, wakeCommandOf } from './wake-command.js';
import { createStdioWatcher, type StdioWatcher } from './watcher.js';

/** A readable stream (stdin) as the SDK's stdio transport uses it. */
export type StdinLike = ConstructorParameters<typeof StdioServerTransport>[0];
/** A writable stream (stdout) as the SDK's stdio transport uses it. */
export type StdoutLike = ConstructorParameters<typeof StdioServerTransport>[1];

/** Options of {@link serveSessMcpStdio}. Everything defaults to the current process. */
export interface SessMcpStdioOptions {
  /** Where configuration is read from. `SESS_API_KEY` is read on each tool call. @default process.env */
  env?: EnvLike;
  /** @default process.stdin */
  stdin?: StdinLike;
  /** Protocol only. @default process.stdout */
  stdout?: StdoutLike;
  /** Diagnostics: one JSON line per event. @default process.stderr */
  stderr?: { write(chunk: string): unknown };
  /**
   * The node executable and the `sess-mcp` bin script a result's wake command runs
   * (`sess-mcp wait`). With it, every `waiting` result of `sess_request`, `sess_ask` and
   * `sess_response` carries `wake.command` (`sess-mcp-tools/6` only). The `sess-mcp` bin passes
   * its own; a program that embeds the server passes the installed bin's path, or leaves it out.
   * @default none (results carry no `wake`)
   */
  wakeProgram?: readonly [node: string, bin: string];
  /**
   * Called at least once per interaction event of the profile (an answer arrived, the question
   * was withdrawn or expired, an Ask closed, the owner is needed): a reference only, never an
   * answer value or link. A resolved promise marks the event delivered; a rejection is retried on
   * the webhook schedule. Deduplicate by `eventId`; call `sess_response` to read the answer.
   * @default none
   */
  onEvent?: (event: WakeEvent) => void | Promise<void>;
}

/** A running stdio server. */
export interface SessMcpStdioServer {
  /** Close the connection; in-flight waits end as `needs_resume`. */
  close(): Promise<void>;
}

/**
 * Serve the Sess tools over stdio (every tool, or the set `SESS_MCP_TOOLS` names).
 *
 * Bad options throw a `TypeError` naming the option. An invalid configuration (environment) does
 * not stop the server: it starts, lists its tools, writes one `config_invalid` diagnostic, and
 * every tool call returns `NOT_CONFIGURED` with a message naming the variable — hosts show tool
 * errors to the agent, while a server that fails to start is often only "failed". A missing
 * `SESS_API_KEY` is reported the same way, on the first tool call.
 *
 * @example
 * ```ts source="examples/snippets/stdio.examples.ts#serveSessMcpStdio"
 * // import { serveSessMcpStdio } from '@sess.si/mcp/stdio';
 * const server = serveSessMcpStdio(); // reads SESS_API_KEY etc. from process.env
 * ```
 */
export function serveSessMcpStdio(options: SessMcpStdioOptions = {}): SessMcpStdioServer {
  checkOptions(options);
  const env = options.env ?? process.env;
  const diagnostics = createStderrDiagnostics(options.stderr ?? process.stderr);

  let config: StdioConfig | SessMcpError;
  try {
    config = readStdioConfig(env);
  } catch (error) {
    config = isSessMcpError(error)
      ? error
      : new SessMcpError('NOT_CONFIGURED', 'The server configuration cannot be read.', { retryable: false });
    const variable = configVariableOf(error);
    diagnostics({
      event: 'config_invalid',
      code: 'NOT_CONFIGURED',
      ...(variable === undefined ? {} : { variable }),
    });
  }

  const authority = createStdioAuthority({
    env,
    config,
    store: (c) => createFileHandleStore({ stateDir: c.stateDir, profile: c.profile }),
  });
  const crashAt = config instanceof Error ? undefined : config.crashAt;
  const wake = wakeOf(config, options.wakeProgram);
  // The watcher starts once a tool call has read the key (see `watcher.ts`).
  let watcher: StdioWatcher | undefined;
  const watched: Authority = {
    async resolve() {
      const resolved = await authority.resolve();
      watcher?.kick('started');
      return resolved;
    },
  };
  // The server of the connected client: the Claude channel sink sends through it.
  let served: McpServer | undefined;
  const claudeChannel = !(config instanceof Error) && config.claudeChannel;
  const delivery =
    config instanceof Error
      ? undefined
      : eventDeliveryOf(
          config,
          options.onEvent,
          diagnostics,
          crashAt,
          claudeChannel ? () => served : undefined,
        );
  const engine = createSessEngine({
    authority: watched,
    // A tool call (or the watcher's poll) may have saved an event: deliver it now.
    diagnostics: (event) => {
      diagnostics(event);
      if (event.event === 'tool_result') delivery?.kick();
    },
    ...(config instanceof Error || config.maxWaitMs === undefined ? {} : { maxWaitMs: config.maxWaitMs }),
    ...(crashAt === undefined ? {} : { hooks: { onStep: crashHook(crashAt) } }),
    ...(wake === undefined ? {} : { wakeCommand: (handle: string) => wakeCommandOf(wake, handle) }),
  });
  if (!(config instanceof Error) && config.watch) {
    watcher = createStdioWatcher({
      engine,
      authority,
      wakeFiles: ProfileWakeFiles.open(config.stateDir, config.profile),
      waitMs: config.maxWaitMs ?? WAIT_CEILING_MS,
      diagnostics,
      ...(config.retentionMs === false
        ? {}
        : {
            retention: {
              prune: createFileHandleStore({ stateDir: config.stateDir, profile: config.profile }).prune,
              ms: config.retentionMs,
            },
          }),
    });
    watcher.kick('probe');
  }
  delivery?.start(DELIVERY_INTERVAL_MS);

  const tools = config instanceof Error ? undefined : config.tools;
  const inputSchemas = config instanceof Error ? undefined : config.inputSchemas;
  const instructions = config instanceof Error ? undefined : config.instructions;
  const handle: StdioServerHandle = serveStdio(
    () => {
      served = createSessMcpServer(engine, tools, undefined, inputSchemas, claudeChannel, instructions);
      return served;
    },
    {
      ...(options.stdin !== undefined || options.stdout !== undefined
        ? { transport: new StdioServerTransport(options.stdin, options.stdout) }
        : {}),
      // The SDK's error may quote a message body: report that it happened, nothing more.
      onerror: () => diagnostics({ event: 'transport_error' }),
    },
  );
  diagnostics({ event: 'server_started' });
  // When the host closes stdin the connection is over: stop the watcher and the delivery loop too,
  // so their polls and timers do not keep the process alive (events still owed stay in the outbox
  // for the next server of this profile).
  const input = (options.stdin ?? process.stdin) as { once?(event: string, listener: () => void): unknown };
  let stopped: Promise<void> | undefined;
  const stopBackground = () => {
    stopped ??= Promise.all([watcher?.close(), delivery?.stop()]).then(() => undefined);
    return stopped;
  };
  input.once?.('end', () => void stopBackground());
  input.once?.('close', () => void stopBackground());
  return {
    async close() {
      await stopBackground();
      await handle.close();
      diagnostics({ event: 'server_closed' });
    },
  };
}

/** The option names of {@link SessMcpStdioOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<SessMcpStdioOptions>()(
  'env',
  'stdin',
  'stdout',
  'stderr',
  'wakeProgram',
  'onEvent',
);

/** How often the delivery loop looks at the profile's outbox (a tool call's event goes at once). */
const DELIVERY_INTERVAL_MS = 1_000;

/**
 * The delivery loop of the profile's events, to the webhook (`SESS_MCP_WEBHOOK_URL`) and to
 * `onEvent`; `undefined` when neither is set.
 */
function eventDeliveryOf(
  config: StdioConfig,
  onEvent: SessMcpStdioOptions['onEvent'],
  diagnostics: DiagnosticsSink,
  crashAt: string | undefined,
  channelServer: (() => McpServer | undefined) | undefined,
): EventDelivery | undefined {
  const sinks: EventSink[] = [];
  if (channelServer !== undefined) sinks.push(createClaudeChannelSink(channelServer));
  if (config.webhook !== undefined) {
    const { endpoint, allowPrivate, allowedHosts, timeoutMs } = config.webhook;
    const sender = createWebhookSender({
      allowPrivate,
      allowInsecureLocalhost: config.allowInsecureLocalhost,
      ...(allowedHosts === undefined ? {} : { allowedHosts }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    sinks.push(createWebhookSink(sender, () => endpoint));
  }
  if (onEvent !== undefined) sinks.push(onEventSink(onEvent));
  if (sinks.length === 0) return undefined;
  return createWakeDelivery({
    outbox: createFileHandleStore({ stateDir: config.stateDir, profile: config.profile }).outbox(),
    sinks,
    diagnostics,
    ...(crashAt === undefined ? {} : { hooks: { onStep: crashHook(crashAt) } }),
  });
}

/** Where a result's wake command waits: only for the full tool set and a program to run. */
function wakeOf(
  config: StdioConfig | SessMcpError,
  program: SessMcpStdioOptions['wakeProgram'],
): WakeCommandTarget | undefined {
  // `wait` needs a watcher: without one, no result offers the command.
  if (config instanceof Error || program === undefined || !config.watch) return undefined;
  if ((config.tools ?? TOOLS_CONTRACT_VERSION) !== TOOLS_CONTRACT_VERSION) return undefined;
  return { program: [program[0], program[1]], stateDir: config.stateDir, profile: config.profile };
}

function checkOptions(options: SessMcpStdioOptions): void {
  const read = readOptions('serveSessMcpStdio', options, { known: KNOWN_OPTIONS, allowMissing: true });
  if (options.env !== undefined && (options.env === null || typeof options.env !== 'object')) {
    read.fail('env', 'must be an object of strings');
  }
  if (options.stdin !== undefined && typeof (options.stdin as { on?: unknown } | null)?.on !== 'function') {
    read.fail('stdin', 'must be a readable stream');
  }
  const program = options.wakeProgram as unknown;
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') {
    read.fail('onEvent', 'must be a function');
  }
  if (
    program !== undefined &&
    !(
      Array.isArray(program) &&
      program.length === 2 &&
      program.every((w) => typeof w === 'string' && w !== '')
    )
  ) {
    read.fail('wakeProgram', 'must be [node executable, sess-mcp bin script], two non-empty strings');
  }
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = options[name];
    if (stream !== undefined && typeof (stream as { write?: unknown } | null)?.write !== 'function') {
      read.fail(name, 'must be a writable stream');
    }
  }
}

/**
 * Testing only (`SESS_MCP_TEST_CRASH_AT` with `SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1`): kill
 * this process with SIGKILL at the named durable step (`step` or `step@N` for its Nth time), as a
 * power cut would.
 */
function crashHook(spec: string): (name: DurableStep) => Promise<void> | undefined {
  const [step, nth] = spec.split('@') as [string, string | undefined];
  let remaining = nth === undefined ? 1 : Number(nth);
  return (name) => {
    if (name !== step || --remaining > 0) return undefined;
    process.kill(process.pid, 'SIGKILL');
    // The signal lands asynchronously: make sure not one more step runs before it does.
    return new Promise<void>(() => {});
  };
}
