/**
 * OpenTelemetry, with the real SDK packages and in-memory exporters: the HTTP handler and the
 * watcher get `telemetry: { tracerProvider, meterProvider }` and run a whole interaction over the
 * local Sess runtime (a quota refusal, a wait that times out, the answer, a store conflict, the
 * completion, a webhook delivery refused once and retried). Then:
 *
 * - every span and metric the package names (`src/core/telemetry/vocabulary.ts`) was exported,
 *   and a Sess call's span is a child of its tool call's;
 * - the counters say what happened (one quota refusal, a verified receipt, a conflict, a retry and
 *   a delivery, no wait left open);
 * - every attribute key is one of the enumerated ones, every metric attribute value a fixed word;
 * - no secret (API key, bearer token, link, answer value, webhook secret) is in anything exported.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandleStore } from '../../src/core/contract/ports.js';
import {
  METRIC_ATTRIBUTE_KEYS,
  METRIC_NAMES,
  SPAN_ATTRIBUTE_KEYS,
} from '../../src/core/telemetry/vocabulary.js';
import { createSessMcpHttpHandler, createSessMcpWatcher } from '../../src/http/index.js';
import { newSecret, startWebhookReceiver } from '../support/webhook-receiver.js';
import { approveAnswer, approveSurface, call, ok, startHttpHarness } from './harness.js';
import { MINIMAL_HTTP_OPTIONS } from './helpers.js';
import { until, useWatcherStack } from './watcher-stack.js';

const { audits, cleanup, clientOf } = useWatcherStack();

// The SDK's context manager makes a Sess call's span a child of its tool call's. It is global, so
// it is taken down after this file (the next file in the worker must not see it).
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

/** An SDK pipeline with in-memory exporters: what a host's collector would receive. */
function sdk() {
  const spans = new InMemorySpanExporter();
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const tracerProvider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  cleanup.push(async () => {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  });
  return {
    telemetry: { tracerProvider, meterProvider },
    spans: (): ReadableSpan[] => spans.getFinishedSpans(),
    async metrics(): Promise<ResourceMetrics[]> {
      await reader.forceFlush();
      return metricExporter.getMetrics();
    },
  };
}

interface Point {
  metric: string;
  attributes: Record<string, unknown>;
  value: unknown;
}

/** Every data point of the last export, flat. */
function pointsOf(exported: ResourceMetrics[]): Point[] {
  const last = exported.at(-1);
  if (last === undefined) return [];
  return last.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((metric) =>
      metric.dataPoints.map((point) => ({
        metric: metric.descriptor.name,
        attributes: point.attributes as Record<string, unknown>,
        value: point.value,
      })),
    ),
  );
}

