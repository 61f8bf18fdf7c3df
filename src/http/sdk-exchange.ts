/**
 * Handing a request that passed the preflight to the MCP SDK's `createMcpHandler`: the SDK built
 * once per pipeline, the server factory that finds each request's {@link RequestScope}, the
 * request forwarded without hop headers (its parsed body alongside), and learning when the
 * response is done — from the face, from the SDK closing the request's server, or by watching
 * the body.
 *
 * It checks nothing (the preflight did) and keeps no deadline (`request-life.ts` does).
 */
import { createMcpHandler, type McpRequestContext, type McpServer } from '@modelcontextprotocol/server';
import type { DiagnosticsSink } from '../index.js';
import type { IncomingRequest, PipelineResult } from './incoming.js';
import type { SessHttpPrincipal } from './options.js';
import { type ParsedBody, type PreflightContext, refusal } from './preflight/context.js';
import { type RequestLife, refuse } from './request-life.js';
import * as answer from './responses.js';

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

/** What the SDK's server factory finds for a request that passed every check. */
export interface Exchange {
  scope: RequestScope;
  /**
   * Ends the request's bookkeeping when the SDK closes the request's server; undefined when the
   * face reads the response itself and calls `done`.
   */
  serverClosed: (() => void) | undefined;
  /** True once the server the SDK got for this request runs `serverClosed` when it closes. */
  hooked: boolean;
}

/** The SDK's handler, as `createMcpHandler` returns it. */
export type SdkHandler = ReturnType<typeof createMcpHandler>;

/** What one pipeline's hand-overs share. */
export interface SdkSide {
  sdk: SdkHandler;
  /** The exchange of each forwarded request, for the server factory to find. */
  exchanges: WeakMap<Request, Exchange>;
  /** Keep the pipeline's `close()` from resolving until `work` has settled. */
  track<T>(work: Promise<T>): Promise<T>;
  diagnostics: DiagnosticsSink;
}

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

/**
 * The SDK around `serverFor`, which builds the server of a request that passed every check, and
 * `bareServer`, which the SDK gets for a body that is not JSON (it only ever answers the parse
 * error). The server of a 2025-era request is hooked so its closing ends the request.
 */
export function createSdk(
  exchanges: WeakMap<Request, Exchange>,
  serverFor: ScopedServerFactory,
  bareServer: BareServerFactory,
  settings: { maxBodyBytes: number; onError: () => void },
): SdkHandler {
  return createMcpHandler(
    (context) => {
      const exchange = context.requestInfo === undefined ? undefined : exchanges.get(context.requestInfo);
      if (exchange === undefined) return bareServer(context);
      const made = serverFor(exchange.scope, context);
      if (context.era !== 'legacy' || exchange.serverClosed === undefined) return made;
      return made instanceof Promise ? made.then((server) => hook(server, exchange)) : hook(made, exchange);
    },
    { maxRequestBodySize: settings.maxBodyBytes, onerror: settings.onError },
  );
}

/** True when `response` is an event stream (the SDK's media-type test, for one header). */
function isEventStream(response: Response): boolean {
  const type = response.headers.get('content-type');
  return type !== null && type.split(';', 1)[0]!.trim().toLowerCase() === 'text/event-stream';
}

/**
 * Wrap a response body so `onDone` runs once it has been fully read, cancelled or has failed.
 * A response without a body is done at once.
 */
export function watchBody(response: Response, onDone: () => void): Response {
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

/** The tool name of a body that is one `tools/call` request. */
function singleToolCall(parsed: ParsedBody | undefined): string | undefined {
  if (parsed?.ok !== true) return undefined;
  const body = parsed.value as { method?: unknown; params?: { name?: unknown } } | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body) || body.method !== 'tools/call') {
    return undefined;
  }
  const name = body.params?.name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The request the SDK serves: the one `authenticate` saw, without hop headers. A parsed body
 * reaches the SDK as `parsedBody`, which it reads instead of the stream: only a body that is not
 * JSON (which the SDK answers itself) is forwarded as bytes.
 */
function forwarded(incoming: IncomingRequest, request: Request, ctx: PreflightContext): Request {
  for (const name of HOP_HEADERS) request.headers.delete(name);
  if (ctx.bytes === undefined || ctx.parsed?.ok === true) return request;
  return new Request(incoming.url, {
    method: incoming.method,
    headers: request.headers,
    signal: incoming.disconnected,
    body: ctx.bytes as Uint8Array<ArrayBuffer>,
  });
}

/** The exchange of a forwarded request: its scope, and how its server's closing ends it. */
function exchangeOf(side: SdkSide, life: RequestLife, ctx: PreflightContext): Exchange {
  const { incoming } = ctx;
  const tool = singleToolCall(ctx.parsed);
  const scope: RequestScope = {
    principal: ctx.principal!,
    waitSignal: life.stop,
    end: life.end,
    track: side.track,
    ...(tool === undefined ? {} : { tool }),
  };
  return {
    scope,
    // A disconnect also closes the server (the SDK's teardown): the waits end first.
    serverClosed:
      incoming.readsResponse === true
        ? undefined
        : () => {
            if (incoming.disconnected.aborted) life.end();
            life.finish();
          },
    hooked: false,
  };
}

/**
 * Serve a request that passed the preflight with a fresh server from the SDK, on the `Request`
 * `authenticate` saw. Answers `500` (`http.internal_error`) when the SDK throws.
 */
export async function serveWithSdk(
  side: SdkSide,
  life: RequestLife,
  ctx: PreflightContext,
): Promise<PipelineResult> {
  const { incoming } = ctx;
  const forward = forwarded(incoming, ctx.request!, ctx);
  const exchange = exchangeOf(side, life, ctx);
  side.exchanges.set(forward, exchange);
  life.watchDisconnect();
  try {
    const parsed = ctx.parsed;
    const response = await side.sdk.fetch(
      forward,
      parsed?.ok === true ? { parsedBody: parsed.value } : undefined,
    );
    // The body is handed over as the SDK made it when the face reads it itself, when the
    // request is already done (a response the SDK completed before returning it), or when the
    // SDK closes this request's server once the stream it returned is done. Anything else
    // (an answer the SDK gave without that server) is wrapped to learn when it was read.
    if (incoming.readsResponse === true || life.settled() || (exchange.hooked && isEventStream(response))) {
      return { response, closeConnection: false, done: life.finish };
    }
    return { response: watchBody(response, life.finish), closeConnection: false, done: life.finish };
  } catch {
    return refuse(life, refusal(answer.internalError(), 'http.internal_error', false), side.diagnostics);
  }
}
