/**
 * Forged answers, driven through the engine on the local runtime with the real client: receipts
 * with a flipped signature bit, an unknown key, another workspace's listed key, a genuine receipt
 * of another answer (replayed), and every claim swapped under a valid signature; views whose
 * answer, event, revision or Session were swapped under a genuine receipt; a Session that moved on
 * between verification and the confirming read; forged Ask answers. None is ever returned as
 * `answered`; each blocks (or is refused) and stays refused after the forgery stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessApi, SessionView } from '../../src/core/contract/ports.js';
import type { LocalEndpoint, ReceiptTamper } from '../../src/testing/index.js';
import {
  approveAnswer,
  followUpSurface,
  type Harness,
  localClient,
  type Outcome,
  startForwardingHarness,
  switchProfile,
} from '../engine/harness.js';

let h: Harness;
let current: SessApi;
/** A view rewrite applied to what the client returns (a named double around the real client). */
let rewrite: ((view: SessionView, method: 'getSession' | 'waitSession') => SessionView) | undefined;
/** Runs after a receipt verified and before the engine continues (a named double). */
let afterVerify: (() => Promise<void>) | undefined;
const tally = { forgeries: 0, released: 0 };

beforeAll(async () => {
  h = await startForwardingHarness(
    () => current,
    (name, real) => {
      if (name === 'getSession' || name === 'waitSession')
        return async (...args) => {
          const view = (await real(...args)) as SessionView;
          return rewrite ? rewrite(structuredClone(view), name) : view;
        };
      if (name === 'verifyResponse')
        return async (...args) => {
          const verified = await real(...args);
          await afterVerify?.();
          return verified;
        };
      return undefined;
    },
  );
});
afterAll(async () => {
  console.log(
    `[reliability] forgery: ${tally.forgeries} forged or stale answers tried through the engine, ${tally.released} returned as answered`,
  );
  await h?.close();
});

let profiles = 0;
function freshCell(): void {
  current = localClient(h.sess);
  rewrite = undefined;
  afterVerify = undefined;
  h.sess.faults.clear();
  profiles += 1;
  switchProfile(h, `forge-${profiles}`, 'g', 200);
}

/** Nothing forged is released: not answered, and the interaction is refused from then on. */
async function neverAnswered(out: Outcome, handle: string, revision: number): Promise<string> {
  tally.forgeries += 1;
  if (out.ok && out.interaction.state === 'answered') tally.released += 1;
  expect(out.ok, out.ok ? JSON.stringify(out.interaction) : '').toBe(false);
  if (out.ok) return 'released';
  // Once the forgery is gone the genuine answer is still not released: the record is blocked.
  h.sess.faults.clear();
  rewrite = undefined;
  afterVerify = undefined;
  const next = await h.call('sess_response', { handle, revision, wait_ms: 100 });
  if (next.ok && next.interaction.state === 'answered') tally.released += 1;
  expect(next.ok).toBe(false);
  expect((await h.stores.forBinding(h.binding).get(handle))?.record.state.kind).toBe('blocked');
  return out.error.code;
}

const TAMPERS: Array<[string, ReceiptTamper]> = [
  ['bad signature (one bit flipped)', { mode: 'signature' }],
  ['unknown key id', { mode: 'unknown_key' }],
  ["another workspace's listed key", { mode: 'other_workspace_key' }],
  ['a genuine receipt of another answer (replayed)', { mode: 'replay' }],
  ...(['iss', 'ws', 'sid', 'rev', 'evt', 'sdg', 'adg', 'act'] as const).map(
    (claim) =>
      [`claim ${claim} swapped, re-signed with the genuine key`, { mode: 'claim', claim }] as [
        string,
        ReceiptTamper,
      ],
  ),
];

/** In a fresh cell: another request answered with `otherMessage`, then a new one answered. */
async function answeredBesideAnother(otherMessage: string) {
  freshCell();
  const other = await h.request();
  await h.sess.submitAnswer(other.humanUrl, { action: 'stop', values: { message: otherMessage } });
  const created = await h.request();
  await h.sess.submitAnswer(created.humanUrl, approveAnswer);
  return created;
}

