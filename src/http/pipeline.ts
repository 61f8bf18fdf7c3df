/**
 * The request pipeline both faces share: everything between the socket and the MCP SDK's
 * `createMcpHandler`, in this order — the header-only preflight (Host, Origin, exactly one
 * `authenticate`, scopes), the bounded body read, the raw-body unsafe-key guard — all under one
 * deadline that is absolute from the moment a request enters. The SDK then serves the request
 * with a fresh server from the factory, in either protocol era.
 *
 * This module knows nothing about Sess: the server factory receives a {@link RequestScope}
 * (principal, the signal that ends waits, in-flight tracking) and builds whatever it serves. It
 * reads no body before the preflight passed and starts no listener.
 */
import {
  createMcpHandler,
  isJsonContentType,
  type McpRequestContext,
  type McpServer,
} from '@modelcontextprotocol/server';
import type { DiagnosticsSink } from '../index.js';
import { CancellationRegistry, callerKey, cancelledIdOf } from './cancellation.js';
import {
  defaultPortOf,
  hostAllowed,
  isPrincipal,
  originAllowed,
  type ResolvedHttpOptions,
  type SessHttpPrincipal,
} from './options.js';
import * as answer from './responses.js';
import { batchRefusal, parseBody, requestEra, unsafeKeyResponse } from './unsafe-keys.js';

/** What a request's server factory gets besides the SDK's own context. */
export interface RequestScope {
  /** The principal `authenticate` returned for this request. */
  principal: SessHttpPrincipal;
  /**
   * Aborts at the request deadline, when the client disconnects, or when the handler closes.
   * Pass it only to work that may be cut (a `sess_response` wait), never to a sent mutation.
   */
  waitSignal: AbortSignal;
  /**
   * End the request's waits now, as its deadline would: for the SDK ending the request's one
   * call (its server closed under it), so that call needs no signal of its own.
   */
  end(): void;
  /** Keep `close()` from resolving until `work` has settled. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * The tool a body of one `tools/call` request names, so the server may register that tool
   * alone; undefined for anything else (a batch, another method, a body that is not JSON).
   */
  tool?: string;
}

/** Builds the server for one request. */
export type ScopedServerFactory = (
  scope: RequestScope,
  context: McpRequestContext,
) => McpServer | Promise<McpServer>;

/** Builds the server for a request the SDK serves without a scope (a body that is not JSON). */
export type BareServerFactory = (context: McpRequestContext) => McpServer | Promise<McpServer>;

/** How a body read ended. */
export type BodyRead =
  | { kind: 'ok'; bytes: Uint8Array }
  | { kind: 'too_large' }
  /** `stop` fired (deadline or close); reading has stopped. */
  | { kind: 'stopped' }
  /** The client went away or the stream failed. */
  | { kind: 'failed' };

/** One request as a face hands it to the pipeline: headers now, the body only on demand. */
export interface IncomingRequest {
  method: string;
  url: string;
  headers: Headers;
  /**
   * The `Host` a face knows for a request whose headers carry none (a web `Request` made in code
   * has no Host header; its URL names the host it was addressed to).
   */
  host?: string;
  /** Aborts when the client disconnects. */
  disconnected: AbortSignal;
  /** Read the whole body, at most `limit` bytes, until `stop` fires. Called at most once. */
  readBody(limit: number, stop: AbortSignal): Promise<BodyRead>;
  /**
   * True when the face reads the response body itself and calls the result's `done` once it has
   * been read, cancelled or has failed; the body is then handed over as the SDK made it. Otherwise
   * the pipeline learns it from the SDK closing the request's server (a 2025-era stream) or by
   * wrapping the body.
   */
  readsResponse?: boolean;
}

/** The pipeline's answer: the response, and whether the connection must close after it. */
export interface PipelineResult {
  response: Response;
  /** True when the body was not (fully) read: the node face closes the connection. */
  closeConnection: boolean;
  /**
   * Ends the request's bookkeeping (its deadline, its cancellation entry); a face whose request
   * says `readsResponse` calls it once the response body is done. Idempotent.
   */
  done(): void;
}

