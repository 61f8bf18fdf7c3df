import type { DiagnosticsSink } from '../index.js';
import { CancellationRegistry, callerKey, cancelledIdOf } from './cancellation.js';
import type { IncomingRequest, PipelineResult } from './incoming.js';
import type { ResolvedHttpOptions } from './options.js';
import type { PreflightContext } from './preflight/context.js';
import { runPreflight } from './preflight.js';
import { beginRequest, type RequestLife, refuse } from './request-life.js';
import * as answer from './responses.js';
import {
  type BareServerFactory,
  createSdk,
  type Exchange,
  type ScopedServerFactory,
  type SdkSide,
  serveWithSdk,
} from './sdk-exchange.js';

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
