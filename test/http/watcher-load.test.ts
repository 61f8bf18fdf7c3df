/**
 * The HTTP watcher under load: 1 000 waiting interactions watched (real Sessions of the local
 * runtime, records in the memory store the handler serves), the watcher holding every slot it
 * may of the wait gate it shares with the handler, its Sessions taking turns with shortened waits.
 * A tool call's `sess_response` must still start its upstream long-poll at once: the watcher
 * holds at most half of each cap.
 *
 * It bounds a time from above on a short scale, so it runs apart (`APART` in vitest.config.ts).
 */
import { describe, expect, it } from 'vitest';
import type { HttpBinding } from '../../src/core/contract/ports.js';
import { createWaitGate } from '../../src/core/engine/wait-gate.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { createSessMcpWatcher } from '../../src/http/index.js';
import { createSessClient } from '../../src/sess/client.js';
import { waitingRecordOn } from '../support/bulk-records.js';
import { useCleanup } from '../support/cleanup.js';
import { approveAnswer, approveSurface, ok, startHttpHarness } from './harness.js';
import { connectModern } from './helpers.js';

const cleanup = useCleanup();

const WATCHED = 1_000;
/** The gate's cap over all callers: the watcher may hold half of it, 32. */
const MAX_TOTAL_WAITS = 64;

describe('the HTTP watcher with 1 000 interactions watched', { timeout: 120_000 }, () => {
  it('leaves a tool call its slot: its wait starts its upstream long-poll at once', async () => {
    const waitGate = createWaitGate({ maxTotalWaits: MAX_TOTAL_WAITS });
    const h = await startHttpHarness({ waitGate, maxOpenPerPrincipal: WATCHED }, undefined, {
      plan: { maxOpenSessions: 2 * WATCHED },
    });
    cleanup.push(() => h.close());
    const { sess } = h;

    // 1 000 real Sessions, and their waiting records under eleven principals (50 of the agent's
    // own, 95 of each of ten others), written to the store the handler serves.
    const client = createSessClient({
      origin: sess.origin,
      credential: () => sess.apiKey,
      allowInsecureLocalhost: true,
    });
    const bindingOf = (principalId: string): HttpBinding => ({
      kind: 'http',
      origin: sess.origin,
      workspaceId: sess.workspaceId,
      principalId,
      clientId: 'client_1',
      grantId: `grant_${principalId}`,
      grantGeneration: 'g1',
    });
    const owners = [
      ...Array.from({ length: 50 }, () => 'agent'),
      ...Array.from({ length: 950 }, (_, i) => `p${i % 10}`),
    ];
    for (let from = 0; from < WATCHED; from += 50) {
      const records = await Promise.all(
        owners.slice(from, from + 50).map(async (owner, i): Promise<InteractionRecord> => {
          const view = await client.createSession({
            surface: approveSurface,
            idempotencyKey: `load-${from + i}`,
          });
          return waitingRecordOn(bindingOf(owner), view, approveSurface, { handle: `sh_load_${from + i}` });
        }),
      );
      for (const record of records) await h.stores.forBinding(record.binding).create(record);
    }

    const watcher = createSessMcpWatcher({
      handleStores: h.stores,
      credentialFor: () => sess.apiKey,
      sessOrigin: sess.origin,
      allowInsecureLocalhost: true,
      waitGate,
      // Not the bound under test: let the watcher take every slot it may.
      callsPerMinutePerCredential: 100_000,
    });
    cleanup.push(() => watcher.stop());
    const startedAt = performance.now();
    watcher.start();
    await sess.whenWaiting(undefined, MAX_TOTAL_WAITS / 2);
    const filled = performance.now() - startedAt;
    // From now on, the most long-polls the gate holds at once: the watcher's, and the tool call's.
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, waitGate.running());
    }, 5);
    cleanup.push(() => clearInterval(sampler));
    const waitsBefore = sess.stats.requests.wait ?? 0;
    const sampledFrom = performance.now();

    h.principal('agent-token-0123456789', { principalId: 'agent', grantId: 'grant_agent' });
    const agent = await connectModern(h.server.url, { authorization: 'Bearer agent-token-0123456789' });
    cleanup.push(() => agent.close());
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await ok(agent, 'sess_request', { interaction: approveSurface });
      const sessionId = sess.sessions.byUrl(created.humanUrl!)!.view.id;
      const sent = performance.now();
      const waiting = ok(agent, 'sess_response', { handle: created.handle, revision: 1, wait_ms: 10_000 });
      await sess.whenWaiting(sessionId);
      latencies.push(performance.now() - sent);
      await sess.submitAnswer(created.humanUrl!, approveAnswer);
      expect((await waiting).state).toBe('answered');
    }
    // The watcher's polls take turns (shortened waits), never more than its half at once.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    clearInterval(sampler);
    const seconds = (performance.now() - sampledFrom) / 1_000;
    const turns = ((sess.stats.requests.wait ?? 0) - waitsBefore) / seconds;
    process.stdout.write(
      `watcher-load: ${WATCHED} watched, ${MAX_TOTAL_WAITS / 2} polls held after ${filled.toFixed(0)} ms, ${turns.toFixed(0)} waits a second, at most ${most} long-polls at once; a tool call's upstream wait started after ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms\n`,
    );
    expect(most).toBeLessThanOrEqual(MAX_TOTAL_WAITS / 2 + 1);
    // 32 slots over 1 000 Sessions: waits of about 1.4 s (45 s ones would make under one a second).
    expect(turns).toBeGreaterThan(3);
    for (const ms of latencies) expect(ms).toBeLessThan(200);
  });
});
