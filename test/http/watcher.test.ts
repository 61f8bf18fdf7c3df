/**
 * The HTTP watcher (`createSessMcpWatcher`) against real parts: the local Sess runtime, the HTTP
 * handler on a real socket with MCP clients, the memory store both share, and the handler's wait
 * gate shared with the watcher.
 *
 * - A late answer, given while no tool call waits, is verified and saved by the watcher, and its
 *   event reaches the outbox and `onEvent`.
 * - Two principals with keys of different workspaces are each polled with their own key (swapped
 *   keys read nothing); a principal whose `credentialFor` answers `undefined` is not polled.
 * - The per-credential call budget holds each credential to its own calls; a 429 storm backs off,
 *   doubling, never sooner than Retry-After.
 * - `sweep` reads each due record once within its budget and delivers the events.
 */
import { describe, expect, it } from 'vitest';
import type { WakeEvent } from '../../src/core/contract/outbox.js';
import type { HttpBinding } from '../../src/core/contract/ports.js';
import { approveAnswer, ok } from './harness.js';
import { pause, requests, type Stack, stateOf, until, useWatcherStack } from './watcher-stack.js';

const { audits, startStack, clientOf, waitingOf, watcherOf, twoWorkspaces } = useWatcherStack();

/** A waiting interaction of `maker`, answered once `watcher` runs; resolves when the watcher saved it. */
async function answeredLate(
  h: Stack,
  maker: Awaited<ReturnType<typeof clientOf>>,
  watcher: ReturnType<typeof watcherOf>['watcher'],
) {
  const made = await waitingOf(h, maker);
  watcher.start();
  await h.sess.whenWaiting(made.sessionId);
  audits.current.answer(approveAnswer.values, 'answer');
  await h.sess.submitAnswer(made.humanUrl, approveAnswer);
  await until(async () => (await stateOf(h, made.handle)) === 'answered', 10_000, 'the record answered');
  return made;
}

/** `client`'s next call on `handle` reads the verified answer. */
async function expectVerified(client: Awaited<ReturnType<typeof clientOf>>, handle: string): Promise<void> {
  const read = await ok(client, 'sess_response', { handle, revision: 1, wait_ms: 0 });
  expect(read).toMatchObject({
    state: 'answered',
    response: { verified: true, values: approveAnswer.values },
  });
}

