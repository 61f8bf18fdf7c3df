/**
 * What bounds a webhook attempt, against real receivers on 127.0.0.1 that misbehave: the time
 * (a receiver that accepts and never answers, or dribbles bytes), the response read (1 MiB cut at
 * 64 KiB), the attempts in flight per endpoint, and a whole retry schedule run in seconds; on
 * Node's transport and on `fetch`, which needs a host allowlist.
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { WakeEvent } from '../../src/faces/wake/event.js';
import { createWebhookSchedule, nextAttemptDelay } from '../../src/faces/wake/webhook-schedule.js';
import type { WebhookOutcome } from '../../src/faces/wake/webhook-send.js';
import { createWebhookSender, type WebhookSenderOptions } from '../../src/faces/wake/webhook-sender.js';
import { useCleanup } from '../support/cleanup.js';
import {
  newSecret,
  type ReceiverExchange,
  startRawReceiver,
  startWebhookReceiver,
  verifyDelivery,
} from '../support/webhook-receiver.js';

const open = useCleanup();

const event = (n: number): WakeEvent => ({
  eventId: `evt_limits_${n}`,
  type: 'expired',
  handle: 'sess_h_bGltaXRzLXRlc3QtaGFuZGxlLTEyOA',
  revision: 1,
  sequence: n,
  occurredAt: '2025-01-31T12:00:00.000Z',
});

/** The two transports: Node's, and `fetch` (Node's own, with the allowlist it requires). */
const TRANSPORTS: [string, WebhookSenderOptions][] = [
  ['node', {}],
  ['fetch', { fetch: globalThis.fetch, allowedHosts: ['127.0.0.1'] }],
];

function sender(transport: WebhookSenderOptions, options: WebhookSenderOptions = {}) {
  return createWebhookSender({ allowInsecureLocalhost: true, timeoutMs: 5_000, ...transport, ...options });
}

async function receiver(reply?: (exchange: ReceiverExchange) => unknown) {
  const started = await startWebhookReceiver(reply);
  open.push(started);
  return started;
}

async function raw(onSocket: (socket: Socket) => void) {
  const started = await startRawReceiver(onSocket);
  open.push(started);
  return started;
}

