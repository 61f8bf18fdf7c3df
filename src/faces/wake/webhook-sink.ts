/**
 * The webhook as an event sink of the delivery loop (`src/core/engine/event-delivery.ts`): one
 * attempt through the sender, its outcome as the loop reads it.
 *
 * - `delivered` on a 2xx; `retry` (with the sender's fixed reason word) on what may pass.
 * - A `410 Gone` disables the endpoint until its URL or secrets change: that event and every later
 *   one for it are dead-lettered without a request (`gone`, then `endpoint_gone`). The mark lives
 *   in the process; a restart tries the endpoint again.
 * - A refused destination (a forbidden address, a bad URL or secret) is dead-lettered at once: no
 *   attempt can succeed.
 *
 * It knows no outbox and no schedule; the loop does.
 */
import type { EventSink, OutboxEvent, SinkOutcome } from '../../index.js';
import type { WebhookEndpoint } from './webhook-config.js';
import type { WebhookSender } from './webhook-sender.js';

/** The sink name webhook deliveries are kept under in the outbox. */
export const WEBHOOK_SINK = 'webhook';

/** An endpoint's identity: its URL and secrets (a change of either enables it again). */
function fingerprint(endpoint: WebhookEndpoint): string {
  return JSON.stringify([endpoint.url, ...endpoint.secrets]);
}

/**
 * The webhook sink: `endpointFor` gives the endpoint of an event (one for every event on stdio,
 * per tenant on HTTP), or `undefined` when the event goes nowhere (it is then marked delivered:
 * nothing is owed to a tenant without a webhook).
 */
export function createWebhookSink(
  sender: WebhookSender,
  endpointFor: (event: OutboxEvent) => WebhookEndpoint | undefined | Promise<WebhookEndpoint | undefined>,
): EventSink {
  const gone = new Set<string>();
  return {
    name: WEBHOOK_SINK,
    async deliver(event, source): Promise<SinkOutcome> {
      const endpoint = await endpointFor(source);
      if (endpoint === undefined) return { kind: 'delivered' };
      const key = fingerprint(endpoint);
      if (gone.has(key)) return { kind: 'dead', reason: 'endpoint_gone' };
      const outcome = await sender.send(event, endpoint);
      switch (outcome.kind) {
        case 'delivered':
          return { kind: 'delivered' };
        case 'retry':
          return { kind: 'retry', reason: outcome.reason };
        case 'gone':
          gone.add(key);
          return { kind: 'dead', reason: 'gone' };
        case 'refused':
          return { kind: 'dead', reason: outcome.reason };
      }
    },
  };
}
