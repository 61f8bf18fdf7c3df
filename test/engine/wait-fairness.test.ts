/**
 * The wait gate's fairness and bounds across principals, on the local Sess runtime with the real
 * client and engines of HTTP bindings (one per principal and client):
 *
 * - with the total cap full of two busy principals' waits, a third principal's upstream wait
 *   starts within 1 s and returns the person's answer within 1 s of it (the reproduction of
 *   "busy callers starve a third caller's wait", which before the fix ended `waiting` after its
 *   whole 5 s);
 * - principals that share the slots evenly take turns: every one of three waits through two slots
 *   is answered within 1 s of its answer, and a wait whose upstream poll yielded its slot keeps
 *   waiting until its own `wait_ms`;
 * - one principal's upstream waits are capped over all its clients (`maxPrincipalWaits`);
 * - past `maxQueuedWaits`, a principal's next wait reads once and ends at once.
 *
 * Figures come from the runtime's own counters and the gate's. It bounds times at 1 s, so it runs
 * apart (`vitest.config.ts`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpBinding } from '../../src/core/contract/ports.js';
import {
  createSessEngine,
  createWaitGate,
  type SessEngine,
  type WaitGate,
} from '../../src/core/engine/engine.js';
import { FAIR_SLICE_MS } from '../../src/core/engine/wait-fairness.js';
import { watchPeak } from '../support/peak.js';
import { approveAnswer, type Harness, sessionIdOf, useHarnessLifecycle } from './harness.js';

const lifecycle = useHarnessLifecycle();

/** Everything a test started that keeps waiting: aborted after each test. */
const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error('condition not reached in time');
    await sleep(2);
  }
}

/** One caller: a principal through one client, with its own engine over the shared gate. */
interface Caller {
  engine: SessEngine;
  binding: HttpBinding;
  scope: string;
}

function callerOf(h: Harness, gate: WaitGate, principalId: string, clientId = 'client_1'): Caller {
  const binding: HttpBinding = {
    kind: 'http',
    origin: h.sess.origin,
    workspaceId: h.sess.workspaceId,
    principalId,
    clientId,
    grantId: `grant-${principalId}-${clientId}`,
    grantGeneration: 'g1',
  };
  const engine = createSessEngine({
    authority: { resolve: async () => ({ binding, sess: h.client, store: h.stores.forBinding(binding) }) },
    waitGate: gate,
  });
  return {
    engine,
    binding,
    scope: JSON.stringify([
      'http',
      binding.origin,
      binding.workspaceId,
      principalId,
      clientId,
      binding.grantId,
    ]),
  };
}

interface Asked {
  handle: string;
  humanUrl: string;
}

async function ask(caller: Caller): Promise<Asked> {
  const result = await caller.engine.call('sess_request', {
    interaction: {
      mode: 'interactive',
      title: 'Approve?',
      source: {
        kind: 'sess_surface',
        components: [{ type: 'field', name: 'message', label: 'L', schema: { type: 'string' } }],
      },
      actions: [{ id: 'approve', label: 'Approve', intent: 'approve' }],
    },
  });
  const interaction = (result.structuredContent as { interaction: Asked }).interaction;
  return { handle: interaction.handle, humanUrl: interaction.humanUrl };
}

/** `sess_response` of `caller` on `asked`; the state, or the error code. */
async function respond(caller: Caller, asked: Asked, waitMs: number, signal?: AbortSignal): Promise<string> {
  const result = await caller.engine.call(
    'sess_response',
    { handle: asked.handle, revision: 1, wait_ms: waitMs },
    signal === undefined ? {} : { signal },
  );
  const content = result.structuredContent as { interaction?: { state: string }; error?: { code: string } };
  return content.interaction?.state ?? `error ${content.error?.code}`;
}

