/**
 * How transport failures are told apart: definitely not sent, possibly sent (a read), or a
 * mutation whose answer was lost. Real sockets where they can produce the failure; a named test
 * double `fetch` only for what Node cannot show (an edge runtime's code-less network error).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectCause } from '../../src/core/contract/ports.js';
import { createSessClient } from '../../src/sess/client.js';
import { connectFailureOf, isDefinitelyNotSent } from '../../src/sess/errors.js';
import { type MisnamedTlsServer, startMisnamedTlsServer } from '../support/tls-server.js';
import { closedPort, expectSessError, idemKey, startDoubleServer, surface } from './helpers.js';

describe('not sent', () => {
  it('a refused connection to localhost (every address family tried) is not_sent', async () => {
    const port = await closedPort();
    const client = createSessClient({
      origin: `http://localhost:${port}`,
      credential: () => 'sk_x',
      allowInsecureLocalhost: true,
    });
    await expectSessError(
      client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'not_sent',
      {
        notSentKind: 'transport',
      },
    );
  });

  it.each<[string, unknown, boolean]>([
    [
      'ECONNREFUSED on cause',
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }),
      true,
    ],
    [
      'ENOTFOUND on cause',
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } }),
      true,
    ],
    [
      'EAI_AGAIN on cause',
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'EAI_AGAIN' } }),
      true,
    ],
    [
      'a TLS certificate failure',
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'CERT_HAS_EXPIRED' } }),
      true,
    ],
    [
      'every happy-eyeballs attempt refused',
      Object.assign(new TypeError('fetch failed'), {
        cause: new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }]),
      }),
      true,
    ],
    [
      'one happy-eyeballs attempt reset',
      Object.assign(new TypeError('fetch failed'), {
        cause: new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNRESET' }]),
      }),
      false,
    ],
    ['ECONNRESET', Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }), false],
    [
      'other side closed',
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'UND_ERR_SOCKET' } }),
      false,
    ],
    ['no code at all (edge runtimes)', new TypeError('Network connection lost.'), false],
    ['not an error', 'boom', false],
  ])('%s → definitely not sent: %s', (_name, error, expected) => {
    expect(isDefinitelyNotSent(error)).toBe(expected);
  });
});

describe('a connection never made: the origin and why, on real sockets', () => {
  let tls: MisnamedTlsServer;
  beforeAll(async () => {
    tls = await startMisnamedTlsServer();
  });
  afterAll(async () => {
    await tls.close();
  });
  const create = (client: ReturnType<typeof createSessClient>) =>
    client.createSession({ surface: surface(), idempotencyKey: idemKey() });

  it('a host name that does not resolve (.invalid never does) is name_not_resolved, naming the origin', async () => {
    const origin = 'https://sess-mcp-test.invalid';
    const error = await expectSessError(
      create(createSessClient({ origin, credential: () => 'sk_x' })),
      'not_sent',
      {
        notSentKind: 'transport',
        connectCause: 'name_not_resolved',
        origin,
      },
    );
    expect(error.message).toBe(
      `Could not connect to Sess at ${origin} to create a Session (ENOTFOUND); nothing was sent.`,
    );
  });

  it('a refused port on 127.0.0.1 is connection_refused', async () => {
    const origin = `http://127.0.0.1:${await closedPort()}`;
    const client = createSessClient({ origin, credential: () => 'sk_x', allowInsecureLocalhost: true });
    await expectSessError(client.getSession('ses_1'), 'not_sent', {
      notSentKind: 'transport',
      connectCause: 'connection_refused',
      origin,
    });
  });

  it('a self-signed certificate for another name is tls_certificate, and no request reaches the server', async () => {
    const client = createSessClient({ origin: tls.origin, credential: () => 'sk_x' });
    const error = await expectSessError(create(client), 'not_sent', {
      notSentKind: 'transport',
      connectCause: 'tls_certificate',
      origin: tls.origin,
    });
    expect(error.message).toContain('(DEPTH_ZERO_SELF_SIGNED_CERT)');
    expect(tls.requests()).toBe(0);
  });

  it.each<[string, ConnectCause]>([
    ['ENOTFOUND', 'name_not_resolved'],
    ['EAI_NONAME', 'name_not_resolved'],
    ['EAI_FAIL', 'name_not_resolved'],
    ['EAI_AGAIN', 'name_lookup_failed'],
    ['ECONNREFUSED', 'connection_refused'],
    ['EHOSTUNREACH', 'unreachable'],
    ['ENETUNREACH', 'unreachable'],
    ['EADDRNOTAVAIL', 'unreachable'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
    ['CERT_HAS_EXPIRED', 'tls_certificate'],
    ['CERT_NOT_YET_VALID', 'tls_certificate'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls_certificate'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'tls_certificate'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls_certificate'],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'tls_certificate'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls_name_mismatch'],
  ])('%s on cause is %s', (code, cause) => {
    const error = Object.assign(new TypeError('fetch failed'), { cause: { code } });
    expect(connectFailureOf(error)).toEqual({ code, cause });
  });
});

describe('sent, answer lost', () => {
  let double: Awaited<ReturnType<typeof startDoubleServer>>;
  beforeAll(async () => {
    // A test double: answers with a head and half a body, then cuts the connection.
    double = await startDoubleServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      res.write('{"id":"ses_1","revision":');
      setTimeout(() => res.socket?.destroy(), 10);
    });
  });
  afterAll(async () => {
    await double.close();
  });
  const client = () =>
    createSessClient({ origin: double.origin, credential: () => 'sk_x', allowInsecureLocalhost: true });

  it('a read cut mid-body is transport', async () => {
    await expectSessError(client().getSession('ses_1'), 'transport');
  });

  it('a mutation cut mid-body is unknown_outcome', async () => {
    await expectSessError(
      client().complete('ses_1', {
        expectedRevision: 1,
        responseEventId: 'evt_1',
        idempotencyKey: idemKey(),
      }),
      'unknown_outcome',
    );
  });
});

describe('edge runtimes (test double fetch: a network error with no code)', () => {
  const edgeFetch = (async () => {
    throw new TypeError('Network connection lost.');
  }) as typeof fetch;
  const client = createSessClient({
    origin: 'https://api.sess.si',
    credential: () => 'sk_x',
    fetch: edgeFetch,
  });

  it('a read is transport', async () => {
    await expectSessError(client.getSession('ses_1'), 'transport');
  });

  it('a mutation is unknown_outcome: without proof it was not sent, the outcome is unknown', async () => {
    await expectSessError(
      client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'unknown_outcome',
    );
  });

  it('a fetch that ignores its signal still ends at the deadline and on abort', async () => {
    const hanging = (() => new Promise<Response>(() => {})) as typeof fetch;
    const slow = createSessClient({
      origin: 'https://api.sess.si',
      credential: () => 'sk_x',
      fetch: hanging,
      requestTimeoutMs: 50,
    });
    await expectSessError(slow.getSession('ses_1'), 'timeout');
    const controller = new AbortController();
    const pending = createSessClient({
      origin: 'https://api.sess.si',
      credential: () => 'sk_x',
      fetch: hanging,
    }).getSession('ses_1', { signal: controller.signal });
    controller.abort();
    await expectSessError(pending, 'aborted');
  });

  it('sends the key only as a bearer token, to the origin, with no redirect following', async () => {
    const seen: Array<{ url: string; init: RequestInit | undefined }> = [];
    const recording = (async (url: string | URL | Request, init?: RequestInit) => {
      seen.push({ url: String(url), init });
      return new Response('{}', { status: 404, headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    const c = createSessClient({
      origin: 'https://api.sess.si',
      credential: () => 'sk_live_123',
      fetch: recording,
    });
    await expectSessError(c.getSession('ses_1'), 'protocol');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe('https://api.sess.si/v1/sessions/ses_1');
    expect(seen[0]?.init?.redirect).toBe('manual');
    const headers = seen[0]!.init!.headers as Record<string, string>;
    expect(headers.authorization).toBe('Bearer sk_live_123');
  });
});
