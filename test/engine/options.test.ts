/**
 * `createSessEngine` refuses bad options at construction with a `TypeError` naming the option, and
 * `call` validates arguments before the authority, Sess or the store are touched.
 */
import { describe, expect, it } from 'vitest';
import { ARGUMENT_LIMITS } from '../../src/core/contract/limits.js';
import type { Authority, CallAuthority } from '../../src/core/contract/ports.js';
import { WAIT_CEILING_MS } from '../../src/core/contract/rules.js';
import { createSessEngine, createWaitGate, MAX_WAIT_CEILING_MS } from '../../src/core/engine/engine.js';

/** A double that counts resolutions and fails the test if it is ever asked for Sess or a store. */
function countingAuthority(): Authority & { resolved: number } {
  const authority = {
    resolved: 0,
    async resolve(): Promise<CallAuthority> {
      authority.resolved += 1;
      throw new Error('the authority must not be resolved for invalid arguments');
    },
  };
  return authority;
}

describe('createSessEngine options', () => {
  const authority = countingAuthority();

  it.each([
    [{ maxWaitMs: MAX_WAIT_CEILING_MS + 1 }, /maxWaitMs/],
    [{ maxWaitMs: -1 }, /maxWaitMs/],
    [{ maxWaitMs: 1.5 }, /maxWaitMs/],
    [{ progressIntervalMs: 0 }, /progressIntervalMs/],
    [{ randomId: 'x' }, /randomId/],
    [{ randomId: () => 'short' }, /randomId/],
    [{ randomId: () => 'has spaces and is long enough' }, /randomId/],
    [{ diagnostics: 1 }, /diagnostics/],
  ])('refuses %o', (extra, message) => {
    expect(() => createSessEngine({ authority, ...(extra as object) })).toThrow(TypeError);
    expect(() => createSessEngine({ authority, ...(extra as object) })).toThrow(message);
  });

  it('refuses a missing authority', () => {
    expect(() => createSessEngine({} as never)).toThrow(/authority/);
  });

  it.each([
    [undefined, 'createSessEngine: options must be an object.'],
    [{}, 'createSessEngine: option "authority" is required and must have a resolve() method.'],
    [
      { authority, maxWaitMs: 45_001 },
      'createSessEngine: option "maxWaitMs" must be a whole number of milliseconds from 0 to 45000 (it may only lower the ceiling).',
    ],
    [
      { authority, progressIntervalMs: 0 },
      'createSessEngine: option "progressIntervalMs" must be a whole number from 1 to 2147483647.',
    ],
    [{ authority, diagnostics: 1 }, 'createSessEngine: option "diagnostics" must be a function.'],
    [
      { authority, waitGate: {} },
      'createSessEngine: option "waitGate" must be a wait gate (createWaitGate).',
    ],
    [{ authority, clock: {} }, 'createSessEngine: option "clock" must have a now() method.'],
  ])('every refusal reads the same way: %o', (options, message) => {
    expect(() => createSessEngine(options as never)).toThrow(new TypeError(message));
  });

  it('accepts a lower ceiling, and 0 (never wait)', () => {
    expect(() => createSessEngine({ authority, maxWaitMs: 1_000 })).not.toThrow();
    expect(() => createSessEngine({ authority, maxWaitMs: 0 })).not.toThrow();
  });

  it('MAX_WAIT_CEILING_MS is the one wait ceiling', () => {
    expect(MAX_WAIT_CEILING_MS).toBe(WAIT_CEILING_MS);
    expect(ARGUMENT_LIMITS.maxWaitMs).toBe(WAIT_CEILING_MS);
  });

  it('accepts a shared wait gate', () => {
    const waitGate = createWaitGate({ maxConcurrentWaits: 2 });
    expect(() => createSessEngine({ authority, waitGate })).not.toThrow();
  });
});

describe('validation comes first', () => {
  it.each([
    ['sess_request', { interaction: { title: 'x' } }],
    ['sess_response', { handle: 'sess_h_x', revision: 0 }],
    ['sess_response', { handle: 'sess_h_x', revision: 1, wait_ms: 45_001 }],
    ['sess_publish', { handle: 'sess_h_x', expected_revision: 1 }],
    ['sess_complete', { handle: 'sess_h_x', expected_revision: 1, response_event_id: 'e', extra: 1 }],
    ['sess_ask', { question: 'Q?', fields: [] }],
  ] as const)('%s %o is INVALID_ARGUMENTS without resolving the authority', async (tool, args) => {
    const authority = countingAuthority();
    const engine = createSessEngine({ authority });
    const result = await engine.call(tool, args);
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENTS');
    expect(authority.resolved).toBe(0);
  });

  it('an unknown tool is INVALID_ARGUMENTS', async () => {
    const engine = createSessEngine({ authority: countingAuthority() });
    const result = await engine.call('sess_nope' as never, {});
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENTS');
  });

  it('the typed methods throw SessMcpError', async () => {
    const engine = createSessEngine({ authority: countingAuthority() });
    await expect(engine.response({ handle: '', revision: 1 })).rejects.toMatchObject({
      name: 'SessMcpError',
      code: 'INVALID_ARGUMENTS',
    });
  });

  it('NOT_CONFIGURED from the authority propagates', async () => {
    const engine = createSessEngine({
      authority: {
        resolve: async () => {
          const { SessMcpError } = await import('../../src/core/contract/errors.js');
          throw new SessMcpError('NOT_CONFIGURED', 'SESS_API_KEY is not set.');
        },
      },
    });
    const result = await engine.call('sess_response', { handle: 'sess_h_x', revision: 1 });
    expect(result.structuredContent).toEqual({
      error: { code: 'NOT_CONFIGURED', message: 'SESS_API_KEY is not set.', retryable: false },
      next: 'Do not retry: tell the person that the owner has to fix the server configuration.',
    });
  });
});
