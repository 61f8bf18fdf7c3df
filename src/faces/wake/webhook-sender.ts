/**
 * `createWebhookSender`: what the outbox calls to deliver one wake event to one endpoint, once.
 * It checks the event and the endpoint, signs the attempt anew with the current time (so a retry
 * a day later verifies within a receiver's five-minute tolerance), waits for a slot of the
 * endpoint's concurrency bound and sends through the transport this runtime allows, then answers
 * with an outcome; it never throws.
 *
 * The transport: on Node, `node:https` with the address rules in its resolver (every address the
 * host resolves to is judged, at connect time). Where the runtime cannot see addresses (workerd,
 * Deno, Bun, or a caller's own `fetch`), `fetch`, and then only with `allowedHosts`: the sender
 * refuses to be made there without it.
 *
 * Not here: when to retry (`webhook-schedule.ts`), where events are kept (the outbox), the
 * configuration's sources (`webhook-config.ts`).
 */
import { optionNames, readOptions } from '../../core/contract/options.js';
import { type Clock, systemClock } from '../../index.js';
import { type WakeEvent, wakeEventBody, wakeEventProblem } from './event.js';
import { readAllowedHosts, type WebhookEndpoint } from './webhook-config.js';
import {
  checkWebhookDestination,
  type WebhookDestination,
  type WebhookDestinationRefusal,
} from './webhook-destination.js';
import { fetchWebhookTransport } from './webhook-fetch-attempt.js';
import {
  createEndpointLimiter,
  DEFAULT_WEBHOOK_CONCURRENCY,
  WEBHOOK_CONCURRENCY_RANGE,
} from './webhook-limiter.js';
import { nodeWebhookTransport } from './webhook-node-attempt.js';
import {
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  WEBHOOK_TIMEOUT_RANGE,
  type WebhookOutcome,
  type WebhookTransport,
} from './webhook-send.js';
import { createWebhookSigner, type WebhookSigner } from './webhook-signature.js';

/** Options of {@link createWebhookSender}. */
export interface WebhookSenderOptions {
  /**
   * Allow loopback, private (RFC 1918), link-local, shared and unique-local addresses: a receiver
   * inside your own network. (`SESS_MCP_WEBHOOK_ALLOW_PRIVATE=1` on stdio.)
   * @default false
   */
  allowPrivate?: boolean;
  /**
   * Testing only: plain `http://` to `localhost`, `127.0.0.1` or `[::1]`, and loopback addresses
   * for those names (`SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1` on stdio).
   * @default false
   */
  allowInsecureLocalhost?: boolean;
  /**
   * The only host names (as `URL` writes them) a webhook may reach. Required on the `fetch`
   * transport, which cannot judge the addresses it connects to; on Node, an extra bound.
   */
  allowedHosts?: readonly string[];
  /** One attempt's time: connect, headers and body together (100 to 120 000). @default 15_000 */
  timeoutMs?: number;
  /** Attempts in flight per endpoint (1 to 64); more wait their turn. @default 4 */
  maxConcurrentPerEndpoint?: number;
  /**
   * Send with this `fetch` instead of Node's `https` (then `allowedHosts` is required). Without
   * it, Node's `https` on Node and the global `fetch` elsewhere.
   */
  fetch?: typeof fetch;
  /** Node only: PEM certificates to trust instead of Node's default authorities. */
  ca?: string | readonly string[];
  /** The clock each attempt's `webhook-timestamp` is read from. @default the system clock */
  clock?: Clock;
}

const SENDER_OPTIONS = optionNames<WebhookSenderOptions>()(
  'allowPrivate',
  'allowInsecureLocalhost',
  'allowedHosts',
  'timeoutMs',
  'maxConcurrentPerEndpoint',
  'fetch',
  'ca',
  'clock',
);

/** Delivers wake events to endpoints, one attempt per call. */
export interface WebhookSender {
  /**
   * One attempt to deliver `event` to `endpoint`. Never rejects: every end is an outcome. On
   * `retry` the caller asks `nextAttemptDelay` when to call again; on `gone` it disables the
   * endpoint; on `refused` it dead-letters the event.
   */
  send(event: WakeEvent, endpoint: WebhookEndpoint): Promise<WebhookOutcome>;
  /** The transport in use: `node` (addresses judged at connect time) or `fetch` (allowlist). */
  readonly transport: 'node' | 'fetch';
}

/** An endpoint checked once: its destination and its signer, or why it is refused. */
type Prepared =
  | { readonly destination: WebhookDestination; readonly signer: WebhookSigner }
  | { readonly refusal: WebhookDestinationRefusal | 'invalid_secret' };

/** How many checked endpoints a sender keeps (an outbox has one or a few). */
const PREPARED_CACHE_SIZE = 32;

const FACTORY = 'createWebhookSender';

function readCa(read: ReturnType<typeof readOptions>, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === 'string' ? [value] : value;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    !list.every((c) => typeof c === 'string' && c.length > 0)
  ) {
    read.fail('ca', 'must be a PEM certificate or a non-empty list of them');
  }
  return [...(list as string[])];
}

