/**
 * One webhook attempt through `createWebhookSender`, on Node's transport, against real receivers
 * on 127.0.0.1: deliveries verified with `standardwebhooks` (a retry signed anew more than five
 * minutes after the first attempt, rotation), the status rules, redirects not followed, the
 * refusals before connecting (a name resolving to loopback refused in the resolver, a loopback
 * literal, plain HTTP), HTTPS with a certificate made for the test.
 */
import { describe, expect, it } from 'vitest';
import type { WakeEvent } from '../../src/faces/wake/event.js';
import { createWebhookSender, type WebhookSenderOptions } from '../../src/faces/wake/webhook-sender.js';
import { useCleanup } from '../support/cleanup.js';
import { useTempDirs } from '../support/temp-dirs.js';
import {
  newSecret,
  type ReceiverExchange,
  selfSignedCertificate,
  startWebhookReceiver,
  verifyDelivery,
} from '../support/webhook-receiver.js';

const open = useCleanup();
const tempDir = useTempDirs('sess-mcp-wake-tls-');

const EVENT: WakeEvent = {
  eventId: 'evt_send_1',
  type: 'answered',
  handle: 'sess_h_c2VuZC10ZXN0LWhhbmRsZS0xMjg',
  revision: 2,
  sequence: 1,
  occurredAt: '2025-01-31T12:00:00.000Z',
};

/** A sender for plain-HTTP receivers on 127.0.0.1 (the testing switch). */
function localSender(options: WebhookSenderOptions = {}) {
  return createWebhookSender({ allowInsecureLocalhost: true, timeoutMs: 5_000, ...options });
}

