/**
 * The stdio server's configuration, read from the environment of the server process only (the
 * README's "Configuration" table). Every variable is checked here with a specific message that names
 * the variable and the rule, and never echoes a value: a misplaced API key in `SESS_API_ORIGIN`
 * must not end up in a tool result.
 *
 * This module deliberately does not read `SESS_API_KEY`: the key is read by the authority on each
 * tool call, never at start-up. It touches no file either; it only computes paths.
 */

import { homedir as osHomedir } from 'node:os';
import { posix as posixPath, win32 as win32Path } from 'node:path';
import {
  DEFAULT_PROFILE,
  DEFAULT_RETENTION_MS,
  DURATION_TEXT,
  durationMs,
  INPUT_SCHEMAS_RULE,
  INSTRUCTIONS_FORM_RULE,
  type InstructionsForm,
  PROFILE_NAME_RULE,
  profileDirectory,
  RECEIPT_ISSUER_RULE,
  SESS_ID_RULE,
  TOOL_SET_RULE,
  type ValueRule,
  WAIT_CEILING_MS,
  WAIT_MS_RULE,
} from '../core/contract/rules.js';
import { DELIVERING_RETENTION_TEXT, MIN_DELIVERING_RETENTION_MS } from '../faces/wake/retention.js';
import { readWebhookEnv, type WebhookConfig } from '../faces/wake/webhook-config.js';
import { SessApiError, SessMcpError, type ToolSet } from '../index.js';
import { DEFAULT_SESS_ORIGIN, validateSessOrigin } from '../sess/index.js';

/** The environment variables the stdio server reads, by name. */
export const STDIO_ENV = {
  apiKey: 'SESS_API_KEY',
  apiOrigin: 'SESS_API_ORIGIN',
  profile: 'SESS_MCP_PROFILE',
  stateDir: 'SESS_MCP_STATE_DIR',
  maxWaitMs: 'SESS_MCP_MAX_WAIT_MS',
  receiptIssuer: 'SESS_RECEIPT_ISSUER',
  expectedWorkspaceId: 'SESS_EXPECTED_WORKSPACE_ID',
  tools: 'SESS_MCP_TOOLS',
  inputSchemas: 'SESS_MCP_INPUT_SCHEMAS',
  instructions: 'SESS_MCP_INSTRUCTIONS',
  allowInsecureLocalhost: 'SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST',
  crashAt: 'SESS_MCP_TEST_CRASH_AT',
  claudeChannel: 'SESS_MCP_CLAUDE_CHANNEL',
  watch: 'SESS_MCP_WATCH',
  retention: 'SESS_MCP_RETENTION',
} as const;

/** The environment shape the server reads (`process.env` fits). */
export type EnvLike = Readonly<Record<string, string | undefined>>;

// The default profile name is the file store's own (`rules.ts`), re-exported under this entry.
export { DEFAULT_PROFILE };

