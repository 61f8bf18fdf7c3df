/**
 * The per-profile credential key: created once, mode 0600, never holding the API key; the
 * generation is stable for one key and changes with the key.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSessMcpError } from '../../src/core/contract/errors.js';
import { credentialGenerationOf, loadOrCreateCredentialKey } from '../../src/stdio/credential.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sess-mcp-cred-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('credential key', () => {
  it('is created once with mode 0600 and reused', async () => {
    const profileDir = join(dir, 'profiles', 'default');
    const first = await loadOrCreateCredentialKey(profileDir);
    const second = await loadOrCreateCredentialKey(profileDir);
    expect(first).toHaveLength(32);
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    const info = await stat(join(profileDir, 'credential-key'));
    if (process.platform !== 'win32') expect(info.mode & 0o777).toBe(0o600);
    expect(await readdir(profileDir)).toEqual(['credential-key']); // no temp file left
  });

  it('gives one secret to many concurrent first callers', async () => {
    const profileDir = join(dir, 'p');
    const all = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateCredentialKey(profileDir)));
    const distinct = new Set(all.map((k) => Buffer.from(k).toString('hex')));
    expect(distinct.size).toBe(1);
    expect(await readdir(profileDir)).toEqual(['credential-key']);
  });

  it('derives a generation that follows the key and never contains it', async () => {
    const secret = await loadOrCreateCredentialKey(dir);
    const key = 'sk_test_credential_generation_key';
    const a = credentialGenerationOf(secret, key);
    expect(a).toMatch(/^hmac-sha256:[A-Za-z0-9_-]{43}$/);
    expect(credentialGenerationOf(secret, key)).toBe(a);
    expect(credentialGenerationOf(secret, `${key}2`)).not.toBe(a);
    const other = await loadOrCreateCredentialKey(join(dir, 'other'));
    expect(credentialGenerationOf(other, key)).not.toBe(a);
    expect(await readFile(join(dir, 'credential-key'), 'utf8')).not.toContain(key);
  });

  it('reports a damaged key file as a non-retryable STATE_STORE_ERROR', async () => {
    await writeFile(join(dir, 'credential-key'), 'garbage\n');
    const error = await loadOrCreateCredentialKey(dir).catch((e: unknown) => e);
    expect(isSessMcpError(error) && error.code).toBe('STATE_STORE_ERROR');
    expect(isSessMcpError(error) && error.retryable).toBe(false);
  });
});
