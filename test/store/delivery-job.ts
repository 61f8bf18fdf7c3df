/**
 * The `deliver` job of the store worker (`worker.ts`): the delivery loop of one instance over the
 * worker's store's outbox, with two sinks that reach the test process over real HTTP: the webhook
 * sink (the package's sender, Standard Webhooks, the secret from `SESS_WORKER_WEBHOOK_SECRET`,
 * never in argv) to `<origin>/webhook/<name>`, and a host's `onEvent` (`onEventSink`) that posts
 * the event to `<origin>/onEvent/<name>`. The name in the path tells the receiver which process
 * sent it.
 *
 * It runs until `stop` on stdin, then waits for the pass in progress. Its tally counts the claims
 * it took and each settlement by sink, kind and result (`settle:webhook:delivered:false` is a
 * settlement under a claim that was taken over), never an event's content.
 */
import type { EventOutbox } from '../../src/core/contract/outbox.js';
import { createEventDelivery } from '../../src/core/engine/event-delivery.js';
import { onEventSink } from '../../src/faces/wake/delivery.js';
import { createWebhookSender } from '../../src/faces/wake/webhook-sender.js';
import { createWebhookSink } from '../../src/faces/wake/webhook-sink.js';

/** The `deliver` job's settings. */
export interface DeliveryJob {
  /** The receiver in the test process, `http://127.0.0.1:<port>`. */
  origin: string;
  /** This instance's name in the receiver's paths. */
  name: string;
  /** How long a claim holds an event (short, so a test sees a takeover). */
  holdMs: number;
  /** How many events one pass claims per sink. */
  batch: number;
  /** The time between passes. */
  intervalMs: number;
}

/** `outbox` with its claims and settlements counted into `count`. */
function countingOutbox(outbox: EventOutbox, count: (key: string) => void): EventOutbox {
  return {
    due: (sink, query) => outbox.due(sink, query),
    async claim(sink, eventId, now, holdMs) {
      const claim = await outbox.claim(sink, eventId, now, holdMs);
      if (claim !== undefined) count(`claim:${sink}`);
      return claim;
    },
    async settle(claim, settlement, now) {
      const written = await outbox.settle(claim, settlement, now);
      count(`settle:${claim.sink}:${settlement.kind}:${written}`);
      return written;
    },
    entries: (sink, limit) => outbox.entries(sink, limit),
    resend: (sink, eventId, now) => outbox.resend(sink, eventId, now),
  };
}

/** Deliver from `outbox` until `stopped` resolves; the tally. */
export async function runDelivery(
  job: DeliveryJob,
  outbox: EventOutbox,
  stopped: Promise<void>,
): Promise<Record<string, number>> {
  const tally: Record<string, number> = {};
  const count = (key: string) => {
    tally[key] = (tally[key] ?? 0) + 1;
  };
  const sender = createWebhookSender({ allowInsecureLocalhost: true, timeoutMs: 10_000 });
  const webhook = createWebhookSink(sender, () => ({
    url: `${job.origin}/webhook/${job.name}`,
    secrets: [process.env.SESS_WORKER_WEBHOOK_SECRET ?? ''],
  }));
  const onEvent = onEventSink(async (event) => {
    const res = await fetch(`${job.origin}/onEvent/${job.name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`the receiver answered ${res.status}`);
  });
  const delivery = createEventDelivery({
    outbox: countingOutbox(outbox, count),
    sinks: [webhook, onEvent],
    retryDelay: () => 50,
    spanMs: 86_400_000,
    holdMs: job.holdMs,
    batch: job.batch,
  });
  delivery.start(job.intervalMs);
  await stopped;
  await delivery.stop();
  return tally;
}
