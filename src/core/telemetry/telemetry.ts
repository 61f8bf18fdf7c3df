/**
 * The package's OpenTelemetry instruments, behind one small interface the engine and event
 * delivery call: a span and a duration around each tool call, Sess call and store operation, a
 * span around each event delivery attempt, and the counters of `vocabulary.ts`. Everything goes
 * through `@opentelemetry/api`, a no-op until the host registers an SDK or passes providers
 * (`SessMcpTelemetryOptions`).
 *
 * Attributes are built here only, from fixed words (`outcomeOf`): a tool name, a state kind, an
 * error code or kind, a fixed reason. A value, message, link or key never becomes one.
 */
import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
  type UpDownCounter,
} from '@opentelemetry/api';
import { isSessMcpError } from '../contract/errors.js';
import { SessApiError } from '../contract/ports.js';
import type { SessMcpTelemetryOptions } from '../contract/rules.js';
import {
  METRIC_NAMES,
  type MetricAttributeKey,
  QUOTA_CODES,
  SPAN_NAMES,
  type SpanAttributeKey,
  TELEMETRY_SCOPE,
} from './vocabulary.js';

/** How a delivery attempt ended, as the counter records it. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'dead_lettered';

/** How a receipt check ended. */
export type ReceiptOutcome = 'verified' | 'rejected' | 'failed';

/** What the engine and event delivery record through. */
export interface Telemetry {
  /** Run a tool call in its span; record its duration, and a quota refusal when it is one. */
  tool<R>(tool: string, run: () => Promise<R>, describe: (result: R) => ToolDescription): Promise<R>;
  /** Run one Sess call in its span; record its duration by operation and outcome class. */
  sess<R>(operation: string, run: () => Promise<R>): Promise<R>;
  /** Run one store operation in its span; count a compare-and-set conflict. */
  store<R>(operation: string, run: () => Promise<R>): Promise<R>;
  /** A wait of `sess_response` starts; the function returned ends it with its outcome. */
  waitStarted(): (outcome: string) => void;
  /** A receipt check ended. */
  receipt(outcome: ReceiptOutcome, reason: string | undefined): void;
  /** Run one delivery attempt of `sink` in its span (the handle on the span only). */
  deliver<R>(sink: string, handle: string, run: () => Promise<R>): Promise<R>;
  /** A delivery attempt was settled. */
  delivered(sink: string, outcome: DeliveryOutcome, reason: string | undefined): void;
}

/** What a finished tool call reports: its state, and its handle for the span. */
export interface ToolDescription {
  state?: string | undefined;
  handle?: string | undefined;
}

type MetricAttributes = Partial<Record<MetricAttributeKey, string>>;
type SpanAttributes = Partial<Record<SpanAttributeKey, string>>;

/**
 * The fixed word for how a call failed: a `SessMcpError`'s code, a `SessApiError`'s kind, or
 * `error` for anything else. Never a message.
 */
export function outcomeOf(error: unknown): string {
  if (isSessMcpError(error)) return error.code;
  if (error instanceof SessApiError) return error.kind;
  return 'error';
}

/** The store's fixed reason of a failure, if it has one. */
function reasonOf(error: unknown): string | undefined {
  return isSessMcpError(error) ? error.reason : undefined;
}

interface Instruments {
  tracer: Tracer;
  toolDuration: Histogram;
  openWaits: UpDownCounter;
  waitOutcomes: Counter;
  sessDuration: Histogram;
  receiptVerifications: Counter;
  storeConflicts: Counter;
  eventDeliveries: Counter;
  quotaRefusals: Counter;
}

function instrumentsOf(tracer: Tracer, meter: Meter): Instruments {
  return {
    tracer,
    toolDuration: meter.createHistogram(METRIC_NAMES.toolDuration, {
      unit: 's',
      description: 'Duration of a tool call.',
    }),
    openWaits: meter.createUpDownCounter(METRIC_NAMES.openWaits, {
      description: 'Waits of sess_response in progress.',
    }),
    waitOutcomes: meter.createCounter(METRIC_NAMES.waitOutcomes, {
      description: 'How each wait of sess_response ended.',
    }),
    sessDuration: meter.createHistogram(METRIC_NAMES.sessDuration, {
      unit: 's',
      description: 'Duration of a call to Sess.',
    }),
    receiptVerifications: meter.createCounter(METRIC_NAMES.receiptVerifications, {
      description: 'Receipt verifications, by outcome and reason.',
    }),
    storeConflicts: meter.createCounter(METRIC_NAMES.storeConflicts, {
      description: 'Compare-and-set conflicts of the store.',
    }),
    eventDeliveries: meter.createCounter(METRIC_NAMES.eventDeliveries, {
      description: 'Event delivery attempts, by sink and outcome.',
    }),
    quotaRefusals: meter.createCounter(METRIC_NAMES.quotaRefusals, {
      description: 'Creates refused by a quota or cap.',
    }),
  };
}

/** Instruments per (tracer provider, meter provider) pair: engines are made per request. */
const cache = new WeakMap<TracerProvider, WeakMap<MeterProvider, Instruments>>();

