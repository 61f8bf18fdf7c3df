/**
 * The options of `createSessMcpWatcher` and their check at construction: a bad option is a
 * `TypeError` naming it, through the one option helper, before anything is polled.
 *
 * It polls nothing and keeps no credential: `watcher.ts` runs the watcher, `watch-budget.ts` keeps
 * the calls each credential may make.
 */
import { optionNames, readOptions } from '../core/contract/options.js';
import {
  RECEIPT_ISSUER_RULE,
  readTelemetryOption,
  SESS_ID_RULE,
  type SessMcpTelemetryOptions,
  WAIT_CEILING_MS,
  WAIT_MS_RULE,
} from '../core/contract/rules.js';
import {
  DELIVERING_RETENTION_TEXT,
  MIN_DELIVERING_RETENTION_MS,
  type Prune,
  readRetention,
} from '../faces/wake/retention.js';
import {
  readRoutedWebhookOptions,
  readWebhookOptions,
  type WebhookEndpoint,
  type WebhookOptions,
  type WebhookSenderConfig,
  type WebhookSettings,
} from '../faces/wake/webhook-config.js';
import { createWebhookSender, type WebhookSender } from '../faces/wake/webhook-sender.js';
import type {
  DiagnosticsSink,
  HandleStoreFactory,
  HttpBinding,
  OutboxEvent,
  WaitGate,
  WakeEvent,
} from '../index.js';
import { readSessOrigin } from './options.js';

