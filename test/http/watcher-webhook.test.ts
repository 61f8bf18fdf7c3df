/**
 * The HTTP watcher's webhook (`webhook`, `webhookFor`) against real parts: the handler on a real
 * socket over the local Sess runtime and the memory store, and real webhook receivers. Every
 * delivery is verified with the `standardwebhooks` package, the reference verifier.
 *
 * - One receiver for every event: a signed body that is a reference only, with the binding's
 *   opaque `scope`; the sweep delivers it too.
 * - Per tenant (`webhookFor`): each tenant's events reach its own receiver signed with its own
 *   secrets (two during a rotation); a tenant without one gets nothing and is owed nothing.
 * - A `webhookFor` that throws retries the event; a receiver that is not usable dead-letters it.
 * - Bad options fail at construction, naming the option and never repeating its value.
 */
import { describe, expect, it } from 'vitest';
import type { OutboxEntry } from '../../src/core/contract/outbox.js';
import { createSessMcpWatcher, type SessMcpWatcherOptions } from '../../src/http/index.js';
import { createMemoryHandleStore } from '../../src/index.js';
import {
  NO_CONTENT,
  newSecret,
  type ReceivedWebhook,
  startWebhookReceiver,
  verifyDelivery,
} from '../support/webhook-receiver.js';
import { approveAnswer, ok } from './harness.js';
import { type Stack, until, useWatcherStack } from './watcher-stack.js';

const { audits, cleanup, startStack, clientOf, waitingOf, watcherOf, twoWorkspaces } = useWatcherStack();

/** A receiver that answers 204, closed after the test; its secrets audited. */
async function receiverWith(...secrets: string[]) {
  const receiver = await startWebhookReceiver(NO_CONTENT);
  cleanup.push(() => receiver.close());
  for (const secret of secrets) audits.current.secret(secret, 'webhook secret');
  audits.current.watch(
    () => receiver.received.map((r) => `${JSON.stringify(r.headers)}\n${r.body}`),
    'webhook requests',
  );
  return receiver;
}

/** An interaction of `client` answered at the runtime, its answer saved by the agent's read. */
async function answeredBy(h: Stack, client: Awaited<ReturnType<typeof clientOf>>) {
  const made = await waitingOf(h, client);
  audits.current.answer(approveAnswer.values, 'answer');
  await h.sess.submitAnswer(made.humanUrl, approveAnswer);
  await ok(client, 'sess_response', { handle: made.handle, revision: 1, wait_ms: 5_000 });
  return made;
}

/** The verified payload of a delivery, and that its id is the body's event id. */
function verified(received: ReceivedWebhook, secret: string): Record<string, unknown> {
  const payload = verifyDelivery(received, secret) as Record<string, unknown>;
  expect(received.headers['webhook-id']).toBe(payload.eventId);
  return payload;
}

/** The webhook sink's entries of the stack's outbox. */
const webhookEntries = (h: Stack): Promise<OutboxEntry[]> => h.stores.outbox!().entries('webhook', 50);

