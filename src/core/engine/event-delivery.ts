/**
 * Event delivery: the loop that hands every event of a store's outbox to every sink at least once
 * (a host's `onEvent`, a webhook), claiming each event per sink first, so several processes or
 * instances on one store deliver each event once as a rule and at least once always.
 *
 * - A claim holds an event for one attempt (`holdMs`, longer than any attempt may take); a holder
 *   that dies or stands still past it is taken over, and its late settlement writes nothing.
 * - No network call is made while a store lock is held: claim, then deliver, then settle, each a
 *   store call of its own.
 * - A failed attempt is tried again on the schedule `retryDelay` gives, until it says `dead`: the
 *   event is then dead-lettered (no longer owed, listed by `sess-mcp records events`, re-sent on
 *   request).
 *
 * It knows no transport: a sink says how an attempt ended.
 */

import { optionNames, readOptions } from '../contract/options.js';
import {
  type EventOutbox,
  type OutboxEvent,
  type WakeEvent,
  wakeEventReference,
} from '../contract/outbox.js';
import { bindingScope, type Clock, type DiagnosticsSink, systemClock } from '../contract/ports.js';
import { readTelemetryOption, type SessMcpTelemetryOptions } from '../contract/rules.js';
import { telemetryOf } from '../telemetry/telemetry.js';
import type { EngineHooks } from './types.js';

/** How one attempt of a sink ended. */
export type SinkOutcome =
  /** Taken: never owed again to this sink. */
  | { kind: 'delivered' }
  /** Try again later; `reason` is a fixed word (never a value or a URL). */
  | { kind: 'retry'; reason: string }
  /** No attempt can succeed (a refused destination): dead-lettered at once. */
  | { kind: 'dead'; reason: string };

/** One destination of events. */
export interface EventSink {
  /** The sink's name in the outbox (`onEvent`, `webhook`): its deliveries are kept under it. */
  readonly name: string;
  /** One attempt. A rejection counts as `retry` (`sink_failed`). */
  deliver(event: WakeEvent, source: OutboxEvent): Promise<SinkOutcome>;
}

/** Options of {@link createEventDelivery}. */
export interface EventDeliveryOptions {
  outbox: EventOutbox;
  sinks: readonly EventSink[];
  /**
   * The wait before the next attempt after `attempts` failed ones, the first at `firstAttemptAt`,
   * or `dead` when the retry span is over.
   */
  retryDelay(attempts: number, firstAttemptAt: number, now: number): number | 'dead';
  /** How far back an event never attempted is still owed to a sink (the retry span). */
  spanMs: number;
  /** How long a claim holds an event for one attempt. @default 60 000 */
  holdMs?: number;
  /** How many events one pass claims per sink. @default 32 */
  batch?: number;
  /** The time claims and schedules are read from. @default the system clock */
  clock?: Clock;
  /** Fixed event names only (`event_delivered`, `event_retry`, `event_dead_lettered`). */
  diagnostics?: DiagnosticsSink;
  /**
   * Where each attempt's span and the delivery counter go (`docs/operate.md`).
   * @default the global providers of `@opentelemetry/api`
   */
  telemetry?: SessMcpTelemetryOptions;
  /** Test-only: awaited at `event.after_delivered` (a sink took it, its mark not yet written). */
  hooks?: EngineHooks;
}

/** A delivery loop. */
export interface EventDelivery {
  /** One pass over every sink: the number of attempts made. */
  deliverDue(): Promise<number>;
  /** Run passes every `intervalMs` (and at once on {@link kick}) until {@link stop}. */
  start(intervalMs: number): void;
  /** Run a pass soon (a state change was just saved). */
  kick(): void;
  /** Stop, and wait for the pass in progress. */
  stop(): Promise<void>;
}

/** The option names of {@link EventDeliveryOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<EventDeliveryOptions>()(
  'outbox',
  'sinks',
  'retryDelay',
  'spanMs',
  'holdMs',
  'batch',
  'clock',
  'diagnostics',
  'telemetry',
  'hooks',
);

/** The longest retry span or claim: 30 days. */
const MAX_SPAN_MS = 30 * 86_400_000;

/** The default time a claim holds an event: above the longest attempt (a webhook's 15 s). */
export const DEFAULT_CLAIM_HOLD_MS = 60_000;