async function receiver(reply?: (exchange: ReceiverExchange) => unknown) {
  const started = await startWebhookReceiver(reply);
  open.push(started);
  return started;
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  ({ res }: ReceiverExchange) =>
    res.writeHead(code, headers).end();

describe('delivery', () => {
  it('delivers a signed event that the reference verifier accepts', async () => {
    const secret = newSecret();
    const hook = await receiver();
    const sender = localSender();
    expect(sender.transport).toBe('node');
    expect(await sender.send(EVENT, { url: hook.url, secrets: [secret] })).toEqual({
      kind: 'delivered',
      status: 204,
    });
    const [got] = hook.received;
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toBe(EVENT.eventId);
    expect(verifyDelivery(got!, secret)).toEqual(EVENT);
  });

  it('signs a retry anew: one more than five minutes after the first attempt verifies', async () => {
    const secret = newSecret();
    const hook = await receiver(({ res, index }) => res.writeHead(index === 0 ? 503 : 200).end());
    // The first attempt happened 6 minutes ago on the sender's clock; the retry is now.
    let now = Date.now() - 6 * 60_000;
    const sender = localSender({ clock: { now: () => now } });
    const endpoint = { url: hook.url, secrets: [secret] };
    expect(await sender.send(EVENT, endpoint)).toEqual({
      kind: 'retry',
      reason: 'server_error',
      status: 503,
    });
    now = Date.now();
    expect(await sender.send(EVENT, endpoint)).toEqual({ kind: 'delivered', status: 200 });
    const [first, retry] = hook.received;
    const age = Number(retry!.headers['webhook-timestamp']) - Number(first!.headers['webhook-timestamp']);
    expect(age).toBeGreaterThan(5 * 60);
    expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(retry!.body).toBe(first!.body);
    // The first signature is now outside the default tolerance; the retry's is inside it.
    expect(() => verifyDelivery(first!, secret)).toThrow(/too old/);
    expect(verifyDelivery(retry!, secret)).toEqual(EVENT);
  });

  it('signs with both secrets during a rotation: a receiver knowing only the second verifies', async () => {
    const [old, next] = [newSecret(), newSecret()];
    const hook = await receiver();
    expect((await localSender().send(EVENT, { url: hook.url, secrets: [old, next] })).kind).toBe('delivered');
    expect(verifyDelivery(hook.received[0]!, next)).toEqual(EVENT);
    expect(() => verifyDelivery(hook.received[0]!, newSecret())).toThrow(/No matching signature/);
  });

  it('sends none of the caller object fields beyond the event', async () => {
    const secret = newSecret();
    const hook = await receiver();
    const leaky = { ...EVENT, answer: { approve: true }, receipt: 'eyJhbGciOi', link: 'https://sess.si/a/x' };
    await localSender().send(leaky, { url: hook.url, secrets: [secret] });
    expect(verifyDelivery(hook.received[0]!, secret)).toEqual(EVENT);
  });

  it('delivers over HTTPS to a name that resolves to loopback when private destinations are allowed', async () => {
    const tls = selfSignedCertificate(await tempDir());
    const hook = await startWebhookReceiver(undefined, tls);
    open.push(hook);
    const secret = newSecret();
    const endpoint = { url: `https://localhost:${hook.port}/hook`, secrets: [secret] };
    const trusted = createWebhookSender({ allowPrivate: true, ca: tls.cert, timeoutMs: 5_000 });
    expect(await trusted.send(EVENT, endpoint)).toEqual({ kind: 'delivered', status: 204 });
    expect(verifyDelivery(hook.received[0]!, secret)).toEqual(EVENT);
    // Without the test's certificate authority, the handshake fails: a retry, nothing delivered.
    const untrusting = createWebhookSender({ allowPrivate: true, timeoutMs: 5_000 });
    expect(await untrusting.send(EVENT, endpoint)).toEqual({ kind: 'retry', reason: 'tls' });
    expect(hook.received).toHaveLength(1);
  });
});

describe('statuses', () => {
  it.each([
    [200, { kind: 'delivered', status: 200 }],
    [202, { kind: 'delivered', status: 202 }],
    [410, { kind: 'gone' }],
    [400, { kind: 'retry', reason: 'rejected', status: 400 }],
    [401, { kind: 'retry', reason: 'rejected', status: 401 }],
    [404, { kind: 'retry', reason: 'rejected', status: 404 }],
    [429, { kind: 'retry', reason: 'throttled', status: 429 }],
    [500, { kind: 'retry', reason: 'server_error', status: 500 }],
    [503, { kind: 'retry', reason: 'server_error', status: 503 }],
  ])('%s is %o', async (code, outcome) => {
    const hook = await receiver(status(code));
    expect(await localSender().send(EVENT, { url: hook.url, secrets: [newSecret()] })).toEqual(outcome);
  });

  it.each([301, 302, 303, 307, 308])('a %s is a retry and is not followed', async (code) => {
    const hook = await receiver(status(code, { location: '/elsewhere' }));
    expect(await localSender().send(EVENT, { url: hook.url, secrets: [newSecret()] })).toEqual({
      kind: 'retry',
      reason: 'redirect',
      status: code,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hook.received.map((r) => r.headers['webhook-id'])).toEqual([EVENT.eventId]);
    expect(hook.received).toHaveLength(1);
  });

  it('a closed port is a connection retry', async () => {
    const hook = await startWebhookReceiver();
    await hook.close();
    expect(await localSender().send(EVENT, { url: hook.url, secrets: [newSecret()] })).toEqual({
      kind: 'retry',
      reason: 'connection',
    });
  });
});

describe('refusals before anything is sent', () => {
  it('refuses a host name that resolves to 127.0.0.1 in the resolver, before connecting', async () => {
    const hook = await receiver();
    const url = `https://localhost:${hook.port}/hook`;
    const outcome = await createWebhookSender().send(EVENT, { url, secrets: [newSecret()] });
    expect(outcome).toEqual({ kind: 'refused', reason: 'forbidden_address' });
    expect(hook.connections()).toBe(0);
  });

  it.each([
    ['a loopback literal', (port: number) => `https://127.0.0.1:${port}/hook`, 'forbidden_address'],
    [
      'a mapped loopback literal',
      (port: number) => `https://[::ffff:127.0.0.1]:${port}/hook`,
      'forbidden_address',
    ],
    [
      'plain http to loopback without the switch',
      (port: number) => `http://127.0.0.1:${port}/`,
      'insecure_url',
    ],
    ['plain http to another host', () => 'http://hooks.example.com/sess', 'insecure_url'],
    ['credentials', (port: number) => `https://user:pw@localhost:${port}/`, 'invalid_url'],
  ])('refuses %s', async (_name, url, reason) => {
    const hook = await receiver();
    const outcome = await createWebhookSender().send(EVENT, { url: url(hook.port), secrets: [newSecret()] });
    expect(outcome).toEqual({ kind: 'refused', reason });
    expect(hook.connections()).toBe(0);
  });

  it('refuses a bad secret or a bad event, and the outcome holds no secret', async () => {
    const hook = await receiver();
    const bad = 'whsec_c2VjcmV0LXZhbHVlLXNob3J0';
    const sender = localSender();
    const outcome = await sender.send(EVENT, { url: hook.url, secrets: [newSecret(), bad] });
    expect(outcome).toEqual({ kind: 'refused', reason: 'invalid_secret' });
    expect(JSON.stringify(outcome)).not.toContain('c2VjcmV0');
    const badEvent = { ...EVENT, eventId: 'evt\r\nx: y' };
    expect(await sender.send(badEvent, { url: hook.url, secrets: [newSecret()] })).toEqual({
      kind: 'refused',
      reason: 'invalid_event',
    });
    expect(hook.connections()).toBe(0);
  });

  it.each([
    [{ timeoutMs: 50 }, /option "timeoutMs" must be a whole number from 100 to 120000/],
    [{ maxConcurrentPerEndpoint: 0 }, /option "maxConcurrentPerEndpoint"/],
    [{ allowedHosts: ['https://hooks.example.com'] }, /option "allowedHosts" must be a list/],
    [{ allowedHosts: [] }, /option "allowedHosts"/],
    [{ ca: [] }, /option "ca"/],
    [{ clock: {} }, /option "clock"/],
    [
      { allowprivate: true },
      /option "allowprivate" is not an option of createWebhookSender \(did you mean "allowPrivate"\?\)/,
    ],
  ])('refuses the options %o at construction', (options, message) => {
    expect(() => createWebhookSender(options as never)).toThrow(TypeError);
    expect(() => createWebhookSender(options as never)).toThrow(message);
  });
});
