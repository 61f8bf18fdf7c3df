/**
 * Waits of `sess_response` through the wait gate, on the local Sess runtime with the real client:
 * concurrent waits on one handle share one upstream long-poll and all get the answer (memory and
 * file store); one binding scope holds at most `maxConcurrentWaits` upstream waits; a wait over
 * the cap still releases an existing answer at once; one waiter's abort or short deadline does
 * not end the others' shared poll. Figures come from the runtime's own counters.
 */
import { describe, expect, it } from 'vitest';
import { createWaitGate, type WaitGate } from '../../src/core/engine/engine.js';
import type { HandleStoreFactory } from '../../src/store/memory/memory-store.js';
import { approveAnswer, type Harness, type Outcome, sessionIdOf, useHarnessLifecycle } from './harness.js';

const lifecycle = useHarnessLifecycle();

function harnessWithGate(gate: WaitGate, stores?: HandleStoreFactory): Promise<Harness> {
  return lifecycle.start({ engine: { waitGate: gate }, ...(stores === undefined ? {} : { stores }) });
}

/** Four waits held through a gate, and the controller that aborts them. */
interface FourWaits {
  controller: AbortController;
  waits: Promise<unknown>[];
}

/** Four waiting Sessions held through `gate` directly, two per binding scope, until aborted. */
async function fourWaitsInTwoScopes(gate: WaitGate, harness: Harness): Promise<FourWaits> {
  const sessionIds: string[] = [];
  for (let i = 0; i < 4; i++) sessionIds.push(sessionIdOf(harness.sess, (await harness.request()).humanUrl));
  const controller = new AbortController();
  const waits = sessionIds.map((sessionId, i) =>
    gate.wait({
      sess: harness.client,
      origin: harness.sess.origin,
      scope: `scope-${i % 2}`,
      generation: 'gen-1',
      sessionId,
      revision: 1,
      status: 'active',
      timeoutMs: 30_000,
      signal: controller.signal,
    }),
  );
  return { controller, waits };
}

/** Abort the four waits: each rejects, and the runtime holds none of them any more. */
async function abortFourWaits({ controller, waits }: FourWaits, harness: Harness): Promise<void> {
  controller.abort();
  const settled = await Promise.allSettled(waits);
  expect(settled.map((s) => s.status)).toEqual(Array(4).fill('rejected'));
  await until(() => harness.sess.pendingWaits() === 0);
}

/** Resolves once `check` holds, polling the event loop (fails the test after `ms`). */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The largest value `sample` took while `run` ran (sampled every few milliseconds). */
async function peakDuring<T>(
  sample: () => number,
  run: () => Promise<T>,
): Promise<{ peak: number; value: T }> {
  let peak = sample();
  const timer = setInterval(() => {
    peak = Math.max(peak, sample());
  }, 1);
  try {
    const value = await run();
    return { peak: Math.max(peak, sample()), value };
  } finally {
    clearInterval(timer);
  }
}

function stateOf(outcome: Outcome): string {
  return outcome.ok ? outcome.interaction.state : `error ${outcome.error.code}: ${outcome.error.message}`;
}

const STORES: [string, () => Promise<HandleStoreFactory | undefined>][] = [
  ['memory store', async () => undefined],
  ['file store', async (): Promise<HandleStoreFactory> => (await lifecycle.fileStore()).stores],
];

describe.each(STORES)('24 concurrent sess_response on one handle (%s)', (_name, makeStores) => {
  it('share one upstream wait and all return the same verified answer', async () => {
    const gate = createWaitGate();
    const harness = await harnessWithGate(gate, await makeStores());
    const created = await harness.request();
    const sessionId = sessionIdOf(harness.sess, created.humanUrl);
    const waitsBefore = harness.sess.stats.requests.wait ?? 0;

    const calls = Array.from({ length: 24 }, () =>
      harness.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 }),
    );
    await until(() => gate.waiting() === 24 && harness.sess.pendingWaits(sessionId) === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(harness.sess.pendingWaits(sessionId)).toBe(1);
    expect(gate.running()).toBe(1);

    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    const outcomes = await Promise.all(calls);
    expect(outcomes.map(stateOf)).toEqual(Array(24).fill('answered'));
    const eventIds = new Set(outcomes.map((o) => (o.ok ? o.interaction.response?.eventId : undefined)));
    expect(eventIds.size).toBe(1);
    expect((harness.sess.stats.requests.wait ?? 0) - waitsBefore).toBe(1);
    // One call recorded the answer; the others returned what it recorded.
    expect(harness.diagnostics.filter((d) => d.event === 'answer_released')).toHaveLength(1);
    expect((await harness.record(created.handle))?.record.state.kind).toBe('answered');
    expect(gate.running()).toBe(0);
    expect(gate.waiting()).toBe(0);
  });
});

