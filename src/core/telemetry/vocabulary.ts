/**
 * What the package emits through OpenTelemetry: the names of its spans and metrics, and every
 * attribute key they may carry. One source: the telemetry module emits only these, the docs list
 * them, and a test checks every exported span and metric against them.
 *
 * Metric attributes take their values from fixed, enumerated sets (a tool name, a state kind, an
 * error code, a fixed reason word, an outcome class, a Sess operation, a store operation, a sink
 * name): never a handle, principal, workspace, Session id, link, key, token, answer value or free
 * text. Spans may carry the handle besides.
 */

/** The instrumentation scope of every tracer and meter. */
export const TELEMETRY_SCOPE = '@sess.si/mcp';

/** Every metric the package records. */
export const METRIC_NAMES = {
  /** Tool call duration, seconds: `sess_mcp.tool`, `sess_mcp.outcome`. */
  toolDuration: 'sess_mcp.tool.duration',
  /** Waits of `sess_response` in progress (an up-down counter): no attribute. */
  openWaits: 'sess_mcp.waits.open',
  /** How each wait of `sess_response` ended: `sess_mcp.outcome` (the state, or the error code). */
  waitOutcomes: 'sess_mcp.waits.outcomes',
  /** Sess call duration, seconds: `sess_mcp.operation`, `sess_mcp.outcome` (`ok` or the failure's kind). */
  sessDuration: 'sess_mcp.sess.duration',
  /** Receipt verifications: `sess_mcp.outcome` (`verified`, `rejected`, `failed`), `sess_mcp.reason`. */
  receiptVerifications: 'sess_mcp.receipt.verifications',
  /** Compare-and-set conflicts of the store: `sess_mcp.operation`, `sess_mcp.reason`. */
  storeConflicts: 'sess_mcp.store.conflicts',
  /** Event delivery attempts: `sess_mcp.sink`, `sess_mcp.outcome` (`delivered`, `retry`, `dead_lettered`), `sess_mcp.reason`. */
  eventDeliveries: 'sess_mcp.event.deliveries',
  /** Creates refused by a quota or cap: `sess_mcp.tool`, `error.type` (the error code). */
  quotaRefusals: 'sess_mcp.quota.refusals',
} as const;

/** Every attribute key a metric may carry. */
export const METRIC_ATTRIBUTE_KEYS = [
  'sess_mcp.tool',
  'sess_mcp.outcome',
  'sess_mcp.operation',
  'sess_mcp.reason',
  'sess_mcp.sink',
  'error.type',
] as const;

/** Every attribute key a span may carry: the metric ones, and the handle. */
export const SPAN_ATTRIBUTE_KEYS = [...METRIC_ATTRIBUTE_KEYS, 'sess_mcp.handle'] as const;

export type MetricAttributeKey = (typeof METRIC_ATTRIBUTE_KEYS)[number];
export type SpanAttributeKey = (typeof SPAN_ATTRIBUTE_KEYS)[number];

/** The error codes that count as quota refusals. */
export const QUOTA_CODES: ReadonlySet<string> = new Set(['PRINCIPAL_QUOTA_REACHED', 'STATE_STORE_FULL']);

/** A span's name: `sess_mcp.<kind> <what>`, `what` from a fixed set. */
export const SPAN_NAMES = {
  tool: (tool: string) => `sess_mcp.tool ${tool}`,
  sess: (operation: string) => `sess_mcp.sess ${operation}`,
  store: (operation: string) => `sess_mcp.store ${operation}`,
  delivery: (sink: string) => `sess_mcp.event.deliver ${sink}`,
} as const;