/** Everything but the API key, checked. */
export interface StdioConfig {
  /** The Sess API origin, as validated (`SESS_API_ORIGIN`). @default 'https://api.sess.si' */
  apiOrigin: string;
  /** The profile name (`SESS_MCP_PROFILE`). @default 'default' */
  profile: string;
  /** The absolute state directory (`SESS_MCP_STATE_DIR` or the platform default). */
  stateDir: string;
  /** The profile's own directory: `<stateDir>/profiles/<profile>`. */
  profileDir: string;
  /** The lowered wait ceiling (`SESS_MCP_MAX_WAIT_MS`), when set. */
  maxWaitMs?: number;
  /** The receipt issuer when it differs from the API origin (`SESS_RECEIPT_ISSUER`). */
  receiptIssuer?: string;
  /** The trusted workspace (`SESS_EXPECTED_WORKSPACE_ID`). */
  expectedWorkspaceId?: string;
  /**
   * The tool set to list (`SESS_MCP_TOOLS`): `sess-mcp-tools/5` lists only its five tools.
   * Unset: every tool.
   */
  tools?: ToolSet;
  /**
   * The form of the listed input schemas (`SESS_MCP_INPUT_SCHEMAS`): `flat` lists them without
   * `anyOf`/`oneOf`, for a client that rewrites unions before it validates. Unset: `exact`.
   */
  inputSchemas?: 'exact' | 'flat';
  /**
   * The form of the server instructions (`SESS_MCP_INSTRUCTIONS`): `short` sends the essentials
   * in at most 512 UTF-16 code units, for a host that cuts them there. Unset: `full`.
   */
  instructions?: InstructionsForm;
  /** Testing only (`SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1`): allow `http://` loopback origins. */
  allowInsecureLocalhost: boolean;
  /**
   * Testing only: the durable step at which the process kills itself (`SESS_MCP_TEST_CRASH_AT`),
   * e.g. `publish.after_request_sent`, or `publish.after_request_sent@2` for the second time the
   * step is reached in this process. Honoured only together with `allowInsecureLocalhost`;
   * otherwise undefined.
   */
  crashAt?: string;
  /**
   * Where events are delivered as Standard Webhooks (`SESS_MCP_WEBHOOK_URL`,
   * `SESS_MCP_WEBHOOK_SECRET`, `SESS_MCP_WEBHOOK_ALLOW_PRIVATE`); unset: no webhook.
   */
  webhook?: WebhookConfig;
  /**
   * Opt-in (`SESS_MCP_CLAUDE_CHANNEL=1`): declare Claude Code's `claude/channel` capability and
   * send each event to the connected client as `notifications/claude/channel`.
   */
  claudeChannel: boolean;
  /**
   * Whether the server watches its profile's waiting interactions between tool calls
   * (`SESS_MCP_WATCH`; `0` turns it off, and then results carry no `wake`). @default true
   */
  watch: boolean;
  /**
   * How long the watcher keeps a finished record before removing it, in milliseconds
   * (`SESS_MCP_RETENTION`: a duration such as `30d` or `12h`, or `off` to keep every record).
   * @default 2592000000 (30 days)
   */
  retentionMs: number | false;
}

/** Platform facts the defaults depend on; tests pass their own. */
export interface StdioConfigPlatform {
  /** `process.platform`. */
  platform?: string;
  /** The home directory, when `HOME` is not set. */
  homedir?: () => string;
}

const CRASH_STEP_PATTERN = /^[a-z][a-z_]*\.[a-z][a-z_]*(@[1-9][0-9]{0,3})?$/;

/** The variable each configuration error is about, by error (the message names it too). */
const VARIABLE_OF = new WeakMap<SessMcpError, string>();

function notConfigured(variable: string, message: string): SessMcpError {
  const error = new SessMcpError('NOT_CONFIGURED', message, { retryable: false });
  VARIABLE_OF.set(error, variable);
  return error;
}

/**
 * The name of the variable a {@link readStdioConfig} error is about (`SESS_API_ORIGIN`, …), for a
 * diagnostic that must name it without its value; `undefined` for any other error.
 */
export function configVariableOf(error: unknown): string | undefined {
  return error instanceof SessMcpError ? VARIABLE_OF.get(error) : undefined;
}

/**
 * True when `value` is a host's placeholder that was never substituted (`${env:SESS_API_KEY}`,
 * `${SESS_API_KEY}`, `$SESS_API_KEY`) rather than a value: a host configuration copied without the
 * host expanding it.
 */
export function isUnexpandedPlaceholder(value: string): boolean {
  return /^\$\{[^}]*\}$/.test(value) || /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(value);
}

/** The message for an API key that is an unexpanded placeholder; it never repeats the value. */
export const PLACEHOLDER_KEY_MESSAGE = `${STDIO_ENV.apiKey} holds a placeholder such as \${env:${STDIO_ENV.apiKey}} that the host did not substitute, not a key. Put the key itself in the server's environment, or use the host's own syntax for environment variables, then restart the server.`;

