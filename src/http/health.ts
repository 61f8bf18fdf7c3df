/**
 * The handler's health answers: readiness (the host's store answered within 1 s and its layout
 * is current) and liveness (the process answers at all), as functions (`handler.ready`,
 * `handler.live`) and on the `health` option's two paths in front of the pipeline.
 *
 * Readiness never calls Sess: a Sess outage must not take every instance out of the load
 * balancer, and the receipt key set loads on the first receipt to verify. The key set's state is
 * only reported, to callers the host's `authorize` accepts, and does not gate readiness. Other
 * callers get `ok` or `unavailable` and nothing else. The health paths skip the MCP preflight
 * (Host and Origin allowlists, `authenticate`): a load balancer's probe carries no token and often
 * an address for `Host`, and what it gets back says nothing beyond up or down. It decides nothing
 * about MCP requests: every other path goes to the pipeline unchanged.
 */
import {
  STORE_ERROR_REASONS,
  STORE_READY_TIMEOUT_MS,
  type StoreNotReadyReason,
  type StoreReadiness,
} from '../index.js';
import type { ReceiptKeySetStatus } from '../sess/index.js';
import type { ResolvedHealthOptions } from './health-options.js';
import type { IncomingRequest, PipelineResult } from './incoming.js';
import type { Pipeline } from './pipeline.js';

/** What the store check found, as an authorised caller sees it. */
export type SessMcpHealthStore =
  /** The store answered within 1 s and its layout is current; `ms` it took. */
  | { kind: 'ready'; ms: number }
  /** It did not: `reason` in one word (`timeout`, `db_transient`, `not_migrated`, …). */
  | { kind: 'not_ready'; reason: StoreNotReadyReason; ms: number }
  /** Not asked: no `health.store` was given, or the handler is closed. */
  | { kind: 'not_checked'; reason: 'no_store' | 'handler_closed' };

/** The receipt key set's state, or `unknown` when the handler cannot see one. */
export type SessMcpHealthKeySet = ReceiptKeySetStatus | { state: 'unknown' };

/** The body of a readiness answer to a caller `health.authorize` accepted. */
export interface SessMcpHealthReport {
  /** `ok` with `200`, `unavailable` with `503`: the store alone decides. */
  status: 'ok' | 'unavailable';
  /** What the store check found: the one thing readiness depends on. */
  store: SessMcpHealthStore;
  /** Reported only: a key set that is not loaded, stale or failing leaves the instance ready. */
  keySet: SessMcpHealthKeySet;
}

/** What the handler's health answers read. */
export interface HealthSources {
  options: ResolvedHealthOptions;
  /** Aborted once the handler is closed: readiness is then `unavailable`. */
  closing: AbortSignal;
  /** The receipt key set's state now (fetches nothing); absent when the handler cannot see one. */
  keySetStatus: (() => ReceiptKeySetStatus) | undefined;
}

/** The handler's health answers. */
export interface Health {
  ready(request: Request): Promise<Response>;
  live(request: Request): Response;
}

const HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' } as const;

/** A JSON answer, without its body for `HEAD`. */
function answer(method: string, status: number, body: unknown): Response {
  if (method === 'HEAD') return new Response(null, { status, headers: HEADERS });
  return new Response(JSON.stringify(body), { status, headers: HEADERS });
}

/** `405` for a method other than `GET` and `HEAD`. */
function methodNotAllowed(): Response {
  return new Response(JSON.stringify({ status: 'method_not_allowed' }), {
    status: 405,
    headers: { ...HEADERS, allow: 'GET, HEAD' },
  });
}

/** `work`, or `fallback` when it throws or has not settled within `ms`. */
async function within<T>(work: () => T | PromiseLike<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(work), late]);
  } catch {
    return fallback;
  } finally {
    clearTimeout(timer);
  }
}

/** The reason words a readiness answer may carry: the port's, nothing a store made up. */
const NOT_READY_REASONS: ReadonlySet<string> = new Set<StoreNotReadyReason>([
  ...STORE_ERROR_REASONS,
  'timeout',
]);

