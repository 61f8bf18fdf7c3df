import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_TABLE, SessMcpError } from '../../src/core/contract/errors.js';
import { SessApiError } from '../../src/core/contract/ports.js';
import {
  ANSWERED_NEXT,
  ASK_CLOSED_NEXT,
  ASK_REWAIT_LINE,
  COMPLETED_NEXT,
  EXPIRED_NEXT,
  errorNext,
  INTERNAL_ERROR_CODE,
  INTERNAL_ERROR_MESSAGE,
  type InteractionResult,
  PUBLISHED_NEXT,
  REWAIT_LINE,
  SHOW_LINK_NEXT,
  toolError,
  toolSuccess,
} from '../../src/core/contract/result.js';
import { TOOL_NAMES } from '../../src/core/contract/schemas.js';
import { limitRefusal } from './fixtures.js';

const LINK = 'https://sess.example/s/abc#k=secret-capability';

const waiting: InteractionResult = {
  handle: 'h_1',
  revision: 1,
  state: 'waiting',
  humanUrl: LINK,
  expiresAt: '2026-12-01T00:00:00.000Z',
};

const answered: InteractionResult = {
  handle: 'h_1',
  revision: 1,
  state: 'answered',
  response: {
    eventId: 'evt_1',
    revision: 1,
    action: 'approve',
    values: { message: 'Ship it' },
    submittedAt: '2026-11-30T10:00:00.000Z',
    verified: true,
    actorAssurance: 'link_holder',
  },
};

function text(result: { content: Array<{ text: string }> }): string {
  expect(result.content).toHaveLength(1);
  return result.content[0]!.text;
}

