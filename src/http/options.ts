/**
 * The options of `createSessMcpHttpHandler` and the principal a host's `authenticate` returns,
 * and their validation at construction: a bad option is a `TypeError` naming it, before any
 * request.
 *
 * It looks at no request: the preflight's stages apply the checked options to each request
 * (`preflight/host.ts`, `preflight/origin.ts`, `preflight/auth.ts`). It does not authenticate (the
 * host does), does not store (the host's `handleStore` does) and never reads the environment.
 */

import { MAX_TIMER_MS, type OptionReader, optionNames, readOptions } from '../core/contract/options.js';
import {
  HTTP_BINDING_RULE,
  type HttpBindingMode,
  INPUT_SCHEMAS_RULE,
  INSTRUCTIONS_FORM_RULE,
  type InstructionsForm,
  RECEIPT_ISSUER_RULE,
  readTelemetryOption,
  SESS_ID_RULE,
  type SessMcpTelemetryOptions,
  TOOL_SET_RULE,
  WAIT_CAP_RANGES,
  WAIT_MS_RULE,
  type WaitCap,
} from '../core/contract/rules.js';
import {
  DEFAULT_MAX_OPEN_PER_PRINCIPAL,
  type DiagnosticsSink,
  type HandleStore,
  type HttpBinding,
  MAX_OPEN_PER_PRINCIPAL,
  type ToolSet,
  type WaitGate,
} from '../index.js';
import { DEFAULT_SESS_ORIGIN, validateSessOrigin } from '../sess/index.js';
import {
  type ResolvedHealthOptions,
  readHealthOptions,
  type SessMcpHealthOptions,
} from './health-options.js';
import { hostParts } from './host-syntax.js';

/**
 * Who is calling, as the hosting runtime's `authenticate` established it. Handles are bound to
 * `workspaceId`, `principalId`, `clientId`, `grantId` and `grantGeneration` (and the Sess origin);
 * with the handler's `binding: 'principal'`, to `workspaceId` and `principalId`, and refused only
 * to their own `clientId` and `grantId` at another `grantGeneration`.
 */
export interface SessHttpPrincipal {
  /**
   * The Sess workspace the caller acts in: the id of the workspace the key `credential()`
   * returns belongs to (1–128 of `A–Z a–z 0–9 . _ : -`; `sess-mcp local` prints its runtime's).
   * Checked, not a label: a Sess answer naming another workspace makes the tool call
   * `NOT_CONFIGURED` naming `principal.workspaceId`, and before a create the key's workspace is
   * learnt first, so nothing is created in another workspace. Another value here than a Sess
   * workspace id is refused as `http.principal_invalid`.
   */
  workspaceId: string;
  /** The person (or service) the grant belongs to. */
  principalId: string;
  /** The OAuth client (the agent host) the grant was issued to. */
  clientId: string;
  /** The grant: one consent of `principalId` for `clientId`. */
  grantId: string;
  /**
   * Changes when the grant is revoked and re-issued; stays the same across token refreshes.
   * Handles of an older generation get `BINDING_MISMATCH`.
   */
  grantGeneration: string;
  /** The scopes the request's credentials carry; checked against `requiredScopes`. */
  scopes: readonly string[];
  /**
   * The credential Sess API calls use (never the MCP bearer token). Called per Sess call; the
   * value is never logged, stored or shown to a tool.
   */
  credential(): string | Promise<string>;
}

