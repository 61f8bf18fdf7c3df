/**
 * The options of `createSessMcpHttpHandler`, the principal a host's `authenticate` returns, and
 * their validation at construction: a bad option is a `TypeError` naming it, before any request.
 *
 * This module decides nothing about a request. It does not authenticate (the host does), it does
 * not store (the host's `handleStore` does) and it never reads the environment.
 */
import type { DiagnosticsSink, HandleStore, HttpBinding } from '../core/ports.js';
import { DEFAULT_SESS_ORIGIN, validateSessOrigin } from '../sess/origin.js';

/**
 * Who is calling, as the hosting runtime's `authenticate` established it. Handles are bound to
 * `workspaceId`, `principalId`, `clientId`, `grantId` and `grantGeneration` (and the Sess origin).
 */
export interface SessHttpPrincipal {
  /** The Sess workspace the caller acts in. */
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
   * answer before `requestTimeoutMs` answers `503`.
   */
  authenticate(request: Request): SessHttpPrincipal | undefined | Promise<SessHttpPrincipal | undefined>;
  /**
   * The handle store for one binding. Called at most once per request, on the first tool call.
   * The engine re-checks every record it loads against `binding`, whatever the store returns.
   */
  handleStore(binding: HttpBinding, principal: SessHttpPrincipal): HandleStore | Promise<HandleStore>;
  /**
   * Host names (any port) or `host:port` values the `Host` header must match. Required: it is the
   * defence against DNS rebinding. IPv6 in brackets, e.g. `[::1]`.
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
   * The request deadline, absolute from the moment the request enters the handler. A body not
   * arrived by then answers `408`, an `authenticate` not answered `503`; a `sess_response` wait
   * in flight ends as `needs_resume`. A create, publish or complete already sent is never cut.
   * @default 60000
   */
  requestTimeoutMs?: number;
  /**
   * The Sess API origin.
   * @default 'https://api.sess.si'
   */
  sessOrigin?: string;
  /** Testing only: allow an `http://localhost`, `127.0.0.1` or `[::1]` Sess origin. */
  allowInsecureLocalhost?: boolean;
  /** The trusted workspace for receipts, for a runtime that does not return `Sess-Workspace-Id`. */
  expectedWorkspaceId?: string;
  /** The receipt issuer, if it differs from the Sess origin. */
  receiptIssuer?: string;
  /**
   * Lower the ceiling of one `sess_response` wait (at most 45 000 ms).
   * @default 45000
   */
  maxWaitMs?: number;
  /**
   * Where diagnostics go: fixed event names, codes and durations only, never a link, token,
   * header or answer. Besides the engine's own events (`tool_result`, `tool_error`, …) the handler
   * reports `http.request_done` (with `ms`) for every request and, when it refuses one,
   * `http.host_rejected`, `http.origin_rejected`, `http.method_rejected`, `http.unauthenticated`,
   * `http.insufficient_scope`, `http.authenticate_failed`, `http.authenticate_timeout`,
   * `http.principal_invalid`, `http.body_too_large`, `http.unsupported_media_type`,
   * `http.body_timeout`, `http.body_failed`, `http.unsafe_key`, `http.closed` or
   * `http.internal_error`; also `http.cancelled`, `http.sdk_error`, `http.store_unavailable` and
   * `http.store_invalid`. A sink that throws is ignored.
   */
  diagnostics?: DiagnosticsSink;
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
  requestTimeoutMs: number;
  sessOrigin: string;
  allowInsecureLocalhost: boolean;
  expectedWorkspaceId: string | undefined;
  receiptIssuer: string | undefined;
  maxWaitMs: number | undefined;
  diagnostics: DiagnosticsSink;
}

/** Default `maxBodyBytes`: 256 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
/** Default `requestTimeoutMs`: 60 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** The wait ceiling of `sess-mcp-tools/5`; `maxWaitMs` may only lower it. */
export const WAIT_CEILING_MS = 45_000;
/** Setting a timer above this fires it at once in every runtime. */
const MAX_TIMER_MS = 2_147_483_647;

function fail(option: string, rule: string): never {
  throw new TypeError(`createSessMcpHttpHandler: option "${option}" ${rule}.`);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function positiveInteger(option: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > max) {
    fail(option, `must be a whole number from 1 to ${max}`);
  }
  return value;
}

function optionalString(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isNonEmptyString(value)) fail(option, 'must be a non-empty string');
  return value;
}

function stringList(option: string, value: unknown, required: boolean): readonly string[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || (required && value.length === 0)) {
    fail(option, required ? 'must be a non-empty array of strings' : 'must be an array of strings');
  }
  for (const entry of value) if (!isNonEmptyString(entry)) fail(option, 'must hold only non-empty strings');
  return value as readonly string[];
}

/** `host` or `host:port`, lower-case, IPv6 in brackets; nothing else. */
function normaliseHost(entry: string): string {
  let url: URL;
  try {
    url = new URL(`http://${entry}`);
  } catch {
    fail('allowedHosts', `has an entry that is not a host name or host:port`);
  }
  const bare = url.port === '' ? url.hostname : `${url.hostname}:${url.port}`;
  // The URL parser drops a default port and accepts paths or credentials: refuse anything it changed.
  const given = entry.toLowerCase().replace(/:80$/, '');
  if (
    url.pathname !== '/' ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    bare !== given
  ) {
    fail('allowedHosts', 'has an entry that is not a host name or host:port');
  }
  return bare;
}

