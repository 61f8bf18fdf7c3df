/**
 * The stdio authority in-process, over the real file store: the key is read on each `resolve()`
 * (never before), a missing or malformed key is `NOT_CONFIGURED` naming the variable only, the
 * binding carries the keyed generation, one Sess client serves every call of one key, and a
 * start-up configuration error is reported on each call.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSessMcpError, SessMcpError } from '../../src/core/contract/errors.js';
import { createStdioAuthority } from '../../src/stdio/authority.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { sanitizeDiagnostic } from '../../src/stdio/diagnostics.js';
import { createFileHandleStore } from '../../src/store/file/index.js';

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'sess-mcp-auth-'));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

function authority(env: Record<string, string | undefined>) {
  const full = { SESS_MCP_STATE_DIR: stateDir, ...env };
  return createStdioAuthority({
    env: full,
    config: readStdioConfig(full),
    store: (c) => createFileHandleStore({ stateDir: c.stateDir, profile: c.profile }),
  });
}

async function refusal(promise: Promise<unknown>): Promise<SessMcpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isSessMcpError(error)) throw new Error('expected a SessMcpError');
  return error;
}

describe('createStdioAuthority', () => {
  it('reads the key on resolve, not before', async () => {
    const env: Record<string, string | undefined> = { SESS_MCP_STATE_DIR: stateDir };
    const auth = createStdioAuthority({
      env,
      config: readStdioConfig(env),
      store: (c) => createFileHandleStore({ stateDir: c.stateDir, profile: c.profile }),
    });
    expect((await refusal(auth.resolve())).code).toBe('NOT_CONFIGURED');
    env.SESS_API_KEY = 'sk_test_set_after_start_0001';
    const call = await auth.resolve();
    expect(call.binding).toMatchObject({
      kind: 'stdio',
      profile: 'default',
      apiOrigin: 'https://api.sess.si',
    });
  });

  it.each([
    ['', /SESS_API_KEY is not set/],
    ['sk_test with space', /SESS_API_KEY must be the API key alone/],
    ['sk_test_newline\n', /SESS_API_KEY must be the API key alone/],
  ])('refuses the key %j with NOT_CONFIGURED, never quoting it', async (key, message) => {
    const error = await refusal(authority({ SESS_API_KEY: key }).resolve());
    expect(error.code).toBe('NOT_CONFIGURED');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(message);
    if (key !== '') expect(error.message).not.toContain(key.trim());
  });

  it('binds to profile, origin and a keyed generation, and keeps one client per key', async () => {
    const env: Record<string, string | undefined> = { SESS_API_KEY: 'sk_test_generation_key_0001' };
    const auth = authority(env);
    const first = await auth.resolve();
    const second = await auth.resolve();
    expect(second.binding).toEqual(first.binding);
    expect(second.sess).toBe(first.sess);
    const generation = (first.binding as { credentialGeneration: string }).credentialGeneration;
    expect(generation).toMatch(/^hmac-sha256:/);
    expect(generation).not.toContain('sk_test');
    // Another authority on the same state dir (a restarted server) derives the same generation.
    expect((await authority(env).resolve()).binding).toEqual(first.binding);
    // Another key: another generation, another client.
    const rotated = await authority({ SESS_API_KEY: 'sk_test_generation_key_0002' }).resolve();
    expect(rotated.binding).not.toEqual(first.binding);
  });

  it('reports a start-up configuration error on every call', async () => {
    const config = new SessMcpError('NOT_CONFIGURED', 'SESS_API_ORIGIN is not usable.', { retryable: false });
    const auth = createStdioAuthority({
      env: { SESS_API_KEY: 'sk_test_valid_key_but_bad_config' },
      config,
      store: () => {
        throw new Error('the store must not be opened');
      },
    });
    expect(await refusal(auth.resolve())).toBe(config);
    expect(await refusal(auth.resolve())).toBe(config);
  });
});

describe('sanitizeDiagnostic', () => {
  it('keeps fixed words and drops anything else', () => {
    expect(
      sanitizeDiagnostic({
        event: 'tool_result',
        code: 'SESS_UNAVAILABLE',
        tool: 'sess_response',
        state: 'waiting',
        ms: 12.6,
      }),
    ).toEqual({
      event: 'tool_result',
      code: 'SESS_UNAVAILABLE',
      tool: 'sess_response',
      state: 'waiting',
      ms: 13,
    });
    const dirty = sanitizeDiagnostic({
      event: 'https://sess.si/s/secret-token',
      code: 'NOT_A_CODE' as never,
      tool: 'sess_request https://x',
      state: 'Answer: yes',
      ms: Number.NaN,
      humanUrl: 'https://sess.si/s/secret-token',
    } as never);
    expect(dirty).toEqual({ event: 'invalid_event' });
  });
});
