/**
 * The options of `createSessMcpHttpHandler` and the surface of both face entries: every bad option
 * is a `TypeError` of the one form `createSessMcpHttpHandler: option "<name>" <rule>.`, the rules
 * several entries share (wait bound, workspace id) give the same verdict here as in the stdio
 * environment, and the entry exports exactly its named values.
 */
import { describe, expect, it } from 'vitest';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import {
  SESS_ID_RULE,
  WAIT_CAP_RANGES,
  WAIT_CEILING_MS,
  WAIT_MS_RULE,
  type WaitCap,
} from '../../src/core/contract/rules.js';
import { createWaitGate } from '../../src/core/engine/wait-gate.js';
import * as httpEntry from '../../src/http/index.js';
import { resolveHttpOptions, type SessMcpHttpHandlerOptions } from '../../src/http/options.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { MINIMAL_HTTP_OPTIONS } from './helpers.js';

const base = MINIMAL_HTTP_OPTIONS;

function httpVerdict(extra: Partial<SessMcpHttpHandlerOptions>): 'accepted' | string {
  try {
    resolveHttpOptions({ ...base, ...extra } as SessMcpHttpHandlerOptions);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
}

function stdioVerdict(env: Record<string, string>): 'accepted' | string {
  try {
    readStdioConfig({ HOME: '/home/me', ...env }, { platform: 'linux' });
    return 'accepted';
  } catch (error) {
    if (!isSessMcpError(error)) throw error;
    expect(error.code).toBe('NOT_CONFIGURED');
    return error.message;
  }
}

describe('createSessMcpHttpHandler options', () => {
  it.each([
    ['authenticate', { authenticate: undefined }],
    ['handleStore', { handleStore: 'x' }],
    ['allowedHosts', { allowedHosts: [] }],
    ['allowedHosts', { allowedHosts: ['exa mple/x'] }],
    ['allowedHosts', { allowedHosts: ['mcp.example.com:99999'] }],
    ['allowedOrigins', { allowedOrigins: ['https://a.example/path'] }],
    ['requiredScopes', { requiredScopes: ['a b'] }],
    ['maxBodyBytes', { maxBodyBytes: 0 }],
    ['requestDeadlineMs', { requestDeadlineMs: -1 }],
    ['maxWaitMs', { maxWaitMs: 45_001 }],
    ['maxWaitMs', { maxWaitMs: 1.5 }],
    ['allowInsecureLocalhost', { allowInsecureLocalhost: 'yes' }],
    ['sessOrigin', { sessOrigin: 'http://api.sess.si' }],
    ['sessOrigin', { sessOrigin: 'http://127.0.0.1:9' }],
    ['expectedWorkspaceId', { expectedWorkspaceId: 'ws!1' }],
    ['receiptIssuer', { receiptIssuer: '' }],
    ['resourceMetadataUrl', { resourceMetadataUrl: 'not a url' }],
    ['diagnostics', { diagnostics: 'stderr' }],
    ['maxOpenPerPrincipal', { maxOpenPerPrincipal: 0 }],
    ['maxOpenPerPrincipal', { maxOpenPerPrincipal: 1.5 }],
    ['maxOpenPerPrincipal', { maxOpenPerPrincipal: 100_001 }],
    ['maxOpenPerPrincipal', { maxOpenPerPrincipal: '25' }],
    ['waitGate', { waitGate: {} }],
    ['waitGate', { waitGate: null }],
    ['maxTotalWaits', { waitGate: createWaitGate(), maxTotalWaits: 10 }],
    ['health', { health: 'yes' }],
    ['health.store', { health: {} }],
    ['health.store', { health: { store: { forBinding() {} } } }],
    ['health.path', { health: { store: createMemoryHandleStore(), path: 'healthz' } }],
    ['health.path', { health: { store: createMemoryHandleStore(), path: '/healthz?x=1' } }],
    ['health.path', { health: { store: createMemoryHandleStore(), path: '/health z' } }],
    ['health.livePath', { health: { store: createMemoryHandleStore(), livePath: true } }],
    ['health.livePath', { health: { store: createMemoryHandleStore(), path: '/h', livePath: '/h' } }],
    ['health.authorize', { health: { store: createMemoryHandleStore(), authorize: 'token' } }],
    ['health.bogus', { health: { store: createMemoryHandleStore(), bogus: 1 } }],
  ])('a bad %s is a TypeError in the one form, naming it', (name, bad) => {
    const message = httpVerdict(bad as Partial<SessMcpHttpHandlerOptions>);
    expect(message).toMatch(new RegExp(`^createSessMcpHttpHandler: option "${name}" [^\\n]+\\.$`));
  });

  it('names the binding modes it takes when refusing another', () => {
    expect(httpVerdict({ binding: 'person' as 'principal' })).toBe(
      'createSessMcpHttpHandler: option "binding" must be "grant" or "principal".',
    );
    expect(resolveHttpOptions({ ...base, binding: 'principal' }).binding).toBe('principal');
    expect(resolveHttpOptions({ ...base, binding: 'grant' }).binding).toBe('grant');
  });

  it("takes the host's wait gate as it is, and refuses caps beside it", () => {
    const waitGate = createWaitGate({ maxConcurrentWaits: 3 });
    expect(resolveHttpOptions({ ...base, waitGate }).waitGate).toBe(waitGate);
    expect(httpVerdict({ waitGate, maxConcurrentWaits: 3 })).toBe(
      'createSessMcpHttpHandler: option "maxConcurrentWaits" cannot be given with "waitGate": the gate has its own caps (give them to createWaitGate).',
    );
  });

  it('takes health with its defaults, or paths of the host’s own, or none', () => {
    const store = createMemoryHandleStore();
    expect(resolveHttpOptions({ ...base, health: { store } }).health).toEqual({
      store,
      path: '/healthz',
      livePath: '/livez',
      authorize: undefined,
    });
    const authorize = () => true;
    expect(
      resolveHttpOptions({ ...base, health: { store, path: false, livePath: '/alive', authorize } }).health,
    ).toEqual({ store, path: undefined, livePath: '/alive', authorize });
    expect(resolveHttpOptions(base).health.store).toBeUndefined();
  });

  it('refuses the old name requestTimeoutMs, naming the new one, whatever its value', () => {
    const renamed = 'createSessMcpHttpHandler: option "requestTimeoutMs" was renamed to "requestDeadlineMs".';
    for (const value of [30_000, -1, undefined]) {
      expect(httpVerdict({ requestTimeoutMs: value } as Partial<SessMcpHttpHandlerOptions>)).toBe(renamed);
    }
    expect(() =>
      httpEntry.createSessMcpHttpHandler({ ...base, requestTimeoutMs: 30_000 } as SessMcpHttpHandlerOptions),
    ).toThrow(new TypeError(renamed));
    expect(httpVerdict({ requestDeadlineMs: 30_000 })).toBe('accepted');
    expect(resolveHttpOptions({ ...base, requestDeadlineMs: 1_234 }).requestDeadlineMs).toBe(1_234);
  });

  it('accepts maxWaitMs 0 (never wait), as the engine and SESS_MCP_MAX_WAIT_MS do', () => {
    expect(resolveHttpOptions({ ...base, maxWaitMs: 0 }).maxWaitMs).toBe(0);
    expect(resolveHttpOptions({ ...base, maxWaitMs: WAIT_CEILING_MS }).maxWaitMs).toBe(WAIT_CEILING_MS);
  });

  it('states the shared rule when it refuses maxWaitMs or expectedWorkspaceId', () => {
    expect(httpVerdict({ maxWaitMs: -1 })).toBe(
      `createSessMcpHttpHandler: option "maxWaitMs" must be ${WAIT_MS_RULE.text}.`,
    );
    expect(httpVerdict({ expectedWorkspaceId: 'ws!1' })).toBe(
      `createSessMcpHttpHandler: option "expectedWorkspaceId" must be ${SESS_ID_RULE.text}.`,
    );
  });

  it('refuses an http origin naming the option that allows it, in one sentence', () => {
    expect(httpVerdict({ sessOrigin: 'http://127.0.0.1:9' })).toBe(
      'createSessMcpHttpHandler: option "sessOrigin" is not usable: the Sess API origin must use https; http on localhost is for testing only and needs the allowInsecureLocalhost option (SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1 for the stdio server).',
    );
    expect(httpVerdict({ sessOrigin: 'http://api.example.com' })).toMatch(/[^.]\.$/);
  });

  it.each(Object.keys(WAIT_CAP_RANGES) as WaitCap[])(
    'takes the wait cap %s on the wait gate’s range, with the gate’s verdicts, and hands it to the gate',
    (cap) => {
      const { min, max } = WAIT_CAP_RANGES[cap];
      const gateVerdict = (value: unknown): string => {
        try {
          createWaitGate({ [cap]: value });
          return 'accepted';
        } catch (error) {
          return (error as Error).message.replace('createWaitGate', 'createSessMcpHttpHandler');
        }
      };
      for (const value of [min - 1, min, max, max + 1, 2.5, '4', null]) {
        expect(httpVerdict({ [cap]: value } as Partial<SessMcpHttpHandlerOptions>)).toBe(gateVerdict(value));
      }
      expect(httpVerdict({ [cap]: max + 1 })).toBe(
        `createSessMcpHttpHandler: option "${cap}" must be a whole number from ${min} to ${max}.`,
      );
      expect(resolveHttpOptions({ ...base, [cap]: 7 }).waitCaps).toEqual({ [cap]: 7 });
    },
  );

  it('fills the defaults', () => {
    const resolved = resolveHttpOptions(base);
    expect(resolved.requestDeadlineMs).toBe(httpEntry.DEFAULT_HTTP_REQUEST_DEADLINE_MS);
    expect(httpEntry.DEFAULT_HTTP_REQUEST_DEADLINE_MS).toBe(60_000);
    expect(resolved.maxBodyBytes).toBe(httpEntry.DEFAULT_MAX_BODY_BYTES);
    expect(resolved.maxBodyBytes).toBe(256 * 1024);
    expect(resolved.sessOrigin).toBe('https://api.sess.si');
    expect(resolved.allowedOrigins.size).toBe(0);
    expect(resolved.maxWaitMs).toBeUndefined();
    // The wait gate fills in its own caps' defaults.
    expect(resolved.waitCaps).toEqual({});
    expect(resolved.expectedWorkspaceId).toBeUndefined();
    expect(resolved.maxOpenPerPrincipal).toBe(25);
    expect(resolved.binding).toBe('grant');
    expect(
      resolveHttpOptions({ ...base, sessOrigin: 'http://127.0.0.1:9', allowInsecureLocalhost: true })
        .sessOrigin,
    ).toBe('http://127.0.0.1:9');
  });

  it('keeps an explicit port on an allowedHosts entry, :80 included', () => {
    expect(
      resolveHttpOptions({ ...base, allowedHosts: ['MCP.example.com:80', '[::1]', 'a:8443'] }).allowedHosts,
    ).toEqual(['mcp.example.com:80', '[::1]', 'a:8443']);
  });
});

describe('one rule, one verdict across the entries', () => {
  it.each([
    [0, true],
    [1, true],
    [45_000, true],
    [45_001, false],
    [-1, false],
  ])('maxWaitMs %d: HTTP option and SESS_MCP_MAX_WAIT_MS agree with WAIT_MS_RULE', (ms, valid) => {
    expect(WAIT_MS_RULE.test(ms)).toBe(valid);
    expect(httpVerdict({ maxWaitMs: ms }) === 'accepted').toBe(valid);
    expect(stdioVerdict({ SESS_MCP_MAX_WAIT_MS: String(ms) }) === 'accepted').toBe(valid);
  });

  it.each([
    ['ws_1', true],
    ['ws.1:a-b', true],
    ['W'.repeat(128), true],
    ['W'.repeat(129), false],
    ['ws!1', false],
    ['ws 1', false],
    ['ws/1', false],
  ])(
    'workspace id %s: HTTP expectedWorkspaceId and SESS_EXPECTED_WORKSPACE_ID agree with SESS_ID_RULE',
    (id, valid) => {
      expect(SESS_ID_RULE.test(id)).toBe(valid);
      const http = httpVerdict({ expectedWorkspaceId: id });
      const stdio = stdioVerdict({ SESS_EXPECTED_WORKSPACE_ID: id });
      expect(http === 'accepted').toBe(valid);
      expect(stdio === 'accepted').toBe(valid);
      if (!valid) {
        expect(http).toContain('"expectedWorkspaceId"');
        expect(stdio).toContain('SESS_EXPECTED_WORKSPACE_ID');
        expect(stdio).toContain(SESS_ID_RULE.text);
      }
    },
  );
});

describe('entry surfaces', () => {
  it('@sess.si/mcp/http exports exactly its named values', () => {
    expect(Object.keys(httpEntry).sort()).toEqual([
      'DEFAULT_CALLS_PER_MINUTE_PER_CREDENTIAL',
      'DEFAULT_HTTP_REQUEST_DEADLINE_MS',
      'DEFAULT_MAX_BODY_BYTES',
      'createSessMcpHttpHandler',
      'createSessMcpWatcher',
      'httpBindingOf',
    ]);
  });
});