function normaliseOrigin(entry: string): string {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    fail('allowedOrigins', 'has an entry that is not an origin like https://app.example.com');
  }
  if (url.origin === 'null' || url.origin !== entry.replace(/\/$/, '').toLowerCase()) {
    fail('allowedOrigins', 'has an entry that is not an origin like https://app.example.com (no path)');
  }
  return url.origin;
}

/**
 * Validate the options and fill in defaults.
 * @throws {TypeError} naming the first bad option.
 */
export function resolveHttpOptions(options: SessMcpHttpHandlerOptions): ResolvedHttpOptions {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('createSessMcpHttpHandler: options must be an object.');
  }
  if (typeof options.authenticate !== 'function') fail('authenticate', 'is required and must be a function');
  if (typeof options.handleStore !== 'function') fail('handleStore', 'is required and must be a function');
  const allowedHosts = stringList('allowedHosts', options.allowedHosts, true).map(normaliseHost);
  const allowedOrigins = new Set(
    stringList('allowedOrigins', options.allowedOrigins, false).map(normaliseOrigin),
  );
  const requiredScopes = stringList('requiredScopes', options.requiredScopes, false);
  for (const scope of requiredScopes) {
    if (/[\s"\\]/.test(scope)) fail('requiredScopes', 'has a scope with a space, quote or backslash');
  }
  const resourceMetadataUrl = optionalString('resourceMetadataUrl', options.resourceMetadataUrl);
  if (resourceMetadataUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(resourceMetadataUrl);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      (url.protocol !== 'https:' && url.protocol !== 'http:') ||
      /["\\]/.test(resourceMetadataUrl)
    ) {
      fail('resourceMetadataUrl', 'must be an absolute http(s) URL');
    }
  }
  const maxBodyBytes = positiveInteger('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, 2 ** 30);
  const requestTimeoutMs = positiveInteger(
    'requestTimeoutMs',
    options.requestTimeoutMs,
    DEFAULT_REQUEST_TIMEOUT_MS,
    MAX_TIMER_MS,
  );
  const maxWaitMs =
    options.maxWaitMs === undefined
      ? undefined
      : positiveInteger('maxWaitMs', options.maxWaitMs, WAIT_CEILING_MS, WAIT_CEILING_MS);
  if (options.allowInsecureLocalhost !== undefined && typeof options.allowInsecureLocalhost !== 'boolean') {
    fail('allowInsecureLocalhost', 'must be a boolean');
  }
  const allowInsecureLocalhost = options.allowInsecureLocalhost === true;
  const rawOrigin = optionalString('sessOrigin', options.sessOrigin) ?? DEFAULT_SESS_ORIGIN;
  let sessOrigin: string;
  try {
    sessOrigin = validateSessOrigin(rawOrigin, { allowInsecureLocalhost });
  } catch (error) {
    // The origin checker's messages never repeat the input.
    fail('sessOrigin', `is not usable: ${error instanceof Error ? error.message : 'invalid'}`);
  }
  if (options.diagnostics !== undefined && typeof options.diagnostics !== 'function') {
    fail('diagnostics', 'must be a function');
  }
  const sink = options.diagnostics;
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
  return {
    authenticate: options.authenticate,
    handleStore: options.handleStore,
    allowedHosts,
    allowedOrigins,
    requiredScopes,
    resourceMetadataUrl,
    maxBodyBytes,
    requestTimeoutMs,
    sessOrigin,
    allowInsecureLocalhost,
    expectedWorkspaceId: optionalString('expectedWorkspaceId', options.expectedWorkspaceId),
    receiptIssuer: optionalString('receiptIssuer', options.receiptIssuer),
    maxWaitMs,
    diagnostics,
  };
}

/** True when `value` has every field of a {@link SessHttpPrincipal} with the right type. */
export function isPrincipal(value: unknown): value is SessHttpPrincipal {
  if (value === null || typeof value !== 'object') return false;
  const p = value as Record<string, unknown>;
  return (
    isNonEmptyString(p.workspaceId) &&
    isNonEmptyString(p.principalId) &&
    isNonEmptyString(p.clientId) &&
    isNonEmptyString(p.grantId) &&
    isNonEmptyString(p.grantGeneration) &&
    Array.isArray(p.scopes) &&
    p.scopes.every((s) => typeof s === 'string') &&
    typeof p.credential === 'function'
  );
}

/** Does the `Host` header value match an allowlist entry? Port-agnostic unless the entry has one. */
export function hostAllowed(hostHeader: string | null, allowedHosts: readonly string[]): boolean {
  if (hostHeader === null || hostHeader.length === 0) return false;
  let url: URL;
  try {
    url = new URL(`http://${hostHeader}`);
  } catch {
    return false;
  }
  if (
    url.pathname !== '/' ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    return false;
  }
  const hostname = url.hostname;
  const withPort = url.port === '' ? hostname : `${hostname}:${url.port}`;
  return allowedHosts.some((entry) => entry === hostname || entry === withPort);
}

/** Is the request's `Origin` acceptable? Absent is; present must equal an allowed origin exactly. */
export function originAllowed(originHeader: string | null, allowedOrigins: ReadonlySet<string>): boolean {
  if (originHeader === null) return true;
  return allowedOrigins.has(originHeader.toLowerCase());
}
