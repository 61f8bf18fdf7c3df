/**
 * {@link createSessMcpHttpHandler}: the Sess tools as one stateless Streamable HTTP endpoint,
 * for a hosting runtime that owns authentication and storage. Every request that passes
 * the pipeline's checks gets a fresh `McpServer` and engine, bound to the principal the host's
 * `authenticate` returned; the handler is `{ fetch, node, attach, close }` over that one pipeline,
 * with the health answers (`ready`, `live`, and the `health` option's paths, `health.ts`) in front.
 *
 * This module only wires: the authority of a request (binding, Sess client on the principal's
 * credential, the host's store), the request's wait signal into each tool call, and the two faces.
 * It never reads a token from headers, never gives the MCP bearer token to Sess or to a tool, and
 * starts no listener.
 */

import { createSessMcpServer } from '../faces/sess-server.js';
import {
  type Authority,
  type CallAuthority,
  createSessEngine,
  createWaitGate,
  type HandleStore,
  type HttpBinding,
  type SessApi,
  type SessEngine,
  SessMcpError,
} from '../index.js';
import { createReceiptVerifier, createSessClientFactory } from '../sess/index.js';
import { incomingFromRequest } from './fetch-face.js';
import { createHealth, withHealthPaths } from './health.js';
import {
  createNodeFace,
  type NodeRequestLike,
  type NodeResponseLike,
  type NodeServerLike,
} from './node-face.js';
import {
  type ResolvedHttpOptions,
  resolveHttpOptions,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from './options.js';
import { createPipeline } from './pipeline.js';
import type { RequestScope } from './sdk-exchange.js';

/**
 * The handler `createSessMcpHttpHandler` returns. Mount `fetch`, or `node` (with `checkContinue`),
 * or `attach`; call `close` once.
 */
export interface SessMcpHttpHandler {
  /** The web-standard face (Workers, Bun, Deno, Hono's `c.req.raw`). */
  fetch(request: Request): Promise<Response>;
  /**
   * The `node:http` request listener: `http.createServer(handler.node)`, or called next to other
   * routes. Mounted this way, Node itself answers `Expect: 100-continue` with `100 Continue`
   * before the handler sees the request; mount {@link SessMcpHttpHandler.checkContinue} (or use
   * {@link SessMcpHttpHandler.attach}) to send it only once the request passed the preflight.
   */
  node(req: NodeRequestLike, res: NodeResponseLike): void;
  /**
   * The `node:http` face as the server's `checkContinue` listener: like
   * {@link SessMcpHttpHandler.node}, but for a request Node has not yet answered
   * `Expect: 100-continue` for. It sends `100 Continue` only once the Host, Origin,
   * authentication and scope checks accepted the request, right before the body is read; a
   * refused request gets its refusal without `100 Continue`, and its connection is closed.
   * @example
   * ```ts source="examples/snippets/http.examples.ts#checkContinue"
   * server.on('checkContinue', (req, res) => {
   *   if (req.url?.startsWith('/mcp')) return handler.checkContinue(req, res);
   *   res.writeContinue();
   *   app(req, res); // the host's other routes
   * });
   * ```
   */
  checkContinue(req: NodeRequestLike, res: NodeResponseLike): void;
  /**
   * Mount both node listeners on a server that serves only this endpoint: `node` for `request`,
   * `checkContinue` for `checkContinue`. Use it instead of `createServer(handler.node)`, not
   * besides.
   * @example
   * ```ts source="examples/snippets/http.examples.ts#attach"
   * const server = http.createServer();
   * handler.attach(server);
   * server.listen(8080);
   * ```
   */
  attach(server: NodeServerLike): void;
  /**
   * Readiness, for a route of the host's own (the `health` option's `path` answers the same):
   * `200` `{"status":"ok"}` when the `health.store` answered within 1 s and its layout is current,
   * else `503` `{"status":"unavailable"}` (also without `health.store`, and once the handler is
   * closed). It never calls Sess. A request `health.authorize` accepts gets the details too: the
   * store check's outcome and the receipt key set's state (`SessMcpHealthReport`). `HEAD`
   * gets the status alone; a method other than `GET` and `HEAD` `405`.
   * @example
   * ```ts source="examples/snippets/http.examples.ts#ready"
   * // A route of the host's own in front of the handler; Sess is never called by it.
   * const route = (request: Request) =>
   *   new URL(request.url).pathname === '/ready' ? handler.ready(request) : handler.fetch(request);
   * ```
   */
  ready(request: Request): Promise<Response>;
  /**
   * Liveness: `200` `{"status":"ok"}`, touching nothing (no store, no Sess, no `authorize`), also
   * once the handler is closed. `HEAD` gets the status alone; another method than `GET` and `HEAD`
   * `405`.
   */
  live(request: Request): Response;
  /**
   * Stop: every later request gets `503`; waits in flight end as `needs_resume`; mutations
   * already sent finish. Resolves once nothing is in flight. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * The binding of every handle a principal creates over HTTP, under the handler's `binding` option
 * (`mode`): `'principal'` shares it with the principal's other clients and grants.
 */
export function httpBindingOf(
  sessOrigin: string,
  principal: SessHttpPrincipal,
  mode: 'grant' | 'principal' = 'grant',
): HttpBinding {
  const binding: HttpBinding = {
    kind: 'http',
    origin: sessOrigin,
    workspaceId: principal.workspaceId,
    principalId: principal.principalId,
    clientId: principal.clientId,
    grantId: principal.grantId,
    grantGeneration: principal.grantGeneration,
  };
  if (mode === 'principal') binding.share = 'principal';
  return binding;
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
 * the request. Sess calls use only `principal.credential()`, whose key must belong to
 * `principal.workspaceId`.
 */
function requestAuthority(
  options: ResolvedHttpOptions,
  principal: SessHttpPrincipal,
  sessClient: (
    credential: () => string | Promise<string>,
    perCredential: { credentialWorkspaceId: string },
  ) => SessApi,
): Authority {
  const binding = httpBindingOf(options.sessOrigin, principal, options.binding);
  let resolved: Promise<CallAuthority> | undefined;
  async function open(): Promise<CallAuthority> {
    // The key must belong to the principal's workspace: the client checks every answer's
    // `Sess-Workspace-Id`, and learns it before a create, so a key of another workspace is
    // refused (`NOT_CONFIGURED`) before anything is created there.
    const sess = sessClient(() => principal.credential(), { credentialWorkspaceId: principal.workspaceId });
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
 *
 * The one call of a request that is a single `tools/call` runs on the request's own signal, and
 * the SDK's signal for that call ends the request's waits: no controller of its own. Every other
 * call (a JSON-RPC batch holds up to 100 in the 2025-03-26 era) gets a controller, and the
 * request's wait signal gets one listener for all of them, so no batch size makes Node print
 * `MaxListenersExceededWarning`.
 */
function scopedEngine(engine: SessEngine, scope: RequestScope): SessEngine {
  let calls: Set<AbortController> | undefined;
  let single = scope.tool !== undefined;
  const callsOf = (): Set<AbortController> => {
    if (calls === undefined) {
      const made = new Set<AbortController>();
      scope.waitSignal.addEventListener(
        'abort',
        () => {
          for (const controller of made) controller.abort();
        },
        { once: true },
      );
      calls = made;
    }
    return calls;
  };
  return {
    ...engine,
    call(tool, rawArgs, ctx = {}) {
      const own = ctx.signal;
      if (single) {
        single = false;
        if (own === undefined || own.aborted) {
          if (own?.aborted === true) scope.end();
          return scope.track(engine.call(tool, rawArgs, { ...ctx, signal: scope.waitSignal }));
        }
        const onOwnAbort = () => scope.end();
        own.addEventListener('abort', onOwnAbort, { once: true });
        const work = engine.call(tool, rawArgs, { ...ctx, signal: scope.waitSignal });
        const done = () => own.removeEventListener('abort', onOwnAbort);
        work.then(done, done);
        return scope.track(work);
      }
      const controller = new AbortController();
      const onOwnAbort = () => controller.abort();
      if (scope.waitSignal.aborted || own?.aborted === true) controller.abort();
      else {
        callsOf().add(controller);
        own?.addEventListener('abort', onOwnAbort, { once: true });
      }
      const done = () => {
        calls?.delete(controller);
        own?.removeEventListener('abort', onOwnAbort);
      };
      const work = engine.call(tool, rawArgs, { ...ctx, signal: controller.signal });
      work.then(done, done);
      return scope.track(work);
    },
  };
}

/**
 * Create the stateless Streamable HTTP handler for the Sess tools (every tool, or the `tools` set).
 *
 * One endpoint serves 2026-07-28 clients and, through the SDK's stateless legacy fallback,
 * 2025-era clients (`initialize` answers `2025-11-25`; no session id). In front of the SDK, on
 * both faces and in this order: the header-only preflight (Host allowlist, exact Origin
 * allowlist, exactly one `authenticate`, scopes), the bounded body read, and the raw-body
 * unsafe-key guard — all under `requestDeadlineMs`, absolute from the request's arrival.
 *
 * @throws {TypeError} naming the option when an option is invalid.
 * @example
 * ```ts source="examples/snippets/http.examples.ts#createSessMcpHttpHandler"
 * // createMemoryHandleStore comes from '@sess.si/mcp', createSessMcpHttpHandler from '@sess.si/mcp/http'.
 * const stores = createMemoryHandleStore();
 * const handler = createSessMcpHttpHandler({
 *   authenticate: (request) => myOAuth.verify(request.headers.get('authorization')),
 *   handleStore: (binding) => stores.forBinding(binding),
 *   allowedHosts: ['mcp.example.com'],
 *   requiredScopes: ['sess'],
 *   resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource',
 * });
 * const server = http.createServer();
 * handler.attach(server); // or http.createServer(handler.node)
 * server.listen(8080);
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
  // The Sess client's options, checked once: a request builds only its client on the caller's
  // credential (a client's state, the workspace it has seen, stays the request's).
  const sessClient = createSessClientFactory({
    origin: resolved.sessOrigin,
    receiptVerifier,
    ...(resolved.allowInsecureLocalhost ? { allowInsecureLocalhost: true } : {}),
    ...(resolved.expectedWorkspaceId === undefined
      ? {}
      : { expectedWorkspaceId: resolved.expectedWorkspaceId }),
    ...(resolved.receiptIssuer === undefined ? {} : { receiptIssuer: resolved.receiptIssuer }),
  });
  // One wait gate for the handler (or the host's, shared with its watcher): waits on one Session
  // share an upstream long-poll, and the upstream waits are capped per caller, per principal and
  // in all, with the slots shared fairly and each principal's queue bounded, across every request
  // this handler serves.
  const waitGate = resolved.waitGate ?? createWaitGate(resolved.waitCaps);
  const pipeline = createPipeline(
    resolved,
    (scope) =>
      createSessMcpServer(
        scopedEngine(
          createSessEngine({
            authority: requestAuthority(resolved, scope.principal, sessClient),
            diagnostics: resolved.diagnostics,
            waitGate,
            maxOpenPerPrincipal: resolved.maxOpenPerPrincipal,
            ...(resolved.maxWaitMs === undefined ? {} : { maxWaitMs: resolved.maxWaitMs }),
            ...(resolved.telemetry === undefined ? {} : { telemetry: resolved.telemetry }),
          }),
          scope,
        ),
        resolved.tools,
        scope.tool,
        resolved.inputSchemas,
        false,
        resolved.instructions,
      ),
    () => createSessMcpServer(undefined),
  );
  const closing = new AbortController();
  const health = createHealth({
    options: resolved.health,
    closing: closing.signal,
    // The handler's one verifier: its key set is the one every request's client verifies with.
    keySetStatus: receiptVerifier.keySetStatus?.bind(receiptVerifier),
  });
  const served = withHealthPaths(pipeline, health, resolved.health);
  const node = createNodeFace(served);
  const checkContinue = createNodeFace(served, { sendContinue: true });
  return {
    fetch: async (request) => (await served.handle(incomingFromRequest(request))).response,
    node,
    checkContinue,
    attach(server) {
      server.on('request', node);
      server.on('checkContinue', checkContinue);
    },
    ready: (request) => health.ready(request),
    live: (request) => health.live(request),
    close: () => {
      closing.abort();
      return served.close();
    },
  };
}
