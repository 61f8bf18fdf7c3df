import { describe, expect, it } from 'vitest';
import { ERROR_CODES, SessMcpError } from '../../src/core/errors.js';
import { SessApiError } from '../../src/core/ports.js';
import {
  ASK_REWAIT_LINE,
  INTERNAL_ERROR_CODE,
  INTERNAL_ERROR_MESSAGE,
  type InteractionResult,
  REWAIT_LINE,
  toolError,
  toolSuccess,
} from '../../src/core/result.js';
import { TOOL_NAMES } from '../../src/core/schemas.js';
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
      expect(result.structuredContent).toEqual({ interaction: waiting });
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
      expect(JSON.parse(text(result))).toEqual(result.structuredContent);
    },
  );

  it.each(['sess_publish', 'sess_complete'] as const)('%s: just the JSON, even while waiting', (tool) => {
    const interaction: InteractionResult = {
      handle: 'h_1',
      revision: 2,
      state: tool === 'sess_publish' ? 'waiting' : 'completed',
    };
    expect(text(toolSuccess(tool, interaction))).toBe(JSON.stringify({ interaction }));
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
    expect(result.structuredContent).toEqual({ interaction: { handle: 'h', revision: 3, state: 'waiting' } });
    expect(text(result).endsWith('{"interaction":{"handle":"h","revision":3,"state":"waiting"}}')).toBe(true);
  });

  it('an open Ask gets its own re-wait line with the same rule', () => {
    const interaction: InteractionResult = {
      handle: 'h_2',
      revision: 1,
      state: 'waiting',
      ask: { id: 'ask_1', open: true, max: 3, started: 1, answered: 0, answers: [] },
    };
    const body = text(toolSuccess('sess_response', interaction));
    expect(body).toBe(`${ASK_REWAIT_LINE}\n\n${JSON.stringify({ interaction })}`);
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
    expect(toolSuccess('sess_response', interaction).structuredContent).toEqual({ interaction });
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
    expect(result.structuredContent).toEqual(body);
    expect(JSON.parse(text(result))).toEqual(body);
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
