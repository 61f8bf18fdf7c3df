/**
 * A protocol error names the check that failed in one fixed word: the client's `protocolReason`,
 * which the engine passes on as the `reason` of `SESS_PROTOCOL_ERROR`. Only fixed words, never
 * data: the same word for every response that fails the same check.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SessApiError } from '../../src/core/contract/ports.js';
import {
  classifyCreateFailure,
  classifyMutationFailure,
  classifyReadFailure,
} from '../../src/core/engine/sess-errors.js';
import { createSessClient } from '../../src/sess/client.js';
import { type Harness, startHarness } from '../engine/harness.js';
import {
  answeredSession,
  clientFor,
  expectSessError,
  idemKey,
  startDoubleServer,
  surface,
  useRuntime,
} from './helpers.js';

const sess = useRuntime();

describe('the client', () => {
  it('JSON of another shape is view_malformed', async () => {
    const client = clientFor(sess);
    const created = await client.createSession({ surface: surface(), idempotencyKey: idemKey() });
    sess.faults.malformed('get', { body: '{"id":"ses_1"}' });
    const error = await expectSessError(client.getSession(created.sessionId), 'protocol');
    expect(error.protocolReason).toBe('view_malformed');
  });

  it('a self-contradictory wait is view_inconsistent', async () => {
    const client = clientFor(sess);
    const { created } = await answeredSession(sess, client);
    sess.faults.contradictory('wait', { variant: 'active_with_answer' });
    const error = await expectSessError(
      client.waitSession(created.sessionId, { revision: 1, status: 'active', timeoutMs: 0 }),
      'protocol',
    );
    expect(error.protocolReason).toBe('view_inconsistent');
  });
});

describe('the tool error', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('SESS_PROTOCOL_ERROR carries the client’s word as its reason', async () => {
    harness = await startHarness();
    const { response } = await harness.submitted();
    harness.sess.faults.contradictory('wait', { variant: 'answered_without_answer' });
    const error = await harness.fail('sess_response', response);
    expect(error.code).toBe('SESS_PROTOCOL_ERROR');
    expect(error.reason).toBe('view_inconsistent');
  });

  it('a confirming read cut short is SESS_PROTOCOL_ERROR with reason body_not_json', async () => {
    harness = await startHarness();
    const { response } = await harness.submitted();
    harness.sess.faults.malformed('get');
    const error = await harness.fail('sess_response', response);
    expect(error.code).toBe('SESS_PROTOCOL_ERROR');
    expect(error.reason).toBe('body_not_json');
  });
});

describe('HTTP 408 without a Sess error body (an overloaded server that did not read the request in time)', () => {
  it('is an api error with its status, not a protocol error', async () => {
    // Double: what Node's own HTTP server writes when a request's headers are not read in time.
    const double = await startDoubleServer((_req, res) => {
      res.writeHead(408, { connection: 'close' });
      res.end();
    });
    try {
      const client = createSessClient({
        origin: double.origin,
        credential: () => 'sk_double',
        allowInsecureLocalhost: true,
      });
      await expectSessError(client.getSession('ses_0123456789abcdefghijkl'), 'api', { status: 408 });
    } finally {
      await double.close();
    }
  });

  it('ends a read SESS_UNAVAILABLE, and a create or a saved mutation as not applied', () => {
    const err = new SessApiError('api', 'Sess did not receive the request in time (HTTP 408).', {
      status: 408,
    });
    const read = classifyReadFailure(err, 'waiting for the answer');
    expect(read.kind === 'fail' && read.error.code).toBe('SESS_UNAVAILABLE');
    const create = classifyCreateFailure(err);
    expect(create.kind === 'not_created' && create.error.code).toBe('SESS_UNAVAILABLE');
    const mutation = classifyMutationFailure(err, 'sess_publish');
    expect(mutation.kind === 'pending' && mutation.error.code).toBe('SESS_UNAVAILABLE');
  });
});