/** Options of `createSessMcpWatcher`. */
export interface SessMcpWatcherOptions {
  /**
   * The store backend the handler's `handleStore` views come from (the views of its
   * `forBinding`): the watcher pages through its `waiting()` records over every scope, polls each
   * through the engine's own `sess_response` on a view of the record's binding, and delivers its
   * outbox's events to `onEvent` and the webhook. Every store of this package has `waiting()`.
   */
  handleStores: HandleStoreFactory;
  /**
   * The Sess API key of a binding's principal now, or `undefined` to skip the binding: a
   * principal unknown or revoked, or a binding whose `grantGeneration` is not the principal's
   * current one (only the current grant generation is watched; the host decides which that is).
   * Called once per poll, never cached: the key is held only for that poll's Sess calls and is
   * never stored, logged or put in a diagnostic. A throw skips the binding the same way
   * (`watcher.credential_failed`, without its message). The key must belong to the binding's
   * `workspaceId`, as `principal.credential()` must.
   */
  credentialFor(binding: HttpBinding): string | undefined | Promise<string | undefined>;
  /**
   * The Sess API origin: the handler's. Records of another origin are not polled.
   * @default 'https://api.sess.si'
   */
  sessOrigin?: string;
  /** Testing only: allow an `http://localhost`, `127.0.0.1` or `[::1]` Sess origin. */
  allowInsecureLocalhost?: boolean;
  /** The trusted workspace for receipts, as the handler's option of that name. */
  expectedWorkspaceId?: string;
  /** The receipt issuer, as the handler's option of that name. */
  receiptIssuer?: string;
  /**
   * The wait gate the watcher's long-polls go through: pass the handler's (its `waitGate`
   * option), so a tool call's wait and the watcher's poll on one Session share one upstream
   * long-poll. The watcher holds at most half of each of the gate's caps (per caller, per
   * principal, in all), and starts a poll only into a slot free now, so tool calls always find
   * the other half.
   * @default a gate of the watcher's own (`createWaitGate()`)
   */
  waitGate?: WaitGate;
  /**
   * The longest upstream wait of one poll of a Session, in milliseconds (0 to 45 000). `sweep`
   * never waits (it reads).
   * @default 45000
   */
  maxWaitMs?: number;
  /**
   * The Sess calls the watcher and the sweep make with one credential per minute, a whole number
   * from 1 to 100 000: a token bucket of that size, refilled evenly (a sweep starts with a full
   * minute's worth). A credential out of calls is not polled until it has one again. Every call
   * counts (a wait, a read, a confirming read); a wait that joins a tool call's long-poll makes
   * none. `429 Retry-After` and outages back off on top of it (doubling to a minute, never
   * shorter than `Retry-After`).
   * @default 60 ({@link DEFAULT_CALLS_PER_MINUTE_PER_CREDENTIAL})
   */
  callsPerMinutePerCredential?: number;
  /**
   * Called at least once per interaction event of the store (an answer saved, by the watcher or
   * by a tool call; a question withdrawn or expired; an Ask closed; the owner needed): a reference
   * only, never an answer value or link. A resolved promise marks the event delivered; a throw or
   * rejection is retried with backoff over 24 hours. Deduplicate by `eventId`; call
   * `sess_response` to read the answer. Needs a store with an outbox (every store of this
   * package). `start()` delivers as events come; `sweep()` delivers once, within its budget.
   * @default none (no events are delivered)
   */
  onEvent?: (event: WakeEvent) => void | Promise<void>;
  /**
   * Send each event as a signed webhook (Standard Webhooks: `webhook-id` is the `eventId`, every
   * attempt signed anew with each secret), retried with backoff over 24 hours, then dead-lettered;
   * a `410 Gone` stops sending to that receiver. Either one receiver for every event (`url` and
   * `secrets`), or only the sender settings when {@link webhookFor} gives each tenant's receiver.
   * The URL must be `https` and its host's addresses public (checked on every connection), unless
   * `allowPrivate`. On a runtime that cannot see the addresses it connects to (workerd, Deno),
   * `allowedHosts` is required. Needs a store with an outbox.
   * @throws {TypeError} at construction, naming `webhook.<key>` (never its value): a URL or secret
   *   that is not usable, an unknown key, `allowedHosts` missing where it is required.
   * @default none (no webhook)
   */
  webhook?: WebhookOptions | WebhookSettings;
  /**
   * The receiver of a binding's events, per tenant: its `url` and `secrets`, or `undefined` when
   * the tenant has none (its events are then not sent, and not owed). Called for every attempt, so
   * a changed receiver or a rotated secret applies to the next one. A throw or rejection retries
   * the event on the webhook schedule; a receiver that is not usable (a bad URL, a private address,
   * a bad secret) dead-letters it. The sender settings come from {@link webhook} (then without
   * `url` and `secrets`).
   * @default none (every event goes to `webhook.url`, if given)
   */
  webhookFor?: (binding: HttpBinding) => WebhookEndpoint | undefined | Promise<WebhookEndpoint | undefined>;
  /**
   * How long a finished record (completed, expired, withdrawn, a closed Ask) is kept, in
   * milliseconds (1000 to 3650 days), or `false` to keep every record. The watcher removes older
   * ones through `handleStores.prune()`: `start()` at most once a minute, `sweep()` once per sweep
   * with the budget left after delivery, each pass in batches of 100, at most 1000 records. A
   * record waiting on the person, the agent or the owner is never removed, nor one whose event is
   * still owed to `onEvent` or the webhook. A removed handle answers `HANDLE_NOT_FOUND`. With
   * `onEvent` or a webhook it must be at least the delivery retry span (24 hours), so every event
   * is delivered or dead-lettered first.
   * @default 2592000000 (30 days)
   */
  retention?: number | false;
  /**
   * Where diagnostics go: fixed event names and codes, never a key, link, handle or answer.
   * Besides the engine's own (`answer_released`, …): `watcher.started`, `watcher.stopped`,
   * `watcher.poll_failed` (with the code), `watcher.backoff` (with the pause in `ms`),
   * `watcher.credential_failed` (`credentialFor` threw), `watcher.store_failed` (`waiting()`
   * failed, with the code), `watcher.prune_failed` (`prune()` failed, with the code) and
   * `watcher.sweep_done` (with `ms`). A sink that throws is ignored.
   */
  diagnostics?: DiagnosticsSink;
  /**
   * Where spans and metrics go: the host's OpenTelemetry providers (`docs/operate.md` lists what
   * is emitted). Attributes never carry a link, key, token, answer value or free text.
   * @default the global providers of `@opentelemetry/api` (a no-op until the host registers an SDK)
   */
  telemetry?: SessMcpTelemetryOptions;
}