/** The shared pipeline. */
export interface Pipeline {
  handle(incoming: IncomingRequest): Promise<PipelineResult>;
  close(): Promise<void>;
}

/** Concatenate the chunks of a body read into one buffer of `total` bytes. */
export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.byteLength === total) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Decodes request bodies (not fatal: the SDK answers a body that is not JSON). */
const UTF8 = new TextDecoder();

/** How many Host verdicts a pipeline remembers (a host's own names are few; others are not kept). */
const HOST_VERDICTS = 64;

/** Headers that describe one hop's framing, not the message: never forwarded to the SDK. */
const HOP_HEADERS = [
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'te',
  'trailer',
];

/** The tool name of a body that is one `tools/call` request. */
function singleToolCall(parsed: ReturnType<typeof parseBody> | undefined): string | undefined {
  if (parsed?.ok !== true) return undefined;
  const body = parsed.value as { method?: unknown; params?: { name?: unknown } } | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || body.method !== 'tools/call') {
    return undefined;
  }
  const name = body.params?.name;
  return typeof name === 'string' ? name : undefined;
}

type Raced<T> = { kind: 'value'; value: T } | { kind: 'threw' } | { kind: 'stopped' };

/**
 * Call `work(input)`: its outcome when it answered synchronously (a value, or a throw), or the
 * promise it returned, for {@link race}. Most hosts' `authenticate` answers synchronously; that
 * answer is taken as it is, with no listener on `stop` and no wait for the microtask queue.
 */
function callNow<I, T>(
  work: (input: I) => T | PromiseLike<T>,
  input: I,
): Raced<T> | { kind: 'pending'; promise: PromiseLike<T> } {
  let value: T | PromiseLike<T>;
  try {
    value = work(input);
  } catch {
    return { kind: 'threw' };
  }
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    if (typeof (value as { then?: unknown }).then === 'function') {
      return { kind: 'pending', promise: value as PromiseLike<T> };
    }
  }
  return { kind: 'value', value: value as T };
}

/** Await `work` unless `stop` fires first; a late result or rejection is dropped. */
function race<T>(work: PromiseLike<T>, stop: AbortSignal): Promise<Raced<T>> {
  if (stop.aborted) return Promise.resolve({ kind: 'stopped' });
  return new Promise((resolve) => {
    const onStop = () => resolve({ kind: 'stopped' });
    stop.addEventListener('abort', onStop, { once: true });
    Promise.resolve(work).then(
      (value) => {
        stop.removeEventListener('abort', onStop);
        resolve({ kind: 'value', value });
      },
      () => {
        stop.removeEventListener('abort', onStop);
        resolve({ kind: 'threw' });
      },
    );
  });
}

/**
 * Wrap a response body so `onDone` runs once it has been fully read, cancelled or has failed.
 * A response without a body is done at once.
 */