describe('toolSuccess', () => {
  it.each(['sess_request', 'sess_ask'] as const)(
    '%s: two lines for the agent, a blank line, then the JSON',
    (tool) => {
      const result = toolSuccess(tool, waiting);
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toEqual({ interaction: waiting, next: SHOW_LINK_NEXT });
      expect(text(result)).toBe(
        `Show the person this link now: ${LINK}\nThen call sess_response.\n\n${JSON.stringify({ interaction: waiting })}`,
      );
    },
  );

  it.each(['waiting', 'needs_resume'] as const)(
    'sess_response %s: the re-wait line, a blank line, then the JSON',
    (state) => {
      const interaction: InteractionResult = { handle: 'h_1', revision: 2, state };
      const result = toolSuccess('sess_response', interaction);
      expect(result.isError).toBeUndefined();
      expect(text(result)).toBe(`${REWAIT_LINE}\n\n${JSON.stringify({ interaction })}`);
      expect(result.structuredContent).toEqual({ interaction, next: REWAIT_LINE });
      expect(REWAIT_LINE).toMatch(/sess_response again .* up to three times/);
      expect(REWAIT_LINE).toMatch(/say continue/);
    },
  );

  it.each(['answered', 'completed', 'expired', 'closed'] as const)(
    'sess_response %s: just the JSON',
    (state) => {
      const interaction: InteractionResult =
        state === 'answered' ? answered : { handle: 'h_1', revision: 1, state };
      const result = toolSuccess('sess_response', interaction);
      expect(text(result)).toBe(JSON.stringify({ interaction }));
      const { next, ...rest } = result.structuredContent as { next: string };
      expect(JSON.parse(text(result))).toEqual(rest);
      expect(next).toBe(
        {
          answered: ANSWERED_NEXT,
          completed: COMPLETED_NEXT,
          expired: EXPIRED_NEXT,
          closed: ASK_CLOSED_NEXT,
        }[state],
      );
    },
  );

  it.each(['sess_publish', 'sess_complete'] as const)('%s: just the JSON, even while waiting', (tool) => {
    const interaction: InteractionResult = {
      handle: 'h_1',
      revision: 2,
      state: tool === 'sess_publish' ? 'waiting' : 'completed',
    };
    const result = toolSuccess(tool, interaction);
    expect(text(result)).toBe(JSON.stringify({ interaction }));
    expect((result.structuredContent as { next: string }).next).toBe(
      tool === 'sess_publish' ? PUBLISHED_NEXT : COMPLETED_NEXT,
    );
  });

  it('drops undefined and unknown properties, keeps a fixed order', () => {
    const messy = {
      state: 'waiting',
      revision: 3,
      handle: 'h',
      humanUrl: undefined,
      extra: 'no',
    } as unknown as InteractionResult;
    const result = toolSuccess('sess_response', messy);
    expect(result.structuredContent).toEqual({
      interaction: { handle: 'h', revision: 3, state: 'waiting' },
      next: REWAIT_LINE,
    });
    expect(text(result).endsWith('{"interaction":{"handle":"h","revision":3,"state":"waiting"}}')).toBe(true);
  });

  it('an open Ask gets its own re-wait line with the same rule', () => {
    const interaction: InteractionResult = {
      handle: 'h_2',
      revision: 1,
      state: 'waiting',
      ask: { id: 'ask_1', open: true, max: 3, started: 1, answered: 0, answers: [] },
    };
    const result = toolSuccess('sess_response', interaction);
    const body = text(result);
    expect(body).toBe(`${ASK_REWAIT_LINE}\n\n${JSON.stringify({ interaction })}`);
    expect((result.structuredContent as { next: string }).next).toBe(ASK_REWAIT_LINE);
    expect(ASK_REWAIT_LINE).toMatch(/call sess_response\s+again .* up to three times after your first call/);
    expect(ASK_REWAIT_LINE).toMatch(/say continue/);
  });

  it('carries an Ask', () => {
    const interaction: InteractionResult = {
      handle: 'h_2',
      revision: 1,
      state: 'closed',
      ask: {
        id: 'ask_1',
        open: false,
        max: 2,
        started: 2,
        answered: 1,
        answers: [
          {
            respondentId: 'r1',
            name: 'Ana',
            action: 'submit',
            values: { time: 'am' },
            submittedAt: '2026-11-30T10:00:00.000Z',
            verified: true,
            actorAssurance: 'link_holder',
          },
        ],
      },
    };
    expect(toolSuccess('sess_response', interaction).structuredContent).toEqual({
      interaction,
      next: ASK_CLOSED_NEXT,
    });
  });
});

describe('next: the guidance for hosts that show the model structuredContent alone', () => {
  it('carries the guidance of the leading text lines, without the link', () => {
    const result = toolSuccess('sess_ask', waiting);
    const { next } = result.structuredContent as { next: string };
    expect(next).toMatch(/^Show the person the link in interaction\.humanUrl now, then call sess_response/);
    expect(next).not.toContain(LINK);
    expect(next).not.toContain('sess.example');
    expect(ANSWERED_NEXT).toMatch(/call sess_complete next/i);
    expect(ANSWERED_NEXT).toMatch(/only to show a follow-up, call sess_publish instead/);
  });

  it('never repeats an answer value', () => {
    const { next } = toolSuccess('sess_response', answered).structuredContent as { next: string };
    expect(next).toBe(ANSWERED_NEXT);
    expect(next).not.toContain('Ship it');
    expect(next).not.toContain('evt_1');
  });

  it('every tool and state gets one non-empty sentence', () => {
    const states = ['waiting', 'needs_resume', 'answered', 'completed', 'expired', 'closed'] as const;
    for (const tool of TOOL_NAMES)
      for (const state of states) {
        const { next } = toolSuccess(tool, { handle: 'h', revision: 1, state }).structuredContent as {
          next: unknown;
        };
        expect(typeof next === 'string' && next.length > 20, `${tool} ${state}`).toBe(true);
      }
  });
});