describe('a full gate shares its slots fairly between principals', () => {
  it('two busy principals fill the total cap; a third one’s wait starts within 1 s and gets the answer within 1 s of it', async () => {
    const h = await lifecycle.start();
    const gate = createWaitGate({ maxConcurrentWaits: 8, maxTotalWaits: 8 });
    const busy = [callerOf(h, gate, 'a1'), callerOf(h, gate, 'a2')];
    const peak = watchPeak(() => h.sess.pendingWaits());
    // Each busy principal keeps 8 waits going, each re-issued as soon as it ends.
    const loops: Promise<string[]>[] = [];
    for (const caller of busy) {
      for (let i = 0; i < 8; i++) {
        const asked = await ask(caller);
        const stop = new AbortController();
        stops.push(stop);
        loops.push(
          (async () => {
            const states: string[] = [];
            while (!stop.signal.aborted) states.push(await respond(caller, asked, 6_000, stop.signal));
            return states;
          })(),
        );
      }
    }
    await until(() => gate.running() === 8 && gate.queued() === 8);
    await sleep(FAIR_SLICE_MS);

    const newcomer = callerOf(h, gate, 'victim');
    const asked = await ask(newcomer);
    const called = Date.now();
    const waiting = respond(newcomer, asked, 5_000).then((state) => ({ state, at: Date.now() }));
    await until(() => gate.running(newcomer.scope) === 1);
    const startedAfter = Date.now() - called;
    await sleep(500);
    await h.sess.submitAnswer(asked.humanUrl, approveAnswer);
    const answeredAt = Date.now();
    const { state, at } = await waiting;

    expect(state).toBe('answered');
    expect(startedAfter).toBeLessThan(1_000);
    expect(at - answeredAt).toBeLessThan(1_000);
    expect(peak()).toBeLessThanOrEqual(8);
    expect(gate.yields()).toBeGreaterThanOrEqual(1);
    for (const stop of stops) stop.abort();
    // The busy principals' calls never failed: every one ended `waiting`, or `needs_resume` when aborted.
    const states = new Set((await Promise.all(loops)).flat());
    expect([...states].every((s) => s === 'waiting' || s === 'needs_resume')).toBe(true);
    await until(() => gate.waiting() === 0);
    expect([gate.running(), gate.queued()]).toEqual([0, 0]);
  });

  it('three principals through two slots take turns: each wait is answered within 1 s of its answer', async () => {
    const h = await lifecycle.start();
    const gate = createWaitGate({ maxTotalWaits: 2 });
    const callers = ['p1', 'p2', 'p3'].map((p) => callerOf(h, gate, p));
    const asked = await Promise.all(callers.map(ask));
    const peak = watchPeak(() => h.sess.pendingWaits());
    const waits = callers.map((caller, i) =>
      respond(caller, asked[i]!, 20_000).then((state) => ({ state, at: Date.now() })),
    );
    await until(() => gate.waiting() === 3 && gate.running() === 2);
    // Answer first the one whose wait is queued at that moment: it must come back to a slot.
    const order = [0, 1, 2].sort((a, b) => gate.running(callers[a]!.scope) - gate.running(callers[b]!.scope));
    expect(gate.running(callers[order[0]!]!.scope)).toBe(0);
    for (const i of order) {
      await sleep(300);
      await h.sess.submitAnswer(asked[i]!.humanUrl, approveAnswer);
      const answeredAt = Date.now();
      const { state, at } = await waits[i]!;
      expect(state).toBe('answered');
      expect(at - answeredAt).toBeLessThan(1_000);
    }
    expect(peak()).toBeLessThanOrEqual(2);
    expect(gate.yields()).toBeGreaterThanOrEqual(1);
  });

  it('a wait whose upstream poll yields its slot keeps waiting until its own wait_ms', async () => {
    const h = await lifecycle.start();
    const gate = createWaitGate({ maxTotalWaits: 2 });
    const callers = ['p1', 'p2', 'p3'].map((p) => callerOf(h, gate, p));
    const asked = await Promise.all(callers.map(ask));
    const ids = asked.map((a) => sessionIdOf(h.sess, a.humanUrl));
    const ranUpstream = new Set<string>();
    const sampler = setInterval(() => {
      for (const id of ids) if (h.sess.pendingWaits(id) > 0) ranUpstream.add(id);
    }, 5);
    const started = Date.now();
    const took = await Promise.all(
      callers.map((caller, i) =>
        respond(caller, asked[i]!, 2_500).then((state) => ({ state, ms: Date.now() - started })),
      ),
    );
    for (const { state, ms } of took) {
      expect(state).toBe('waiting');
      expect(ms).toBeGreaterThanOrEqual(2_450);
      expect(ms).toBeLessThan(3_500);
    }
    // The slots turned over about every slice: each of the three ran, none for the whole time alone.
    expect(gate.yields()).toBeGreaterThanOrEqual(2);
    expect(gate.yields()).toBeLessThanOrEqual(Math.ceil(2_500 / FAIR_SLICE_MS) + 1);
    clearInterval(sampler);
    expect(ranUpstream.size).toBe(3);
    expect(gate.running()).toBe(0);
    expect(gate.queued()).toBe(0);
  });
});