describe.each(STORES)('concurrent waits of separate engines on one handle (%s)', (_name, makeStores) => {
  it('each engine waits upstream on its own, and every one returns the answer the first recorded', async () => {
    const harness = await harnessWithGate(createWaitGate(), await makeStores());
    // Six engines with a gate each: six hosts (or processes) over one store, 4 waits each.
    const engines = Array.from({ length: 6 }, () => harness.makeEngine({ waitGate: createWaitGate() }));
    const created = await harness.request();
    const sessionId = sessionIdOf(harness.sess, created.humanUrl);
    const calls = engines.flatMap((engine) =>
      Array.from({ length: 4 }, () =>
        engine.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 }),
      ),
    );
    await until(() => harness.sess.pendingWaits(sessionId) === 6);
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    const results = await Promise.all(calls);
    const states = results.map((r) => {
      const content = r.structuredContent as { interaction?: { state: string }; error?: { code: string } };
      return content.interaction?.state ?? `error ${content.error?.code}`;
    });
    expect(states).toEqual(Array(24).fill('answered'));
  });
});

describe('the cap on upstream waits', () => {
  it('20 waiting handles of one scope hold at most 8 upstream waits, and all 20 are answered', async () => {
    const gate = createWaitGate();
    const harness = await harnessWithGate(gate);
    const created: Awaited<ReturnType<Harness['request']>>[] = [];
    for (let i = 0; i < 20; i++) created.push(await harness.request());

    const { peak, value: outcomes } = await peakDuring(
      () => harness.sess.pendingWaits(),
      async () => {
        const calls = created.map((c) =>
          harness.call('sess_response', { handle: c.handle, revision: 1, wait_ms: 30_000 }),
        );
        await until(() => gate.waiting() === 20 && gate.queued() === 12);
        expect(harness.sess.pendingWaits()).toBe(8);
        // Answer in reverse: queued waits start as slots free, and find their answer at once.
        for (const c of [...created].reverse()) await harness.sess.submitAnswer(c.humanUrl, approveAnswer);
        return Promise.all(calls);
      },
    );
    expect(outcomes.map(stateOf)).toEqual(Array(20).fill('answered'));
    expect(peak).toBe(8);
    expect(gate.running()).toBe(0);
  });

  it('a wait over the cap whose answer already exists returns at once', async () => {
    const gate = createWaitGate({ maxConcurrentWaits: 2 });
    const harness = await harnessWithGate(gate);
    const holders = [await harness.request(), await harness.request()];
    const held = holders.map((c) =>
      harness.call('sess_response', { handle: c.handle, revision: 1, wait_ms: 30_000 }),
    );
    await until(() => harness.sess.pendingWaits() === 2);

    const ready = await harness.request();
    await harness.sess.submitAnswer(ready.humanUrl, approveAnswer);
    const started = Date.now();
    const out = await harness.ok('sess_response', { handle: ready.handle, revision: 1, wait_ms: 30_000 });
    expect(out.state).toBe('answered');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(harness.sess.pendingWaits()).toBe(2);

    for (const c of holders) await harness.sess.submitAnswer(c.humanUrl, approveAnswer);
    expect((await Promise.all(held)).map(stateOf)).toEqual(['answered', 'answered']);
  });

  it('a wait over the cap queues within its own wait_ms and ends as a normal timeout', async () => {
    const gate = createWaitGate({ maxConcurrentWaits: 1 });
    const harness = await harnessWithGate(gate);
    const holder = await harness.request();
    const held = harness.call('sess_response', { handle: holder.handle, revision: 1, wait_ms: 30_000 });
    await until(() => harness.sess.pendingWaits() === 1);

    const queued = await harness.request();
    const started = Date.now();
    const out = await harness.ok('sess_response', { handle: queued.handle, revision: 1, wait_ms: 400 });
    const took = Date.now() - started;
    expect(out.state).toBe('waiting');
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(3_000);
    expect(gate.queued()).toBe(0);
    await harness.sess.submitAnswer(holder.humanUrl, approveAnswer);
    expect(stateOf(await held)).toBe('answered');
  });

  it('each binding scope has its own cap: other callers are never queued behind it', async () => {
    const gate = createWaitGate({ maxConcurrentWaits: 2 });
    const harness = await harnessWithGate(gate);
    const four = await fourWaitsInTwoScopes(gate, harness);
    await until(() => harness.sess.pendingWaits() === 4);
    expect(gate.queued()).toBe(0);
    expect([gate.running('scope-0'), gate.running('scope-1')]).toEqual([2, 2]);
    await abortFourWaits(four, harness);
  });

  it('maxTotalWaits caps the whole gate across binding scopes', async () => {
    const gate = createWaitGate({ maxConcurrentWaits: 2, maxTotalWaits: 2 });
    const harness = await harnessWithGate(gate);
    const four = await fourWaitsInTwoScopes(gate, harness);
    await until(() => gate.waiting() === 4 && gate.queued() === 2);
    expect(harness.sess.pendingWaits()).toBe(2);
    expect(gate.running('scope-0') + gate.running('scope-1')).toBe(2);
    await abortFourWaits(four, harness);
  });
});

