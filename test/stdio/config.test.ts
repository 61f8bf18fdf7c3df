/**
 * The stdio configuration table: defaults, each variable's rule, and that no message ever repeats
 * the value it refused.
 */

import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import {
  PROFILE_NAME_RULE,
  profileDirectory,
  SESS_ID_RULE,
  WAIT_MS_RULE,
} from '../../src/core/contract/rules.js';
import { readStdioConfig, type StdioConfigPlatform } from '../../src/stdio/config.js';
import * as stdioEntry from '../../src/stdio/index.js';
import { createFileHandleStore } from '../../src/store/file/index.js';

const linux = { platform: 'linux', homedir: () => '/home/fallback' };

function refusal(
  env: Record<string, string | undefined>,
  platform: StdioConfigPlatform = linux,
): { code: string; message: string } {
  try {
    readStdioConfig(env, platform);
  } catch (error) {
    if (!isSessMcpError(error)) throw error;
    return { code: error.code, message: error.message };
  }
  throw new Error('expected a refusal');
}

describe('readStdioConfig', () => {
  it('has the documented defaults', () => {
    const config = readStdioConfig({ HOME: '/home/me' }, linux);
    expect(config).toEqual({
      apiOrigin: 'https://api.sess.si',
      profile: 'default',
      stateDir: '/home/me/.local/state/sess-mcp',
      profileDir: '/home/me/.local/state/sess-mcp/profiles/default',
      allowInsecureLocalhost: false,
      claudeChannel: false,
      watch: true,
      retentionMs: 30 * 86_400_000,
    });
  });

  it('never reads SESS_API_KEY', () => {
    const env = new Proxy({ HOME: '/home/me' } as Record<string, string | undefined>, {
      get(target, name) {
        if (name === 'SESS_API_KEY') throw new Error('read the key at start-up');
        return target[name as string];
      },
    });
    expect(() => readStdioConfig(env, linux)).not.toThrow();
  });

  it.each([
    [{ XDG_STATE_HOME: '/xdg', HOME: '/home/me' }, '/xdg/sess-mcp'],
    [{ XDG_STATE_HOME: 'relative/xdg', HOME: '/home/me' }, '/home/me/.local/state/sess-mcp'],
    [{ XDG_STATE_HOME: '', HOME: '/home/me' }, '/home/me/.local/state/sess-mcp'],
    [{}, '/home/fallback/.local/state/sess-mcp'],
    [{ SESS_MCP_STATE_DIR: '/srv/state/../sess', HOME: '/home/me' }, '/srv/sess'],
  ])('picks the state dir from %j', (env, expected) => {
    expect(readStdioConfig(env, linux).stateDir).toBe(expected);
  });

  it('uses %LOCALAPPDATA%\\sess-mcp on Windows', () => {
    const config = readStdioConfig({ LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' }, { platform: 'win32' });
    expect(config.stateDir).toBe('C:\\Users\\me\\AppData\\Local\\sess-mcp');
    expect(config.profileDir).toBe('C:\\Users\\me\\AppData\\Local\\sess-mcp\\profiles\\default');
  });

  it('accepts a loopback http origin only with the testing flag', () => {
    const env = { HOME: '/h', SESS_API_ORIGIN: 'http://127.0.0.1:8787' };
    expect(refusal(env).message).toMatch(/SESS_API_ORIGIN/);
    expect(readStdioConfig({ ...env, SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1' }, linux).apiOrigin).toBe(
      'http://127.0.0.1:8787',
    );
    expect(
      readStdioConfig({ HOME: '/h', SESS_API_ORIGIN: 'https://API.example.com/' }, linux).apiOrigin,
    ).toBe('https://api.example.com');
  });

  it('honours the crash hook only with the testing flag', () => {
    const env = { HOME: '/h', SESS_MCP_TEST_CRASH_AT: 'create.after_intent_saved' };
    expect(readStdioConfig(env, linux).crashAt).toBeUndefined();
    expect(readStdioConfig({ ...env, SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1' }, linux).crashAt).toBe(
      'create.after_intent_saved',
    );
  });

  it.each([
    ['0', 0],
    ['1500', 1500],
    ['45000', 45000],
  ])('takes SESS_MCP_MAX_WAIT_MS=%s', (value, expected) => {
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_MAX_WAIT_MS: value }, linux).maxWaitMs).toBe(expected);
  });

  // Each refused value is distinctive so the test can prove the message does not repeat it.
  it.each([
    ['SESS_API_ORIGIN', 'https://user:hunter2secret@api.sess.si'],
    ['SESS_API_ORIGIN', 'https://api.sess.si/v1?token=hunter2secret'],
    ['SESS_API_ORIGIN', 'http://hunter2secret.example.com'],
    ['SESS_API_ORIGIN', 'sk_live_hunter2secret'],
    ['SESS_MCP_PROFILE', '../hunter2secret'],
    ['SESS_MCP_PROFILE', 'hunter2secret/x'],
    ['SESS_MCP_PROFILE', '.hunter2secret'],
    ['SESS_MCP_STATE_DIR', 'relative/hunter2secret'],
    ['SESS_MCP_MAX_WAIT_MS', '45001'],
    ['SESS_MCP_MAX_WAIT_MS', '-1'],
    ['SESS_MCP_MAX_WAIT_MS', '1e3'],
    ['SESS_MCP_MAX_WAIT_MS', 'hunter2secret'],
    ['SESS_RECEIPT_ISSUER', 'with space hunter2secret'],
    ['SESS_EXPECTED_WORKSPACE_ID', 'ws hunter2secret'],
    ['SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST', 'yes-hunter2secret'],
  ])('refuses %s=%s with NOT_CONFIGURED naming the variable, not the value', (name, value) => {
    const { code, message } = refusal({ HOME: '/h', [name]: value });
    expect(code).toBe('NOT_CONFIGURED');
    expect(message).toContain(name);
    expect(message).not.toContain('hunter2secret');
    expect(message).not.toContain(value);
  });

  it('takes a crash step with an occurrence count', () => {
    const env = {
      HOME: '/h',
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_TEST_CRASH_AT: 'publish.after_request_sent@2',
    };
    expect(readStdioConfig(env, linux).crashAt).toBe('publish.after_request_sent@2');
  });

  it('refuses a malformed crash step when the testing flag is set', () => {
    const { message } = refusal({
      HOME: '/h',
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_TEST_CRASH_AT: 'rm -rf',
    });
    expect(message).toContain('SESS_MCP_TEST_CRASH_AT');
  });

  it('asks for SESS_MCP_STATE_DIR when there is no home', () => {
    expect(refusal({}, { platform: 'linux', homedir: () => '' }).message).toContain('SESS_MCP_STATE_DIR');
    expect(refusal({}, { platform: 'win32' }).message).toContain('SESS_MCP_STATE_DIR');
  });
});

describe('one source per rule', () => {
  it('refuses SESS_EXPECTED_WORKSPACE_ID=ws!1 at start-up, naming the variable and the id rule', () => {
    const { code, message } = refusal({ HOME: '/h', SESS_EXPECTED_WORKSPACE_ID: 'ws!1' });
    expect(code).toBe('NOT_CONFIGURED');
    expect(message).toContain('SESS_EXPECTED_WORKSPACE_ID');
    expect(message).toContain(SESS_ID_RULE.text);
    expect(message).not.toContain('ws!1');
    expect(
      readStdioConfig({ HOME: '/h', SESS_EXPECTED_WORKSPACE_ID: 'ws.1:a-b' }, linux).expectedWorkspaceId,
    ).toBe('ws.1:a-b');
  });

  it('reads SESS_MCP_RETENTION as a duration or off, and names it when it refuses one', () => {
    const retention = (value: string) =>
      readStdioConfig({ HOME: '/h', SESS_MCP_RETENTION: value }, linux).retentionMs;
    expect(retention('12h')).toBe(12 * 3_600_000);
    expect(retention('90d')).toBe(90 * 86_400_000);
    expect(retention('off')).toBe(false);
    for (const bad of ['0', '30', '1w', '0s', 'OFF', '3651d']) {
      const error = refusal({ HOME: '/h', SESS_MCP_RETENTION: bad });
      expect(error.message).toContain('SESS_MCP_RETENTION must be a whole number and a unit');
    }
    // While events are delivered, nothing shorter than their retry span.
    const delivering = { HOME: '/h', SESS_MCP_CLAUDE_CHANNEL: '1' };
    expect(refusal({ ...delivering, SESS_MCP_RETENTION: '12h' }).message).toContain(
      'SESS_MCP_RETENTION must be at least 24 hours while events are delivered',
    );
    expect(readStdioConfig({ ...delivering, SESS_MCP_RETENTION: '1d' }, linux).retentionMs).toBe(86_400_000);
    expect(readStdioConfig({ ...delivering, SESS_MCP_RETENTION: 'off' }, linux).retentionMs).toBe(false);
  });

  it('states the wait rule when it refuses SESS_MCP_MAX_WAIT_MS', () => {
    expect(refusal({ HOME: '/h', SESS_MCP_MAX_WAIT_MS: '45001' }).message).toContain(WAIT_MS_RULE.text);
  });

  it.each([
    ['default', true],
    ['_legacy', true],
    ['work.2', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['.hidden', false],
    ['-x', false],
    ['a/b', false],
  ])('profile %s: SESS_MCP_PROFILE, the file store and PROFILE_NAME_RULE agree', (profile, valid) => {
    expect(PROFILE_NAME_RULE.test(profile)).toBe(valid);
    let config: ReturnType<typeof readStdioConfig> | undefined;
    try {
      config = readStdioConfig({ HOME: '/h', SESS_MCP_PROFILE: profile }, linux);
    } catch (error) {
      expect(isSessMcpError(error) && error.message.includes(PROFILE_NAME_RULE.text)).toBe(true);
    }
    expect(config !== undefined).toBe(valid);
    let storeAccepts = true;
    try {
      createFileHandleStore({ stateDir: '/h/state', profile });
    } catch {
      storeAccepts = false;
    }
    expect(storeAccepts).toBe(valid);
    if (config !== undefined) {
      expect(config.profileDir).toBe(profileDirectory(posix.join, config.stateDir, profile));
    }
  });

  it('@sess.si/mcp/stdio exports exactly its named values (no WAIT_CEILING_MS)', () => {
    expect(Object.keys(stdioEntry).sort()).toEqual([
      'DEFAULT_PROFILE',
      'STDIO_ENV',
      'createStderrDiagnostics',
      'createStdioAuthority',
      'credentialGenerationOf',
      'loadOrCreateCredentialKey',
      'readStdioConfig',
      'sanitizeDiagnostic',
      'serveSessMcpStdio',
    ]);
  });
});