describe('forged receipts on the answer read (wait)', () => {
  it.each(TAMPERS)('%s: never answered, blocked VERIFICATION_FAILED', async (_name, tamper) => {
    // Another answer of the workspace exists, so a replay has something genuine to reuse.
    const created = await answeredBesideAnother('the other answer');
    h.sess.faults.tamperReceipt('wait', tamper, { times: Infinity });
    h.sess.faults.tamperReceipt('get', tamper, { times: Infinity });
    const out = await h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 500 });
    expect(await neverAnswered(out, created.handle, 1)).toBe('VERIFICATION_FAILED');
  });
});

describe('not a forgery', () => {
  it('iat differs under the genuine key: not a bound claim (docs/sess-api.md), the true answer is released', async () => {
    // Only the key holder can sign; iat binds nothing about the answer, so this is Sess itself
    // re-issuing the receipt. The released answer is the person's own.
    freshCell();
    const created = await h.request();
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    h.sess.faults.tamperReceipt('wait', { mode: 'claim', claim: 'iat' }, { times: Infinity });
    const out = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 500 });
    expect(out.response).toMatchObject({ verified: true, values: approveAnswer.values });
  });
});

describe('a replayed receipt of the earlier revision of the same Session', () => {
  it('is refused at revision 2', async () => {
    freshCell();
    const { created, publish } = await h.answered();
    await h.ok('sess_publish', publish);
    await h.sess.submitAnswer(created.humanUrl, { action: 'push', values: {} });
    h.sess.faults.tamperReceipt('wait', { mode: 'replay' }, { times: Infinity });
    const out = await h.call('sess_response', { handle: created.handle, revision: 2, wait_ms: 500 });
    expect(await neverAnswered(out, created.handle, 2)).toBe('VERIFICATION_FAILED');
  });
});

describe('genuine receipts under a swapped view', () => {
  const swaps: Array<[string, (view: SessionView) => SessionView]> = [
    [
      'answer values swapped',
      (v) => {
        for (const r of v.responses)
          r.answer = { ...r.answer, values: { message: 'not what the person wrote' } };
        return v;
      },
    ],
    [
      'action swapped',
      (v) => {
        for (const r of v.responses) r.answer = { ...r.answer, action: 'stop' };
        return v;
      },
    ],
    [
      'event id swapped',
      (v) => {
        for (const r of v.responses) r.eventId = `${r.eventId}x`;
        return v;
      },
    ],
    [
      'receipt moved to the answer of another Session',
      (v) => {
        const foreign = h.sess.sessions
          .list()
          .find((s) => s.view.id !== v.sessionId && s.view.responses.length > 0);
        const receipt = foreign?.view.responses[0]?.receipt;
        for (const r of v.responses) if (receipt) r.receipt = receipt;
        return v;
      },
    ],
  ];
  it.each(swaps)('%s: never answered', async (_name, swap) => {
    const created = await answeredBesideAnother('someone else');
    rewrite = (view) => swap(view);
    const out = await h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 500 });
    const code = await neverAnswered(out, created.handle, 1);
    expect(['VERIFICATION_FAILED', 'RECOVERY_BLOCKED']).toContain(code);
  });

  it('a view of another Session (sessionId swapped) is a protocol error, nothing released', async () => {
    freshCell();
    const other = await h.request();
    const created = await h.request();
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const otherId = h.sess.sessions.byUrl(other.humanUrl)!.view.id;
    rewrite = (view) => ({ ...view, sessionId: otherId });
    const out = await h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 500 });
    tally.forgeries += 1;
    if (out.ok && out.interaction.state === 'answered') tally.released += 1;
    expect(out.ok).toBe(false);
    // Fail closed, nothing recorded: once Sess answers truthfully the genuine answer is released.
    rewrite = undefined;
    const next = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 500 });
    expect(next.response?.values).toEqual(approveAnswer.values);
  });
});