/** Options of `createSessMcpHttpHandler`. */
export interface SessMcpHttpHandlerOptions {
  /**
   * Verify the request's credentials from its method, URL and headers (the body is not readable
   * here) and return the principal, or `undefined` when there is none (`401`). Called exactly once
   * per request, after the Host and Origin checks. A throw answers `500` without its message; no
   * answer before `requestDeadlineMs` answers `503`.
   */
  authenticate(request: Request): SessHttpPrincipal | undefined | Promise<SessHttpPrincipal | undefined>;
  /**
   * The handle store for one binding. Called at most once per request, on the first tool call.
   * The engine re-checks every record it loads against `binding`, whatever the store returns.
   */
  handleStore(binding: HttpBinding, principal: SessHttpPrincipal): HandleStore | Promise<HandleStore>;
  /**
   * Host names or `host:port` values the `Host` header must match. Required: it is the defence
   * against DNS rebinding. A bare host name matches on any port; `host:port` only on that port
   * (`mcp.example.com:80` matches `Host: mcp.example.com:80`, and `Host: mcp.example.com` on an
   * `http:` request, never `:8443`). IPv6 in brackets, e.g. `[::1]`.
   */
  allowedHosts: readonly string[];
  /**
   * Exact origins (`https://app.example.com`, scheme, host and port) a browser request's `Origin`
   * header must equal. A request without `Origin` (any non-browser client) is accepted.
   * @default [] (every request that carries an `Origin` header is refused)
   */
  allowedOrigins?: readonly string[];
  /** Scopes the principal must all hold; missing any answers `403 insufficient_scope`. */
  requiredScopes?: readonly string[];
  /** The RFC 9728 Protected Resource Metadata URL named in the `401`/`403` challenges. */
  resourceMetadataUrl?: string;
  /**
   * The largest request body read, in bytes; larger answers `413`.
   * @default 262144 (256 KiB)
   */
  maxBodyBytes?: number;
  /**
   * The deadline of one HTTP request, in milliseconds, absolute from the moment it enters the
   * handler: what the handler still waits on then ends. A body not arrived answers `408`, an
   * `authenticate` not answered `503`, and the request's Sess reads and waits stop (a
   * `sess_response` wait in flight ends as `needs_resume`). A create, publish or complete already
   * sent to Sess is never cut, so its answer may come after the deadline. It is not the timeout of
   * one Sess API call: the Sess client keeps its own (`DEFAULT_SESS_CALL_TIMEOUT_MS`, 30 s).
   * Formerly `requestTimeoutMs`, which is now refused.
   * @default 60000 ({@link DEFAULT_HTTP_REQUEST_DEADLINE_MS})
   */
  requestDeadlineMs?: number;
  /**
   * The Sess API origin.
   * @default 'https://api.sess.si'
   */
  sessOrigin?: string;
  /** Testing only: allow an `http://localhost`, `127.0.0.1` or `[::1]` Sess origin. */
  allowInsecureLocalhost?: boolean;
  /**
   * The trusted workspace for receipts, for a runtime that does not return `Sess-Workspace-Id`:
   * a Sess id, 1 to 128 characters of `A-Z a-z 0-9 . _ : -`.
   */
  expectedWorkspaceId?: string;
  /**
   * The receipt issuer, if it differs from the Sess origin: printable ASCII without spaces, at most
   * 2048 characters.
   */
  receiptIssuer?: string;
  /**
   * Lower the ceiling of one `sess_response` wait: a whole number of milliseconds from 0 to
   * 45 000. `0` makes every `sess_response` answer at once, for hosts whose tool calls must not
   * hold a request open.
   * @default 45000
   */
  maxWaitMs?: number;
  /**
   * The most upstream Sess waits one caller (binding scope: a principal through one client and
   * grant) holds at once through this handler, a whole number from 1 to 10 000. Waits on the same
   * Session share one upstream long-poll and count once; a wait over a cap first reads the
   * Session once (an answer that exists is returned at once), then queues within its own
   * `wait_ms`. No cap fails a wait. The caps are per handler: a host running several instances
   * lets one caller hold this many waits in each.
   * @default 8
   */
  maxConcurrentWaits?: number;
  /**
   * The wait gate the handler's `sess_response` waits go through, when the host shares one: pass
   * the same gate (`createWaitGate()`) to the watcher (`createSessMcpWatcher`), so a tool call's
   * wait and the watcher's poll on one Session share one upstream long-poll and the watcher keeps
   * within half of each of the gate's caps. The gate has its caps: with it, `maxConcurrentWaits`,
   * `maxPrincipalWaits`, `maxTotalWaits` and `maxQueuedWaits` are refused (give them to
   * `createWaitGate`).
   * @default a gate of the handler's own, with the caps above
   */
  waitGate?: WaitGate;
  /**
   * The most unfinished interactions one principal may hold over all its clients and grants, so
   * one caller cannot fill the Sess plan shared by everyone on this endpoint (and new client
   * registrations do not multiply it). A create over it is refused with `PRINCIPAL_QUOTA_REACHED`
   * before Sess is called. Size it so that quota × principals active at once ≤ the plan's limit
   * of open Sessions. A whole number from 1 to 100 000.
   * @default 25 (`DEFAULT_MAX_OPEN_PER_PRINCIPAL`)
   */
  maxOpenPerPrincipal?: number;
  /**
   * What a handle is bound to. `'grant'`: the client and grant it was made through, so another
   * client of the same person (a new dynamic client registration on a fresh connection) gets
   * `HANDLE_NOT_FOUND`. `'principal'`: the person (origin, workspace, principal), so every client
   * and grant they sign in through sees, answers and lists the handles of the others; only the
   * grant a handle was made through, revoked and consented again (another `grantGeneration`),
   * gets `BINDING_MISMATCH`. Handles made under one mode are not reached under the other.
   * @default 'grant'
   */
  binding?: 'grant' | 'principal';
  /**
   * The most upstream Sess waits one principal holds at once through this handler, over all the
   * clients and grants it comes through (so registering more OAuth clients does not multiply
   * `maxConcurrentWaits`): a whole number from 1 to 1 000 000.
   * @default 16
   */
  maxPrincipalWaits?: number;
  /**
   * The most upstream Sess waits this handler holds at once, over every caller: a whole number
   * from 1 to 1 000 000. With every slot taken, the slots are shared fairly: a principal that
   * holds none takes over a slot of the principal holding the most within 500 ms (that upstream
   * wait starts again later; its tool call keeps waiting until its own `wait_ms`).
   * @default 256
   */
  maxTotalWaits?: number;
  /**
   * The most waits of one principal queued behind the caps at once: a whole number from 1 to
   * 1 000 000. A `sess_response` past it reads the Session once and ends at once with the state
   * as it stands (`waiting` with its usual guidance, or the answer already there), never an HTTP
   * error; so no caller holds more than this many requests open in the queue.
   * @default 64
   */
  maxQueuedWaits?: number;
  /**
   * Which tools `tools/list` shows: `'sess-mcp-tools/5'` lists only its five tools (and the
   * instructions for them), for clients that should see exactly that set.
   * @default 'sess-mcp-tools/6' (every tool)
   */
  tools?: ToolSet;
  /**
   * How `tools/list` shows each tool's `inputSchema`: `'exact'`, the schemas as generated, or
   * `'flat'`, the same schemas without `anyOf`/`oneOf`, for a client that rewrites unions before
   * it validates (LangChain.js's `@langchain/mcp-adapters`). Every call is validated the same way
   * with either.
   * @default 'exact'
   */
  inputSchemas?: 'exact' | 'flat';
  /**
   * Which server instructions `initialize` sends: `'full'`, or `'short'`, the essentials in at
   * most 512 UTF-16 code units, for a host that cuts instructions there (Mastra forwards 512 by
   * default). `docs/hosts.md` says which form each host needs.
   * @default 'full'
   */
  instructions?: InstructionsForm;
  /**
   * Where diagnostics go: fixed event names, codes, durations and names, never a link, token,
   * credential or answer; the one value a request carried that an event holds is the refused
   * `Host` or `Origin` (`received`, escaped and at most 200 characters). Besides the engine's own
   * events (`tool_result`, `tool_error`, …) the handler reports `http.request_done` (with `ms`)
   * for every request and, when it refuses one, `http.host_rejected`, `http.origin_rejected`,
   * `http.method_rejected`, `http.unauthenticated`, `http.insufficient_scope`,
   * `http.authenticate_failed`, `http.authenticate_timeout`, `http.principal_invalid`,
   * `http.body_too_large`, `http.unsupported_media_type`, `http.body_timeout`, `http.body_failed`,
   * `http.body_consumed` (a body parser mounted before the handler read the body),
   * `http.unsafe_key`, `http.closed` or `http.internal_error`; also `http.cancelled`,
   * `http.sdk_error`, `http.store_unavailable` and `http.store_invalid`. `http.host_rejected` and
   * `http.origin_rejected` name the option to change (`variable`: `allowedHosts`,
   * `allowedOrigins`) and the value received (`received`); `http.principal_invalid` names the
   * principal's `field` that `authenticate` got wrong and what it must be (`expected`), never its
   * value. A sink that throws is ignored.
   */
  diagnostics?: DiagnosticsSink;
  /**
   * Where spans and metrics go: the host's OpenTelemetry providers (`docs/operate.md` lists what
   * is emitted). Attributes never carry a link, key, token, answer value or free text.
   * @default the global providers of `@opentelemetry/api` (a no-op until the host registers an SDK)
   */
  telemetry?: SessMcpTelemetryOptions;
  /**
   * Health checks for a load balancer or an orchestrator: the store whose readiness gates this
   * instance (`store`, required here), and the paths `fetch` and `node` answer in front of the
   * MCP endpoint, readiness on `path` and liveness on `livePath`, without the Host, Origin or
   * authentication checks. Readiness never calls Sess. `authorize` decides who sees the details
   * (the store check's outcome, the receipt key set's state); everyone else gets `ok` or
   * `unavailable`. Without this option, `handler.ready` answers `503` (no store to check) and no
   * path is answered.
   * @default no health paths
   */
  health?: SessMcpHealthOptions;
}

