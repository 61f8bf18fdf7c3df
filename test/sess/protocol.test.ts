/**
 * Strict decoding: malformed and self-contradictory responses are `protocol` errors that fail
 * closed. Faults of the local runtime first; a named loopback test double only for responses the
 * runtime cannot be made to send.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessApi } from '../../src/core/contract/ports.js';
import { createSessClient } from '../../src/sess/client.js';
import type { WireSessionView } from '../../src/sess/wire-reader.js';
import { type ContradictionVariant, startLocalSess } from '../../src/testing/index.js';
import {
  afterAnswer,
  answer,
  answeredSession,
  clientFor,
  expectSessError,
  idemKey,
  startDoubleServer,
  surface,
  surfaceAsk,
  useRuntime,
} from './helpers.js';

const sess = useRuntime();

describe('runtime faults', () => {
  it('a truncated body on a read is protocol, with the reason body_not_json', async () => {
    const client = clientFor(sess);
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    sess.faults.malformed('get');
    const error = await expectSessError(client.getSession(created.sessionId), 'protocol');
    expect(error.protocolReason).toBe('body_not_json');
  });

  it('a malformed body on a create is protocol (the Session exists)', async () => {
    const client = clientFor(sess);
    const before = sess.stats.of().sessionsCreated;
    sess.faults.malformed('create', { body: '{"id":"ses_1"}' });
    await expectSessError(
      client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'protocol',
    );
    expect(sess.stats.of().sessionsCreated).toBe(before + 1);
  });

  it.each<[ContradictionVariant, 'get' | 'wait']>([
    ['response_above_revision', 'get'],
    ['active_with_answer', 'get'],
    ['answered_without_answer', 'get'],
    ['duplicate_revision', 'get'],
    ['response_above_revision', 'wait'],
    ['active_with_answer', 'wait'],
  ])('a contradictory view (%s) from %s is protocol', async (variant, endpoint) => {
    const client = clientFor(sess);
    const { created } = await answeredSession(sess, client);
    sess.faults.contradictory(endpoint, { variant });
    const call =
      endpoint === 'get'
        ? client.getSession(created.sessionId)
        : client.waitSession(created.sessionId, { revision: 1, status: 'active', timeoutMs: 0 });
    await expectSessError(call, 'protocol');
  });

  it('an active Session at revision 1 with an answer at that revision is protocol', async () => {
    const client = clientFor(sess);
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    sess.faults.contradictory('get', { variant: 'active_with_answer' });
    await expectSessError(client.getSession(created.sessionId), 'protocol');
  });

  it('an Ask whose counts disagree is protocol', async () => {
    const client = clientFor(sess);
    const ask = await surfaceAsk(client, 3);
    sess.faults.contradictory('getAsk', { variant: 'ask_counts' });
    await expectSessError(client.getAsk(ask.askId), 'protocol');
  });

  it('a contradictory publish response is protocol (the revision was published)', async () => {
    const client = clientFor(sess);
    const { created, answered } = await answeredSession(sess, client);
    sess.faults.contradictory('publish', { variant: 'active_with_answer' });
    await expectSessError(
      client.publish(created.sessionId, { ...afterAnswer(answered), surface: surface('Next') }),
      'protocol',
    );
    expect(sess.sessions.get(created.sessionId)?.view.revision).toBe(2);
  });

  it('a workspace other than expectedWorkspaceId is protocol', async () => {
    const client = clientFor(sess, { expectedWorkspaceId: 'ws_somebody_else' });
    await expectSessError(
      client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'protocol',
    );
  });

  it('without the header, a body naming a workspace other than expectedWorkspaceId is protocol', async () => {
    const local = await startLocalSess({ workspaceHeader: false });
    try {
      await expectSessError(
        clientFor(local, { expectedWorkspaceId: 'ws_somebody_else' }).createSession({
          surface: surface(),
          idempotencyKey: idemKey(),
        }),
        'protocol',
      );
      const ok = await clientFor(local, { expectedWorkspaceId: local.workspaceId }).createSession({
        surface: surface(),
        idempotencyKey: idemKey(),
      });
      expect(ok.workspaceId).toBe(local.workspaceId);
    } finally {
      await local.close();
    }
  });

  it('a Sess-Workspace-Id that changes between responses of one client is protocol', async () => {
    const other = await sess.createWorkspace();
    let key = sess.apiKey;
    const client = createSessClient({
      origin: sess.origin,
      credential: () => key,
      allowInsecureLocalhost: true,
    });
    await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    key = other.apiKey;
    await expectSessError(
      client.createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'protocol',
    );
  });
});

describe('test double (responses the runtime cannot be made to send)', () => {
  let base: WireSessionView;
  let answeredView: WireSessionView;
  let reply: (res: ServerResponse, url: string) => void = () => {};
  let double: Awaited<ReturnType<typeof startDoubleServer>>;

  beforeAll(async () => {
    const client = clientFor(sess);
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    base = sess.sessions.get(created.sessionId)!.view;
    const { created: c2 } = await answeredSession(sess, client, { answer: answer('double') });
    answeredView = sess.sessions.get(c2.sessionId)!.view;
    double = await startDoubleServer((req, res) => reply(res, req.url ?? ''));
  });
  afterAll(async () => {
    await double.close();
  });

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const client = () =>
    createSessClient({ origin: double.origin, credential: () => 'sk_double', allowInsecureLocalhost: true });

  it('a view of another Session than asked is protocol', async () => {
    reply = (res) => json(res, 200, base);
    await expectSessError(client().getSession('ses_another_one'), 'protocol');
    // The same body for the Session asked is fine: the double is honest otherwise.
    expect((await client().getSession(base.id)).sessionId).toBe(base.id);
  });

  it('an ETag that disagrees with the revision is protocol', async () => {
    reply = (res) => json(res, 200, base, { etag: '"7"' });
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('a Sess-Workspace-Id that disagrees with the body is protocol', async () => {
    reply = (res) => json(res, 200, base, { 'sess-workspace-id': 'ws_header_other' });
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('a Sess-Workspace-Id that is not an id is protocol', async () => {
    reply = (res) => json(res, 200, base, { 'sess-workspace-id': 'ws bad/id' });
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('a wait that goes back a revision is protocol', async () => {
    reply = (res) => json(res, 200, base);
    await expectSessError(
      client().waitSession(base.id, { revision: 2, status: 'active', timeoutMs: 0 }),
      'protocol',
    );
  });

  it('a wait where the known answer disappeared is protocol', async () => {
    reply = (res) => json(res, 200, base);
    await expectSessError(
      client().waitSession(base.id, { revision: 1, status: 'answered', timeoutMs: 0 }),
      'protocol',
    );
  });

  it('a create answered with a Session not at revision 1 is protocol', async () => {
    reply = (res) => json(res, 201, answeredView);
    await expectSessError(
      client().createSession({ surface: surface(), idempotencyKey: idemKey() }),
      'protocol',
    );
  });

  /** A publish or complete after the answer `eventId` (default: the view's own) at revision 1. */
  const sentAfter = (eventId = answeredView.responses[0]!.event_id) => ({
    expectedRevision: 1,
    responseEventId: eventId,
    idempotencyKey: idemKey(),
  });
  const afterAnswerCases: Array<[string, () => object, (api: SessApi) => Promise<unknown>]> = [
    [
      'a publish answered with the same revision',
      () => answeredView,
      (api) => api.publish(answeredView.id, { ...sentAfter(), surface: surface() }),
    ],
    [
      'a complete answered with a Session that is not completed',
      () => answeredView,
      (api) => api.complete(answeredView.id, sentAfter()),
    ],
    [
      'a complete after another answer',
      () => ({ ...answeredView, status: 'completed' }),
      (api) => api.complete(answeredView.id, sentAfter('evt_other')),
    ],
  ];
  it.each(afterAnswerCases)('%s is protocol', async (_name, body, call) => {
    reply = (res) => json(res, 200, body());
    await expectSessError(call(client()), 'protocol');
  });

  it('a redirect is not followed and is protocol', async () => {
    reply = (res) => {
      res.writeHead(307, { location: 'http://127.0.0.1:9/steal' });
      res.end();
    };
    await expectSessError(client().getSession(base.id), 'protocol');
    expect(double.requests).toBeGreaterThan(0);
  });

  it('a success that is not JSON is protocol', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html></html>');
    };
    await expectSessError(client().getSession(base.id), 'protocol');
    reply = (res) => json(res, 200, '{"id":');
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('a success with an unexpected status is protocol', async () => {
    reply = (res) => json(res, 202, base);
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('a 4xx without a Sess error body is protocol; a 5xx without one is still api', async () => {
    reply = (res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not here</h1>');
    };
    await expectSessError(client().getSession(base.id), 'protocol');
    reply = (res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad gateway</h1>');
    };
    await expectSessError(client().getSession(base.id), 'api', { status: 502, apiCode: undefined });
  });

  it('an oversized body is protocol', async () => {
    reply = (res) => json(res, 200, { ...base, padding: 'x'.repeat(9_000_000) });
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('a body that is not UTF-8 is protocol', async () => {
    reply = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    };
    await expectSessError(client().getSession(base.id), 'protocol');
  });

  it('unknown members are ignored (forward compatibility)', async () => {
    reply = (res) => json(res, 200, { ...base, future_member: { x: 1 } });
    expect((await client().getSession(base.id)).revision).toBe(1);
  });
});
