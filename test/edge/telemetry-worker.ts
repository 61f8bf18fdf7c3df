/**
 * `examples/fetch-edge.ts`'s handler with the real OpenTelemetry SDK (`@opentelemetry/sdk-trace`
 * and `@opentelemetry/sdk-metrics`, their browser builds) bundled into one Worker, exporting to
 * memory. `GET /telemetry` answers what was exported: span names and metric names. It exists for
 * `test/edge/workerd.test.ts` only: a real Worker must never serve its telemetry.
 */
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createEdgeHandler, type EdgeEnv } from '../../examples/fetch-edge.js';

/** The SDK and the handler, made at the first request: a Worker may start no timer at load. */
function start(env: EdgeEnv) {
  const spans = new InMemorySpanExporter();
  const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 });
  const telemetry = {
    tracerProvider: new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] }),
    meterProvider: new MeterProvider({ readers: [reader] }),
  };
  return { spans, metrics, reader, handler: createEdgeHandler(env, { telemetry }) };
}

let worker: ReturnType<typeof start> | undefined;

export default {
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    const url = new URL(request.url);
    worker ??= start(env);
    const { spans, metrics, reader, handler } = worker;
    if (url.pathname === '/telemetry') {
      await reader.forceFlush();
      const names = metrics
        .getMetrics()
        .flatMap((resource) =>
          resource.scopeMetrics.flatMap((scope) => scope.metrics.map((m) => m.descriptor.name)),
        );
      return Response.json({
        spans: spans.getFinishedSpans().map((s) => s.name),
        metrics: [...new Set(names)],
      });
    }
    if (url.pathname !== '/mcp') return new Response('Not Found', { status: 404 });
    return handler.fetch(request);
  },
};