/** The options after validation, with defaults filled in. */
export interface ResolvedHttpOptions {
  authenticate: SessMcpHttpHandlerOptions['authenticate'];
  handleStore: SessMcpHttpHandlerOptions['handleStore'];
  /** Lower-case entries; with a port they match `host:port` exactly, without any port. */
  allowedHosts: readonly string[];
  /** Serialised origins (`URL.origin`). */
  allowedOrigins: ReadonlySet<string>;
  requiredScopes: readonly string[];
  resourceMetadataUrl: string | undefined;
  maxBodyBytes: number;
  requestDeadlineMs: number;
  sessOrigin: string;
  allowInsecureLocalhost: boolean;
  expectedWorkspaceId: string | undefined;
  receiptIssuer: string | undefined;
  maxWaitMs: number | undefined;
  /** The wait gate's caps as given; the gate fills in its defaults. */
  waitCaps: Partial<Record<WaitCap, number>>;
  /** The host's own gate, when it shares one (then `waitCaps` is empty). */
  waitGate: WaitGate | undefined;
  maxOpenPerPrincipal: number;
  binding: HttpBindingMode;
  tools: ToolSet | undefined;
  inputSchemas: 'exact' | 'flat' | undefined;
  instructions: InstructionsForm | undefined;
  diagnostics: DiagnosticsSink;
  telemetry: SessMcpTelemetryOptions | undefined;
  health: ResolvedHealthOptions;
}

