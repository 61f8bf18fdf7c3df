/**
 * `createSessClientFactory` (`@sess.si/mcp/sess`): the options are checked once, as
 * `createSessClient` checks them, and every client it returns speaks for its own credential.
 */
import { describe, expect, it } from 'vitest';
import { createReceiptVerifier, createSessClient, createSessClientFactory } from '../../src/sess/index.js';
import { expectSessError, idemKey, surface, useRuntime } from './helpers.js';

const sess = useRuntime();

describe('createSessClientFactory', () => {
  it('refuses a bad option when it is made, with the message createSessClient gives', () => {
    const bad = { origin: 'http://127.0.0.1:1', requestTimeoutMs: -1 } as const;
    const direct = (() => {
      try {
        createSessClient({ ...bad, credential: () => 'k' });
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    })();
    expect(direct).toMatch(/^createSessClient: option "/);
    expect(() => createSessClientFactory(bad)).toThrow(
      direct.replace('createSessClient:', 'createSessClientFactory:'),
    );
  });

  it('returns a client per credential, each acting in its own workspace', async () => {
    const clientFor = createSessClientFactory({
      origin: sess.origin,
      allowInsecureLocalhost: true,
      receiptVerifier: createReceiptVerifier({ origin: sess.origin, allowInsecureLocalhost: true }),
    });
    const other = await sess.createWorkspace();
    const mine = clientFor(() => sess.apiKey);
    const theirs = clientFor(() => other.apiKey);
    const created = await mine.createSession({ surface: surface(), idempotencyKey: idemKey() });
    expect(created.workspaceId).toBe(sess.workspaceId);
    expect((await mine.getSession(created.sessionId)).sessionId).toBe(created.sessionId);
    await expectSessError(theirs.getSession(created.sessionId), 'api', { status: 404 });
  });
});