/** The default of {@link SessMcpWatcherOptions.callsPerMinutePerCredential}. */
export const DEFAULT_CALLS_PER_MINUTE_PER_CREDENTIAL = 60;

/** The options after validation, with defaults filled in. */
export interface ResolvedWatcherOptions {
  handleStores: HandleStoreFactory & Required<Pick<HandleStoreFactory, 'waiting'>>;
  credentialFor: SessMcpWatcherOptions['credentialFor'];
  sessOrigin: string;
  allowInsecureLocalhost: boolean;
  expectedWorkspaceId: string | undefined;
  receiptIssuer: string | undefined;
  waitGate: WaitGate | undefined;
  maxWaitMs: number;
  callsPerMinute: number;
  onEvent: SessMcpWatcherOptions['onEvent'];
  /** The webhook: its sender, and the receiver of each event (`undefined`: not sent). */
  webhook: ResolvedWebhook | undefined;
  /** Retention: the store's prune and how long a finished record is kept; absent when off. */
  retention: { prune: Prune; ms: number } | undefined;
  diagnostics: DiagnosticsSink;
  telemetry: SessMcpTelemetryOptions | undefined;
}

/** A checked webhook option. */
export interface ResolvedWebhook {
  sender: WebhookSender;
  endpointFor(event: OutboxEvent): WebhookEndpoint | undefined | Promise<WebhookEndpoint | undefined>;
}

const FACTORY = 'createSessMcpWatcher';

/** The option names of {@link SessMcpWatcherOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<SessMcpWatcherOptions>()(
  'handleStores',
  'credentialFor',
  'sessOrigin',
  'allowInsecureLocalhost',
  'expectedWorkspaceId',
  'receiptIssuer',
  'waitGate',
  'maxWaitMs',
  'callsPerMinutePerCredential',
  'onEvent',
  'webhook',
  'webhookFor',
  'retention',
  'diagnostics',
  'telemetry',
);

/** The webhook and webhookFor options, checked, with the sender made (its errors name `webhook`). */
function resolveWebhook(
  read: ReturnType<typeof readOptions>,
  options: SessMcpWatcherOptions,
  allowInsecureLocalhost: boolean,
): ResolvedWebhook | undefined {
  const webhookFor = read.func<NonNullable<SessMcpWatcherOptions['webhookFor']>>(
    'webhookFor',
    options.webhookFor,
    true,
  );
  let settings: WebhookSenderConfig;
  let endpointFor: ResolvedWebhook['endpointFor'];
  if (webhookFor !== undefined) {
    settings = readRoutedWebhookOptions(read, 'webhook', options.webhook, 'webhookFor');
    endpointFor = (event) => (event.binding.kind === 'http' ? webhookFor(event.binding) : undefined);
  } else {
    const config = readWebhookOptions(read, 'webhook', options.webhook, { allowInsecureLocalhost });
    if (config === undefined) return undefined;
    settings = config;
    endpointFor = () => config.endpoint;
  }
  if (typeof options.handleStores.outbox !== 'function') {
    read.fail(
      webhookFor === undefined ? 'webhook' : 'webhookFor',
      'needs a store with an outbox (handleStores.outbox())',
    );
  }
  let sender: WebhookSender;
  try {
    sender = createWebhookSender({
      allowPrivate: settings.allowPrivate,
      allowInsecureLocalhost,
      ...(settings.allowedHosts === undefined ? {} : { allowedHosts: settings.allowedHosts }),
      ...(settings.timeoutMs === undefined ? {} : { timeoutMs: settings.timeoutMs }),
    });
  } catch {
    // The one setting the sender itself can refuse: an allowlist this runtime requires.
    return read.fail(
      'webhook.allowedHosts',
      'is required on this runtime, which cannot check the addresses a webhook connects to: list the receiver host names',
    );
  }
  return { sender, endpointFor };
}

/**
 * The `retention` option with the store's prune: off when `false`, and when the store has no
 * `prune()` and the option was left to its default (asking for it then is refused).
 */