/** Default `maxBodyBytes`: 256 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
/** Default `requestDeadlineMs`: 60 s for one HTTP request, from its arrival. */
export const DEFAULT_HTTP_REQUEST_DEADLINE_MS = 60_000;
/** The largest `maxBodyBytes` taken: 1 GiB. */
const MAX_BODY_BYTES_LIMIT = 2 ** 30;

const FACTORY = 'createSessMcpHttpHandler';

/** Options refused under their old name, old → new. */
const RENAMED_OPTIONS = { requestTimeoutMs: 'requestDeadlineMs' } as const;

/** The option names of {@link SessMcpHttpHandlerOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<SessMcpHttpHandlerOptions>()(
  'authenticate',
  'handleStore',
  'allowedHosts',
  'allowedOrigins',
  'requiredScopes',
  'resourceMetadataUrl',
  'maxBodyBytes',
  'requestDeadlineMs',
  'sessOrigin',
  'allowInsecureLocalhost',
  'expectedWorkspaceId',
  'receiptIssuer',
  'maxWaitMs',
  'maxConcurrentWaits',
  'maxPrincipalWaits',
  'maxTotalWaits',
  'maxQueuedWaits',
  'waitGate',
  'maxOpenPerPrincipal',
  'binding',
  'tools',
  'inputSchemas',
  'instructions',
  'diagnostics',
  'telemetry',
  'health',
);

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function stringList(
  read: OptionReader,
  option: string,
  value: unknown,
  required: boolean,
): readonly string[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || (required && value.length === 0)) {
    read.fail(option, required ? 'must be a non-empty array of strings' : 'must be an array of strings');
  }
  for (const entry of value as unknown[]) {
    if (!isNonEmptyString(entry)) read.fail(option, 'must hold only non-empty strings');
  }
  return value as readonly string[];
}

/** `host` or `host:port`, lower-case, IPv6 in brackets, the port as given; nothing else. */
function normaliseHost(read: OptionReader, entry: string): string {
  const parts = hostParts(entry);
  // The URL parser maps some spellings (IDNA, numeric IPv4 forms): refuse an entry it changed, so
  // the allowlist holds what the host wrote.
  const given = entry.toLowerCase();
  const bare =
    parts === undefined ? undefined : parts.port === '' ? parts.hostname : `${parts.hostname}:${parts.port}`;
  if (bare === undefined || bare !== given) {
    read.fail('allowedHosts', 'has an entry that is not a host name or host:port');
  }
  return bare as string;
}

