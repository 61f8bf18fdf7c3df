import { describe, expect, it } from 'vitest';
import { SessApiError } from '../../src/core/ports.js';
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
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['origin', { origin: 'http://api.sess.si', credential }, /^origin\b/],
    ['origin (type)', { origin: 42, credential }, /^origin\b/],
    ['credential', { origin: 'https://api.sess.si', credential: 'key' }, /^credential\b/],
    ['fetch', { origin: 'https://api.sess.si', credential, fetch: 'no' }, /^fetch\b/],
    [
      'expectedWorkspaceId',
      { origin: 'https://api.sess.si', credential, expectedWorkspaceId: '' },
      /^expectedWorkspaceId\b/,
    ],
    ['receiptIssuer', { origin: 'https://api.sess.si', credential, receiptIssuer: '' }, /^receiptIssuer\b/],
    [
      'allowInsecureLocalhost',
      { origin: 'https://api.sess.si', credential, allowInsecureLocalhost: 'yes' },
      /^allowInsecureLocalhost\b/,
    ],
    ['clock', { origin: 'https://api.sess.si', credential, clock: {} }, /^clock\b/],
    [
      'keyRefreshCooldownMs',
      { origin: 'https://api.sess.si', credential, keyRefreshCooldownMs: -1 },
      /^keyRefreshCooldownMs\b/,
    ],
    [
      'requestTimeoutMs',
      { origin: 'https://api.sess.si', credential, requestTimeoutMs: 0 },
      /^requestTimeoutMs\b/,
    ],
    [
      'requestTimeoutMs (NaN)',
      { origin: 'https://api.sess.si', credential, requestTimeoutMs: Number.NaN },
      /^requestTimeoutMs\b/,
    ],
  ];
  it.each(cases)('refuses a bad %s with a TypeError naming it', (_name, options, pattern) => {
    expect(() => createSessClient(options as never)).toThrow(TypeError);
    expect(() => createSessClient(options as never)).toThrow(pattern);
  });

  it('accepts a loopback origin with allowInsecureLocalhost', () => {
    expect(() =>
      createSessClient({ origin: 'http://127.0.0.1:9', credential, allowInsecureLocalhost: true }),
    ).not.toThrow();
  });
});