describe("the HTTP watcher's webhook", { timeout: 60_000 }, () => {
  it('sends each event to one receiver, signed, a reference with the binding scope; the sweep sends it too', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    const secret = newSecret();
    const receiver = await receiverWith(secret);
    const { watcher } = watcherOf(h, {
      credentialFor: () => h.sess.apiKey,
      webhook: { url: receiver.url, secrets: [secret] },
    });
    const first = await answeredBy(h, alice);
    watcher.start();
    await until(() => receiver.received.length === 1, 10_000, 'the first delivery');
    const payload = verified(receiver.received[0]!, secret);
    expect(Object.keys(payload).sort()).toEqual(
      ['eventId', 'handle', 'occurredAt', 'revision', 'scope', 'sequence', 'type'].sort(),
    );
    expect(payload).toMatchObject({ type: 'answered', handle: first.handle, revision: 1, sequence: 1 });
    expect(payload.scope).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(receiver.received[0]!.body).not.toContain(first.humanUrl);
    await watcher.stop();

    // A sweep (a cron-triggered edge function) delivers the next event within its budget.
    const second = await answeredBy(h, alice);
    const swept = await watcher.sweep({ budgetMs: 5_000 });
    expect(swept.delivered).toBe(1);
    expect(receiver.received).toHaveLength(2);
    expect(verified(receiver.received[1]!, secret)).toMatchObject({
      handle: second.handle,
      scope: payload.scope,
    });
    expect((await webhookEntries(h)).map((e) => e.state)).toEqual(['delivered', 'delivered']);
  });

  it("routes each tenant's events to its own receiver with webhookFor; a tenant without one is owed nothing", async () => {
    const h = await startStack();
    const { alice, bob, keys } = await twoWorkspaces(h);
    const carol = await clientOf(h, 'carol-token-0123456789', {
      principalId: 'carol',
      grantId: 'grant_carol',
    });
    const aliceSecret = newSecret();
    // Bob's tenant rotates: the old and the new secret both sign every attempt.
    const bobOld = newSecret();
    const bobNew = newSecret();
    const toAlice = await receiverWith(aliceSecret);
    const toBob = await receiverWith(bobOld, bobNew);
    const routed: string[] = [];
    const { watcher } = watcherOf(h, {
      credentialFor: (b) => keys.get(b.workspaceId),
      webhook: { timeoutMs: 5_000 },
      webhookFor: (binding) => {
        routed.push(binding.principalId);
        if (binding.principalId === 'alice') return { url: toAlice.url, secrets: [aliceSecret] };
        if (binding.principalId === 'bob') return { url: toBob.url, secrets: [bobOld, bobNew] };
        return undefined;
      },
    });
    const a = await answeredBy(h, alice);
    const b = await answeredBy(h, bob);
    const c = await answeredBy(h, carol);
    watcher.start();
    await until(
      async () => (await webhookEntries(h)).every((e) => e.state === 'delivered'),
      10_000,
      'every event settled',
    );
    expect(toAlice.received.map((r) => verified(r, aliceSecret).handle)).toEqual([a.handle]);
    expect(toBob.received.map((r) => verified(r, bobOld).handle)).toEqual([b.handle]);
    expect(toBob.received.map((r) => verified(r, bobNew).handle)).toEqual([b.handle]);
    expect(() => verifyDelivery(toBob.received[0]!, aliceSecret)).toThrow();
    // Carol's tenant has no receiver: nothing was sent for her event, and it is not owed.
    expect((await webhookEntries(h)).map((e) => [e.event.handle, e.state]).sort()).toEqual(
      [
        [a.handle, 'delivered'],
        [b.handle, 'delivered'],
        [c.handle, 'delivered'],
      ].sort(),
    );
    expect(new Set(routed)).toEqual(new Set(['alice', 'bob', 'carol']));
  });

  it('retries an event whose webhookFor throws; dead-letters one whose receiver is not usable', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    const carol = await clientOf(h, 'carol-token-0123456789', {
      principalId: 'carol',
      grantId: 'grant_carol',
    });
    const { watcher } = watcherOf(h, {
      credentialFor: () => h.sess.apiKey,
      webhookFor: (binding) => {
        if (binding.principalId === 'alice') throw new Error('tenant directory down');
        // A private address: refused by the address rules, so no attempt can succeed.
        return { url: 'https://10.1.2.3/hook', secrets: [newSecret()] };
      },
    });
    const a = await answeredBy(h, alice);
    const c = await answeredBy(h, carol);
    watcher.start();
    await until(async () => (await webhookEntries(h)).length === 2, 10_000, 'both attempted');
    await until(
      async () => (await webhookEntries(h)).every((e) => e.attempts >= 1 || e.state === 'dead'),
      10_000,
      'both settled once',
    );
    const byHandle = new Map((await webhookEntries(h)).map((e) => [e.event.handle, e]));
    expect(byHandle.get(a.handle)).toMatchObject({ state: 'owed', reason: 'sink_failed' });
    expect(byHandle.get(a.handle)!.nextAttemptAt).toBeGreaterThan(Date.now());
    expect(byHandle.get(c.handle)).toMatchObject({ state: 'dead', reason: 'forbidden_address' });
  });

  it('refuses bad webhook options at construction, naming the option, never its value', () => {
    const store = createMemoryHandleStore();
    const base: SessMcpWatcherOptions = { handleStores: store, credentialFor: () => undefined };
    const make = (extra: Partial<SessMcpWatcherOptions>) => () =>
      createSessMcpWatcher({ ...base, ...extra } as SessMcpWatcherOptions);
    const secret = newSecret();
    const cases: Array<[Partial<SessMcpWatcherOptions>, RegExp, string?]> = [
      [
        { webhook: { url: 'http://hooks.example.com/x?token=tok_9f8e7d', secrets: [secret] } },
        /option "webhook\.url" is not usable: .*https/,
        'tok_9f8e7d',
      ],
      [{ webhook: { url: 'https://10.0.0.7/x', secrets: [secret] } }, /option "webhook\.url" is not usable/],
      [
        { webhook: { url: 'https://hooks.example.com/x', secrets: ['whsec_c2hvcnQ='] } },
        /option "webhook\.secrets" must be a list of 1 to 8 secrets.*; secret 1 is not/,
        'c2hvcnQ',
      ],
      [{ webhook: { url: 'https://hooks.example.com/x', secrets: [] } }, /option "webhook\.secrets"/],
      [{ webhook: { secrets: [secret] } as never }, /option "webhook\.url" is required/],
      [
        { webhook: { url: 'https://hooks.example.com/x', secrets: [secret], retries: 3 } as never },
        /option "webhook\.retries" is not a key of "webhook" \(url, secrets, allowPrivate, allowedHosts, timeoutMs\)/,
      ],
      [
        {
          webhook: { url: 'https://hooks.example.com/x', secrets: [secret] },
          webhookFor: () => undefined,
        },
        /option "webhook\.url" is not used with webhookFor.*give one of the two/,
      ],
      [{ webhookFor: 'https://hooks.example.com/x' as never }, /option "webhookFor" must be a function/],
      [{ webhook: { timeoutMs: 10 }, webhookFor: () => undefined }, /option "webhook\.timeoutMs"/],
    ];
    for (const [extra, message, hidden] of cases) {
      let thrown: unknown;
      try {
        make(extra)();
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(Object.keys(extra))).toBeInstanceOf(TypeError);
      const text = (thrown as Error).message;
      expect(text).toMatch(/^createSessMcpWatcher: /);
      expect(text).toMatch(message);
      expect(text).not.toContain(secret.slice(6));
      if (hidden !== undefined) expect(text).not.toContain(hidden);
    }
    // A private receiver is allowed when asked for; settings alone with webhookFor are fine.
    expect(
      make({ webhook: { url: 'https://10.0.0.7/x', secrets: [secret], allowPrivate: true } }),
    ).not.toThrow();
    expect(make({ webhookFor: () => undefined })).not.toThrow();
  });
});
