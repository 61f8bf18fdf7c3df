/**
 * The state machine of an interaction record, as a table: each legal (state, event) pair and what
 * it leads to, and that every other pair is refused. Pure: no Sess, no store.
 */
import { describe, expect, it } from 'vitest';
import type { InteractionEvent } from '../../src/core/engine/transitions.js';
import { transition } from '../../src/core/engine/transitions.js';
import type { AskView, SessionView } from '../../src/core/ports.js';
import type { InteractionState, VerifiedResponse } from '../../src/core/record.js';
import type { Surface } from '../../src/core/surface.js';

const surface: Surface = {
  mode: 'interactive',
  title: 'Approve?',
  source: { kind: 'sess_surface', components: [] },
  actions: [{ id: 'ok', label: 'OK', intent: 'approve' }],
};
const next: Surface = { ...surface, title: 'Next?' };
const session = {
  sessionId: 'ses_1',
  workspaceId: 'ws_1',
  humanUrl: 'https://sess.test/s/x',
  expiresAt: '2030-01-01T00:00:00.000Z',
};
const view = (revision: number, status: SessionView['status'] = 'active'): SessionView => ({
  ...session,
  humanUrl: `https://sess.test/s/r${revision}`,
  revision,
  status,
  responses: [],
});
const askView: AskView = {
  askId: 'ask_1',
  workspaceId: 'ws_1',
  status: 'open',
  humanUrl: 'https://sess.test/a/x',
  expiresAt: '2030-01-01T00:00:00.000Z',
  max: 3,
  started: 0,
  answered: 0,
  respondents: [],
};
const response: VerifiedResponse = {
  eventId: 'evt_1',
  revision: 1,
  answer: { action: 'ok', values: {} },
  submittedAt: '2030-01-01T00:00:00.000Z',
  receipt: 'r.e.c',
  keyId: 'k1',
  verifiedAt: '2030-01-01T00:00:01.000Z',
};

const S = {
  intent: { kind: 'create_intent', request: { idempotencyKey: 'k', surface } },
  askIntent: { kind: 'create_intent', request: { idempotencyKey: 'k', surface, respondents: { max: 3 } } },
  unknown: { kind: 'create_unknown', request: { idempotencyKey: 'k', surface }, reason: 'timeout' },
  waiting: { kind: 'waiting', session, revision: 1, surface },
  answered: { kind: 'answered', session, revision: 1, surface, response },
  publishPending: {
    kind: 'publish_pending',
    session,
    revision: 1,
    surface,
    response,
    request: { expectedRevision: 1, responseEventId: 'evt_1', surface: next, idempotencyKey: 'p' },
  },
  completePending: {
    kind: 'complete_pending',
    session,
    revision: 1,
    surface,
    response,
    request: { expectedRevision: 1, responseEventId: 'evt_1', idempotencyKey: 'c' },
  },
  completed: {
    kind: 'completed',
    sessionId: 'ses_1',
    revision: 1,
    lastMutation: { kind: 'complete', expectedRevision: 1, responseEventId: 'evt_1' },
  },
  expired: { kind: 'expired', sessionId: 'ses_1', revision: 1 },
  blocked: { kind: 'blocked', code: 'RECOVERY_BLOCKED', reason: 'session_moved_on', previous: 'answered' },
  askOpen: {
    kind: 'ask_open',
    askId: 'ask_1',
    workspaceId: 'ws_1',
    humanUrl: 'https://sess.test/a/x',
    expiresAt: '2030-01-01T00:00:00.000Z',
    surface,
    max: 3,
  },
  askClosed: { kind: 'ask_closed', askId: 'ask_1' },
} satisfies Record<string, InteractionState>;

const E = {
  created: { type: 'created', view: view(1) },
  askCreated: { type: 'ask_created', view: askView },
  createLost: { type: 'create_lost', reason: 'timeout' },
  released: { type: 'released', response },
  expired: { type: 'expired' },
  publishSaved: {
    type: 'publish_saved',
    request: { expectedRevision: 1, responseEventId: 'evt_1', surface: next, idempotencyKey: 'p' },
  },
  completeSaved: {
    type: 'complete_saved',
    request: { expectedRevision: 1, responseEventId: 'evt_1', idempotencyKey: 'c' },
  },
  published: { type: 'published', view: view(2), surfaceDigest: 'sha256:x' },
  completed: { type: 'completed', view: view(1, 'completed') },
  askClosed: { type: 'ask_closed' },
  blocked: { type: 'blocked', code: 'MUTATION_REJECTED', reason: 'conflict' },
} satisfies Record<string, InteractionEvent>;