describe('the caps per principal and the queue bound', () => {
  it('one principal through three clients holds at most maxPrincipalWaits; another principal is not queued', async () => {
    const h = await lifecycle.start();
    const gate = createWaitGate({ maxConcurrentWaits: 8, maxPrincipalWaits: 3 });
    const stop = new AbortController();
    stops.push(stop);
    const clients = ['c1', 'c2', 'c3'].map((c) => callerOf(h, gate, 'alice', c));
    const waits: Promise<string>[] = [];
    for (const caller of clients) {
      for (let i = 0; i < 3; i++) waits.push(respond(caller, await ask(caller), 20_000, stop.signal));
    }
    await until(() => gate.waiting() === 9 && gate.queued() === 6);
    expect(h.sess.pendingWaits()).toBe(3);
    const bob = callerOf(h, gate, 'bob');
    const bobs = await ask(bob);
    const bobWait = respond(bob, bobs, 20_000);
    await until(() => h.sess.pendingWaits() === 4);
    expect(gate.running(bob.scope)).toBe(1);
    await h.sess.submitAnswer(bobs.humanUrl, approveAnswer);
    expect(await bobWait).toBe('answered');
    stop.abort();
    expect(new Set(await Promise.all(waits))).toEqual(new Set(['needs_resume']));
  });

  it('past maxQueuedWaits a wait reads once and ends at once: waiting, or the answer already there', async () => {
    const h = await lifecycle.start();
    const gate = createWaitGate({ maxConcurrentWaits: 1, maxQueuedWaits: 3 });
    const stop = new AbortController();
    stops.push(stop);
    const alice = callerOf(h, gate, 'alice');
    const asked: Asked[] = [];
    for (let i = 0; i < 6; i++) asked.push(await ask(alice));
    const held = asked.slice(0, 4).map((a) => respond(alice, a, 20_000, stop.signal));
    await until(() => gate.running() === 1 && gate.queued() === 3);
    const requests = () => ({ wait: h.sess.stats.requests.wait ?? 0, get: h.sess.stats.requests.get ?? 0 });
    const before = requests();

    let started = Date.now();
    expect(await respond(alice, asked[4]!, 20_000)).toBe('waiting');
    expect(Date.now() - started).toBeLessThan(1_000);
    await h.sess.submitAnswer(asked[5]!.humanUrl, approveAnswer);
    started = Date.now();
    expect(await respond(alice, asked[5]!, 20_000)).toBe('answered');
    expect(Date.now() - started).toBeLessThan(1_000);
    // Each ended wait was one read (and the answer its confirming read): no upstream wait, nothing queued or held.
    const after = requests();
    expect([after.wait - before.wait, after.get - before.get]).toEqual([0, 3]);
    expect([gate.running(), gate.queued(), gate.waiting()]).toEqual([1, 3, 4]);

    // A second waiter on the running poll shares it (nothing queued), and another principal has its own bound.
    const shared = respond(alice, asked[0]!, 20_000, stop.signal);
    await until(() => gate.waiting() === 5);
    const bob = callerOf(h, gate, 'bob');
    const bobs = await ask(bob);
    const bobWait = respond(bob, bobs, 20_000);
    await until(() => gate.running(bob.scope) === 1);
    await h.sess.submitAnswer(bobs.humanUrl, approveAnswer);
    expect(await bobWait).toBe('answered');
    stop.abort();
    expect(new Set(await Promise.all([...held, shared]))).toEqual(new Set(['needs_resume']));

    // Every count went back: the same four waits are held and queued again, none ended at once.
    expect([gate.running(), gate.queued(), gate.waiting()]).toEqual([0, 0, 0]);
    const again = new AbortController();
    stops.push(again);
    const heldAgain = asked.slice(0, 4).map((a) => respond(alice, a, 20_000, again.signal));
    await until(() => gate.running() === 1 && gate.queued() === 3 && gate.waiting() === 4);
    again.abort();
    expect(new Set(await Promise.all(heldAgain))).toEqual(new Set(['needs_resume']));
  });
});