/** The sum of the values of `metric`'s points whose attributes include `match`. */
function total(points: Point[], metric: string, match: Record<string, string> = {}): number {
  return points
    .filter((p) => p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce(
      (sum, p) => sum + (typeof p.value === 'number' ? p.value : ((p.value as { count: number }).count ?? 0)),
      0,
    );
}

/**
 * A store view whose first `update` is beaten by another writer: just before it, the same record
 * is written again at its current version, so the engine's compare-and-set meets a newer version.
 */
function conflictOnce(store: HandleStore, armed: { on: boolean }): HandleStore {
  return {
    ...store,
    get: (handle) => store.get(handle),
    create: (record, limits) => store.create(record, limits),
    delete: (handle, expected) => store.delete(handle, expected),
    listUnfinished: () => store.listUnfinished(),
    countUnfinished: () => store.countUnfinished(),
    ...(store.listPage === undefined ? {} : { listPage: (q) => store.listPage!(q) }),
    ...(store.listCursorKey === undefined ? {} : { listCursorKey: () => store.listCursorKey!() }),
    async update(record, expected) {
      if (armed.on) {
        armed.on = false;
        const current = await store.get(record.handle);
        if (current !== undefined) await store.update(current.record, current.version);
      }
      return store.update(record, expected);
    },
  };
}

describe('OpenTelemetry through the handler and the watcher, with the real SDK', { timeout: 60_000 }, () => {
  it('exports the spans and metrics of a whole interaction, with enumerated attributes and no secret', async () => {
    const otel = sdk();
    const armed = { on: false };
    const h = await startHttpHarness({ telemetry: otel.telemetry, maxOpenPerPrincipal: 1 }, (store) =>
      conflictOnce(store, armed),
    );
    cleanup.push(() => h.close());
    audits.current.secret(h.sess.apiKey, 'sess api key');

    const alice = await clientOf(h, 'alice-token-0123456789');
    const created = await ok(alice, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    const refused = await call(alice, 'sess_request', { interaction: approveSurface });
    expect(refused).toMatchObject({ ok: false, error: { code: 'PRINCIPAL_QUOTA_REACHED' } });
    const waited = await ok(alice, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 200 });
    expect(waited.state).toBe('waiting');

    audits.current.answer(approveAnswer.values, 'answer');
    await h.sess.submitAnswer(created.humanUrl!, approveAnswer);
    // The release of the answer meets a concurrent write: the agent is told, and reads again.
    armed.on = true;
    const beaten = await call(alice, 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(beaten).toMatchObject({ ok: false, error: { code: 'INVALID_STATE' } });
    expect(armed.on).toBe(false);
    const answered = await ok(alice, 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    expect(answered.state).toBe('answered');
    await ok(alice, 'sess_complete', {
      handle: created.handle,
      expected_revision: 1,
      response_event_id: answered.response!.eventId,
    });

    // Then a watcher delivers the events owed. Its webhook receiver refuses the first delivery
    // (500), then takes every one (204).
    const secret = newSecret();
    audits.current.secret(secret, 'webhook secret');
    const receiver = await startWebhookReceiver(({ res, index }) => {
      res.writeHead(index === 0 ? 500 : 204).end();
    });
    cleanup.push(() => receiver.close());
    const watcher = createSessMcpWatcher({
      handleStores: h.stores,
      sessOrigin: h.sess.origin,
      allowInsecureLocalhost: true,
      credentialFor: () => h.sess.apiKey,
      webhook: { url: receiver.url, secrets: [secret] },
      telemetry: otel.telemetry,
    });
    cleanup.push(() => watcher.stop());
    watcher.start();
    // The first event's first delivery was refused and retried; a later one was taken.
    await until(() => receiver.received.length >= 2, 30_000);

    const spans = otel.spans();
    const points = pointsOf(await otel.metrics());
    const exported = JSON.stringify({
      spans: spans.map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
      })),
      points,
    });
    audits.current.text(exported, 'exported telemetry');

    // Spans: each tool call, its Sess calls and store operations as its children, deliveries.
    const names = new Set(spans.map((s) => s.name));
    for (const name of [
      'sess_mcp.tool sess_request',
      'sess_mcp.tool sess_response',
      'sess_mcp.tool sess_complete',
      'sess_mcp.sess createSession',
      'sess_mcp.sess waitSession',
      'sess_mcp.sess verifyResponse',
      'sess_mcp.sess complete',
      'sess_mcp.store create',
      'sess_mcp.store update',
      'sess_mcp.event.deliver webhook',
    ]) {
      expect(names, name).toContain(name);
    }
    const request = spans.find((s) => s.name === 'sess_mcp.tool sess_request' && s.status.code !== 2)!;
    const createSession = spans.find((s) => s.name === 'sess_mcp.sess createSession')!;
    expect(createSession.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(request.attributes['sess_mcp.handle']).toBe(created.handle);
    // The refused create: its tool span and its store span both say why, with the error status.
    const refusedSpans = spans.filter((s) => s.attributes['error.type'] === 'PRINCIPAL_QUOTA_REACHED');
    expect(refusedSpans.map((s) => [s.name, s.status.code])).toEqual([
      ['sess_mcp.store create', 2],
      ['sess_mcp.tool sess_request', 2],
    ]);

    // Metrics: what happened, counted.
    expect(total(points, METRIC_NAMES.quotaRefusals, { 'error.type': 'PRINCIPAL_QUOTA_REACHED' })).toBe(1);
    expect(
      total(points, METRIC_NAMES.receiptVerifications, { 'sess_mcp.outcome': 'verified' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(points, METRIC_NAMES.waitOutcomes, { 'sess_mcp.outcome': 'waiting' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(points, METRIC_NAMES.waitOutcomes, { 'sess_mcp.outcome': 'answered' }),
    ).toBeGreaterThanOrEqual(1);
    expect(total(points, METRIC_NAMES.openWaits)).toBe(0);
    expect(
      total(points, METRIC_NAMES.storeConflicts, {
        'sess_mcp.operation': 'update',
        'sess_mcp.reason': 'stale_version',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(points, METRIC_NAMES.sessDuration, {
        'sess_mcp.operation': 'createSession',
        'sess_mcp.outcome': 'ok',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(points, METRIC_NAMES.toolDuration, {
        'sess_mcp.tool': 'sess_complete',
        'sess_mcp.outcome': 'ok',
      }),
    ).toBe(1);
    expect(
      total(points, METRIC_NAMES.eventDeliveries, {
        'sess_mcp.sink': 'webhook',
        'sess_mcp.outcome': 'retry',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      total(points, METRIC_NAMES.eventDeliveries, {
        'sess_mcp.sink': 'webhook',
        'sess_mcp.outcome': 'delivered',
      }),
    ).toBeGreaterThanOrEqual(1);

    // Attributes: only the enumerated keys; metric values are fixed words (no handle, no id).
    const spanKeys = new Set(spans.flatMap((s) => Object.keys(s.attributes)));
    expect([...spanKeys].filter((k) => !(SPAN_ATTRIBUTE_KEYS as readonly string[]).includes(k))).toEqual([]);
    const metricKeys = new Set(points.flatMap((p) => Object.keys(p.attributes)));
    expect([...metricKeys].filter((k) => !(METRIC_ATTRIBUTE_KEYS as readonly string[]).includes(k))).toEqual(
      [],
    );
    for (const point of points) {
      for (const value of Object.values(point.attributes)) expect(String(value)).toMatch(/^[A-Za-z_]{1,40}$/);
    }
    expect(JSON.stringify(points)).not.toContain(created.handle);
  });

  it('refuses a telemetry option that is not a pair of providers, naming the key', () => {
    const make = (telemetry: unknown) =>
      createSessMcpHttpHandler({ ...MINIMAL_HTTP_OPTIONS, telemetry } as Parameters<
        typeof createSessMcpHttpHandler
      >[0]);
    expect(() => make({ tracer: {} })).toThrow(/option "telemetry\.tracer" is not a key of "telemetry"/);
    expect(() => make({ tracerProvider: {} })).toThrow(
      /option "telemetry\.tracerProvider" must be a TracerProvider/,
    );
    expect(() => make({ meterProvider: 1 })).toThrow(
      /option "telemetry\.meterProvider" must be a MeterProvider/,
    );
    expect(() => make('on')).toThrow(/option "telemetry" must be an object/);
    expect(() => make({})).not.toThrow();
  });
});
