/**
 * The request pipeline both faces share: everything between the socket and the MCP SDK's
 * `createMcpHandler`, in this order — the preflight stages (`preflight.ts`: Host, Origin, method,
 * exactly one `authenticate`, scopes, the bounded body read, the raw-body unsafe-key guard, the
 * protocol era), the cancellation entry, then the SDK (`sdk-exchange.ts`), which serves the
 * request with a fresh server from the factory, in either protocol era — all under one deadline
 * that is absolute from the moment a request enters (`request-life.ts`).
 *
 * This module knows nothing about Sess: the server factory receives a {@link RequestScope}
 * (principal, the signal that ends waits, in-flight tracking) and builds whatever it serves. It
 * holds no check of its own, reads no body before the preflight passed and starts no listener.
 */
import type { McpRequestContext, McpServer } from '@modelcontextprotocol/server';
import type { DiagnosticsSink } from '../index.js';
import { CancellationRegistry, callerKey, cancelledIdOf } from './cancellation.js';
import type { IncomingRequest, PipelineResult } from './incoming.js';
import type { ResolvedHttpOptions, SessHttpPrincipal } from './options.js';
import type { PreflightContext } from './preflight/context.js';
import { runPreflight } from './preflight.js';
import { beginRequest, type RequestLife, refuse } from './request-life.js';
import * as answer from './responses.js';
import { createSdk, type Exchange, type SdkSide, serveWithSdk } from './sdk-exchange.js';

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

/** The shared pipeline. */
export interface Pipeline {
  handle(incoming: IncomingRequest): Promise<PipelineResult>;
  close(): Promise<void>;
}

/** What one pipeline keeps across its requests. */
interface PipelineState {
  options: ResolvedHttpOptions;
  side: SdkSide;
  inflight: Set<Promise<unknown>>;
  closeController: AbortController;
  /** The `end` of every request in flight, for `close()` to reach. */
  closers: Set<() => void>;
  cancellations: CancellationRegistry;
  /** The Host check's verdict per header value and default port: the same few hosts every request. */
  hostVerdicts: Map<string, boolean>;
}

/**
 * A 2025-era cancellation arrives as its own POST: end the wait it names, then let the SDK
 * acknowledge it as usual. A request with an id can be cancelled that way.
 */
function registerCancellation(state: PipelineState, life: RequestLife, ctx: PreflightContext): void {
  const { parsed } = ctx;
  if (parsed?.ok !== true) return;
  const caller = callerKey(ctx.principal!);
  const cancelledId = cancelledIdOf(parsed.value);
  if (cancelledId !== undefined && state.cancellations.cancel(caller, cancelledId) > 0) {
    state.options.diagnostics({ event: 'http.cancelled' });
  }
  const id = answer.requestIdOf(parsed.value);
  if (id !== undefined) life.holdCancellation(state.cancellations.register(caller, id, life.end));
}

/** One request through the pipeline: the preflight stages, the cancellation entry, the SDK. */
async function handle(state: PipelineState, incoming: IncomingRequest): Promise<PipelineResult> {
  const { options } = state;
  if (state.closeController.signal.aborted) {
    options.diagnostics({ event: 'http.closed' });
    return { response: answer.handlerClosed(), closeConnection: true, done: () => {} };
  }
  const life = beginRequest(incoming, {
    requestDeadlineMs: options.requestDeadlineMs,
    diagnostics: options.diagnostics,
    closers: state.closers,
  });
  const ctx: PreflightContext = {
    options,
    incoming,
    stop: life.stop,
    closing: state.closeController.signal,
    hostVerdicts: state.hostVerdicts,
  };
  const preflight = runPreflight(ctx);
  const refused = preflight instanceof Promise ? await preflight : preflight;
  if (refused !== undefined) return refuse(life, refused, options.diagnostics);
  registerCancellation(state, life, ctx);
  return serveWithSdk(state.side, life, ctx);
}

/** End every request in flight, wait for the work they started, then close the SDK. */
async function drain(state: PipelineState): Promise<void> {
  while (state.inflight.size > 0) await Promise.allSettled([...state.inflight]);
  await state.side.sdk.close();
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
  const inflight = new Set<Promise<unknown>>();
  function track<T>(work: Promise<T>): Promise<T> {
    inflight.add(work);
    const forget = () => inflight.delete(work);
    work.then(forget, forget);
    return work;
  }
  const exchanges = new WeakMap<Request, Exchange>();
  const sdk = createSdk(exchanges, serverFor, bareServer, {
    maxBodyBytes: options.maxBodyBytes,
    // The SDK's messages may quote request data: only a fixed event leaves this handler.
    onError: () => diagnostics({ event: 'http.sdk_error' }),
  });
  const state: PipelineState = {
    options,
    side: { sdk, exchanges, track, diagnostics },
    inflight,
    closeController: new AbortController(),
    closers: new Set(),
    cancellations: new CancellationRegistry(),
    hostVerdicts: new Map(),
  };
  let closing: Promise<void> | undefined;
  return {
    handle(incoming) {
      return track(handle(state, incoming));
    },
    close() {
      if (closing === undefined) {
        state.closeController.abort();
        for (const onClose of [...state.closers]) onClose();
        closing = drain(state);
      }
      return closing;
    },
  };
}