/** An optional variable: unset and empty both mean "not set" (hosts expand missing vars to ""). */
function optional(env: EnvLike, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A variable that takes one of a rule's values: the value, or `undefined` when unset or empty.
 * @throws SessMcpError `NOT_CONFIGURED` naming the variable, its values and what unset means.
 */
function ruled<T extends string>(
  env: EnvLike,
  name: string,
  rule: ValueRule<T>,
  unsetMeans: string,
): T | undefined {
  const value = optional(env, name);
  if (value === undefined) return undefined;
  if (!rule.test(value)) {
    throw notConfigured(
      name,
      `${name} must be ${rule.text.replaceAll('"', '')}, or unset for ${unsetMeans}.`,
    );
  }
  return value;
}

/**
 * Read and check the configuration (all but the key).
 *
 * @throws SessMcpError `NOT_CONFIGURED` naming the variable and the rule, never its value.
 * @example
 * ```ts source="examples/snippets/stdio.examples.ts#readStdioConfig"
 * const config = readStdioConfig(process.env);
 * // config.profileDir === '/home/me/.local/state/sess-mcp/profiles/default'
 * ```
 */
export function readStdioConfig(env: EnvLike, platform: StdioConfigPlatform = {}): StdioConfig {
  const os = platform.platform ?? process.platform;
  const path = os === 'win32' ? win32Path : posixPath;

  const allowInsecureLocalhost = readFlag(env, STDIO_ENV.allowInsecureLocalhost);
  const apiOrigin = readOrigin(env, allowInsecureLocalhost);

  const profile = optional(env, STDIO_ENV.profile) ?? DEFAULT_PROFILE;
  if (!PROFILE_NAME_RULE.test(profile)) {
    throw notConfigured(STDIO_ENV.profile, `${STDIO_ENV.profile} must be ${PROFILE_NAME_RULE.text}.`);
  }

  const stateDir = readStateDir(env, os, path, platform.homedir ?? osHomedir);
  const config: StdioConfig = {
    apiOrigin,
    profile,
    stateDir,
    profileDir: profileDirectory(path.join, stateDir, profile),
    allowInsecureLocalhost,
    claudeChannel: readFlag(env, STDIO_ENV.claudeChannel),
    watch: readWatch(env),
    retentionMs: readRetention(env),
  };

  const maxWait = optional(env, STDIO_ENV.maxWaitMs);
  if (maxWait !== undefined) {
    // Digits only: `Number()` would also take `1e3`, ` 12` or `0x10`.
    const ms = /^[0-9]{1,5}$/.test(maxWait) ? Number(maxWait) : Number.NaN;
    if (!WAIT_MS_RULE.test(ms)) {
      throw notConfigured(
        STDIO_ENV.maxWaitMs,
        `${STDIO_ENV.maxWaitMs} must be ${WAIT_MS_RULE.text}; it can only lower the ${WAIT_CEILING_MS} ms wait ceiling.`,
      );
    }
    config.maxWaitMs = ms;
  }

  const issuer = optional(env, STDIO_ENV.receiptIssuer);
  if (issuer !== undefined) {
    if (!RECEIPT_ISSUER_RULE.test(issuer)) {
      throw notConfigured(
        STDIO_ENV.receiptIssuer,
        `${STDIO_ENV.receiptIssuer} must be ${RECEIPT_ISSUER_RULE.text}.`,
      );
    }
    config.receiptIssuer = issuer;
  }

  const workspace = optional(env, STDIO_ENV.expectedWorkspaceId);
  if (workspace !== undefined) {
    if (!SESS_ID_RULE.test(workspace)) {
      throw notConfigured(
        STDIO_ENV.expectedWorkspaceId,
        `${STDIO_ENV.expectedWorkspaceId} must be a workspace ID: ${SESS_ID_RULE.text}.`,
      );
    }
    config.expectedWorkspaceId = workspace;
  }

  const tools = ruled(env, STDIO_ENV.tools, TOOL_SET_RULE, 'every tool');
  if (tools !== undefined) config.tools = tools;
  const inputSchemas = ruled(env, STDIO_ENV.inputSchemas, INPUT_SCHEMAS_RULE, 'exact');
  if (inputSchemas !== undefined) config.inputSchemas = inputSchemas;
  const instructions = ruled(env, STDIO_ENV.instructions, INSTRUCTIONS_FORM_RULE, 'full');
  if (instructions !== undefined) config.instructions = instructions;

  const crashAt = optional(env, STDIO_ENV.crashAt);
  if (crashAt !== undefined && allowInsecureLocalhost) {
    if (!CRASH_STEP_PATTERN.test(crashAt)) {
      throw notConfigured(
        STDIO_ENV.crashAt,
        `${STDIO_ENV.crashAt} must be a step name such as create.after_intent_saved, optionally with @N for its Nth time.`,
      );
    }
    config.crashAt = crashAt;
  }
  const webhook = readWebhookEnv(env, { allowInsecureLocalhost, notConfigured });
  if (webhook !== undefined) config.webhook = webhook;
  const delivers = webhook !== undefined || config.claudeChannel;
  if (delivers && config.retentionMs !== false && config.retentionMs < MIN_DELIVERING_RETENTION_MS) {
    throw notConfigured(STDIO_ENV.retention, `${STDIO_ENV.retention} must be ${DELIVERING_RETENTION_TEXT}.`);
  }
  return config;
}

/** `SESS_MCP_WATCH`: on unless `0`. */
function readWatch(env: EnvLike): boolean {
  const value = optional(env, STDIO_ENV.watch);
  if (value === undefined || value === '1') return true;
  if (value === '0') return false;
  throw notConfigured(STDIO_ENV.watch, `${STDIO_ENV.watch} must be 0, 1 or unset.`);
}

function readRetention(env: EnvLike): number | false {
  const value = optional(env, STDIO_ENV.retention);
  if (value === undefined) return DEFAULT_RETENTION_MS;
  if (value === 'off') return false;
  const ms = durationMs(value);
  if (ms === undefined) {
    throw notConfigured(STDIO_ENV.retention, `${STDIO_ENV.retention} must be ${DURATION_TEXT}, or off.`);
  }
  return ms;
}

function readFlag(env: EnvLike, name: string): boolean {
  const value = optional(env, name);
  if (value === undefined || value === '0') return false;
  if (value === '1') return true;
  throw notConfigured(name, `${name} must be 1 or unset.`);
}

function readOrigin(env: EnvLike, allowInsecureLocalhost: boolean): string {
  const raw = optional(env, STDIO_ENV.apiOrigin);
  if (raw === undefined) return DEFAULT_SESS_ORIGIN;
  try {
    return validateSessOrigin(raw, { allowInsecureLocalhost });
  } catch (error) {
    // The client's message names the rule and never repeats the value (which may hold credentials).
    const reason = error instanceof SessApiError ? error.message : 'it is not a valid origin.';
    throw notConfigured(
      STDIO_ENV.apiOrigin,
      `${STDIO_ENV.apiOrigin} is not usable: ${reason} Use an HTTPS origin without path, query, fragment or credentials, such as ${DEFAULT_SESS_ORIGIN}.`,
    );
  }
}

function readStateDir(env: EnvLike, os: string, path: typeof posixPath, homedir: () => string): string {
  const explicit = optional(env, STDIO_ENV.stateDir);
  if (explicit !== undefined) {
    if (explicit.includes('\0') || !path.isAbsolute(explicit)) {
      throw notConfigured(STDIO_ENV.stateDir, `${STDIO_ENV.stateDir} must be an absolute path.`);
    }
    return path.resolve(explicit);
  }
  if (os === 'win32') {
    const local = optional(env, 'LOCALAPPDATA');
    if (local === undefined || !path.isAbsolute(local)) {
      throw notConfigured(
        STDIO_ENV.stateDir,
        `Set ${STDIO_ENV.stateDir} to an absolute path: LOCALAPPDATA is not an absolute path.`,
      );
    }
    return path.join(path.resolve(local), 'sess-mcp');
  }
  // XDG: a relative XDG_STATE_HOME is invalid and must be ignored.
  const xdg = optional(env, 'XDG_STATE_HOME');
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(path.resolve(xdg), 'sess-mcp');
  let home = optional(env, 'HOME');
  if (home === undefined) {
    try {
      home = homedir();
    } catch {
      home = undefined;
    }
  }
  if (home === undefined || home === '' || !path.isAbsolute(home)) {
    throw notConfigured(
      STDIO_ENV.stateDir,
      `Set ${STDIO_ENV.stateDir} to an absolute path: no home directory was found.`,
    );
  }
  return path.join(path.resolve(home), '.local', 'state', 'sess-mcp');
}
