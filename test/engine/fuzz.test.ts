/**
 * Random sequences of tool calls, answers, injected Sess faults and restarts against one
 * interaction (fast-check), on the local runtime. After every step the invariants the spec
 * promises must hold:
 * - every error is a code of the table, never the internal fallback;
 * - an `answered` result carries exactly the answer the person gave at that revision, verified;
 * - there is one Session, and the record agrees with it (same revision while waiting/answered,
 *   at most one ahead while a mutation is pending, completed only when Sess completed it);
 * - `blocked` and `create_unknown` never change by themselves;
 * - `sess_list` shows the record's public state once, sends nothing and never a link or an answer.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/contract/errors.js';
import {
  INTERNAL_ERROR_CODE,
  INTERNAL_ERROR_MESSAGE,
  type ListResult,
} from '../../src/core/contract/result.js';
import { isUnfinished, listStateOf } from '../../src/core/model/record.js';
import type { JsonValue } from '../../src/core/model/surface.js';
import type { LocalEndpoint } from '../../src/testing/index.js';
import { followUpSurface, type Harness, sessionIdOf, startHarness } from './harness.js';

type Fault =
  | { kind: 'none' }
  | { kind: 'status'; endpoint: LocalEndpoint; status: number; code: string }
  | { kind: 'drop' | 'commitThenDrop' | 'malformed'; endpoint: LocalEndpoint }
  | { kind: 'tamper'; endpoint: LocalEndpoint };

type Action =
  | { type: 'answer'; value: string }
  | { type: 'response'; waitMs: number }
  | { type: 'publish'; variant: 0 | 1 }
  | { type: 'complete'; wrongEvent: boolean }
  | { type: 'restart' };

const endpoints: LocalEndpoint[] = ['get', 'wait', 'publish', 'complete'];
const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Fault>({ kind: 'none' }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('status' as const),
      endpoint: fc.constantFrom(...endpoints),
      status: fc.constantFrom(500, 503, 409, 429),
      code: fc.constantFrom('internal', 'unavailable', 'conflict', 'rate_limited'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('drop' as const, 'commitThenDrop' as const, 'malformed' as const),
      endpoint: fc.constantFrom(...endpoints),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('tamper' as const),
      endpoint: fc.constantFrom('get' as const, 'wait' as const),
    }),
  },
);
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('answer' as const),
      value: fc.stringMatching(/^[a-z0-9]{1,12}$/),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ type: fc.constant('response' as const), waitMs: fc.constantFrom(0, 50) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('publish' as const),
      variant: fc.constantFrom(0 as const, 1 as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('complete' as const), wrongEvent: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant<Action>({ type: 'restart' }) },
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sess: { plan: { maxOpenSessions: 1_000 } } });
});
afterAll(async () => {
  await h?.close();
});

function inject(fault: Fault): void {
  switch (fault.kind) {
    case 'none':
      return;
    case 'status':
      h.sess.faults.fail(fault.endpoint, fault.status, { code: fault.code });
      return;
    case 'drop':
      h.sess.faults.drop(fault.endpoint);
      return;
    case 'commitThenDrop':
      h.sess.faults.commitThenDrop(fault.endpoint);
      return;
    case 'malformed':
      h.sess.faults.malformed(fault.endpoint);
      return;
    case 'tamper':
      h.sess.faults.tamperReceipt(fault.endpoint, { mode: 'signature' });
      return;
  }
}

const codes = new Set<string>(ERROR_CODES);

/**
 * `sess_list` agrees with the record (public state, revision), lists the handle once, sends
 * nothing to Sess, and never shows the link or an answer value.
 */
async function expectListed(
  handle: string,
  humanUrl: string,
  given: Map<number, Record<string, JsonValue>>,
): Promise<void> {
  const requests = JSON.stringify(h.sess.stats.requests);
  const inspected = await h.engine.call('sess_list', { handle });
  const listed = await h.engine.call('sess_list', { limit: 100 });
  expect(JSON.stringify(h.sess.stats.requests)).toBe(requests);
  const record = (await h.record(handle))!.record;
  const item = (inspected.structuredContent as unknown as ListResult).items[0]!;
  expect(item.state).toBe(listStateOf(record.state.kind));
  if ('revision' in record.state && record.state.revision !== undefined)
    expect(item.revision).toBe(record.state.revision);
  const items = (listed.structuredContent as unknown as ListResult).items;
  // A store without listPage lists no finished record.
  const listable = typeof h.store().listPage === 'function' || isUnfinished(record);
  expect(items.filter((i) => i.handle === handle)).toHaveLength(listable ? 1 : 0);
  const answers = [...given.values()].flatMap((values) => Object.values(values).map(String));
  for (const json of [JSON.stringify(inspected), JSON.stringify(listed)]) {
    expect(json).not.toContain(humanUrl);
    for (const value of answers)
      if (value.length >= 8 && !/^\d+$/.test(value)) expect(json).not.toContain(value);
  }
}

