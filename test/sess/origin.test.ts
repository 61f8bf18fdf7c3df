import { describe, expect, it } from 'vitest';
import { SessApiError } from '../../src/core/contract/ports.js';
import { createSessClient } from '../../src/sess/client.js';
import { validateSessOrigin } from '../../src/sess/origin.js';

// [input, allowInsecureLocalhost, expected normalised origin or null when refused]
const TABLE: Array<[string, boolean, string | null]> = [
  ['https://api.sess.si', false, 'https://api.sess.si'],
  ['https://api.sess.si/', false, 'https://api.sess.si'],
  ['HTTPS://API.Sess.SI:443/', false, 'https://api.sess.si'],
  ['https://api.sess.si:8443', false, 'https://api.sess.si:8443'],
  ['https://127.0.0.1:9', false, 'https://127.0.0.1:9'],
  ['http://api.sess.si', false, null],
  ['http://api.sess.si', true, null],
  ['http://localhost:8787', false, null],
  ['http://localhost:8787', true, 'http://localhost:8787'],
  ['http://127.0.0.1:1234', true, 'http://127.0.0.1:1234'],
  ['http://127.0.0.1', false, null],
  ['http://[::1]:4000', true, 'http://[::1]:4000'],
  ['http://[::1]', true, 'http://[::1]'],
  ['http://127.0.0.2', true, null],
  ['http://localhost.example.com', true, null],
  ['https://api.sess.si/v1', false, null],
  ['https://api.sess.si/.', false, null],
  ['https://api.sess.si//', false, null],
  ['https://api.sess.si?x=1', false, null],
  ['https://api.sess.si/?', false, null],
  ['https://api.sess.si#top', false, null],
  ['https://user:pw@api.sess.si', false, null],
  ['https://:@api.sess.si', false, null],
  ['https://user@api.sess.si', false, null],
  ['https:\\\\api.sess.si', false, null],
  [' https://api.sess.si', false, null],
  ['https://api.sess.si ', false, null],
  ['https://api sess.si', false, null],
  ['ftp://api.sess.si', false, null],
  ['ws://localhost:80', true, null],
  ['api.sess.si', false, null],
  ['//api.sess.si', false, null],
  ['https://', false, null],
  ['', false, null],
  ['https://exa mple', false, null],
  ['https://[::1', false, null],
];

describe('validateSessOrigin', () => {
  it.each(TABLE)('%j (insecure localhost: %s) → %j', (input, allowInsecureLocalhost, expected) => {
    if (expected !== null) {
      expect(validateSessOrigin(input, { allowInsecureLocalhost })).toBe(expected);
      return;
    }
    let thrown: unknown;
    try {
      validateSessOrigin(input, { allowInsecureLocalhost });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SessApiError);
    expect((thrown as SessApiError).kind).toBe('configuration');
    // The refusal never echoes the input: it may carry credentials.
    if (input.length > 0) expect((thrown as Error).message).not.toContain(input.trim());
    expect((thrown as Error).message).not.toContain('pw');
  });

  it('names the test flag when plain http on loopback is refused', () => {
    expect(() => validateSessOrigin('http://localhost:1')).toThrow(/SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST/);
  });
});

describe('createSessClient option validation', () => {
  const credential = () => 'key';
  const base = { origin: 'https://api.sess.si', credential };
  const cases: Array<[string, Record<string, unknown>]> = [
    ['origin', { origin: 'http://api.sess.si' }],
    ['origin', { origin: 42 }],
    ['credential', { credential: 'key' }],
    ['fetch', { fetch: 'no' }],
    ['expectedWorkspaceId', { expectedWorkspaceId: '' }],
    ['expectedWorkspaceId', { expectedWorkspaceId: 'ws/1' }],
    ['receiptIssuer', { receiptIssuer: '' }],
    ['allowInsecureLocalhost', { allowInsecureLocalhost: 'yes' }],
    ['clock', { clock: {} }],
    ['keyRefreshCooldownMs', { keyRefreshCooldownMs: -1 }],
    ['keySetMaxAgeMs', { keySetMaxAgeMs: 1.5 }],
    // The maximum age may not be shorter than the cooldown.
    ['keySetMaxAgeMs', { keyRefreshCooldownMs: 10_000, keySetMaxAgeMs: 9_999 }],
    ['requestTimeoutMs', { requestTimeoutMs: 0 }],
    ['requestTimeoutMs', { requestTimeoutMs: Number.NaN }],
  ];
  it.each(cases)('refuses a bad %s with the factory’s TypeError naming it (%o)', (name, extra) => {
    const build = () => createSessClient({ ...base, ...extra } as never);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(new RegExp(`^createSessClient: option "${name}" .+\\.$`));
  });

  it('states the workspace id rule exactly, and accepts every id the wire allows', () => {
    expect(() => createSessClient({ ...base, expectedWorkspaceId: 'ws 1' })).toThrow(
      'createSessClient: option "expectedWorkspaceId" must be 1 to 128 characters of A-Z a-z 0-9 . _ : -.',
    );
    for (const id of ['ws.1', 'org:ws_1-a', 'a'.repeat(128)]) {
      expect(() => createSessClient({ ...base, expectedWorkspaceId: id })).not.toThrow();
    }
    expect(() => createSessClient({ ...base, expectedWorkspaceId: 'a'.repeat(129) })).toThrow(TypeError);
  });

  it('accepts a loopback origin with allowInsecureLocalhost', () => {
    expect(() =>
      createSessClient({ origin: 'http://127.0.0.1:9', credential, allowInsecureLocalhost: true }),
    ).not.toThrow();
  });
});
