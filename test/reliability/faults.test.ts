/**
 * The Sess fault matrix: every `SessApi` call the engine makes (create, get, wait, publish,
 * complete, createAsk, getAsk, jwks) × { 5xx, transport error, timeout, commit-then-drop,
 * malformed body, contradictory body }, injected by the local runtime and driven through the
 * engine (real client, memory store). Each cell asserts the documented code (docs/architecture.md,
 * "Error mapping") and record state, that a retryable cell changed nothing locally and succeeds
 * on retry, that a lost mutation is applied exactly once by the identical call, and that no cell
 * ever returns an `answered` result that is not the person's verified, current answer.
 *
 * One runtime for the file; each cell acts as its own profile (its own records and cap) with a
 * fresh client (so the key set is fetched again and can be faulted).
 *
 * The two wire calls the engine does not make yet, withdraw (`POST /v1/sessions/{id}/withdraw`)
 * and Ask close (`POST /v1/asks/{id}/close`), have their own matrix through the real client: each
 * × every fault kind the runtime injects, asserting the `SessApiError` kind the client reports,
 * whether Sess changed anything, and that the identical request repeated afterwards returns the
 * original outcome exactly once (one withdrawal, one close); plus a Sess that offers neither
 * (`404` / `405` while the Session and the Ask still read as open).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AskView,
  type SessApi,
  SessApiError,
  type SessApiErrorKind,
  type SessionView,
  type StdioBinding,
} from '../../src/core/contract/ports.js';
import {
  type LocalEndpoint,
  type LocalSess,
  type LocalWithdrawal,
  startLocalSess,
} from '../../src/testing/index.js';
import {
  approveAnswer,
  approveSurface,
  followUpSurface,
  type Harness,
  localClient,
  type Outcome,
  startForwardingHarness,
  switchProfile,
} from '../engine/harness.js';
import {
  FAULT_KINDS,
  WITHDRAW_FAULTS,
  WITHDRAW_WIRE_CALLS,
  type WithdrawFault,
  type WithdrawFaultName,
  type WithdrawWireCall,
} from '../support/fault-kinds.js';

/** The client's own per-request deadline in this file: a delay fault beyond it is a timeout. */
const REQUEST_TIMEOUT_MS = 500;
const DELAY_MS = 2_000;

type FaultKind = '5xx' | 'transport' | 'timeout' | 'commitThenDrop' | 'malformed' | 'contradictory';
const FAULTS: FaultKind[] = ['5xx', 'transport', 'timeout', 'commitThenDrop', 'malformed', 'contradictory'];
const ENDPOINTS: LocalEndpoint[] = [
  'create',
  'createAsk',
  'wait',
  'get',
  'jwks',
  'getAsk',
  'publish',
  'complete',
];

let h: Harness;
let current: SessApi;
const tally = { cells: 0, released: 0, lost: 0, duplicated: 0, retried: 0 };

beforeAll(async () => {
  // Every call goes to the client of the current cell (fresh key cache, short deadline).
  h = await startForwardingHarness(() => current);
});
afterAll(async () => {
  console.log(
    `[reliability] wire fault matrix: ${wireTally.cells} cells (${WIRE_CALLS.length} wire calls × ${WIRE_FAULTS.length} faults, + ${wireTally.notOffered} not offered), ${wireTally.repeated} identical repeats returned the original outcome, ${wireTally.doubled} double withdrawals or closes`,
  );
  console.log(
    `[reliability] fault matrix: ${tally.cells} cells (${ENDPOINTS.length} SessApi calls × ${FAULTS.length} faults), ${tally.retried} retried to success, ${tally.released} unverified answers released, ${tally.lost} answers lost, ${tally.duplicated} duplicated Sessions/revisions/completions`,
  );
  await h?.close();
});

let profiles = 0;
/** A fresh client and profile for one cell. */
function client(requestTimeoutMs?: number): SessApi {
  return localClient(h.sess, requestTimeoutMs === undefined ? {} : { requestTimeoutMs });
}

/** A fresh client (default deadline, so a busy CI machine never times out by accident) and profile. */
function freshCell(): StdioBinding {
  current = client();
  profiles += 1;
  switchProfile(h, `cell-${profiles}`, 'gen-1', 200);
  return h.binding;
}