/** Write `text` one character every `everyMs` to a socket, then `more` again and again, until it closes. */
function dribble(socket: Socket, text: string, more: string, everyMs: number): void {
  let at = 0;
  const timer = setInterval(() => {
    const all = text + more.repeat(Math.ceil((at + 1) / more.length));
    if (!socket.destroyed) socket.write(all[at++]!);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

async function timed(send: () => Promise<WebhookOutcome>): Promise<{ outcome: WebhookOutcome; ms: number }> {
  const start = performance.now();
  const outcome = await send();
  return { outcome, ms: performance.now() - start };
}

describe.each(TRANSPORTS)('on the %s transport', (name, transport) => {
  it('delivers, verified by the reference verifier', async () => {
    const secret = newSecret();
    const hook = await receiver();
    const s = sender(transport);
    expect(s.transport).toBe(name);
    expect(await s.send(event(1), { url: hook.url, secrets: [secret] })).toEqual({
      kind: 'delivered',
      status: 204,
    });
    expect(verifyDelivery(hook.received[0]!, secret)).toEqual(event(1));
  });

  it('does not follow a redirect from a real local server', async () => {
    const hook = await receiver(({ res }) => res.writeHead(302, { location: '/moved' }).end());
    expect(await sender(transport).send(event(1), { url: hook.url, secrets: [newSecret()] })).toEqual({
      kind: 'retry',
      reason: 'redirect',
      status: 302,
    });
    await sleep(100);
    expect(hook.received).toHaveLength(1);
  });

  it.each([
    ['accepts and never answers', (socket: Socket) => socket.on('data', () => undefined)],
    [
      'dribbles a status line and headers one byte at a time',
      (socket: Socket) => dribble(socket, 'HTTP/1.1 200 OK\r\n', 'x-slow: 1\r\n', 20),
    ],
  ])('ends at the timeout when the receiver %s', async (_what, onSocket) => {
    const tarpit = await raw(onSocket);
    const s = sender(transport, { timeoutMs: 400 });
    const { outcome, ms } = await timed(() => s.send(event(1), { url: tarpit.url, secrets: [newSecret()] }));
    expect(outcome).toEqual({ kind: 'retry', reason: 'timeout' });
    expect(ms).toBeGreaterThanOrEqual(380);
    expect(ms).toBeLessThan(3_000);
    expect(tarpit.connections()).toBe(1);
  });

  it('ends at the timeout, delivered, when a 200 dribbles its body', async () => {
    const hook = await receiver(({ res }) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
    });
    const s = sender(transport, { timeoutMs: 400 });
    const { outcome, ms } = await timed(() => s.send(event(1), { url: hook.url, secrets: [newSecret()] }));
    expect(outcome).toEqual({ kind: 'delivered', status: 200 });
    expect(ms).toBeGreaterThanOrEqual(380);
    expect(ms).toBeLessThan(3_000);
  });

  it('reads at most 64 KiB of a 1 MiB response, then closes the connection', async () => {
    let written = 0;
    let closedAfter = Number.POSITIVE_INFINITY;
    const chunk = new Uint8Array(16 * 1024).fill(120);
    const hook = await receiver(({ res }) => {
      res.writeHead(500, { 'content-length': String(1024 * 1024) });
      // 16 KiB every 10 ms, so what the client reads is what was written, not a kernel buffer.
      const timer = setInterval(() => {
        if (written >= 1024 * 1024) return clearInterval(timer);
        written += chunk.byteLength;
        res.write(chunk);
      }, 10);
      res.on('close', () => {
        clearInterval(timer);
        closedAfter = written;
      });
    });
    const s = sender(transport, { timeoutMs: 10_000 });
    const { outcome, ms } = await timed(() => s.send(event(1), { url: hook.url, secrets: [newSecret()] }));
    expect(outcome).toEqual({ kind: 'retry', reason: 'server_error', status: 500 });
    await sleep(100);
    expect(closedAfter).toBeGreaterThanOrEqual(64 * 1024);
    expect(closedAfter).toBeLessThan(384 * 1024);
    expect(ms).toBeLessThan(2_000);
  });

  it('keeps at most maxConcurrentPerEndpoint attempts in flight per endpoint; the rest queue', async () => {
    const hold = async ({ res }: ReceiverExchange) => {
      await sleep(150);
      res.writeHead(204).end();
    };
    const [a, b] = [await receiver(hold), await receiver(hold)];
    const secret = newSecret();
    const s = sender(transport);
    const sent = [a, b].flatMap((hook) =>
      Array.from({ length: 10 }, (_, n) => s.send(event(n), { url: hook.url, secrets: [secret] })),
    );
    const outcomes = await Promise.all(sent);
    expect(outcomes.every((o) => o.kind === 'delivered')).toBe(true);
    expect([a.maxInFlight(), b.maxInFlight()]).toEqual([4, 4]);
    for (const received of [...a.received, ...b.received])
      expect(() => verifyDelivery(received, secret)).not.toThrow();

    const one = await receiver(hold);
    const single = sender(transport, { maxConcurrentPerEndpoint: 1 });
    await Promise.all([1, 2, 3].map((n) => single.send(event(n), { url: one.url, secrets: [secret] })));
    expect(one.maxInFlight()).toBe(1);
    expect(one.received).toHaveLength(3);
  });
});

describe('the fetch transport', () => {
  it('is refused without a host allowlist, and refuses hosts outside it', async () => {
    expect(() => createWebhookSender({ fetch: globalThis.fetch })).toThrow(
      /createWebhookSender: option "allowedHosts" is required when sending with fetch/,
    );
    expect(() =>
      createWebhookSender({ fetch: globalThis.fetch, allowedHosts: ['127.0.0.1'], ca: 'PEM' }),
    ).toThrow(/option "ca" is for the Node transport only/);
    const hook = await receiver();
    const s = sender({ fetch: globalThis.fetch, allowedHosts: ['hooks.example.com'] });
    expect(await s.send(event(1), { url: hook.url, secrets: [newSecret()] })).toEqual({
      kind: 'refused',
      reason: 'host_not_allowed',
    });
    expect(hook.connections()).toBe(0);
  });
});

describe('a whole retry schedule', () => {
  it('runs to dead-letter in seconds against a receiver that always fails, every attempt verifying', async () => {
    const secret = newSecret();
    const hook = await receiver(({ res }) => res.writeHead(503).end());
    // The 24 h schedule at 1/50 000: a span of 1.7 s, delays up to 72 ms.
    const schedule = createWebhookSchedule({ scale: 0.00002 });
    const s = sender({});
    const first = Date.now();
    let attempts = 0;
    let last = first;
    for (;;) {
      last = Date.now();
      const outcome = await s.send(event(1), { url: hook.url, secrets: [secret] });
      attempts += 1;
      expect(outcome).toEqual({ kind: 'retry', reason: 'server_error', status: 503 });
      const delay = nextAttemptDelay(attempts, first, Date.now(), Math.random, schedule);
      if (delay === 'dead') break;
      await sleep(delay);
    }
    expect(Date.now() - first).toBeGreaterThanOrEqual(schedule.spanMs);
    expect(last - first).toBeLessThanOrEqual(schedule.spanMs + 200);
    expect(attempts).toBeGreaterThan(10);
    expect(hook.received).toHaveLength(attempts);
    for (const received of hook.received) expect(verifyDelivery(received, secret)).toEqual(event(1));
  });
});
