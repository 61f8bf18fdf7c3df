/**
 * The state machine of an interaction record, as a table: each legal (state, event) pair and what
 * it leads to, and that every other pair is refused. Pure: no Sess, no store.
 */
import { describe, expect, it } from 'vitest';
import type { AskView, SessionView } from '../../src/core/contract/ports.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionState,
  type VerifiedResponse,
} from '../../src/core/model/record.js';
import type { Surface } from '../../src/core/model/surface.js';
import type { InteractionEvent } from '../../src/core/model/transitions.js';
import { transition } from '../../src/core/model/transitions.js';

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

/** The confirmed publish of revision 1 that the states after it remember. */
const publishedMutation = {
  kind: 'publish',
  expectedRevision: 1,
  responseEventId: 'evt_1',
  surfaceDigest: 'sha256:x',
} as const;

/** The open Ask of the states that still hold it. */
const openAsk = {
  askId: 'ask_1',
  workspaceId: 'ws_1',
  humanUrl: 'https://sess.test/a/x',
  expiresAt: '2030-01-01T00:00:00.000Z',
  surface,
  max: 3,
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
  askOpen: { kind: 'ask_open', ...openAsk },
  askClosed: { kind: 'ask_closed', askId: 'ask_1' },
  withdrawPending: {
    kind: 'withdraw_pending',
    session,
    revision: 1,
    surface,
    request: { expectedRevision: 1, reason: 'Not needed.', idempotencyKey: 'w' },
  },
  withdrawPendingAfterPublish: {
    kind: 'withdraw_pending',
    session,
    revision: 2,
    surface: next,
    request: { expectedRevision: 2, idempotencyKey: 'w2' },
    lastMutation: publishedMutation,
  },
  waitingAfterPublish: {
    kind: 'waiting',
    session,
    revision: 2,
    surface: next,
    lastMutation: publishedMutation,
  },
  withdrawn: {
    kind: 'withdrawn',
    sessionId: 'ses_1',
    revision: 1,
    withdrawal: { expectedRevision: 1, reasonDigest: 'sha256:r' },
  },
  askClosePending: {
    kind: 'ask_close_pending',
    ...openAsk,
    request: { reason: 'Not needed.', idempotencyKey: 'a' },
  },
  askClosedWithdrawn: {
    kind: 'ask_closed',
    askId: 'ask_1',
    workspaceId: 'ws_1',
    surface,
    withdrawal: { expectedRevision: 1, reasonDigest: 'sha256:r' },
  },
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
  withdrawSaved: {
    type: 'withdraw_saved',
    request: { expectedRevision: 1, reason: 'Not needed.', idempotencyKey: 'w' },
  },
  withdrawSavedAt2: { type: 'withdraw_saved', request: { expectedRevision: 2, idempotencyKey: 'w2' } },
  withdrawn: { type: 'withdrawn', view: view(1, 'withdrawn'), reasonDigest: 'sha256:r' },
  withdrawnAt2: { type: 'withdrawn', view: view(2, 'withdrawn'), reasonDigest: 'sha256:r2' },
  withdrawRefused: { type: 'withdraw_refused' },
  askCloseSaved: { type: 'ask_close_saved', request: { reason: 'Not needed.', idempotencyKey: 'a' } },
  askWithdrawn: { type: 'ask_withdrawn', reasonDigest: 'sha256:r' },
  askCloseRefused: { type: 'ask_close_refused' },
} satisfies Record<string, InteractionEvent>;

type SName = keyof typeof S;
type EName = keyof typeof E;

const blockedFrom = (previous: InteractionState['kind'], revision?: number): InteractionState => ({
  kind: 'blocked',
  code: 'MUTATION_REJECTED',
  reason: 'conflict',
  ...(revision === undefined ? {} : { sessionId: 'ses_1', revision }),
  previous,
});

const withdrawnState = (revision: number, reasonDigest: string): InteractionState => ({
  kind: 'withdrawn',
  sessionId: 'ses_1',
  revision,
  withdrawal: { expectedRevision: revision, reasonDigest },
});

