/**
 * Event delivery on the wake schedule: the delivery loop (`src/core/engine/event-delivery.ts`)
 * over a store's outbox with the retry schedule of `webhook-schedule.ts` (backoff with jitter over
 * 24 hours, then dead-letter), and the host's `onEvent` callback as a sink. The stdio server and
 * the HTTP watcher and sweep deliver through it, so both retry the same way.
 *
 * It sends nothing itself: a sink does (`webhook-sink.ts`, or the host's callback).
 */
import {
  createEventDelivery,
  DEFAULT_CLAIM_HOLD_MS,
  type DiagnosticsSink,
  type EngineHooks,
  type EventDelivery,
  type EventOutbox,
  type EventSink,
  type SessMcpTelemetryOptions,
  type WakeEvent,
} from '../../index.js';
import { claimHoldMs, DEFAULT_WEBHOOK_SCHEDULE, nextAttemptDelay } from './webhook-schedule.js';

/** The sink name `onEvent` deliveries are kept under in the outbox. */
export const ON_EVENT_SINK = 'onEvent';

/** A host's event callback. */
export type OnEvent = (event: WakeEvent) => void | Promise<void>;

/** The host's `onEvent` as a sink: returned or resolved is delivered, a throw or rejection is retried. */
export function onEventSink(onEvent: OnEvent): EventSink {
  return {
    name: ON_EVENT_SINK,
    async deliver(event) {
      await onEvent(event);
      return { kind: 'delivered' };
    },
  };
}

/** A delivery loop over `outbox` to `sinks`, on the wake schedule. */
export function createWakeDelivery(options: {
  outbox: EventOutbox;
  sinks: readonly EventSink[];
  diagnostics?: DiagnosticsSink;
  hooks?: EngineHooks;
  telemetry?: SessMcpTelemetryOptions;
}): EventDelivery {
  return createEventDelivery({
    outbox: options.outbox,
    sinks: options.sinks,
    retryDelay: (attempts, first, now) => nextAttemptDelay(attempts, first, now, Math.random),
    spanMs: DEFAULT_WEBHOOK_SCHEDULE.spanMs,
    holdMs: claimHoldMs(DEFAULT_CLAIM_HOLD_MS),
    ...(options.diagnostics === undefined ? {} : { diagnostics: options.diagnostics }),
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
  });
}