describe('a Session that moved on', () => {
  it('between verification and the confirming read: RECOVERY_BLOCKED, never answered', async () => {
    freshCell();
    const created = await h.request();
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const sessionId = h.sess.sessions.byUrl(created.humanUrl)!.view.id;
    afterVerify = async () => {
      afterVerify = undefined;
      // Someone else with the key publishes revision 2 behind the engine's back.
      const event = h.sess.sessions.get(sessionId)!.view.responses[0]!;
      await current.publish(sessionId, {
        expectedRevision: 1,
        responseEventId: event.event_id,
        surface: followUpSurface,
        idempotencyKey: `behind-${profiles}`,
      });
    };
    const out = await h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 500 });
    expect(await neverAnswered(out, created.handle, 1)).toBe('RECOVERY_BLOCKED');
  });

  it('after a saved answer (re-confirm on the next call): RECOVERY_BLOCKED, the old answer is not repeated', async () => {
    freshCell();
    const { created, answered } = await h.answered();
    const sessionId = h.sess.sessions.byUrl(created.humanUrl)!.view.id;
    await current.publish(sessionId, {
      expectedRevision: 1,
      responseEventId: answered.response!.eventId,
      surface: followUpSurface,
      idempotencyKey: `moved-${profiles}`,
    });
    h.engine = h.makeEngine({ maxWaitMs: 200 }); // a restart
    const out = await h.call('sess_response', { handle: created.handle, revision: 1 });
    expect(await neverAnswered(out, created.handle, 1)).toBe('RECOVERY_BLOCKED');
  });

  it('a rotated key still verifies genuine answers (no false refusal), a removed one does not', async () => {
    freshCell();
    const first = await h.request();
    await h.sess.keys.rotate();
    await h.sess.submitAnswer(first.humanUrl, approveAnswer);
    const ok = await h.ok('sess_response', { handle: first.handle, revision: 1, wait_ms: 500 });
    expect(ok).toMatchObject({
      state: 'answered',
      response: { verified: true, values: approveAnswer.values },
    });

    freshCell();
    const second = await h.request();
    await h.sess.submitAnswer(second.humanUrl, approveAnswer);
    const kid = h.sess.keys.activeKid();
    await h.sess.keys.rotate();
    h.sess.keys.remove(kid); // the key that signed the receipt is withdrawn from the key set
    const out = await h.call('sess_response', { handle: second.handle, revision: 1, wait_ms: 500 });
    expect(await neverAnswered(out, second.handle, 1)).toBe('VERIFICATION_FAILED');
  });
});

describe('forged Ask answers', () => {
  const askTampers: Array<[string, ReceiptTamper]> = [
    ['bad signature', { mode: 'signature' }],
    ['claim sid swapped', { mode: 'claim', claim: 'sid' }],
    ['claim adg swapped', { mode: 'claim', claim: 'adg' }],
    ["another workspace's key", { mode: 'other_workspace_key' }],
  ];
  it.each(askTampers)('%s: no forged answer is listed as verified', async (_name, tamper) => {
    freshCell();
    const created = await h.ok('sess_ask', {
      question: 'Which day suits the review?',
      fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'], required: true }],
      respondents: { max: 2 },
    });
    const started = await h.sess.startRespondent(created.humanUrl!);
    await h.sess.submitAnswer(started.humanUrl!, { action: 'submit', values: { day: 'Tue' } });
    h.sess.faults.tamperReceipt('getAsk' as LocalEndpoint, tamper, { times: Infinity });
    const out = await h.call('sess_response', { handle: created.handle, revision: 1 });
    tally.forgeries += 1;
    const listed = out.ok ? (out.interaction.ask?.answers ?? []) : [];
    if (listed.length > 0) tally.released += 1;
    expect(listed).toEqual([]);
  });
});