/** The opaque scope digest of an HTTP binding (SHA-256 of its scope, base64url), for routing. */
async function scopeDigest(event: OutboxEvent): Promise<string | undefined> {
  if (event.binding.kind !== 'http') return undefined;
  const bytes = new TextEncoder().encode(bindingScope(event.binding));
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The event as a sink receives it: the reference, without the binding. */
export async function wakeEventOf(event: OutboxEvent): Promise<WakeEvent> {
  return wakeEventReference(event, await scopeDigest(event));
}

/** Build a delivery loop over one outbox. */
export function createEventDelivery(options: EventDeliveryOptions): EventDelivery {
  const read = readOptions('createEventDelivery', options, { known: KNOWN_OPTIONS });
  if (typeof options.outbox?.due !== 'function')
    read.fail('outbox', 'must be an event outbox (HandleStoreFactory.outbox())');
  if (
    !Array.isArray(options.sinks) ||
    options.sinks.some((s) => typeof s?.deliver !== 'function' || typeof s.name !== 'string')
  ) {
    read.fail('sinks', 'must be a list of sinks, each with a name and a deliver() method');
  }
  read.func('retryDelay', options.retryDelay);
  read.integer('spanMs', options.spanMs, { min: 1, max: MAX_SPAN_MS });
  read.optionalInteger('holdMs', options.holdMs, { min: 1, max: MAX_SPAN_MS });
  read.optionalInteger('batch', options.batch, { min: 1, max: 1_000 });
  const clock = options.clock ?? systemClock;
  const holdMs = options.holdMs ?? DEFAULT_CLAIM_HOLD_MS;
  const batch = options.batch ?? 32;
  const telemetry = telemetryOf(readTelemetryOption(read, options.telemetry));
  const emit = (event: Parameters<DiagnosticsSink>[0]) => {
    try {
      options.diagnostics?.(event);
    } catch {
      // A failing sink of diagnostics never stops delivery.
    }
  };

  async function attempt(
    sink: EventSink,
    event: OutboxEvent,
    attempts: number,
    first?: number,
  ): Promise<void> {
    const claim = await options.outbox.claim(sink.name, event.eventId, clock.now(), holdMs);
    if (claim === undefined) return; // another process holds it, or it was settled meanwhile
    const startedAt = clock.now();
    let outcome: SinkOutcome;
    try {
      const reference = await wakeEventOf(event);
      outcome = await telemetry.deliver(sink.name, event.handle, () => sink.deliver(reference, event));
    } catch {
      outcome = { kind: 'retry', reason: 'sink_failed' };
    }
    const now = clock.now();
    if (outcome.kind === 'delivered') {
      await options.hooks?.onStep?.('event.after_delivered');
      await options.outbox.settle(claim, { kind: 'delivered' }, now);
      telemetry.delivered(sink.name, 'delivered', undefined);
      emit({ event: 'event_delivered', state: sink.name });
      return;
    }
    const delay =
      outcome.kind === 'dead' ? 'dead' : options.retryDelay(attempts + 1, first ?? startedAt, now);
    if (delay === 'dead') {
      await options.outbox.settle(claim, { kind: 'dead', reason: outcome.reason }, now);
      telemetry.delivered(sink.name, 'dead_lettered', outcome.reason);
      emit({ event: 'event_dead_lettered', state: sink.name });
    } else {
      await options.outbox.settle(claim, { kind: 'retry', at: now + delay, reason: outcome.reason }, now);
      telemetry.delivered(sink.name, 'retry', outcome.reason);
      emit({ event: 'event_retry', state: sink.name });
    }
  }

  async function deliverDue(): Promise<number> {
    let made = 0;
    for (const sink of options.sinks) {
      const now = clock.now();
      const owed = await options.outbox.due(sink.name, { now, since: now - options.spanMs, limit: batch });
      await Promise.all(
        owed.map(async ({ event, attempts, firstAttemptAt }) => {
          made += 1;
          await attempt(sink, event, attempts, firstAttemptAt).catch(() => {
            emit({ event: 'event_delivery_failed', state: sink.name });
          });
        }),
      );
    }
    return made;
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  let again = false;
  let interval = 1_000;

  function schedule(ms: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(pass, ms);
    (timer as { unref?: () => void }).unref?.();
  }

  function pass(): void {
    if (running !== undefined) {
      again = true;
      return;
    }
    running = deliverDue()
      .catch(() => emit({ event: 'event_delivery_failed' }))
      .finally(() => {
        running = undefined;
        const soon = again;
        again = false;
        schedule(soon ? 0 : interval);
      });
  }

  return {
    deliverDue,
    start(intervalMs) {
      interval = intervalMs;
      stopped = false;
      schedule(0);
    },
    kick() {
      if (!stopped) schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
