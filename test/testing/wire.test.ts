/**
 * The wire module's own rules: the consistency rules of Session and Ask views (table-driven, one
 * row per rule), the mapping onto the core's views, and Sess's Surface rules as the runtime
 * answers them (pointer, limit, length).
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Surface } from '../../src/core/model/surface.js';
import { toAskView, toSessionView } from '../../src/sess/decode.js';
import { askViewProblem, sessionViewProblem } from '../../src/sess/view-checks.js';
import {
  readAskView,
  readSessionView,
  type WireAskView,
  WireRefusal,
  type WireSessionView,
} from '../../src/sess/wire-reader.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { call, newKey, sampleSurface } from './helpers.js';

const T = '2026-11-30T10:00:00.000Z';
const response = (revision: number, id = `evt_${revision}`) => ({
  event_id: id,
  revision,
  answer: { action: 'approve', values: { a: 1 } },
  submitted_at: T,
  receipt: 'e30.e30.sig',
});
const session = (patch: Partial<WireSessionView>): WireSessionView => ({
  id: 'ses_1',
  workspace_id: 'ws_1',
  revision: 2,
  status: 'answered',
  human_url: 'https://sess.example/s/tok',
  expires_at: T,
  extendable_until: '2026-12-01T10:00:00.000Z',
  responses: [response(1), response(2)],
  ...patch,
});

describe('sessionViewProblem', () => {
  it.each<[string, Partial<WireSessionView>]>([
    ['answered at revision', {}],
    ['active after a publish', { status: 'active', responses: [response(1)] }],
    ['completed', { status: 'completed' }],
    ['lapsed', { status: 'lapsed', responses: [response(1)] }],
    ['expired', { status: 'expired', responses: [response(1)], extendable_until: undefined }],
    ['fresh', { revision: 1, status: 'active', responses: [] }],
  ])('accepts a consistent view: %s', (_name, patch) => {
    expect(sessionViewProblem(session(patch))).toBeUndefined();
  });

  it.each<[string, Partial<WireSessionView>]>([
    ['a response above the revision', { revision: 1, status: 'answered' }],
    ['two responses at one revision', { responses: [response(1), response(2), response(2, 'evt_x')] }],
    ['responses out of order', { responses: [response(2), response(1)] }],
    ['a revision below without an answer', { status: 'active', responses: [] }],
    ['a repeated event id', { responses: [response(1, 'evt_same'), response(2, 'evt_same')] }],
    ['active with an answer at the revision', { status: 'active' }],
    ['answered without an answer at the revision', { status: 'answered', responses: [response(1)] }],
    ['completed without an answer at the revision', { status: 'completed', responses: [response(1)] }],
    ['expired with an answer at the revision', { status: 'expired' }],
    ['lapsed with an answer at the revision', { status: 'lapsed' }],
    [
      'lapsed without extendable_until',
      { status: 'lapsed', responses: [response(1)], extendable_until: undefined },
    ],
    ['extendable_until before expires_at', { extendable_until: '2026-11-30T09:00:00.000Z' }],
  ])('refuses %s', (_name, patch) => {
    expect(sessionViewProblem(session(patch))).toEqual(expect.any(String));
  });

  it('maps onto the core SessionView', () => {
    expect(toSessionView(session({}))).toEqual({
      sessionId: 'ses_1',
      workspaceId: 'ws_1',
      revision: 2,
      status: 'answered',
      humanUrl: 'https://sess.example/s/tok',
      expiresAt: T,
      extendableUntil: '2026-12-01T10:00:00.000Z',
      responses: [1, 2].map((r) => ({
        eventId: `evt_${r}`,
        revision: r,
        answer: { action: 'approve', values: { a: 1 } },
        submittedAt: T,
        receipt: 'e30.e30.sig',
      })),
    });
  });

  it('reader: refuses wrong types, bad timestamps and relative links; ignores unknown members', () => {
    const refused = (view: unknown) => readSessionView(view) instanceof WireRefusal;
    expect(refused({ ...session({}), extra: 1 })).toBe(false);
    expect(refused(session({ revision: 0 }))).toBe(true);
    expect(refused(session({ expires_at: '2026-11-30 10:00' }))).toBe(true);
    expect(refused(session({ human_url: '/s/tok' }))).toBe(true);
    expect(refused(session({ human_url: 'javascript:alert(1)' }))).toBe(true);
    // biome-ignore lint/suspicious/noExplicitAny: an invalid status on purpose
    expect(refused(session({ status: 'done' as any }))).toBe(true);
  });
});

describe('askViewProblem', () => {
  const ask = (patch: Partial<WireAskView>): WireAskView => ({
    id: 'ask_1',
    workspace_id: 'ws_1',
    status: 'open',
    human_url: 'https://sess.example/a/tok',
    expires_at: T,
    max: 3,
    started: 2,
    answered: 1,
    respondents: [
      { id: 'rsp_1', session_id: 'ses_1', status: 'answered', response: response(1) },
      { id: 'rsp_2', session_id: 'ses_2', status: 'started', name: 'Ana' },
    ],
    ...patch,
  });
  it('accepts a consistent Ask and maps it', () => {
    expect(askViewProblem(ask({}))).toBeUndefined();
    const mapped = toAskView(ask({}));
    expect(mapped.respondents[1]).toEqual({
      respondentId: 'rsp_2',
      sessionId: 'ses_2',
      status: 'started',
      name: 'Ana',
    });
    expect(mapped.respondents[0]!.response!.eventId).toBe('evt_1');
  });
  it.each<[string, Partial<WireAskView>]>([
    ['started ≠ respondents', { started: 3 }],
    ['answered ≠ answered respondents', { answered: 2 }],
    ['more than max', { max: 1 }],
    [
      'answered without a response',
      {
        respondents: [
          { id: 'rsp_1', session_id: 'ses_1', status: 'answered' },
          { id: 'rsp_2', session_id: 'ses_2', status: 'started' },
        ],
      },
    ],
    [
      'a response above revision 1',
      {
        respondents: [
          { id: 'rsp_1', session_id: 'ses_1', status: 'answered', response: response(2) },
          { id: 'rsp_2', session_id: 'ses_2', status: 'started' },
        ],
      },
    ],
    [
      'a repeated respondent',
      {
        respondents: [
          { id: 'rsp_1', session_id: 'ses_1', status: 'answered', response: response(1) },
          { id: 'rsp_1', session_id: 'ses_2', status: 'started' },
        ],
      },
    ],
  ])('refuses %s', (_name, patch) => {
    const view = ask(patch);
    expect(readAskView(view)).not.toBeInstanceOf(WireRefusal);
    expect(askViewProblem(view)).toEqual(expect.any(String));
  });
});

describe('Sess Surface rules on the wire', () => {
  let sess: LocalSess;
  beforeAll(async () => {
    sess = await startLocalSess();
  });
  afterAll(async () => {
    await sess.close();
  });

  const withComponent = (component: unknown): Surface => {
    const s = sampleSurface();
    (s.source.components as unknown[]).push(component);
    return s;
  };
  const cases: [string, Surface, { field: string; limit?: number; length?: number }][] = [
    [
      'description',
      { ...sampleSurface(), description: 'd'.repeat(281) },
      { field: '/interaction/description', limit: 280, length: 281 },
    ],
    [
      'heading',
      withComponent({ type: 'heading', text: 'h'.repeat(61) }),
      { field: '/interaction/source/components/3/text', limit: 60, length: 61 },
    ],
    [
      'text',
      withComponent({ type: 'text', text: 't'.repeat(4001) }),
      { field: '/interaction/source/components/3/text', limit: 4000, length: 4001 },
    ],
    [
      'record caption',
      withComponent({ type: 'record', label: 'c'.repeat(201), fields: {} }),
      { field: '/interaction/source/components/3/label', limit: 200, length: 201 },
    ],
    [
      'record key',
      withComponent({ type: 'record', fields: { ['k/'.repeat(21)]: 'v' } }),
      { field: `/interaction/source/components/3/fields/${'k~1'.repeat(21)}`, limit: 40, length: 42 },
    ],
    [
      'record value',
      withComponent({ type: 'record', fields: { k: 'v'.repeat(201) } }),
      { field: '/interaction/source/components/3/fields/k', limit: 200, length: 201 },
    ],
    [
      'field label',
      withComponent({ type: 'field', name: 'x', label: 'l'.repeat(61), schema: { type: 'boolean' } }),
      { field: '/interaction/source/components/3/label', limit: 60, length: 61 },
    ],
    [
      'field help',
      withComponent({
        type: 'field',
        name: 'x',
        label: 'l',
        description: 'h'.repeat(161),
        schema: { type: 'boolean' },
      }),
      { field: '/interaction/source/components/3/description', limit: 160, length: 161 },
    ],
    [
      'option label',
      withComponent({
        type: 'field',
        name: 'x',
        label: 'l',
        schema: { type: 'string', enum: ['a'], option_labels: { a: 'o'.repeat(61) } },
      }),
      { field: '/interaction/source/components/3/schema/option_labels/a', limit: 60, length: 61 },
    ],
    [
      'unlabelled enum id',
      withComponent({
        type: 'field',
        name: 'x',
        label: 'l',
        schema: { type: 'array', items: { type: 'string', enum: ['ok', 'e'.repeat(61)] } },
      }),
      { field: '/interaction/source/components/3/schema/items/enum/1', limit: 60, length: 61 },
    ],
    [
      'repeated field name',
      withComponent({ type: 'field', name: 'message', label: 'again', schema: { type: 'boolean' } }),
      { field: '/interaction/source/components/3/name' },
    ],
    [
      'too many actions',
      {
        ...sampleSurface(),
        actions: Array.from({ length: 6 }, (_, i) => ({
          id: `a${i}`,
          label: 'Go',
          intent: 'submit' as const,
        })),
      },
      { field: '/interaction/actions', limit: 5, length: 6 },
    ],
    [
      'an unknown component member',
      withComponent({ type: 'heading', text: 'h', color: 'red' }),
      { field: '/interaction/source/components/3/color' },
    ],
  ];
  it.each(cases)('%s: 422 with the pointer, limit and length', async (_name, surface, expected) => {
    const res = await call(sess, 'POST', '/v1/sessions', { body: { interaction: surface }, key: newKey() });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatchObject({ code: 'invalid_request', ...expected });
  });

  it('accepts a limit exactly at the edge (code points, not UTF-16 units)', async () => {
    const res = await call(sess, 'POST', '/v1/sessions', {
      body: { interaction: { ...sampleSurface(), title: '😀'.repeat(80) } },
      key: newKey(),
    });
    expect(res.status).toBe(201);
  });
});