describe('one shared poll, many waiters', () => {
  it("one waiter's abort does not end the others' shared poll; the last one's does", async () => {
    const gate = createWaitGate();
    const harness = await harnessWithGate(gate);
    const created = await harness.request();
    const sessionId = sessionIdOf(harness.sess, created.humanUrl);
    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    const calls = controllers.map((c) =>
      harness.call(
        'sess_response',
        { handle: created.handle, revision: 1, wait_ms: 20_000 },
        { signal: c.signal },
      ),
    );
    await until(() => gate.waiting() === 3 && harness.sess.pendingWaits(sessionId) === 1);

    controllers[0]!.abort();
    expect(stateOf(await calls[0]!)).toBe('needs_resume');
    expect(harness.sess.pendingWaits(sessionId)).toBe(1);
    expect(gate.waiting()).toBe(2);

    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    expect((await Promise.all(calls.slice(1))).map(stateOf)).toEqual(['answered', 'answered']);

    // A second Session: aborting every waiter aborts the upstream wait.
    const other = await harness.request();
    const otherId = sessionIdOf(harness.sess, other.humanUrl);
    const all = new AbortController();
    const pending = [1, 2].map(() =>
      harness.call(
        'sess_response',
        { handle: other.handle, revision: 1, wait_ms: 20_000 },
        { signal: all.signal },
      ),
    );
    await until(() => harness.sess.pendingWaits(otherId) === 1 && gate.waiting() === 2);
    all.abort();
    expect((await Promise.all(pending)).map(stateOf)).toEqual(['needs_resume', 'needs_resume']);
    await until(() => harness.sess.pendingWaits(otherId) === 0);
    expect(gate.running()).toBe(0);
  });

  it('a waiter with a shorter deadline returns on it as waiting; the longer one keeps the poll', async () => {
    const gate = createWaitGate();
    const harness = await harnessWithGate(gate);
    const created = await harness.request();
    const sessionId = sessionIdOf(harness.sess, created.humanUrl);
    const long = harness.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
    await until(() => gate.waiting() === 1);
    const started = Date.now();
    const short = await harness.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 300 });
    expect(short.state).toBe('waiting');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(harness.sess.pendingWaits(sessionId)).toBe(1);
    expect(harness.sess.stats.requests.wait).toBe(1);
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    expect(stateOf(await long)).toBe('answered');
  });

  it('a later waiter with a longer deadline keeps waiting after a shorter shared poll ends', async () => {
    const gate = createWaitGate();
    const harness = await harnessWithGate(gate);
    const created = await harness.request();
    const short = harness.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 300 });
    await until(() => gate.waiting() === 1);
    const long = harness.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 20_000 });
    await until(() => gate.waiting() === 2);
    expect(stateOf(await short)).toBe('waiting');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(gate.waiting()).toBe(1);
    await harness.sess.submitAnswer(created.humanUrl, approveAnswer);
    expect(stateOf(await long)).toBe('answered');
  });

  it('maxWaitMs 0: sess_response never waits', async () => {
    const gate = createWaitGate();
    const harness = await lifecycle.start({ engine: { waitGate: gate, maxWaitMs: 0 } });
    const created = await harness.request();
    const started = Date.now();
    const out = await harness.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 45_000 });
    expect(out.state).toBe('waiting');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(gate.waiting()).toBe(0);
  });
});

describe('createWaitGate options', () => {
  it.each([0, -1, 1.5, '8', Number.NaN])('refuses maxConcurrentWaits %o', (value) => {
    expect(() => createWaitGate({ maxConcurrentWaits: value as number })).toThrow(
      /^createWaitGate: option "maxConcurrentWaits" must be a whole number from 1 to 10000\.$/,
    );
  });

  it.each([
    ['maxPrincipalWaits', 1_000_000],
    ['maxTotalWaits', 1_000_000],
    ['maxQueuedWaits', 1_000_000],
  ])('refuses %s outside 1 to %d', (option, max) => {
    for (const value of [0, max + 1, 2.5, '4']) {
      expect(() => createWaitGate({ [option]: value })).toThrow(
        new TypeError(`createWaitGate: option "${option}" must be a whole number from 1 to ${max}.`),
      );
    }
  });

  it('defaults to 8 per scope, 16 per principal, 256 in all and 64 queued per principal', () => {
    for (const gate of [createWaitGate(), createWaitGate({})]) {
      expect([
        gate.maxConcurrentWaits,
        gate.maxPrincipalWaits,
        gate.maxTotalWaits,
        gate.maxQueuedWaits,
      ]).toEqual([8, 16, 256, 64]);
    }
  });
});