describe('engine under random calls, faults and restarts', () => {
  it('keeps the invariants after every step', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(faultArb, actionArb), { minLength: 1, maxLength: 24 }),
        async (steps) => {
          h.sess.faults.clear();
          h.engine = h.makeEngine({ maxWaitMs: 200 });
          const created = await h.request();
          const { handle, humanUrl } = created;
          const sessionId = sessionIdOf(h.sess, humanUrl);
          const given = new Map<number, Record<string, JsonValue>>();
          let revision = 1;
          let eventId: string | undefined;
          let sticky: string | undefined;
          let sessSaidInternal = false;

          for (const [fault, action] of steps) {
            h.sess.faults.clear();
            inject(fault);
            if (fault.kind === 'status' && fault.code === 'internal') sessSaidInternal = true;
            let outcome: Awaited<ReturnType<Harness['call']>> | undefined;
            switch (action.type) {
              case 'answer': {
                const view = h.sess.sessions.get(sessionId)?.view;
                if (view?.status !== 'active' || view.revision !== revision) break;
                const values: Record<string, JsonValue> =
                  view.revision === 1 ? { message: action.value } : {};
                const page = await h.sess.submitAnswer(humanUrl, {
                  action: view.revision === 1 ? 'approve' : 'push',
                  values,
                });
                if (page.status < 400) given.set(view.revision, values);
                // The agent usually asks right after: drive the flow forward.
                outcome = await h.call('sess_response', { handle, revision, wait_ms: 50 });
                break;
              }
              case 'response':
                outcome = await h.call('sess_response', { handle, revision, wait_ms: action.waitMs });
                break;
              case 'publish':
                outcome = await h.call('sess_publish', {
                  handle,
                  expected_revision: revision,
                  response_event_id: eventId ?? 'evt_none',
                  interaction:
                    action.variant === 0 ? followUpSurface : { ...followUpSurface, title: 'Other?' },
                });
                break;
              case 'complete':
                outcome = await h.call('sess_complete', {
                  handle,
                  expected_revision: revision,
                  response_event_id: action.wrongEvent ? 'evt_wrong' : (eventId ?? 'evt_none'),
                });
                break;
              case 'restart':
                h.engine = h.makeEngine({ maxWaitMs: 200 });
                break;
            }
            h.sess.faults.clear();

            if (outcome !== undefined) {
              if (!outcome.ok) {
                expect(codes.has(outcome.error.code), outcome.error.code).toBe(true);
                // The fallback for a thrown value is one fixed message; a reason of `internal`
                // is allowed only as the code Sess itself sent (an injected `internal` status).
                expect(outcome.error.message).not.toBe(INTERNAL_ERROR_MESSAGE);
                if (outcome.error.reason === 'internal') {
                  expect(outcome.error.code).not.toBe(INTERNAL_ERROR_CODE);
                  expect(sessSaidInternal, 'reason internal that Sess never sent').toBe(true);
                }
              } else {
                const i = outcome.interaction;
                if (i.state === 'answered') {
                  expect(i.response?.verified).toBe(true);
                  expect(i.response?.values).toEqual(given.get(i.revision));
                  eventId = i.response?.eventId;
                }
                if (i.revision > revision) eventId = undefined;
                revision = i.revision;
              }
            }

            const record = (await h.record(handle))?.record.state;
            const view = h.sess.sessions.get(sessionId)?.view;
            expect(record).toBeDefined();
            expect(view).toBeDefined();
            if (record === undefined || view === undefined) return;
            if (sticky !== undefined) expect(record.kind).toBe(sticky);
            if (record.kind === 'blocked') sticky = 'blocked';
            switch (record.kind) {
              case 'waiting':
              case 'answered':
                expect(view.revision).toBe(record.revision);
                if (record.kind === 'answered') {
                  const listed = view.responses.find((r) => r.revision === record.revision);
                  expect(listed?.event_id).toBe(record.response.eventId);
                }
                break;
              case 'publish_pending':
              case 'complete_pending':
                expect([record.revision, record.revision + 1]).toContain(view.revision);
                break;
              case 'completed':
                expect(view.status).toBe('completed');
                break;
            }
          }
          expect(h.sess.sessions.list().filter((s) => s.view.human_url === humanUrl)).toHaveLength(1);
          await expectListed(handle, humanUrl, given);
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
