/**
 * Sess that cannot be reached, through `engine.call` with the real client on real sockets: a host
 * name that does not resolve (a `.invalid` one never does), a refused port on 127.0.0.1 and a TLS
 * certificate that is self-signed and for another name (`test/support/tls-server.ts`). Every
 * error names the origin and the cause; a cause that looks like configuration (the name, the
 * certificate) is `NOT_CONFIGURED`, not retryable, and its `next` says not to retry, where a
 * refused connection stays `SESS_UNAVAILABLE` and retryable. Creating sends nothing and keeps no
 * record; a read changes nothing; a publish keeps its request saved, and the identical call
 * publishes once Sess can be reached.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode, ToolErrorObject } from '../../src/core/contract/errors.js';
import type { SessApi } from '../../src/core/contract/ports.js';
import { ERROR_NEXT } from '../../src/core/contract/result.js';
import { createSessClient } from '../../src/sess/client.js';
import { closedPort } from '../sess/helpers.js';
import { type MisnamedTlsServer, startMisnamedTlsServer } from '../support/tls-server.js';
import { approveSurface, forwardingSess, type Harness, localClient, startHarness } from './harness.js';

let tls: MisnamedTlsServer;
let refusedOrigin = '';
beforeAll(async () => {
  tls = await startMisnamedTlsServer();
  refusedOrigin = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(async () => {
  await tls.close();
});

let h: Harness | undefined;
/** The client the engine calls Sess through; each case points it somewhere. */
let current: SessApi | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function start(): Promise<Harness> {
  h = await startHarness({ wrapSess: (real) => forwardingSess(() => current ?? real) });
  current = undefined;
  return h;
}

/** A real client of `origin` with the runtime's key. */
function clientOf(origin: string, harness: Harness): SessApi {
  return createSessClient({ origin, credential: () => harness.sess.apiKey, allowInsecureLocalhost: true });
}

interface Case {
  name: string;
  origin: () => string;
  code: ErrorCode;
  /** What the message says of the cause. */
  cause: string;
}

const CASES: Case[] = [
  {
    name: 'a host name that does not resolve',
    origin: () => 'https://sess-mcp-test.invalid',
    code: 'NOT_CONFIGURED',
    cause: 'its host name does not resolve (DNS)',
  },
  {
    name: 'a TLS certificate, self-signed and for another name',
    origin: () => tls.origin,
    code: 'NOT_CONFIGURED',
    cause: 'its TLS certificate is not trusted',
  },
  {
    name: 'a refused port on 127.0.0.1',
    origin: () => refusedOrigin,
    code: 'SESS_UNAVAILABLE',
    cause: 'the connection was refused',
  },
];

/** One call's error and its `next`, read from the result the agent gets. */
async function failure(
  harness: Harness,
  tool: Parameters<Harness['call']>[0],
  args: unknown,
): Promise<{ error: ToolErrorObject; next: string }> {
  const result = await harness.engine.call(tool, args);
  expect(result.isError).toBe(true);
  return result.structuredContent as { error: ToolErrorObject; next: string };
}

/** The error names the origin and the cause, never the key, and its guidance fits its code. */
function expectNamed(got: { error: ToolErrorObject; next: string }, c: Case, harness: Harness): void {
  const { error, next } = got;
  expect(error.code, error.message).toBe(c.code);
  expect(error.message).toContain(`Sess at ${c.origin()} could not be reached while `);
  expect(error.message).toContain(c.cause);
  expect(error.message).not.toContain(harness.sess.apiKey);
  if (c.code === 'NOT_CONFIGURED') {
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('trying again will not help');
    expect(error.message).toContain('SESS_API_ORIGIN for the stdio server, sessOrigin over HTTP');
    expect(next).toBe(ERROR_NEXT.configuration);
    expect(next).toMatch(/^Do not retry/);
  } else {
    expect(error.retryable).toBe(true);
    expect(next).toBe(ERROR_NEXT.unavailable);
  }
}

describe.each(CASES)('Sess not reached: $name', (c) => {
  it('sess_request names the origin and the cause, sends nothing and keeps no record', async () => {
    const harness = await start();
    current = clientOf(c.origin(), harness);
    const got = await failure(harness, 'sess_request', { interaction: approveSurface });
    expectNamed(got, c, harness);
    expect(got.error.message).toMatch(/while creating the link: /);
    expect(await harness.store().countUnfinished()).toBe(0);
    expect(harness.sess.stats.of().sessionsCreated).toBe(0);
    expect(tls.requests()).toBe(0);
  });

  it('sess_response names them too, and the record stays as it was', async () => {
    const harness = await start();
    const { created, response } = await harness.submitted();
    const before = await harness.record(created.handle);
    current = clientOf(c.origin(), harness);
    expectNamed(await failure(harness, 'sess_response', { ...response, wait_ms: 0 }), c, harness);
    expect(await harness.record(created.handle)).toEqual(before);
  });

  it('sess_publish keeps its request saved, and the identical call publishes once Sess is reached', async () => {
    const harness = await start();
    const { publish } = await harness.answered();
    current = clientOf(c.origin(), harness);
    const got = await failure(harness, 'sess_publish', publish);
    expectNamed(got, c, harness);
    expect(got.error.message).toContain('request stays saved');
    expect((await harness.record(publish.handle))?.record.state.kind).toBe('publish_pending');
    current = localClient(harness.sess);
    const published = await harness.ok('sess_publish', publish);
    expect(published.revision).toBe(2);
    expect(harness.sess.stats.of().revisionsPublished).toBe(1);
  });
});