describe('the HTTP watcher', { timeout: 60_000 }, () => {
  it('saves a late answer with no tool call waiting: verified, in the store, its event in the outbox and at onEvent', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    const events: WakeEvent[] = [];
    const { watcher } = watcherOf(h, {
      credentialFor: () => h.sess.apiKey,
      onEvent: (event) => {
        events.push(event);
      },
      maxWaitMs: 5_000,
    });
    const made = await answeredLate(h, alice, watcher);
    await until(() => events.length > 0, 5_000, 'the event delivered');
    expect(events).toEqual([
      expect.objectContaining({ type: 'answered', handle: made.handle, revision: 1, sequence: 1 }),
    ]);
    // The outbox holds it: owed to any other sink, delivered to onEvent.
    const outbox = h.stores.outbox!();
    const now = Date.now();
    const owed = await outbox.due('another-sink', { now, since: now - 60_000, limit: 10 });
    expect(owed.map(({ event }) => [event.type, event.handle])).toEqual([['answered', made.handle]]);
    expect((await outbox.entries('onEvent', 10)).map((entry) => entry.state)).toEqual(['delivered']);
    // The agent's next call reads the verified answer.
    await expectVerified(alice, made.handle);
  });

  it("under binding 'principal': polls a shared record once, with its own binding, and another client of the person reads what it saved", async () => {
    const h = await startStack({ binding: 'principal' });
    const first = await clientOf(h, 'alice-first-0123456789');
    const second = await clientOf(h, 'alice-second-0123456789', { clientId: 'client_2', grantId: 'grant_2' });
    const asked: HttpBinding[] = [];
    const { watcher } = watcherOf(h, {
      credentialFor: (binding) => {
        asked.push(binding);
        return h.sess.apiKey;
      },
      maxWaitMs: 5_000,
    });
    const made = await answeredLate(h, first, watcher);
    expect(asked[0]).toMatchObject({ clientId: 'client_1', grantId: 'grant_1', share: 'principal' });
    await expectVerified(second, made.handle);
  });

  it('polls two principals with keys of two workspaces each with its own key; swapped keys read nothing', async () => {
    const h = await startStack();
    const { other, alice, bob, keys } = await twoWorkspaces(h);
    const swapped = new Map([
      [h.sess.workspaceId, other.apiKey],
      [other.workspaceId, h.sess.apiKey],
    ]);

    // Swapped: each key belongs to the other workspace, so no read of either Session succeeds.
    const wrong = watcherOf(h, { credentialFor: (b) => swapped.get(b.workspaceId), maxWaitMs: 2_000 });
    const a1 = await waitingOf(h, alice);
    const b1 = await waitingOf(h, bob);
    wrong.watcher.start();
    await until(() => wrong.diagnostics.filter((e) => e.event === 'watcher.poll_failed').length >= 2);
    expect(
      new Set(wrong.diagnostics.filter((e) => e.event === 'watcher.poll_failed').map((e) => e.code)),
    ).toEqual(new Set(['NOT_CONFIGURED']));
    await h.sess.submitAnswer(a1.humanUrl, approveAnswer);
    await h.sess.submitAnswer(b1.humanUrl, approveAnswer);
    await pause(1_000);
    expect([await stateOf(h, a1.handle), await stateOf(h, b1.handle)]).toEqual(['waiting', 'waiting']);
    await wrong.watcher.stop();

    // Each with its own: both answers saved.
    const asked: string[] = [];
    const right = watcherOf(h, {
      credentialFor: (b: HttpBinding) => {
        asked.push(b.principalId);
        return keys.get(b.workspaceId);
      },
      maxWaitMs: 2_000,
    });
    right.watcher.start();
    await until(
      async () =>
        (await stateOf(h, a1.handle)) === 'answered' && (await stateOf(h, b1.handle)) === 'answered',
      10_000,
      'both answered',
    );
    expect(new Set(asked)).toEqual(new Set(['alice', 'bob']));
    expect(right.diagnostics.filter((e) => e.event === 'watcher.poll_failed')).toEqual([]);
  });

  it('does not poll a principal whose credentialFor answers undefined (asked once per rest, not per pass)', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    const carol = await clientOf(h, 'carol-token-0123456789', {
      principalId: 'carol',
      grantId: 'grant_carol',
    });
    const asked: string[] = [];
    const { watcher } = watcherOf(h, {
      credentialFor: (b) => {
        asked.push(b.principalId);
        return b.principalId === 'carol' ? undefined : h.sess.apiKey;
      },
      maxWaitMs: 1_000,
    });
    const a = await waitingOf(h, alice);
    const c = await waitingOf(h, carol);
    watcher.start();
    await h.sess.whenWaiting(a.sessionId);
    await h.sess.submitAnswer(c.humanUrl, approveAnswer);
    // Several passes (each at least a second apart) and several polls of alice's Session.
    await pause(3_000);
    expect(h.sess.pendingWaits(c.sessionId)).toBe(0);
    expect(await stateOf(h, c.handle)).toBe('waiting');
    expect(asked.filter((p) => p === 'carol')).toEqual(['carol']);
    expect(asked.filter((p) => p === 'alice').length).toBeGreaterThan(1);
  });

  it('holds each credential to its own calls per minute: one out of calls does not hold the other back', async () => {
    const h = await startStack();
    const { alice, bob, keys } = await twoWorkspaces(h);
    for (let i = 0; i < 3; i++) await waitingOf(h, alice);
    await waitingOf(h, bob);
    const before = requests(h.sess, 'wait');
    const { watcher } = watcherOf(h, {
      credentialFor: (b) => keys.get(b.workspaceId),
      callsPerMinutePerCredential: 2,
      maxWaitMs: 200,
    });
    watcher.start();
    await pause(3_000);
    // Two calls of alice's key (her three Sessions share them) and two of bob's; without the
    // budget, 200 ms polls would have made dozens.
    expect(requests(h.sess, 'wait') - before).toBe(4);
  });

  it('backs off a 429 storm, doubling from a second; never sooner than Retry-After', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    for (let i = 0; i < 4; i++) await waitingOf(h, alice);
    h.sess.faults.fail('wait', 429, { times: Number.POSITIVE_INFINITY });
    const before = requests(h.sess, 'wait');
    const { watcher, diagnostics } = watcherOf(h, { credentialFor: () => h.sess.apiKey, maxWaitMs: 1_000 });
    const started = Date.now();
    watcher.start();
    // When the count of wait requests moved: a round is the requests made within 300 ms.
    const rounds: number[] = [];
    let seen = before;
    while (Date.now() - started < 6_500) {
      const now = requests(h.sess, 'wait');
      if (now > seen && (rounds.length === 0 || Date.now() - started - rounds[rounds.length - 1]! > 300)) {
        rounds.push(Date.now() - started);
      }
      seen = now;
      await pause(20);
    }
    const made = requests(h.sess, 'wait') - before;
    // Rounds after pauses of 1, 2 and 4 s: three in 6.5 s (a steady second would be seven), and
    // the fourth pause at least twice the second.
    expect(rounds.length, JSON.stringify(rounds)).toBe(3);
    expect(rounds[1]! - rounds[0]!).toBeGreaterThanOrEqual(900);
    expect(rounds[2]! - rounds[1]!).toBeGreaterThanOrEqual(1_800);
    expect(made).toBeLessThanOrEqual(12);
    const pauses = diagnostics.filter((e) => e.event === 'watcher.backoff').map((e) => e.ms as number);
    expect(Math.max(...pauses)).toBeGreaterThanOrEqual(3_900);
    expect(
      diagnostics
        .filter((e) => e.event === 'watcher.poll_failed')
        .every((e) => e.code === 'SESS_UNAVAILABLE'),
    ).toBe(true);
    await watcher.stop();

    // Retry-After: 3 s, longer than the first pause.
    await watcher.stop();
    const h2 = await startStack();
    const bob = await clientOf(h2, 'bob-token-0123456789');
    for (let i = 0; i < 2; i++) await waitingOf(h2, bob);
    h2.sess.faults.fail('wait', 429, { times: Number.POSITIVE_INFINITY, headers: { 'retry-after': '3' } });
    const start2 = requests(h2.sess, 'wait');
    const second = watcherOf(h2, { credentialFor: () => h2.sess.apiKey, maxWaitMs: 1_000 });
    second.watcher.start();
    await until(() => requests(h2.sess, 'wait') - start2 >= 2, 5_000, 'the first round');
    const firstRound = requests(h2.sess, 'wait') - start2;
    await pause(2_500);
    expect(requests(h2.sess, 'wait') - start2, 'nothing within Retry-After').toBe(firstRound);
    await until(() => requests(h2.sess, 'wait') - start2 > firstRound, 3_000, 'a round after Retry-After');
  });
});