describe('toolError', () => {
  it('carries the error object of a SessMcpError in structuredContent and as text', () => {
    const error = new SessMcpError(
      'INVALID_ARGUMENTS',
      '/fields/0/label is 72 characters; the limit is 60. Shorten it to at most 60 characters.',
      {
        field: '/fields/0/label',
        limit: 60,
        length: 72,
      },
    );
    const result = toolError(error);
    const body = {
      error: limitRefusal(
        '/fields/0/label',
        '/fields/0/label is 72 characters; the limit is 60. Shorten it to at most 60 characters.',
        60,
        72,
      ),
    };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ ...body, next: errorNext(body.error) });
    expect(JSON.parse(text(result))).toEqual(body);
    expect(errorNext(body.error)).toMatch(/^Fix the arguments/);
  });

  it.each(ERROR_CODES)('%s: next says what to do, by its class and retry rule', (code) => {
    const { error, next } = toolError(new SessMcpError(code, `A ${code}.`)).structuredContent as {
      error: { retryable: boolean };
      next: string;
    };
    expect(next).toBe(errorNext(toolError(new SessMcpError(code, 'x')).structuredContent!.error as never));
    const retry = ERROR_TABLE[code].retry;
    if (retry === 'always') expect(next).toMatch(/call again|Repeat the identical call/);
    if (retry === 'owner') expect(next).toMatch(/^Do not (retry|repeat)/);
    if (retry === 'owner') expect(next).toMatch(/owner/);
    if (retry === 'fix_arguments') expect(next).toMatch(/^Fix the arguments/);
    if (retry === 'never') expect(next).not.toMatch(/call again|Repeat the identical call/);
    expect(typeof error.retryable).toBe('boolean');
  });

  it('a store error says to retry only when it is flagged retryable', () => {
    const transient = toolError(new SessMcpError('STATE_STORE_ERROR', 'x', { retryable: true }));
    const broken = toolError(new SessMcpError('STATE_STORE_ERROR', 'x', { retryable: false }));
    expect((transient.structuredContent as { next: string }).next).toMatch(/call again/);
    expect((broken.structuredContent as { next: string }).next).toMatch(/^Do not retry/);
  });

  it.each(ERROR_CODES)('%s: keeps code, retryable, reason and state', (code) => {
    const result = toolError(
      new SessMcpError(code, `A ${code}.`, { reason: 'fixed_word', state: 'waiting' }),
    );
    expect(result.structuredContent).toMatchObject({
      error: { code, reason: 'fixed_word', state: 'waiting' },
    });
    expect(typeof (result.structuredContent as { error: { retryable: unknown } }).error.retryable).toBe(
      'boolean',
    );
  });

  it.each([
    ['an Error', new Error(`boom ${LINK} key sk_live_123`)],
    ['a SessApiError', new SessApiError('transport', `connect failed to ${LINK}`)],
    ['a string', `secret ${LINK}`],
    ['undefined', undefined],
    ['a lookalike with an unknown code', { name: 'SessMcpError', code: 'NOPE', message: LINK }],
  ])('maps %s to the documented generic code without its message', (_, thrown) => {
    const result = toolError(thrown);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: {
        code: INTERNAL_ERROR_CODE,
        message: INTERNAL_ERROR_MESSAGE,
        retryable: false,
        reason: 'internal',
      },
      next: 'Do not retry: tell the person that the owner has to look at the server.',
    });
    expect(text(result)).not.toContain('secret');
    expect(text(result)).not.toContain('sess.example');
  });

  it('keeps the stack trace and cause out of the wire', () => {
    const error = new SessMcpError('SESS_UNAVAILABLE', 'Sess did not answer; nothing changed.', {
      cause: new Error(LINK),
    });
    const body = text(toolError(error));
    expect(body).not.toContain('sess.example');
    expect(body).not.toContain('at ');
  });

  it('every tool name is known to the envelope', () => {
    for (const tool of TOOL_NAMES)
      expect(toolSuccess(tool, { handle: 'h', revision: 1, state: 'completed' }).isError).toBeUndefined();
  });
});