function instrumentsFor(tracerProvider: TracerProvider, meterProvider: MeterProvider): Instruments {
  let byMeter = cache.get(tracerProvider);
  if (byMeter === undefined) {
    byMeter = new WeakMap();
    cache.set(tracerProvider, byMeter);
  }
  let instruments = byMeter.get(meterProvider);
  if (instruments === undefined) {
    instruments = instrumentsOf(
      tracerProvider.getTracer(TELEMETRY_SCOPE),
      meterProvider.getMeter(TELEMETRY_SCOPE),
    );
    byMeter.set(meterProvider, instruments);
  }
  return instruments;
}

function seconds(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}

function endFailed(span: Span, outcome: string): void {
  span.setAttribute('error.type' satisfies SpanAttributeKey, outcome);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * The telemetry of `options`: the providers given, else the global ones of `@opentelemetry/api`
 * (read on each call, so an SDK registered after the engine was built is used).
 */
export function telemetryOf(options: SessMcpTelemetryOptions | undefined): Telemetry {
  const inst = (): Instruments =>
    instrumentsFor(
      options?.tracerProvider ?? trace.getTracerProvider(),
      options?.meterProvider ?? metrics.getMeterProvider(),
    );

  async function spanned<R>(
    name: string,
    kind: SpanKind,
    attributes: SpanAttributes,
    run: () => Promise<R>,
    onResult: (span: Span, result: R) => void,
  ): Promise<R> {
    return inst().tracer.startActiveSpan(
      name,
      { kind, attributes: attributes as Attributes },
      async (span) => {
        let result: R;
        try {
          result = await run();
        } catch (error) {
          endFailed(span, outcomeOf(error));
          throw error;
        }
        onResult(span, result);
        span.end();
        return result;
      },
    );
  }

  /**
   * `run` in its span, its duration recorded in `histogram` with its outcome (`ok` or the failure's
   * fixed word); `failed` sees a failure's outcome before it is thrown on.
   */
  async function timedSpan<R>(
    histogram: (i: Instruments) => Histogram,
    name: string,
    kind: SpanKind,
    attributes: MetricAttributes,
    run: () => Promise<R>,
    onResult: (span: Span, result: R) => void,
    failed: (i: Instruments, outcome: string) => void = () => {},
  ): Promise<R> {
    const i = inst();
    const startedAt = performance.now();
    try {
      const result = await spanned(name, kind, attributes, run, onResult);
      histogram(i).record(seconds(startedAt), { ...attributes, 'sess_mcp.outcome': 'ok' });
      return result;
    } catch (error) {
      const outcome = outcomeOf(error);
      histogram(i).record(seconds(startedAt), { ...attributes, 'sess_mcp.outcome': outcome });
      failed(i, outcome);
      throw error;
    }
  }

  return {
    tool(tool, run, describe) {
      const attributes: MetricAttributes = { 'sess_mcp.tool': tool };
      return timedSpan(
        (i) => i.toolDuration,
        SPAN_NAMES.tool(tool),
        SpanKind.SERVER,
        attributes,
        run,
        (span, r) => {
          const { state, handle } = describe(r);
          if (state !== undefined) span.setAttribute('sess_mcp.outcome' satisfies SpanAttributeKey, state);
          if (handle !== undefined) span.setAttribute('sess_mcp.handle' satisfies SpanAttributeKey, handle);
        },
        (i, outcome) => {
          if (QUOTA_CODES.has(outcome)) i.quotaRefusals.add(1, { ...attributes, 'error.type': outcome });
        },
      );
    },

    sess(operation, run) {
      return timedSpan(
        (i) => i.sessDuration,
        SPAN_NAMES.sess(operation),
        SpanKind.CLIENT,
        { 'sess_mcp.operation': operation },
        run,
        () => {},
      );
    },

    async store(operation, run) {
      const attributes: MetricAttributes = { 'sess_mcp.operation': operation };
      try {
        return await spanned(SPAN_NAMES.store(operation), SpanKind.INTERNAL, attributes, run, () => {});
      } catch (error) {
        const reason = reasonOf(error);
        if (reason === 'stale_version' || reason === 'exists')
          inst().storeConflicts.add(1, { ...attributes, 'sess_mcp.reason': reason });
        throw error;
      }
    },

    waitStarted() {
      const i = inst();
      i.openWaits.add(1);
      let ended = false;
      return (outcome) => {
        if (ended) return;
        ended = true;
        i.openWaits.add(-1);
        i.waitOutcomes.add(1, { 'sess_mcp.outcome': outcome });
      };
    },

    receipt(outcome, reason) {
      const attributes: MetricAttributes = { 'sess_mcp.outcome': outcome };
      if (reason !== undefined) attributes['sess_mcp.reason'] = reason;
      inst().receiptVerifications.add(1, attributes);
    },

    deliver(sink, handle, run) {
      return spanned(
        SPAN_NAMES.delivery(sink),
        SpanKind.PRODUCER,
        { 'sess_mcp.sink': sink, 'sess_mcp.handle': handle },
        run,
        () => {},
      );
    },

    delivered(sink, outcome, reason) {
      const attributes: MetricAttributes = { 'sess_mcp.sink': sink, 'sess_mcp.outcome': outcome };
      if (reason !== undefined) attributes['sess_mcp.reason'] = reason;
      inst().eventDeliveries.add(1, attributes);
    },
  };
}
