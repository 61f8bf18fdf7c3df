/**
 * {@link createSessMcpHttpHandler}: the five Sess tools as one stateless Streamable HTTP
 * endpoint, for a hosting runtime that owns authentication and storage. Every request that passes
 * the shell's checks gets a fresh `McpServer` and engine, bound to the principal the host's
 * `authenticate` returned.
 *
 * This module only wires: the authority of a request (binding, Sess client on the principal's
 * credential, the host's store) and the request's wait signal into each tool call. It never reads
 * a token from headers, never gives the MCP bearer token to Sess or to a tool, and starts no
 * listener.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { createSessEngine, type SessEngine } from '../core/engine.js';
import { SessMcpError } from '../core/errors.js';
import type { Authority, CallAuthority, HandleStore, HttpBinding, SessApi } from '../core/ports.js';
import { registerSessTools } from '../core/register.js';
import { SERVER_INSTRUCTIONS } from '../core/tool-definitions.js';
import { createSessClient } from '../sess/client.js';
import { createReceiptVerifier, type ReceiptVerifier } from '../sess/receipt.js';
import {
  type ResolvedHttpOptions,
  resolveHttpOptions,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from './options.js';
import { anySignal, type RequestScope } from './pipeline.js';
import { createHttpShell, type SessMcpHttpHandler } from './shell.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';

/** The binding of every handle a principal creates over HTTP. */
export function httpBindingOf(sessOrigin: string, principal: SessHttpPrincipal): HttpBinding {
  return {
    kind: 'http',
    origin: sessOrigin,
    workspaceId: principal.workspaceId,
    principalId: principal.principalId,
    clientId: principal.clientId,
    grantId: principal.grantId,
    grantGeneration: principal.grantGeneration,
  };
}

function isHandleStore(value: unknown): value is HandleStore {
  if (value === null || typeof value !== 'object') return false;
  const store = value as Record<string, unknown>;
  return ['get', 'create', 'update', 'delete', 'listUnfinished', 'countUnfinished'].every(
    (method) => typeof store[method] === 'function',
  );
}

/**
 * The authority of one request: resolved on the first tool call, then the same for the rest of
 * the request. Sess calls use only `principal.credential()`.
 */
function requestAuthority(
  options: ResolvedHttpOptions,
  principal: SessHttpPrincipal,
  receiptVerifier: ReceiptVerifier,
): Authority {
  const binding = httpBindingOf(options.sessOrigin, principal);
  let resolved: Promise<CallAuthority> | undefined;
  async function open(): Promise<CallAuthority> {
    const sess: SessApi = createSessClient({
      origin: options.sessOrigin,
      credential: () => principal.credential(),
      receiptVerifier,
      ...(options.allowInsecureLocalhost ? { allowInsecureLocalhost: true } : {}),
      ...(options.expectedWorkspaceId === undefined
        ? {}
        : { expectedWorkspaceId: options.expectedWorkspaceId }),
      ...(options.receiptIssuer === undefined ? {} : { receiptIssuer: options.receiptIssuer }),
    });
    let store: unknown;
    try {
      store = await options.handleStore({ ...binding }, principal);
    } catch (error) {
      options.diagnostics({ event: 'http.store_unavailable', code: 'STATE_STORE_ERROR' });
      throw new SessMcpError('STATE_STORE_ERROR', 'The handle store for this caller could not be opened.', {
        retryable: true,
        cause: error,
      });
    }
    if (!isHandleStore(store)) {
      options.diagnostics({ event: 'http.store_invalid', code: 'STATE_STORE_ERROR' });
      throw new SessMcpError(
        'STATE_STORE_ERROR',
        'The host returned no usable handle store for this caller.',
        {
          retryable: false,
        },
      );
    }
    return { binding, sess, store };
  }
  return {
    resolve() {
      if (resolved === undefined) {
        resolved = open();
        // A failed open may succeed on the next tool call of the same request.
        resolved.catch(() => {
          resolved = undefined;
        });
      }
      return resolved;
    },
  };
}

/**
 * The engine as the tools of one request see it: each call's signal also ends at the request's
 * deadline, on disconnect and on `close()` (the engine passes it only to reads and waits, never to
 * a create, publish or complete already sent), and `close()` waits for every call.
 */
function scopedEngine(engine: SessEngine, scope: RequestScope): SessEngine {
  return {
    ...engine,
    call(tool, rawArgs, ctx = {}) {
      const signal = ctx.signal === undefined ? scope.waitSignal : anySignal([ctx.signal, scope.waitSignal]);
      return scope.track(engine.call(tool, rawArgs, { ...ctx, signal }));
    },
  };
}

/**
 * Create the stateless Streamable HTTP handler for the five Sess tools.
 *
 * One endpoint serves 2026-07-28 clients and, through the SDK's stateless legacy fallback,
 * 2025-era clients (`initialize` answers `2025-11-25`; no session id). In front of the SDK, on
 * both faces and in this order: the header-only preflight (Host allowlist, exact Origin
 * allowlist, exactly one `authenticate`, scopes), the bounded body read, and the raw-body
 * unsafe-key guard — all under `requestTimeoutMs`, absolute from the request's arrival.
 *
 * @throws {TypeError} naming the option when an option is invalid.
 * @example
 * ```ts
 * import http from 'node:http';
 * import { createMemoryHandleStore } from '@sess.si/mcp';
 * import { createSessMcpHttpHandler } from '@sess.si/mcp/http';
 *
 * const stores = createMemoryHandleStore();
 * const handler = createSessMcpHttpHandler({
 *   authenticate: (request) => myOAuth.verify(request.headers.get('authorization')),
 *   handleStore: (binding) => stores.forBinding(binding),
 *   allowedHosts: ['mcp.example.com'],
 *   requiredScopes: ['sess'],
 *   resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource',
 * });
 * http.createServer(handler.node).listen(8080);
 * ```
 */
export function createSessMcpHttpHandler(options: SessMcpHttpHandlerOptions): SessMcpHttpHandler {
  const resolved = resolveHttpOptions(options);
  // One key-set cache for the handler: a client is made per request, but the receipt keys (and
  // the refresh cooldown) belong to the Sess origin, not to a request.
  const receiptVerifier = createReceiptVerifier({
    origin: resolved.sessOrigin,
    ...(resolved.allowInsecureLocalhost ? { allowInsecureLocalhost: true } : {}),
    ...(resolved.receiptIssuer === undefined ? {} : { issuer: resolved.receiptIssuer }),
  });
  return createHttpShell(
    resolved,
    (scope) => {
      const engine = createSessEngine({
        authority: requestAuthority(resolved, scope.principal, receiptVerifier),
        diagnostics: resolved.diagnostics,
        ...(resolved.maxWaitMs === undefined ? {} : { maxWaitMs: resolved.maxWaitMs }),
      });
      const server = new McpServer(
        { name: PACKAGE_NAME, version: PACKAGE_VERSION },
        { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
      );
      registerSessTools(server, { engine: scopedEngine(engine, scope) });
      return server;
    },
    { name: PACKAGE_NAME, version: PACKAGE_VERSION },
  );
}
