/**
 * `@sess.si/mcp/http`: the Sess tools as a stateless Streamable HTTP handler for a hosting runtime,
 * with a web-standard `fetch` face and a `node:http` face.
 *
 * A library, not a server: nothing here starts a listener, authenticates or stores. The host
 * supplies `authenticate` and `handleStore`; see {@link createSessMcpHttpHandler}. What notices a
 * late answer between requests is {@link createSessMcpWatcher}: a long-lived watcher, or a
 * bounded sweep for a cron-triggered edge function. This file only re-exports.
 *
 * The folder: the handler and its options (`handler.ts`, `options.ts`), its health answers
 * (`health.ts`, their option `health-options.ts`), the two faces
 * (`fetch-face.ts`, `node-face.ts`), the pipeline they share (`pipeline.ts`, `request-life.ts`,
 * `sdk-exchange.ts`), the preflight (`preflight.ts` and one stage per module in `preflight/`), the
 * answers given before the SDK (`responses.ts`), cancellation (`cancellation.ts`), and the
 * watcher (`watcher.ts`, its options `watcher-options.ts`, one record's poll `watch-run.ts`, the
 * credentials' budgets `watch-budget.ts`, the bounded pass `sweep.ts`). Not here:
 * the server both faces serve (`src/faces/`), the engine (`src/core/engine/`) and the Sess client
 * (`src/sess/`).
 */

export type { WebhookEndpoint, WebhookOptions, WebhookSettings } from '../faces/wake/webhook-config.js';
export { createSessMcpHttpHandler, httpBindingOf, type SessMcpHttpHandler } from './handler.js';
export type { SessMcpHealthKeySet, SessMcpHealthReport, SessMcpHealthStore } from './health.js';
export type { SessMcpHealthOptions } from './health-options.js';
export type { NodeRequestLike, NodeResponseLike, NodeServerLike } from './node-face.js';
export {
  DEFAULT_HTTP_REQUEST_DEADLINE_MS,
  DEFAULT_MAX_BODY_BYTES,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from './options.js';
export type { SweepOptions, SweepResult } from './sweep.js';
export { createSessMcpWatcher, type SessMcpWatcher } from './watcher.js';
export { DEFAULT_CALLS_PER_MINUTE_PER_CREDENTIAL, type SessMcpWatcherOptions } from './watcher-options.js';