function normaliseOrigin(read: OptionReader, entry: string): string {
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    read.fail('allowedOrigins', 'has an entry that is not an origin like https://app.example.com');
  }
  const origin = (url as URL).origin;
  if (origin === 'null' || origin !== entry.replace(/\/$/, '').toLowerCase()) {
    read.fail('allowedOrigins', 'has an entry that is not an origin like https://app.example.com (no path)');
  }
  return origin;
}

function resourceMetadataUrlOf(read: OptionReader, value: unknown): string | undefined {
  const given = read.optionalString('resourceMetadataUrl', value);
  if (given === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:') || /["\\]/.test(given)) {
    read.fail('resourceMetadataUrl', 'must be an absolute http(s) URL');
  }
  return given;
}

/** The host's shared gate, checked: a gate of `createWaitGate`, given without caps of its own. */
function waitGateOf(
  read: OptionReader,
  value: unknown,
  caps: Partial<Record<WaitCap, number>>,
): WaitGate | undefined {
  if (value === undefined) return undefined;
  const gate = value as Partial<WaitGate> | null;
  if (
    gate === null ||
    typeof gate !== 'object' ||
    typeof gate.wait !== 'function' ||
    typeof gate.running !== 'function' ||
    typeof gate.maxConcurrentWaits !== 'number'
  ) {
    read.fail('waitGate', 'must be a wait gate (createWaitGate)');
  }
  const given = Object.keys(caps)[0];
  if (given !== undefined) {
    read.fail(
      given,
      'cannot be given with "waitGate": the gate has its own caps (give them to createWaitGate)',
    );
  }
  return value as WaitGate;
}

/**
 * Validate the options and fill in defaults.
 * @throws {TypeError} `createSessMcpHttpHandler: option "<name>" <rule>.` for the first bad option.
 */
