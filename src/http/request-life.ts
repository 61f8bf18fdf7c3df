/**
 * One request's bookkeeping in the pipeline: its deadline (absolute from arrival), the one
 * controller that the deadline, the handler's close, a disconnect and a cancellation abort, and
 * the finish that clears all of it and reports `http.request_done`.
 *
 * It decides nothing about the request: the preflight stages check it and `pipeline.ts` hands it
 * to the SDK.
 */
import type { DiagnosticsSink } from '../index.js';
import type { IncomingRequest, PipelineResult } from './incoming.js';
import type { Refusal } from './preflight/context.js';

/** One request's deadline, ending and finish. */
export interface RequestLife {
  /** When the request entered the handler (`Date.now()`). */
  readonly entered: number;
  /**
   * Aborts at the deadline, on `close()`, and (once {@link watchDisconnect} ran) on a disconnect
   * or a cancellation: it ends the pre-SDK stages and then the request's waits.
   */
  readonly stop: AbortSignal;
  /** End the request's waits now. */
  readonly end: () => void;
  /** End the request's bookkeeping (deadline, close entry, cancellation, disconnect). Idempotent. */
  readonly finish: () => void;
  /** True once {@link finish} ran. */
  settled(): boolean;
  /** The request's cancellation entry, released on finish. */
  holdCancellation(entry: { release(): void }): void;
  /** From now on a disconnect ends the waits, then the request (at once when already gone). */
  watchDisconnect(): void;
}

/** What one pipeline shares with each of its requests' bookkeeping. */
export interface LifeSettings {
  requestDeadlineMs: number;
  diagnostics: DiagnosticsSink;
  /**
   * Requests in flight that `close()` must reach. A plain set rather than one abort listener per
   * request on a handler-wide signal, which would trip Node's MaxListenersExceededWarning (on the
   * host's stderr) past ten concurrent requests.
   */
  closers: Set<() => void>;
}

/**
 * Start the bookkeeping of `incoming`. Until {@link RequestLife.watchDisconnect}, only the deadline
 * and `close()` reach `stop`, so the stages before the SDK end only on those two. No combined
 * signals, no listener per source.
 */
export function beginRequest(incoming: IncomingRequest, settings: LifeSettings): RequestLife {
  const entered = Date.now();
  const ender = new AbortController();
  const end = () => ender.abort();
  const timer = setTimeout(end, settings.requestDeadlineMs);
  settings.closers.add(end);
  let settled = false;
  let cancellation: { release(): void } | undefined;
  const finish = () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    cancellation?.release();
    settings.closers.delete(end);
    incoming.disconnected.removeEventListener('abort', onDisconnect);
    settings.diagnostics({ event: 'http.request_done', ms: Date.now() - entered });
  };
  // A disconnect ends the waits first, then the request.
  const onDisconnect = () => {
    end();
    finish();
  };
  return {
    entered,
    stop: ender.signal,
    end,
    finish,
    settled: () => settled,
    holdCancellation(entry) {
      cancellation = entry;
    },
    watchDisconnect() {
      if (incoming.disconnected.aborted) end();
      else incoming.disconnected.addEventListener('abort', onDisconnect, { once: true });
    },
  };
}

/** Answer `refused`: report its event, finish the request, and hand the refusal to the face. */
export function refuse(life: RequestLife, refused: Refusal, diagnostics: DiagnosticsSink): PipelineResult {
  diagnostics({ event: refused.event, ...refused.about, ms: Date.now() - life.entered });
  life.finish();
  return { response: refused.response, closeConnection: refused.closeConnection, done: life.finish };
}