/** Every legal pair and the exact state it leads to. */
const LEGAL: Array<[SName, EName, InteractionState]> = [
  [
    'intent',
    'created',
    { kind: 'waiting', session: { ...session, humanUrl: 'https://sess.test/s/r1' }, revision: 1, surface },
  ],
  ['askIntent', 'askCreated', { ...S.askOpen }],
  ['intent', 'createLost', { kind: 'create_unknown', request: S.intent.request, reason: 'timeout' }],
  ['askIntent', 'createLost', { kind: 'create_unknown', request: S.askIntent.request, reason: 'timeout' }],
  ['waiting', 'released', S.answered],
  ['waiting', 'expired', S.expired],
  ['answered', 'publishSaved', S.publishPending],
  ['answered', 'completeSaved', S.completePending],
  [
    'publishPending',
    'published',
    { ...S.waitingAfterPublish, session: { ...session, humanUrl: 'https://sess.test/s/r2' } },
  ],
  ['completePending', 'completed', S.completed],
  ['askOpen', 'askClosed', { kind: 'ask_closed', askId: 'ask_1', workspaceId: 'ws_1', surface }],
  ['waiting', 'blocked', blockedFrom('waiting', 1)],
  ['answered', 'blocked', blockedFrom('answered', 1)],
  ['publishPending', 'blocked', blockedFrom('publish_pending', 1)],
  ['completePending', 'blocked', blockedFrom('complete_pending', 1)],
  ['askOpen', 'blocked', blockedFrom('ask_open')],
  ['waitingAfterPublish', 'expired', { kind: 'expired', sessionId: 'ses_1', revision: 2 }],
  ['waitingAfterPublish', 'blocked', blockedFrom('waiting', 2)],
  // sess_withdraw of a Session
  ['waiting', 'withdrawSaved', S.withdrawPending],
  ['waitingAfterPublish', 'withdrawSavedAt2', S.withdrawPendingAfterPublish],
  ['withdrawPending', 'withdrawn', withdrawnState(1, 'sha256:r')],
  ['withdrawPendingAfterPublish', 'withdrawnAt2', withdrawnState(2, 'sha256:r2')],
  ['withdrawPending', 'withdrawRefused', S.waiting],
  ['withdrawPendingAfterPublish', 'withdrawRefused', S.waitingAfterPublish],
  ['withdrawPending', 'blocked', blockedFrom('withdraw_pending', 1)],
  ['withdrawPendingAfterPublish', 'blocked', blockedFrom('withdraw_pending', 2)],
  // sess_withdraw of an Ask (its close)
  ['askOpen', 'askCloseSaved', S.askClosePending],
  ['askClosePending', 'askWithdrawn', S.askClosedWithdrawn],
  ['askClosePending', 'askCloseRefused', S.askOpen],
  ['askClosePending', 'blocked', blockedFrom('ask_close_pending')],
];

describe('transition', () => {
  it('the table names every state kind and every event type', () => {
    const kinds = new Set(Object.values(S).map((state) => state.kind));
    expect([...kinds].sort()).toEqual([...INTERACTION_STATE_KINDS].sort());
    const types: Record<InteractionEvent['type'], true> = {
      created: true,
      ask_created: true,
      create_lost: true,
      released: true,
      expired: true,
      publish_saved: true,
      complete_saved: true,
      published: true,
      completed: true,
      ask_closed: true,
      blocked: true,
      withdraw_saved: true,
      withdrawn: true,
      withdraw_refused: true,
      ask_close_saved: true,
      ask_withdrawn: true,
      ask_close_refused: true,
    };
    expect([...new Set(Object.values(E).map((event) => event.type))].sort()).toEqual(
      Object.keys(types).sort(),
    );
  });

  it.each(LEGAL)('%s --%s--> the exact next state', (s, e, expected) => {
    const state = structuredClone(S[s]);
    expect(transition(S[s], E[e])).toEqual(expected);
    // Pure: the input state is not changed.
    expect(S[s]).toEqual(state);
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
    for (const s of [
      'blocked',
      'unknown',
      'completed',
      'expired',
      'askClosed',
      'withdrawn',
      'askClosedWithdrawn',
    ] as const) {
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

  it('a withdraw drops the link, the Surface and the saved reason, keeping only the reason digest', () => {
    const text = JSON.stringify(transition(S.withdrawPending, E.withdrawn));
    for (const secret of ['https://', 'Not needed.', 'Approve?', '"w"']) expect(text).not.toContain(secret);
  });

  it('a saved withdraw must name the current revision, and its confirmation that revision', () => {
    expect(() =>
      transition(S.waiting, {
        type: 'withdraw_saved',
        request: { expectedRevision: 2, idempotencyKey: 'w' },
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_STATE', reason: 'illegal_transition' }));
    expect(() => transition(S.withdrawPending, E.withdrawnAt2)).toThrow(
      expect.objectContaining({ code: 'INVALID_STATE', reason: 'illegal_transition' }),
    );
    expect(() =>
      transition(S.withdrawPending, {
        ...E.withdrawn,
        view: { ...view(1, 'withdrawn'), sessionId: 'ses_other' },
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_STATE', reason: 'illegal_transition' }));
  });

  it('a closed Ask keeps its workspace and Surface so the answers given stay readable', () => {
    const out = transition(S.askClosePending, E.askWithdrawn);
    expect(out).toMatchObject({ kind: 'ask_closed', workspaceId: 'ws_1', surface });
    expect(JSON.stringify(out)).not.toContain('https://');
  });
});