function watchBody(response: Response, onDone: () => void): Response {
  if (response.body === null) {
    onDone();
    return response;
  }
  const reader = response.body.getReader();
  let done = false;
  const finish = () => {
    if (!done) {
      done = true;
      onDone();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          finish();
          controller.close();
          return;
        }
        controller.enqueue(chunk.value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** What the SDK's server factory finds for a request that passed every check. */
interface Exchange {
  scope: RequestScope;
  /**
   * Ends the request's bookkeeping when the SDK closes the request's server; undefined when the
   * face reads the response itself and calls `done`.
   */
  serverClosed: (() => void) | undefined;
  /** True once the server the SDK got for this request runs `serverClosed` when it closes. */
  hooked: boolean;
}

/**
 * Have `serverClosed` run when the SDK closes `server`. The SDK's 2025-era fallback closes the
 * request's server once the response body it returns has been read to its end, cancelled or has
 * failed, or the request's signal aborted, and at once for a response that is not a stream: the
 * same moments the fetch face's own wrapping of the body learns, without a second stream.
 */
function hook(server: McpServer, exchange: Exchange): McpServer {
  const low = server.server;
  const previous = low.onclose;
  const closed = exchange.serverClosed!;
  low.onclose = () => {
    try {
      previous?.();
    } finally {
      closed();
    }
  };
  exchange.hooked = true;
  return server;
}

/** True when `response` is an event stream (the SDK's media-type test, for one header). */
function isEventStream(response: Response): boolean {
  const type = response.headers.get('content-type');
  return type !== null && type.split(';', 1)[0]!.trim().toLowerCase() === 'text/event-stream';
}

/**
 * Create the pipeline around `createMcpHandler`. `serverFor` builds the server of a request that
 * passed every check; `bareServer` one the SDK builds on its own for a body that is not JSON
 * (it only ever answers the parse error).
 */
export function createPipeline(
  options: ResolvedHttpOptions,
  serverFor: ScopedServerFactory,
  bareServer: BareServerFactory,
): Pipeline {
  const diagnostics: DiagnosticsSink = options.diagnostics;
  const exchanges = new WeakMap<Request, Exchange>();
  const inflight = new Set<Promise<unknown>>();
  const closeController = new AbortController();
  // Requests in flight that close() must reach. A plain set rather than one abort listener per
  // request on the handler-wide signal, which would trip Node's MaxListenersExceededWarning
  // (on the host's stderr) past ten concurrent requests.
  const onCloseCallbacks = new Set<() => void>();
  const cancellations = new CancellationRegistry();
  let closing: Promise<void> | undefined;

  const sdk = createMcpHandler(
    (context) => {
      const exchange = context.requestInfo === undefined ? undefined : exchanges.get(context.requestInfo);
      if (exchange === undefined) return bareServer(context);
      const made = serverFor(exchange.scope, context);
      if (context.era !== 'legacy' || exchange.serverClosed === undefined) return made;
      return made instanceof Promise ? made.then((server) => hook(server, exchange)) : hook(made, exchange);
    },
    {
      maxRequestBodySize: options.maxBodyBytes,
      // The SDK's messages may quote request data: only a fixed event leaves this handler.
      onerror: () => diagnostics({ event: 'http.sdk_error' }),
    },
  );

  // The Host check's verdict per header value and default port: the same few hosts every request.
  const hostVerdicts = new Map<string, boolean>();
  function hostIsAllowed(host: string | null, defaultPort: string): boolean {
    if (host === null) return false;
    const key = `${defaultPort} ${host}`;
    let verdict = hostVerdicts.get(key);
    if (verdict === undefined) {
      verdict = hostAllowed(host, options.allowedHosts, defaultPort);
      if (verdict && hostVerdicts.size < HOST_VERDICTS) hostVerdicts.set(key, verdict);
    }
    return verdict;
  }

  function track<T>(work: Promise<T>): Promise<T> {
    inflight.add(work);
    const forget = () => inflight.delete(work);
    work.then(forget, forget);
    return work;
  }

  async function handle(incoming: IncomingRequest): Promise<PipelineResult> {
    const entered = Date.now();
    if (closeController.signal.aborted) {
      diagnostics({ event: 'http.closed' });
      return { response: answer.handlerClosed(), closeConnection: true, done: () => {} };
    }
    // One signal per request, one controller that the timer, close(), a disconnect and a
    // cancellation abort directly: it ends the pre-SDK stages and then the request's waits. Until
    // the SDK stage only the deadline and close() reach it (the disconnect listener and the
    // cancellation entry are added once the body is read), so the stages before the SDK still end
    // only on those two. No combined signals, no listener per source.
    const ender = new AbortController();
    const stop = ender.signal;
    const endAll = () => ender.abort();
    const timer = setTimeout(endAll, options.requestDeadlineMs);
    // close() reaches this request through its entry in a set, removed when the request is done,
    // so the handler-wide signal does not collect a listener per request.
    onCloseCallbacks.add(endAll);
    let settled = false;
    let cancellation: { release(): void } | undefined;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      cancellation?.release();
      onCloseCallbacks.delete(endAll);
      incoming.disconnected.removeEventListener('abort', onDisconnect);
      diagnostics({ event: 'http.request_done', ms: Date.now() - entered });
    };
    // A disconnect ends the waits first, then the request.
    const onDisconnect = () => {
      endAll();
      finish();
    };
    const reject = (response: Response, event: string, closeConnection: boolean): PipelineResult => {
      diagnostics({ event, ms: Date.now() - entered });
      finish();
      return { response, closeConnection, done: finish };
    };

    // 1. Header-only preflight.
    const headers = incoming.headers;
    if (!hostIsAllowed(headers.get('host') ?? incoming.host ?? null, defaultPortOf(incoming.url))) {
      return reject(answer.hostRejected(), 'http.host_rejected', true);
    }
    if (!originAllowed(headers.get('origin'), options.allowedOrigins)) {
      return reject(answer.originRejected(), 'http.origin_rejected', true);
    }
    // One `Request` for the whole exchange: `authenticate` gets it with the request's headers and
    // no body, then (hop headers dropped) the SDK serves it, so the headers are copied once.
    let request: Request;
    try {
      request = new Request(incoming.url, {
        method: incoming.method,
        headers,
        // The SDK tears a 2025-era exchange down when this aborts: only a disconnect may do that.
        signal: incoming.disconnected,
      });
    } catch {
      // A method fetch cannot carry (CONNECT, TRACE) or a URL it cannot parse: nothing to serve.
      return reject(
        answer.jsonRpcError(405, -32000, 'Method not allowed.', null, undefined, { Allow: 'POST' }),
        'http.method_rejected',
        true,
      );
    }
    if (incoming.host !== undefined && !request.headers.has('host')) {
      request.headers.set('host', incoming.host);
    }
    // `stop` cannot have fired before a synchronous answer: no timer or close() runs in between.
    const called = callNow(options.authenticate, request);
    const authenticated = called.kind === 'pending' ? await race(called.promise, stop) : called;
    if (authenticated.kind === 'stopped') {
      return closeController.signal.aborted
        ? reject(answer.handlerClosed(), 'http.closed', true)
        : reject(answer.authenticationTimedOut(), 'http.authenticate_timeout', true);
    }
    if (authenticated.kind === 'threw') {
      return reject(answer.authenticationFailed(), 'http.authenticate_failed', true);
    }
    const given = authenticated.value;
    if (given === undefined || given === null) {
      return reject(answer.unauthenticated(options.resourceMetadataUrl), 'http.unauthenticated', true);
    }
    if (!isPrincipal(given)) {
      return reject(answer.authenticationFailed(), 'http.principal_invalid', true);
    }
    // A snapshot: the binding of this request cannot change under it.
    const principal: SessHttpPrincipal = {
      workspaceId: given.workspaceId,
      principalId: given.principalId,
      clientId: given.clientId,
      grantId: given.grantId,
      grantGeneration: given.grantGeneration,
      scopes: [...given.scopes],
      credential: () => given.credential(),
    };
    if (!options.requiredScopes.every((scope) => principal.scopes.includes(scope))) {
      return reject(
        answer.insufficientScope(options.requiredScopes, options.resourceMetadataUrl),
        'http.insufficient_scope',
        true,
      );
    }

    // 2. Bounded body, under the deadline.
    const method = incoming.method.toUpperCase();
    let bytes: Uint8Array | undefined;
    let parsed: ReturnType<typeof parseBody> | undefined;
    if (method === 'POST') {
      const declared = headers.get('content-length');
      if (
        declared !== null &&
        /^\d+$/.test(declared.trim()) &&
        Number(declared.trim()) > options.maxBodyBytes
      ) {
        return reject(answer.bodyTooLarge(options.maxBodyBytes), 'http.body_too_large', true);
      }
      if (!isJsonContentType(headers.get('content-type'))) {
        return reject(answer.unsupportedMediaType(), 'http.unsupported_media_type', true);
      }
      const read = await incoming.readBody(options.maxBodyBytes, stop);
      switch (read.kind) {
        case 'too_large':
          return reject(answer.bodyTooLarge(options.maxBodyBytes), 'http.body_too_large', true);
        case 'stopped':
          return closeController.signal.aborted
            ? reject(answer.handlerClosed(), 'http.closed', true)
            : reject(answer.bodyTimedOut(), 'http.body_timeout', true);
        case 'failed':
          return reject(answer.bodyUnreadable(), 'http.body_failed', true);
      }
      bytes = read.bytes;
      // 3. The raw-body unsafe-key guard, in the request's era.
      parsed = parseBody(UTF8.decode(bytes));
      if (parsed.ok && parsed.unsafeKey !== undefined) {
        const era = requestEra(headers, parsed.value);
        return reject(unsafeKeyResponse(era, parsed.value, parsed.unsafeKey), 'http.unsafe_key', false);
      }
      const batch = parsed.ok ? batchRefusal(headers, parsed.value) : undefined;
      if (batch !== undefined) return reject(batch, 'http.batch_refused', false);
    }

    // A 2025-era cancellation arrives as its own POST: end the wait it names, then let the SDK
    // acknowledge it as usual. A request with an id can be cancelled that way.
    if (parsed?.ok === true) {
      const caller = callerKey(principal);
      const cancelledId = cancelledIdOf(parsed.value);
      if (cancelledId !== undefined && cancellations.cancel(caller, cancelledId) > 0) {
        diagnostics({ event: 'http.cancelled' });
      }
      const id = answer.requestIdOf(parsed.value);
      if (id !== undefined) cancellation = cancellations.register(caller, id, endAll);
    }

    // 4. The SDK, with a fresh server per request, on the request `authenticate` saw.
    for (const name of HOP_HEADERS) request.headers.delete(name);
    // A parsed body reaches the SDK as `parsedBody`, which it reads instead of the stream: only a
    // body that is not JSON (which the SDK answers itself) is forwarded as bytes.
    const forward =
      bytes === undefined || parsed?.ok === true
        ? request
        : new Request(incoming.url, {
            method: incoming.method,
            headers: request.headers,
            signal: incoming.disconnected,
            body: bytes as Uint8Array<ArrayBuffer>,
          });
    const tool = singleToolCall(parsed);
    const scope: RequestScope = {
      principal,
      waitSignal: stop,
      end: endAll,
      track,
      ...(tool === undefined ? {} : { tool }),
    };
    const exchange: Exchange = {
      scope,
      // A disconnect also closes the server (the SDK's teardown): the waits end first.
      serverClosed:
        incoming.readsResponse === true
          ? undefined
          : () => {
              if (incoming.disconnected.aborted) endAll();
              finish();
            },
      hooked: false,
    };
    exchanges.set(forward, exchange);
    if (incoming.disconnected.aborted) endAll();
    else incoming.disconnected.addEventListener('abort', onDisconnect, { once: true });
    try {
      const response = await sdk.fetch(
        forward,
        parsed?.ok === true ? { parsedBody: parsed.value } : undefined,
      );
      // The body is handed over as the SDK made it when the face reads it itself, when the
      // request is already done (a response the SDK completed before returning it), or when the
      // SDK closes this request's server once the stream it returned is done. Anything else
      // (an answer the SDK gave without that server) is wrapped to learn when it was read.
      if (incoming.readsResponse === true || settled || (exchange.hooked && isEventStream(response))) {
        return { response, closeConnection: false, done: finish };
      }
      return { response: watchBody(response, finish), closeConnection: false, done: finish };
    } catch {
      return reject(answer.internalError(), 'http.internal_error', false);
    }
  }

  return {
    handle(incoming) {
      return track(handle(incoming));
    },
    close() {
      if (closing === undefined) {
        closeController.abort();
        for (const onClose of [...onCloseCallbacks]) onClose();
        closing = (async () => {
          while (inflight.size > 0) await Promise.allSettled([...inflight]);
          await sdk.close();
        })();
      }
      return closing;
    },
  };
}