function inject(endpoint: LocalEndpoint, fault: FaultKind): void {
  const f = h.sess.faults;
  switch (fault) {
    case '5xx':
      f.fail(endpoint, 500);
      return;
    case 'transport':
      f.drop(endpoint);
      return;
    case 'timeout':
      f.delay(endpoint, DELAY_MS);
      return;
    case 'commitThenDrop':
      f.commitThenDrop(endpoint);
      return;
    case 'malformed':
      f.malformed(endpoint);
      return;
    case 'contradictory':
      f.contradictory(endpoint);
      return;
  }
}

const askArgs = (max?: number) => ({
  question: 'Which day suits the review?',
  fields: [{ type: 'choice', name: 'day', label: 'Day', options: ['Mon', 'Tue'], required: true }],
  ...(max === undefined ? {} : { respondents: { max } }),
});

/** What one cell drives: a prepared handle and the call the fault hits. */
interface Scenario {
  call(): Promise<Outcome>;
  handle?: string;
  /** The answer the person gave, per revision (what an `answered` result must carry). */
  given: Map<number, unknown>;
  /** Sessions of this cell at Sess (to count duplicates). */
  sessions(): number;
}

async function prepare(endpoint: LocalEndpoint): Promise<Scenario> {
  const given = new Map<number, unknown>();
  const title = `fault cell ${profiles}`;
  const bySurface = () => h.sess.sessions.list().filter((s) => s.surfaces[0]?.title === title).length;
  const surface = { ...approveSurface, title };
  switch (endpoint) {
    case 'create':
      return { given, call: () => h.call('sess_request', { interaction: surface }), sessions: bySurface };
    case 'createAsk': {
      const question = `Fault cell ${profiles}: which day?`;
      return {
        given,
        call: () => h.call('sess_ask', { ...askArgs(2), question }),
        sessions: () => h.sess.asks.list().length,
      };
    }
    case 'wait':
    case 'get':
    case 'jwks': {
      const created = await h.request(surface);
      await h.sess.submitAnswer(created.humanUrl, approveAnswer);
      given.set(1, approveAnswer.values);
      return {
        given,
        handle: created.handle,
        call: () => h.call('sess_response', { handle: created.handle, revision: 1, wait_ms: 100 }),
        sessions: bySurface,
      };
    }
    case 'getAsk': {
      const created = await h.ok('sess_ask', askArgs(2));
      const started = await h.sess.startRespondent(created.humanUrl!);
      await h.sess.submitAnswer(started.humanUrl!, { action: 'submit', values: { day: 'Tue' } });
      given.set(1, { day: 'Tue' });
      return {
        given,
        handle: created.handle,
        call: () => h.call('sess_response', { handle: created.handle, revision: 1 }),
        sessions: () => 1,
      };
    }
    case 'publish':
    case 'complete': {
      const created = await h.request(surface);
      await h.sess.submitAnswer(created.humanUrl, approveAnswer);
      const answered = await h.ok('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 });
      const args = {
        handle: created.handle,
        expected_revision: 1,
        response_event_id: answered.response?.eventId,
        ...(endpoint === 'publish' ? { interaction: followUpSurface } : {}),
      };
      return {
        given,
        handle: created.handle,
        call: () => h.call(endpoint === 'publish' ? 'sess_publish' : 'sess_complete', args),
        sessions: bySurface,
      };
    }
    default:
      throw new Error(`no scenario for ${endpoint}`);
  }
}

/** The documented outcome of a cell. */
function expected(endpoint: LocalEndpoint, fault: FaultKind): { code: string; retryable?: boolean } {
  switch (endpoint) {
    case 'create':
    case 'createAsk':
      // Sess may have created it: recorded as create_unknown, never retried, owner resolution.
      return { code: 'CREATE_OUTCOME_UNKNOWN', retryable: false };
    case 'publish':
    case 'complete':
      return fault === 'malformed' || fault === 'contradictory'
        ? { code: 'SESS_PROTOCOL_ERROR' }
        : { code: 'OUTCOME_UNKNOWN' };
    case 'jwks':
      // A key set that cannot be fetched or read: retryable, nothing recorded.
      return { code: 'SESS_UNAVAILABLE', retryable: true };
    default:
      return fault === 'malformed' || fault === 'contradictory'
        ? { code: 'SESS_PROTOCOL_ERROR' }
        : { code: 'SESS_UNAVAILABLE', retryable: true };
  }
}

/** No result ever carries an answer that is not the person's verified answer at that revision. */
function checkRelease(out: Outcome, given: Map<number, unknown>): void {
  if (!out.ok) return;
  const i = out.interaction;
  if (i.state === 'answered') {
    const ok =
      i.response?.verified === true &&
      JSON.stringify(i.response.values) === JSON.stringify(given.get(i.revision));
    if (!ok) tally.released += 1;
    expect(i.response?.verified).toBe(true);
    expect(i.response?.values).toEqual(given.get(i.revision));
  }
  for (const a of i.ask?.answers ?? []) {
    expect(a.verified).toBe(true);
  }
}

/** The outcome that is "non-applicable": the fault cannot be expressed on that endpoint. */
const NOT_APPLICABLE = new Set<string>(['jwks/contradictory']);

describe('Sess fault matrix through the engine', () => {
  for (const endpoint of ENDPOINTS) {
    describe(endpoint, () => {
      it.each(FAULTS)(`${endpoint} × %s`, async (fault) => {
        tally.cells += 1;
        freshCell();
        h.sess.faults.clear();
        const scenario = await prepare(endpoint);
        const store = h.stores.forBinding(h.binding);
        const before = JSON.stringify(await store.listUnfinished());
        const sessionsBefore = scenario.sessions();

        // Only the faulted call runs with the short deadline (a fresh client: empty key cache).
        const normal = current;
        if (fault === 'timeout') current = client(REQUEST_TIMEOUT_MS);
        inject(endpoint, fault);
        const out = await scenario.call();
        h.sess.faults.clear();
        current = normal;
        checkRelease(out, scenario.given);

        if (NOT_APPLICABLE.has(`${endpoint}/${fault}`)) {
          // A key set has no internal relations to contradict: the fault is a no-op here.
          expect(out.ok).toBe(true);
          return;
        }
        expect(out.ok, JSON.stringify(out.ok ? out.interaction : out.error)).toBe(false);
        if (out.ok) return;
        const want = expected(endpoint, fault);
        expect(out.error.code).toBe(want.code);
        if (want.retryable !== undefined) expect(out.error.retryable).toBe(want.retryable);
        // Never a secret in the message.
        expect(out.text).not.toContain(h.sess.apiKey);

        const after = await store.listUnfinished();
        switch (endpoint) {
          case 'create':
          case 'createAsk': {
            expect(after).toHaveLength(1);
            expect(after[0]?.record.state.kind).toMatch(/^create_(intent|unknown)$/);
            const handle = after[0]!.record.handle;
            // Sticky: the next call on that handle is the same code, nothing sent.
            const requests = h.sess.stats.requests[endpoint] ?? 0;
            const again = await h.call('sess_response', { handle, revision: 1 });
            expect(!again.ok && again.error.code).toBe('CREATE_OUTCOME_UNKNOWN');
            expect(h.sess.stats.requests[endpoint] ?? 0).toBe(requests);
            // At most one Session for the handle, whatever Sess did.
            if (endpoint === 'create') expect(scenario.sessions() - sessionsBefore).toBeLessThanOrEqual(1);
            break;
          }
          case 'publish':
          case 'complete': {
            // The exact request stays saved; the identical call reconciles it, applied once.
            expect(after.find((r) => r.record.handle === scenario.handle)?.record.state.kind).toBe(
              `${endpoint}_pending`,
            );
            const retry = await scenario.call();
            checkRelease(retry, scenario.given);
            expect(retry.ok, JSON.stringify(retry.ok || retry.error)).toBe(true);
            tally.retried += 1;
            const session = h.sess.sessions
              .list()
              .find((s) => s.surfaces[0]?.title === `fault cell ${profiles}`)!;
            if (endpoint === 'publish') {
              expect(retry.ok && retry.interaction).toMatchObject({ revision: 2, state: 'waiting' });
              if (session.surfaces.length !== 2) tally.duplicated += 1;
              expect(session.surfaces).toHaveLength(2);
            } else {
              expect(retry.ok && retry.interaction).toMatchObject({ revision: 1, state: 'completed' });
              expect(session.view.status).toBe('completed');
            }
            // The person's revision-1 answer is still at Sess.
            expect(session.view.responses.map((r) => r.revision)).toContain(1);
            break;
          }
          default: {
            // A read changes nothing locally …
            expect(JSON.stringify(after)).toBe(before);
            // … and the same call succeeds once Sess behaves.
            const retry = await scenario.call();
            checkRelease(retry, scenario.given);
            expect(retry.ok, JSON.stringify(retry.ok || retry.error)).toBe(true);
            tally.retried += 1;
            if (retry.ok && endpoint !== 'getAsk') {
              if (retry.interaction.state !== 'answered') tally.lost += 1;
              expect(retry.interaction.state).toBe('answered');
            }
            if (retry.ok && endpoint === 'getAsk') {
              expect(retry.interaction.ask?.answers.map((a) => a.values)).toEqual([{ day: 'Tue' }]);
            }
          }
        }
        expect(scenario.sessions() - sessionsBefore).toBeLessThanOrEqual(1);
      });
    });
  }

  it('Sess’s own 503 unavailable on create: nothing done, no record, retryable, the retry creates one Session', async () => {
    tally.cells += 1;
    freshCell();
    const scenario = await prepare('create');
    h.sess.faults.fail('create', 503, { code: 'unavailable' });
    const out = await scenario.call();
    expect(!out.ok && out.error).toMatchObject({ code: 'SESS_UNAVAILABLE', retryable: true });
    expect(await h.stores.forBinding(h.binding).listUnfinished()).toHaveLength(0);
    expect(scenario.sessions()).toBe(0);
    const retry = await scenario.call();
    expect(retry.ok).toBe(true);
    tally.retried += 1;
    expect(scenario.sessions()).toBe(1);
  });

  it('a committed mutation answered with a 500 (commit-then-fail) is replayed, not repeated', async () => {
    for (const endpoint of ['publish', 'complete'] as const) {
      tally.cells += 1;
      freshCell();
      const scenario = await prepare(endpoint);
      h.sess.faults.commitThenFail(endpoint, 500);
      const out = await scenario.call();
      expect(!out.ok && out.error.code).toBe('OUTCOME_UNKNOWN');
      const retry = await scenario.call();
      expect(retry.ok).toBe(true);
      tally.retried += 1;
      const session = h.sess.sessions.list().find((s) => s.surfaces[0]?.title === `fault cell ${profiles}`)!;
      if (endpoint === 'publish') expect(session.surfaces).toHaveLength(2);
      else expect(session.view.status).toBe('completed');
    }
  });
});

// -----------------------------------------------------------------------------------------------
// The withdraw and Ask close wire calls × every fault, through the real client

const WIRE_CALLS = WITHDRAW_WIRE_CALLS;
type WireCall = WithdrawWireCall;

/** One row: a fault, whether Sess made the change, and what the client must report for it. */
interface WireFaultRow extends WithdrawFault {
  /** The error the client throws, or `ok` when the call resolves with the outcome. */
  want: { kind: SessApiErrorKind; status?: number; apiCode?: string } | 'ok';
}

/** What the client reports under each fault of {@link WITHDRAW_FAULTS}. */
const WIRE_WANTS: Record<WithdrawFaultName, WireFaultRow['want']> = {
  '500': { kind: 'api', status: 500, apiCode: 'internal' },
  '503 unavailable': { kind: 'api', status: 503, apiCode: 'unavailable' },
  '429 rate limited': { kind: 'api', status: 429, apiCode: 'rate_limited' },
  'transport error': { kind: 'unknown_outcome' },
  'delay within the deadline': 'ok',
  // A mutation out of time is an unknown outcome, not a plain timeout: it may have taken effect.
  'timeout (delay past the deadline)': { kind: 'unknown_outcome' },
  'commit-then-drop': { kind: 'unknown_outcome' },
  'commit-then-500': { kind: 'api', status: 500, apiCode: 'internal' },
  'malformed body': { kind: 'protocol' },
  'contradictory body': { kind: 'protocol' },
  // The answer carries no receipt to verify (withdraw) or one the client passes on unverified
  // (close): the call resolves; the tampered receipt is checked below never to verify.
  'tampered receipts': 'ok',
  'held on arrival, released': 'ok',
  'held after the commit, released': 'ok',
};

const WIRE_FAULTS: readonly WireFaultRow[] = WITHDRAW_FAULTS.map((row) => ({
  ...row,
  want: WIRE_WANTS[row.name],
}));

const wireTally = { cells: 0, repeated: 0, doubled: 0, notOffered: 0 };

/** What one cell of a wire call drives and checks. */
interface WireScenario {
  /** The call under the fault, and its identical repeat (same idempotency key, same body). */
  call(client: SessApi): Promise<SessionView | AskView>;
  /** The same change under a new key: refused once it took effect. */
  again(client: SessApi): Promise<unknown>;
  /** Whether Sess has the change now (read without a counted request). */
  changed(): boolean;
  /** How many withdrawals or closes the workspace counted. */
  count(): number;
  /** The outcome, as the call or its repeat must return it. */
  check(out: SessionView | AskView): Promise<void>;
}

async function wireScenario(sess: LocalSess, endpoint: WireCall, client: SessApi): Promise<WireScenario> {
  const stamp = `${endpoint} ${wireTally.cells} ${crypto.randomUUID()}`;
  if (endpoint === 'withdraw') {
    const view = await client.createSession({
      surface: { ...approveSurface, title: `wire ${stamp}` },
      idempotencyKey: `c-${crypto.randomUUID()}`,
    });
    const input = {
      expectedRevision: 1,
      reason: 'Plans changed',
      idempotencyKey: `w-${crypto.randomUUID()}`,
    };
    return {
      call: (c) => c.withdrawSession(view.sessionId, input),
      again: (c) =>
        c.withdrawSession(view.sessionId, { ...input, idempotencyKey: `w-${crypto.randomUUID()}` }),
      changed: () => sess.sessions.get(view.sessionId)?.view.status === 'withdrawn',
      count: () => sess.stats.of().sessionsWithdrawn,
      async check(out) {
        expect(out).toMatchObject({
          sessionId: view.sessionId,
          revision: 1,
          status: 'withdrawn',
          responses: [],
        });
        expect(sess.sessions.get(view.sessionId)?.view).toMatchObject({ revision: 1, status: 'withdrawn' });
      },
    };
  }
  // An Ask with one answered respondent and one whose page is still open.
  const surface = { ...approveSurface, title: `wire ${stamp}` };
  const ask = await client.createAsk({
    surface,
    respondents: { max: 3 },
    idempotencyKey: `a-${crypto.randomUUID()}`,
  });
  const answered = await sess.startRespondent(ask.humanUrl);
  expect((await sess.submitAnswer(answered.humanUrl!, approveAnswer)).status).toBe(303);
  await sess.startRespondent(ask.humanUrl);
  const input = { reason: 'Enough answers', idempotencyKey: `x-${crypto.randomUUID()}` };
  return {
    call: (c) => c.closeAsk(ask.askId, input),
    again: (c) => c.closeAsk(ask.askId, { ...input, idempotencyKey: `x-${crypto.randomUUID()}` }),
    changed: () => sess.asks.get(ask.askId)?.status === 'closed',
    count: () => sess.stats.of().asksClosed,
    async check(out) {
      const closed = out as AskView;
      expect(closed).toMatchObject({ askId: ask.askId, status: 'closed', started: 2, answered: 1 });
      expect(closed.respondents.map((r) => r.status)).toEqual(['answered', 'withdrawn']);
      // The answer given before the close stays, and its receipt verifies.
      const [first] = closed.respondents;
      expect(first?.response?.answer).toEqual(approveAnswer);
      const event = first!.response!;
      const proof = {
        sessionId: first!.sessionId,
        revision: 1,
        eventId: event.eventId,
        surface,
        answer: event.answer,
      };
      expect((await client.verifyResponse({ ...proof, receipt: event.receipt })).sessionId).toBe(
        first!.sessionId,
      );
    },
  };
}

/** The error a promise rejects with (fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<SessApiError> {
  const settled = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  expect(settled.ok, 'expected the call to fail').toBe(false);
  expect(settled.ok || settled.error).toBeInstanceOf(SessApiError);
  return (settled as { error: SessApiError }).error;
}

describe('withdraw and Ask close wire calls × every fault (real client)', () => {
  it('has a row for every fault kind the runtime injects', () => {
    expect(new Set(WIRE_FAULTS.map((r) => r.fault.kind))).toEqual(new Set(Object.keys(FAULT_KINDS)));
  });

  for (const endpoint of WIRE_CALLS) {
    describe(endpoint, () => {
      it.each(WIRE_FAULTS)(`${endpoint} × $name`, async (row) => {
        wireTally.cells += 1;
        h.sess.faults.clear();
        const client = localClient(h.sess);
        const scenario = await wireScenario(h.sess, endpoint, client);
        const counted = scenario.count();

        const faulted =
          row.requestTimeoutMs === undefined
            ? client
            : localClient(h.sess, { requestTimeoutMs: row.requestTimeoutMs });
        h.sess.faults.inject(endpoint, row.fault);
        const first = scenario.call(faulted);
        if (row.want === 'ok') {
          const out = await first;
          if (row.fault.kind === 'tamper_receipt' && endpoint === 'closeAsk') {
            // Passed on as Sess sent it: a receipt that must never verify.
            const r = (out as AskView).respondents[0]!;
            const event = r.response!;
            const s = h.sess.sessions.get(r.sessionId)!;
            const err = await rejection(
              client.verifyResponse({
                sessionId: r.sessionId,
                revision: 1,
                eventId: event.eventId,
                surface: s.surfaces[0]!,
                answer: event.answer,
                receipt: event.receipt,
              }),
            );
            expect(err).toMatchObject({ kind: 'verification', reason: 'bad_signature' });
          } else {
            await scenario.check(out);
          }
        } else {
          const error = await rejection(first);
          expect({ kind: error.kind, status: error.status, apiCode: error.apiCode }).toEqual({
            kind: row.want.kind,
            status: row.want.status,
            apiCode: row.want.apiCode,
          });
          expect(error.message).not.toContain(h.sess.apiKey);
        }
        expect(h.sess.faults.pending(endpoint)).toBe(0);
        // Whether Sess made the change is exactly what the row says.
        expect(scenario.changed()).toBe(row.committed);
        expect(scenario.count() - counted).toBe(row.committed ? 1 : 0);

        // The identical request, repeated (twice): the original outcome, applied once.
        for (let i = 0; i < 2; i++) {
          await scenario.check(await scenario.call(client));
          wireTally.repeated += 1;
        }
        if (scenario.count() - counted !== 1) wireTally.doubled += 1;
        expect(scenario.count() - counted).toBe(1);
        // The same change under a new key is refused: there is nothing left to withdraw or close.
        expect(await rejection(scenario.again(client))).toMatchObject({
          kind: 'api',
          status: 409,
          apiCode: 'conflict',
        });
        expect(scenario.count() - counted).toBe(1);
      });
    });
  }

  it.each<[LocalWithdrawal, number, string]>([
    ['not_offered', 404, 'not_found'],
    ['method_not_allowed', 405, 'method_not_allowed'],
  ])(
    'a Sess without withdrawal (%s): both calls are api %i, and GET shows the Session and the Ask open',
    async (withdrawal, status, apiCode) => {
      const old = await startLocalSess({ withdrawal });
      try {
        for (const endpoint of WIRE_CALLS) {
          wireTally.notOffered += 1;
          const client = localClient(old);
          const scenario = await wireScenario(old, endpoint, client);
          for (let i = 0; i < 2; i++) {
            expect(await rejection(scenario.call(client))).toMatchObject({ kind: 'api', status, apiCode });
          }
          expect(scenario.changed()).toBe(false);
          expect(scenario.count()).toBe(0);
        }
        const [session] = old.sessions.list().filter((s) => s.ask === undefined);
        expect((await localClient(old).getSession(session!.view.id)).status).toBe('active');
        const [ask] = old.asks.list();
        expect((await localClient(old).getAsk(ask!.id)).status).toBe('open');
      } finally {
        await old.close();
      }
    },
  );
});