/** The transport these options choose, checked: `fetch` only with an allowlist. */
function chooseTransport(
  read: ReturnType<typeof readOptions>,
  fetchOption: typeof fetch | undefined,
  ca: string[] | undefined,
  allowedHosts: string[] | undefined,
): { transport: WebhookTransport; kind: 'node' | 'fetch' } {
  const node = fetchOption === undefined ? nodeWebhookTransport(ca === undefined ? {} : { ca }) : undefined;
  if (node !== undefined) return { transport: node, kind: 'node' };
  if (ca !== undefined) read.fail('ca', 'is for the Node transport only; it cannot be used with fetch');
  if (allowedHosts === undefined) {
    read.fail(
      'allowedHosts',
      'is required when sending with fetch (a fetch option, or a runtime other than Node), which cannot check the addresses it connects to: list the receiver host names',
    );
  }
  const fetchImpl = fetchOption ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') read.fail('fetch', 'is required: this runtime has no global fetch');
  return { transport: fetchWebhookTransport(fetchImpl), kind: 'fetch' };
}

/**
 * A webhook sender. Bad options fail here, with a `TypeError` naming the option.
 *
 * @throws TypeError `createWebhookSender: option "<name>" …`; on a runtime that cannot see
 *   addresses (or with `fetch`), when `allowedHosts` is missing.
 * `createWebhookSender().send(event, { url: 'https://hooks.example.com/sess', secrets: [secret] })`
 * delivers one event once.
 */
export function createWebhookSender(options: WebhookSenderOptions = {}): WebhookSender {
  const read = readOptions(FACTORY, options, { known: SENDER_OPTIONS, allowMissing: true });
  const allowPrivate = read.boolean('allowPrivate', options.allowPrivate, false);
  const allowInsecureLocalhost = read.boolean(
    'allowInsecureLocalhost',
    options.allowInsecureLocalhost,
    false,
  );
  const allowedHosts = readAllowedHosts(read, 'allowedHosts', options.allowedHosts);
  const timeoutMs = read.integer(
    'timeoutMs',
    options.timeoutMs,
    WEBHOOK_TIMEOUT_RANGE,
    DEFAULT_WEBHOOK_TIMEOUT_MS,
  );
  const concurrency = read.integer(
    'maxConcurrentPerEndpoint',
    options.maxConcurrentPerEndpoint,
    WEBHOOK_CONCURRENCY_RANGE,
    DEFAULT_WEBHOOK_CONCURRENCY,
  );
  const fetchOption = read.func<typeof fetch>('fetch', options.fetch, true);
  const ca = readCa(read, options.ca);
  const clock = options.clock ?? systemClock;
  if (typeof (clock as Partial<Clock> | null)?.now !== 'function')
    read.fail('clock', 'must have a now() function');
  const { transport, kind } = chooseTransport(read, fetchOption, ca, allowedHosts);
  const limiter = createEndpointLimiter(concurrency);
  const prepared = new Map<string, Prepared>();

  const prepare = (endpoint: WebhookEndpoint): Prepared => {
    const key = `${endpoint.url}\n${Array.isArray(endpoint.secrets) ? endpoint.secrets.join(' ') : ''}`;
    const known = prepared.get(key);
    if (known !== undefined) return known;
    let entry: Prepared;
    const destination = checkWebhookDestination(endpoint.url, {
      allowPrivate,
      allowInsecureLocalhost,
      ...(allowedHosts === undefined ? {} : { allowedHosts }),
    });
    if ('refusal' in destination) {
      entry = destination;
    } else {
      try {
        entry = { destination, signer: createWebhookSigner(endpoint.secrets) };
      } catch {
        entry = { refusal: 'invalid_secret' };
      }
    }
    if (prepared.size >= PREPARED_CACHE_SIZE) prepared.delete(prepared.keys().next().value as string);
    prepared.set(key, entry);
    return entry;
  };

  const attempt = async (event: WakeEvent, endpoint: WebhookEndpoint): Promise<WebhookOutcome> => {
    if (wakeEventProblem(event) !== undefined) return { kind: 'refused', reason: 'invalid_event' };
    if (endpoint === null || typeof endpoint !== 'object') return { kind: 'refused', reason: 'invalid_url' };
    const entry = prepare(endpoint);
    if ('refusal' in entry) return { kind: 'refused', reason: entry.refusal };
    const { url, policy } = entry.destination;
    const body = wakeEventBody(event);
    return limiter.run(url.href, async () => {
      // Signed when its turn comes, so time spent queued never ages the timestamp.
      const signed = await entry.signer.sign(event.eventId, clock.now() / 1000, body);
      return transport({
        url,
        policy,
        headers: { 'content-type': 'application/json', ...signed },
        body,
        timeoutMs,
      });
    });
  };

  return {
    transport: kind,
    async send(event, endpoint) {
      try {
        return await attempt(event, endpoint);
      } catch {
        return { kind: 'retry', reason: 'unexpected' };
      }
    },
  };
}