describe('the sweep', { timeout: 60_000 }, () => {
  it('reads each due record once without waiting, saves the answers, skips bindings without a credential and delivers the events', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    const carol = await clientOf(h, 'carol-token-0123456789', {
      principalId: 'carol',
      grantId: 'grant_carol',
    });
    const answered = [await waitingOf(h, alice), await waitingOf(h, alice)];
    const unanswered = await waitingOf(h, alice);
    const skipped = await waitingOf(h, carol);
    for (const made of [...answered, skipped]) await h.sess.submitAnswer(made.humanUrl, approveAnswer);
    const events: WakeEvent[] = [];
    const { watcher } = watcherOf(h, {
      credentialFor: (b) => (b.principalId === 'carol' ? undefined : h.sess.apiKey),
      onEvent: (event) => {
        events.push(event);
      },
    });
    const before = requests(h.sess, 'wait');
    const result = await watcher.sweep({ budgetMs: 8_000 });
    expect(result).toMatchObject({
      polled: 3,
      changed: 2,
      skipped: 1,
      failed: 0,
      deferred: 0,
      complete: true,
    });
    expect(result.delivered).toBe(2);
    expect(result.ms).toBeLessThan(8_000);
    expect(requests(h.sess, 'wait') - before, 'one read per record').toBe(3);
    expect(h.sess.pendingWaits(), 'no long-poll held').toBe(0);
    expect(new Set(events.map((e) => e.handle))).toEqual(new Set(answered.map((m) => m.handle)));
    expect(await stateOf(h, unanswered.handle)).toBe('waiting');
    expect(await stateOf(h, skipped.handle)).toBe('waiting');
  });

  it('stops starting reads when the budget is spent and ends the reads in flight by the deadline', async () => {
    const h = await startStack();
    const alice = await clientOf(h, 'alice-token-0123456789');
    for (let i = 0; i < 6; i++) await waitingOf(h, alice);
    h.sess.faults.delay('wait', 5_000, { times: Number.POSITIVE_INFINITY });
    const { watcher } = watcherOf(h, { credentialFor: () => h.sess.apiKey, callsPerMinutePerCredential: 5 });
    const started = Date.now();
    const result = await watcher.sweep({ budgetMs: 700 });
    expect(Date.now() - started).toBeLessThan(2_000);
    // Four reads at once (the sweep's concurrency) cut at the deadline; the rest never started.
    expect(result.complete).toBe(false);
    expect(result.polled + result.failed).toBe(4);
  });

  it('refuses a budget out of range, naming it', async () => {
    const h = await startStack();
    const { watcher } = watcherOf(h, { credentialFor: () => undefined });
    await expect(watcher.sweep({ budgetMs: 0 })).rejects.toThrow(
      'sweep: option "budgetMs" must be a whole number from 1 to 3600000.',
    );
    await expect(watcher.sweep({ budgetMs: 10, bogus: 1 } as never)).rejects.toThrow(
      /sweep: option "bogus" is not an option of sweep/,
    );
  });
});