function resolveRetention(
  read: ReturnType<typeof readOptions>,
  options: SessMcpWatcherOptions,
  stores: Partial<HandleStoreFactory>,
): ResolvedWatcherOptions['retention'] {
  const ms = readRetention(read, options.retention);
  if (ms === false) return undefined;
  if (typeof stores.prune !== 'function') {
    if (options.retention === undefined) return undefined;
    read.fail('retention', 'needs a store with prune() (handleStores.prune), or false');
  }
  const delivers =
    options.onEvent !== undefined || options.webhook !== undefined || options.webhookFor !== undefined;
  if (delivers && ms < MIN_DELIVERING_RETENTION_MS)
    read.fail('retention', `must be ${DELIVERING_RETENTION_TEXT}`);
  const prune = stores.prune as NonNullable<HandleStoreFactory['prune']>;
  return { prune: (query) => prune.call(stores, query), ms };
}

/**
 * Validate the options and fill in defaults.
 * @throws {TypeError} `createSessMcpWatcher: option "<name>" <rule>.` for the first bad option.
 */
export function resolveWatcherOptions(options: SessMcpWatcherOptions): ResolvedWatcherOptions {
  const read = readOptions(FACTORY, options, { known: KNOWN_OPTIONS });
  const given = options.handleStores as Partial<HandleStoreFactory> | null | undefined;
  if (given === null || typeof given !== 'object' || typeof given.forBinding !== 'function') {
    read.fail(
      'handleStores',
      'is required: a store backend with forBinding() (createPostgresHandleStore, …)',
    );
  }
  const stores = given as Partial<HandleStoreFactory>;
  if (typeof stores.waiting !== 'function') {
    read.fail('handleStores', 'must have waiting(): the watched records over every scope');
  }
  const credentialFor = read.func<SessMcpWatcherOptions['credentialFor']>(
    'credentialFor',
    options.credentialFor,
  );
  const onEvent = read.func<NonNullable<SessMcpWatcherOptions['onEvent']>>('onEvent', options.onEvent, true);
  if (onEvent !== undefined && typeof stores.outbox !== 'function') {
    read.fail('onEvent', 'needs a store with an outbox (handleStores.outbox())');
  }
  const { allowInsecureLocalhost, sessOrigin } = readSessOrigin(read, options);
  const webhook = resolveWebhook(read, options, allowInsecureLocalhost);
  const gate = options.waitGate as Partial<WaitGate> | null | undefined;
  if (
    gate !== undefined &&
    (gate === null ||
      typeof gate !== 'object' ||
      typeof gate.wait !== 'function' ||
      typeof gate.running !== 'function' ||
      typeof gate.maxConcurrentWaits !== 'number')
  ) {
    read.fail('waitGate', 'must be a wait gate (createWaitGate)');
  }
  const maxWaitMs = options.maxWaitMs ?? WAIT_CEILING_MS;
  if (!WAIT_MS_RULE.test(maxWaitMs)) read.fail('maxWaitMs', `must be ${WAIT_MS_RULE.text}`);
  const sink = read.func<DiagnosticsSink>('diagnostics', options.diagnostics, true);
  const retention = resolveRetention(read, options, stores);
  return {
    handleStores: stores as ResolvedWatcherOptions['handleStores'],
    credentialFor,
    sessOrigin,
    allowInsecureLocalhost,
    expectedWorkspaceId: read.optionalRule('expectedWorkspaceId', options.expectedWorkspaceId, SESS_ID_RULE),
    receiptIssuer: read.optionalRule('receiptIssuer', options.receiptIssuer, RECEIPT_ISSUER_RULE),
    waitGate: options.waitGate,
    maxWaitMs,
    callsPerMinute: read.integer(
      'callsPerMinutePerCredential',
      options.callsPerMinutePerCredential,
      { min: 1, max: 100_000 },
      DEFAULT_CALLS_PER_MINUTE_PER_CREDENTIAL,
    ),
    onEvent,
    webhook,
    telemetry: readTelemetryOption(read, options.telemetry),
    retention,
    diagnostics: (event) => {
      try {
        sink?.(event);
      } catch {
        // A failing sink never stops the watcher.
      }
    },
  };
}
