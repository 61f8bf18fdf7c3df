/**
 * The webhook configuration from the stdio environment (`NOT_CONFIGURED` naming the variable) and
 * from an HTTP face's option bag (a `TypeError` naming the option): one table each, and no message
 * that repeats a secret or the URL.
 */
import { describe, expect, it } from 'vitest';
import { SessMcpError } from '../../src/core/contract/errors.js';
import { readOptions } from '../../src/core/contract/options.js';
import { readWebhookEnv, readWebhookOptions } from '../../src/faces/wake/webhook-config.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { newSecret } from '../support/webhook-receiver.js';

const SECRET = newSecret();
const OTHER = newSecret(48);
/** Values a message must never hold, whole or in part. */
const TOKEN = 'tok3n-in-the-query';
const SHORT_SECRET = 'whsec_c2VjcmV0LXZhbHVlLXNob3J0';
const PRIVATE_URL = `https://10.0.0.5/hook?token=${TOKEN}`;

function expectNoValue(message: string): void {
  for (const value of [SECRET, OTHER, SHORT_SECRET, TOKEN]) {
    expect(message).not.toContain(value);
    expect(message).not.toContain(value.replace(/^whsec_/, '').slice(0, 8));
  }
}

describe('readWebhookEnv', () => {
  const read = (env: Record<string, string>, allowInsecureLocalhost = false) =>
    readWebhookEnv(env, { allowInsecureLocalhost });

  it('is undefined when neither variable is set (or both are empty)', () => {
    expect(read({})).toBeUndefined();
    expect(read({ SESS_MCP_WEBHOOK_URL: '', SESS_MCP_WEBHOOK_SECRET: '' })).toBeUndefined();
  });

  it('reads the URL, the space-separated secrets and the private switch', () => {
    expect(
      read({
        SESS_MCP_WEBHOOK_URL: `https://hooks.example.com/sess?token=${TOKEN}`,
        SESS_MCP_WEBHOOK_SECRET: ` ${SECRET}  ${OTHER} `,
      }),
    ).toEqual({
      endpoint: { url: `https://hooks.example.com/sess?token=${TOKEN}`, secrets: [SECRET, OTHER] },
      allowPrivate: false,
    });
    expect(
      read({
        SESS_MCP_WEBHOOK_URL: PRIVATE_URL,
        SESS_MCP_WEBHOOK_SECRET: SECRET,
        SESS_MCP_WEBHOOK_ALLOW_PRIVATE: '1',
      })?.allowPrivate,
    ).toBe(true);
  });

  it('takes the testing switch as the stdio configuration read it', () => {
    const env = {
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
      SESS_MCP_WEBHOOK_SECRET: SECRET,
    };
    const { allowInsecureLocalhost } = readStdioConfig({ ...env, SESS_MCP_STATE_DIR: '/tmp/x' });
    expect(readWebhookEnv(env, { allowInsecureLocalhost })?.endpoint.url).toBe('http://127.0.0.1:9/hook');
    expect(() => readWebhookEnv(env, { allowInsecureLocalhost: false })).toThrow(/must use https/);
  });

  it.each([
    ['a secret without a URL', { SESS_MCP_WEBHOOK_URL: '' }, 'SESS_MCP_WEBHOOK_URL', /is required when/],
    [
      'a URL without a secret',
      { SESS_MCP_WEBHOOK_SECRET: '' },
      'SESS_MCP_WEBHOOK_SECRET',
      /is required when/,
    ],
    [
      'plain http',
      { SESS_MCP_WEBHOOK_URL: `http://hooks.example.com/?t=${TOKEN}` },
      'SESS_MCP_WEBHOOK_URL',
      /must use https/,
    ],
    [
      'credentials',
      { SESS_MCP_WEBHOOK_URL: `https://me:${TOKEN}@hooks.example.com/` },
      'SESS_MCP_WEBHOOK_URL',
      /without credentials/,
    ],
    [
      'a private address',
      { SESS_MCP_WEBHOOK_URL: PRIVATE_URL },
      'SESS_MCP_WEBHOOK_URL',
      /SESS_MCP_WEBHOOK_ALLOW_PRIVATE=1 allows it/,
    ],
    [
      'a secret without its prefix',
      { SESS_MCP_WEBHOOK_SECRET: SECRET.slice(6) },
      'SESS_MCP_WEBHOOK_SECRET',
      /secret 1 is not/,
    ],
    [
      'a short second secret',
      { SESS_MCP_WEBHOOK_SECRET: `${SECRET} ${SHORT_SECRET}` },
      'SESS_MCP_WEBHOOK_SECRET',
      /secret 2 is not/,
    ],
    [
      'bad base64',
      { SESS_MCP_WEBHOOK_SECRET: `whsec_${TOKEN}!!${TOKEN}` },
      'SESS_MCP_WEBHOOK_SECRET',
      /must be 1 to 8 secrets/,
    ],
    [
      'nine secrets',
      { SESS_MCP_WEBHOOK_SECRET: Array(9).fill(SECRET).join(' ') },
      'SESS_MCP_WEBHOOK_SECRET',
      /must be 1 to 8 secrets/,
    ],
    [
      'a flag other than 1',
      { SESS_MCP_WEBHOOK_ALLOW_PRIVATE: 'yes' },
      'SESS_MCP_WEBHOOK_ALLOW_PRIVATE',
      /must be 1 or unset/,
    ],
    [
      'a test scale out of range',
      { SESS_MCP_TEST_WEBHOOK_SCALE: '2' },
      'SESS_MCP_TEST_WEBHOOK_SCALE',
      /must be a decimal from 0.000001 to 1/,
    ],
  ])('refuses %s with NOT_CONFIGURED naming the variable, not the value', (_name, vars, variable, rule) => {
    // An empty variable is an unset one.
    const env: Record<string, string> = {
      SESS_MCP_WEBHOOK_URL: 'https://hooks.example.com/sess',
      SESS_MCP_WEBHOOK_SECRET: SECRET,
      ...vars,
    };
    let error: unknown;
    try {
      read(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SessMcpError);
    expect((error as SessMcpError).code).toBe('NOT_CONFIGURED');
    expect((error as SessMcpError).retryable).toBe(false);
    expect((error as SessMcpError).message.startsWith(variable)).toBe(true);
    expect((error as SessMcpError).message).toMatch(rule);
    expectNoValue((error as SessMcpError).message);
  });

  it('makes its errors with the caller maker, so the stdio configuration can name the variable', () => {
    const made: string[] = [];
    const notConfigured = (variable: string, message: string) => {
      made.push(variable);
      return new SessMcpError('NOT_CONFIGURED', message, { retryable: false });
    };
    expect(() =>
      readWebhookEnv({ SESS_MCP_WEBHOOK_URL: 'ftp://x/' }, { allowInsecureLocalhost: false, notConfigured }),
    ).toThrow(SessMcpError);
    expect(made).toEqual(['SESS_MCP_WEBHOOK_URL']);
  });
});

describe('readWebhookOptions', () => {
  const FACTORY = 'createSessMcpHttpHandler';
  const read = (webhook: unknown, allowInsecureLocalhost = false) => {
    const options = { webhook };
    return readWebhookOptions(readOptions(FACTORY, options, { known: ['webhook'] }), 'webhook', webhook, {
      allowInsecureLocalhost,
    });
  };

  it('reads the option bag, and nothing when it is absent', () => {
    expect(read(undefined)).toBeUndefined();
    expect(
      read({
        url: 'https://hooks.example.com/sess',
        secrets: [SECRET, OTHER],
        allowPrivate: true,
        allowedHosts: ['hooks.example.com'],
        timeoutMs: 5_000,
      }),
    ).toEqual({
      endpoint: { url: 'https://hooks.example.com/sess', secrets: [SECRET, OTHER] },
      allowPrivate: true,
      allowedHosts: ['hooks.example.com'],
      timeoutMs: 5_000,
    });
    expect(read({ url: 'http://localhost:8080/', secrets: [SECRET] }, true)?.endpoint.url).toBe(
      'http://localhost:8080/',
    );
  });

  const good = { url: 'https://hooks.example.com/sess', secrets: [SECRET] };
  it.each([
    ['no URL', { secrets: [SECRET] }, 'webhook.url', /is required: an https URL/],
    [
      'plain http',
      { ...good, url: `http://hooks.example.com/?t=${TOKEN}` },
      'webhook.url',
      /is not usable: it must use https/,
    ],
    ['a private address', { ...good, url: PRIVATE_URL }, 'webhook.url', /loopback, private/],
    [
      'a host outside allowedHosts',
      { ...good, allowedHosts: ['other.example.com'] },
      'webhook.url',
      /not in the allowed hosts/,
    ],
    ['no secrets', { url: good.url }, 'webhook.secrets', /must be a list of 1 to 8 secrets/],
    ['a secret as a string', { ...good, secrets: SECRET }, 'webhook.secrets', /must be a list/],
    ['an empty secret', { ...good, secrets: [''] }, 'webhook.secrets', /secret 1 is not/],
    ['a short secret', { ...good, secrets: [SECRET, SHORT_SECRET] }, 'webhook.secrets', /secret 2 is not/],
    ['bad base64', { ...good, secrets: [`whsec_${TOKEN}`] }, 'webhook.secrets', /secret 1 is not/],
    ['a bad timeout', { ...good, timeoutMs: 10 }, 'webhook.timeoutMs', /from 100 to 120000/],
    ['a bad allowPrivate', { ...good, allowPrivate: 'yes' }, 'webhook.allowPrivate', /must be a boolean/],
    [
      'a host with a scheme',
      { ...good, allowedHosts: ['https://hooks.example.com'] },
      'webhook.allowedHosts',
      /host names/,
    ],
    [
      'an unknown key',
      { ...good, secret: SECRET },
      'webhook.secret',
      /is not a key of "webhook".*did you mean "secrets"/,
    ],
    ['not an object', 'https://hooks.example.com', 'webhook', /must be an object/],
  ])('refuses %s with a TypeError naming the option, not the value', (_name, webhook, option, rule) => {
    let error: unknown;
    try {
      read(webhook);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TypeError);
    const message = (error as TypeError).message;
    expect(message.startsWith(`${FACTORY}: option "${option}" `)).toBe(true);
    expect(message).toMatch(rule);
    expectNoValue(message);
  });
});