/** Only what the port allows through: a host's store may return anything. */
function checkedReadiness(value: unknown): StoreReadiness {
  const given = value as { kind?: unknown; reason?: unknown } | null;
  if (given?.kind === 'ready') return { kind: 'ready' };
  if (
    given?.kind === 'not_ready' &&
    typeof given.reason === 'string' &&
    NOT_READY_REASONS.has(given.reason)
  ) {
    return { kind: 'not_ready', reason: given.reason as StoreNotReadyReason };
  }
  return { kind: 'not_ready', reason: 'store_failure' };
}

/** The store check, bounded by {@link STORE_READY_TIMEOUT_MS} whatever the store does. */
async function checkStore(sources: HealthSources): Promise<SessMcpHealthStore> {
  if (sources.closing.aborted) return { kind: 'not_checked', reason: 'handler_closed' };
  const store = sources.options.store;
  if (store === undefined) return { kind: 'not_checked', reason: 'no_store' };
  const started = performance.now();
  const asked = async (): Promise<unknown> => {
    try {
      return await store.ready();
    } catch {
      // Never its message: a host's error may name a host or a password.
      return undefined;
    }
  };
  const outcome = checkedReadiness(
    await within(asked, STORE_READY_TIMEOUT_MS, { kind: 'not_ready', reason: 'timeout' }),
  );
  const ms = Math.round(performance.now() - started);
  return outcome.kind === 'ready' ? { kind: 'ready', ms } : { ...outcome, ms };
}

/** The key set's state, copied field by field: nothing but these words and numbers reaches a body. */
function keySetOf(sources: HealthSources): SessMcpHealthKeySet {
  let status: ReceiptKeySetStatus | undefined;
  try {
    status = sources.keySetStatus?.();
  } catch {
    status = undefined;
  }
  if (status === undefined) return { state: 'unknown' };
  const lastError = status.lastError === undefined ? {} : { lastError: status.lastError };
  if (status.state === 'not_loaded') return { state: 'not_loaded', ...lastError };
  return { state: status.state, ageSeconds: status.ageSeconds, keys: status.keys, ...lastError };
}

/** The health answers over `sources`. */
export function createHealth(sources: HealthSources): Health {
  const { authorize } = sources.options;
  return {
    async ready(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed();
      const [store, authorised] = await Promise.all([
        checkStore(sources),
        authorize === undefined
          ? false
          : within(async () => (await authorize(request)) === true, STORE_READY_TIMEOUT_MS, false),
      ]);
      const status = store.kind === 'ready' ? 'ok' : 'unavailable';
      const code = status === 'ok' ? 200 : 503;
      if (!authorised) return answer(request.method, code, { status });
      const report: SessMcpHealthReport = { status, store, keySet: keySetOf(sources) };
      return answer(request.method, code, report);
    },
    live(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed();
      return answer(request.method, 200, { status: 'ok' });
    },
  };
}

/** The path of an absolute URL (what follows the authority, before `?` or `#`). */
function pathOf(url: string): string {
  const authority = url.indexOf('//');
  const start = url.indexOf('/', authority < 0 ? 0 : authority + 2);
  if (start < 0) return '/';
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}

/** The `Request` a health answer reads: method, URL and headers, no body. */
function requestOf(incoming: IncomingRequest): Request | undefined {
  try {
    return new Request(incoming.url, { method: incoming.method, headers: incoming.headers });
  } catch {
    return undefined;
  }
}

/**
 * `pipeline` with the health paths answered in front of it (both faces go through the result);
 * `pipeline` itself when neither path is served.
 */
export function withHealthPaths(
  pipeline: Pipeline,
  health: Health,
  options: ResolvedHealthOptions,
): Pipeline {
  const { path, livePath } = options;
  if (path === undefined && livePath === undefined) return pipeline;
  const served = (response: Response): PipelineResult => ({
    response,
    closeConnection: false,
    done: () => {},
  });
  return {
    handle(incoming) {
      const at = pathOf(incoming.url);
      if (at !== path && at !== livePath) return pipeline.handle(incoming);
      const request = requestOf(incoming);
      if (request === undefined) return pipeline.handle(incoming);
      if (at === livePath) return Promise.resolve(served(health.live(request)));
      return health.ready(request).then(served);
    },
    close: () => pipeline.close(),
  };
}