export function resolveHttpOptions(options: SessMcpHttpHandlerOptions): ResolvedHttpOptions {
  const read = readOptions(FACTORY, options, { known: KNOWN_OPTIONS, renamed: RENAMED_OPTIONS });
  const authenticate = read.func<SessMcpHttpHandlerOptions['authenticate']>(
    'authenticate',
    options.authenticate,
  );
  const handleStore = read.func<SessMcpHttpHandlerOptions['handleStore']>('handleStore', options.handleStore);
  const allowedHosts = stringList(read, 'allowedHosts', options.allowedHosts, true).map((entry) =>
    normaliseHost(read, entry),
  );
  const allowedOrigins = new Set(
    stringList(read, 'allowedOrigins', options.allowedOrigins, false).map((entry) =>
      normaliseOrigin(read, entry),
    ),
  );
  const requiredScopes = stringList(read, 'requiredScopes', options.requiredScopes, false);
  for (const scope of requiredScopes) {
    if (/[\s"\\]/.test(scope)) read.fail('requiredScopes', 'has a scope with a space, quote or backslash');
  }
  const resourceMetadataUrl = resourceMetadataUrlOf(read, options.resourceMetadataUrl);
  const maxBodyBytes = read.integer(
    'maxBodyBytes',
    options.maxBodyBytes,
    { min: 1, max: MAX_BODY_BYTES_LIMIT },
    DEFAULT_MAX_BODY_BYTES,
  );
  const requestDeadlineMs = read.integer(
    'requestDeadlineMs',
    options.requestDeadlineMs,
    { min: 1, max: MAX_TIMER_MS },
    DEFAULT_HTTP_REQUEST_DEADLINE_MS,
  );
  if (options.maxWaitMs !== undefined && !WAIT_MS_RULE.test(options.maxWaitMs)) {
    read.fail('maxWaitMs', `must be ${WAIT_MS_RULE.text}`);
  }
  // The gate fills in its own defaults; only given values are checked here.
  const waitCaps: Partial<Record<WaitCap, number>> = {};
  for (const cap of Object.keys(WAIT_CAP_RANGES) as WaitCap[]) {
    const value = read.optionalInteger(cap, options[cap], WAIT_CAP_RANGES[cap]);
    if (value !== undefined) waitCaps[cap] = value;
  }
  const waitGate = waitGateOf(read, options.waitGate, waitCaps);
  const maxOpenPerPrincipal = read.integer(
    'maxOpenPerPrincipal',
    options.maxOpenPerPrincipal,
    { min: 1, max: MAX_OPEN_PER_PRINCIPAL },
    DEFAULT_MAX_OPEN_PER_PRINCIPAL,
  );
  const binding = (read.optionalRule('binding', options.binding, HTTP_BINDING_RULE) ??
    'grant') as HttpBindingMode;
  const tools = read.optionalRule('tools', options.tools, TOOL_SET_RULE) as ToolSet | undefined;
  const inputSchemas = read.optionalRule('inputSchemas', options.inputSchemas, INPUT_SCHEMAS_RULE) as
    | 'exact'
    | 'flat'
    | undefined;
  const instructions = read.optionalRule('instructions', options.instructions, INSTRUCTIONS_FORM_RULE) as
    | InstructionsForm
    | undefined;
  const { allowInsecureLocalhost, sessOrigin } = readSessOrigin(read, options);
  const expectedWorkspaceId = read.optionalRule(
    'expectedWorkspaceId',
    options.expectedWorkspaceId,
    SESS_ID_RULE,
  );
  const receiptIssuer = read.optionalRule('receiptIssuer', options.receiptIssuer, RECEIPT_ISSUER_RULE);
  const sink = read.func<DiagnosticsSink>('diagnostics', options.diagnostics, true);
  const diagnostics: DiagnosticsSink =
    sink === undefined
      ? () => {}
      : (event) => {
          try {
            sink(event);
          } catch {
            // A failing sink must never change an answer.
          }
        };
  const telemetry = readTelemetryOption(read, options.telemetry);
  return {
    telemetry,
    authenticate,
    handleStore,
    allowedHosts,
    allowedOrigins,
    requiredScopes,
    resourceMetadataUrl,
    maxBodyBytes,
    requestDeadlineMs,
    sessOrigin,
    allowInsecureLocalhost,
    expectedWorkspaceId,
    receiptIssuer,
    maxWaitMs: options.maxWaitMs,
    waitCaps,
    waitGate,
    maxOpenPerPrincipal,
    binding,
    tools,
    inputSchemas,
    instructions,
    diagnostics,
    health: readHealthOptions(read, options.health),
  };
}

/**
 * `sessOrigin` and `allowInsecureLocalhost` of a face's options, checked: the handler's and the
 * watcher's one reading of them.
 */
export function readSessOrigin(
  read: OptionReader,
  options: { sessOrigin?: unknown; allowInsecureLocalhost?: unknown },
): { allowInsecureLocalhost: boolean; sessOrigin: string } {
  const allowInsecureLocalhost = read.boolean(
    'allowInsecureLocalhost',
    options.allowInsecureLocalhost,
    false,
  );
  const rawOrigin = read.optionalString('sessOrigin', options.sessOrigin) ?? DEFAULT_SESS_ORIGIN;
  let sessOrigin = rawOrigin;
  try {
    sessOrigin = validateSessOrigin(rawOrigin, { allowInsecureLocalhost });
  } catch (error) {
    // The origin checker's messages never repeat the input.
    read.fail(
      'sessOrigin',
      `is not usable: ${error instanceof Error ? error.message.replace(/\.$/, '') : 'invalid'}`,
    );
  }
  return { allowInsecureLocalhost, sessOrigin };
}
