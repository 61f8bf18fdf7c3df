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
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessApi, StdioBinding } from '../../src/core/ports.js';
import type { LocalEndpoint } from '../../src/testing/index.js';
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