type SName = keyof typeof S;
type EName = keyof typeof E;

/** Every legal pair and the kind it leads to. */
const LEGAL: Array<[SName, EName, InteractionState['kind']]> = [
  ['intent', 'created', 'waiting'],
  ['askIntent', 'askCreated', 'ask_open'],
  ['intent', 'createLost', 'create_unknown'],
  ['askIntent', 'createLost', 'create_unknown'],
  ['waiting', 'released', 'answered'],
  ['waiting', 'expired', 'expired'],
  ['answered', 'publishSaved', 'publish_pending'],
  ['answered', 'completeSaved', 'complete_pending'],
  ['publishPending', 'published', 'waiting'],
  ['completePending', 'completed', 'completed'],
  ['askOpen', 'askClosed', 'ask_closed'],
  ['waiting', 'blocked', 'blocked'],
  ['answered', 'blocked', 'blocked'],
  ['publishPending', 'blocked', 'blocked'],
  ['completePending', 'blocked', 'blocked'],
  ['askOpen', 'blocked', 'blocked'],
];

describe('transition', () => {
  it.each(LEGAL)('%s --%s--> %s', (s, e, kind) => {
    expect(transition(S[s], E[e]).kind).toBe(kind);
  });

  const legal = new Set(LEGAL.map(([s, e]) => `${s}/${e}`));
  const illegal = (Object.keys(S) as SName[]).flatMap((s) =>
    (Object.keys(E) as EName[]).filter((e) => !legal.has(`${s}/${e}`)).map((e) => [s, e] as const),
  );
  it.each(illegal)('refuses %s --%s', (s, e) => {
    expect(() => transition(S[s], E[e])).toThrow(
      expect.objectContaining({ code: 'INVALID_STATE', reason: 'illegal_transition' }),
    );
  });

  it('never moves out of blocked, create_unknown or a final state', () => {
    for (const s of ['blocked', 'unknown', 'completed', 'expired', 'askClosed'] as const) {
      for (const e of Object.keys(E) as EName[]) expect(() => transition(S[s], E[e])).toThrow();
    }
  });

  it('publish moves to the next revision with the new Surface, the new link and the confirmed mutation', () => {
    const out = transition(S.publishPending, E.published);
    expect(out).toEqual({
      kind: 'waiting',
      session: { ...session, humanUrl: 'https://sess.test/s/r2' },
      revision: 2,
      surface: next,
      lastMutation: {
        kind: 'publish',
        expectedRevision: 1,
        responseEventId: 'evt_1',
        surfaceDigest: 'sha256:x',
      },
    });
    expect(JSON.stringify(out)).not.toContain('r.e.c');
  });

  it('refuses a publish confirmation at any revision but the next one', () => {
    expect(() => transition(S.publishPending, { ...E.published, view: view(3) })).toThrow();
  });

  it('completion drops the link, the Surface and the answer data', () => {
    const out = transition(S.completePending, E.completed);
    expect(out).toEqual({
      kind: 'completed',
      sessionId: 'ses_1',
      revision: 1,
      lastMutation: { kind: 'complete', expectedRevision: 1, responseEventId: 'evt_1' },
    });
    const text = JSON.stringify(out);
    for (const secret of ['https://', 'r.e.c', '"answer"', 'Approve?']) expect(text).not.toContain(secret);
  });

  it('closing an Ask drops its link', () => {
    const out = transition(S.askOpen, E.askClosed);
    expect(out.kind).toBe('ask_closed');
    expect(JSON.stringify(out)).not.toContain('https://');
  });

  it('a saved mutation must name the answer the record holds', () => {
    expect(() =>
      transition(S.answered, {
        ...E.publishSaved,
        request: { ...E.publishSaved.request, responseEventId: 'evt_x' },
      }),
    ).toThrow();
    expect(() =>
      transition(S.answered, {
        ...E.completeSaved,
        request: { ...E.completeSaved.request, expectedRevision: 2 },
      }),
    ).toThrow();
  });

  it('a released answer must be at the waiting revision', () => {
    expect(() =>
      transition(S.waiting, { type: 'released', response: { ...response, revision: 2 } }),
    ).toThrow();
  });

  it('blocked records keep the Session id, revision and previous state for the owner', () => {
    expect(transition(S.answered, E.blocked)).toEqual({
      kind: 'blocked',
      code: 'MUTATION_REJECTED',
      reason: 'conflict',
      sessionId: 'ses_1',
      revision: 1,
      previous: 'answered',
    });
  });
});
