/**
 * Standard Webhooks signing and the wake event's body: every signature is checked with the
 * `standardwebhooks` package (the reference verifier), rotation with two secrets, the secret rule
 * as a table, and no message that holds a secret.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { type WakeEvent, wakeEventBody, wakeEventProblem } from '../../src/faces/wake/event.js';
import { createWebhookSigner, WEBHOOK_SECRET_RULE } from '../../src/faces/wake/webhook-signature.js';
import { newSecret } from '../support/webhook-receiver.js';

const EVENT: WakeEvent = {
  eventId: 'evt_01J9Z8Q6W3',
  type: 'answered',
  handle: 'sess_h_Qk9mZ2V0aGVyLXRoYW4tMTI4LWJpdHM',
  revision: 3,
  sequence: 17,
  occurredAt: '2025-01-31T12:00:00.000Z',
};

const now = () => Math.floor(Date.now() / 1000);

describe('signing', () => {
  it('signs what the reference verifier accepts, with the event id and the current second', async () => {
    const secret = newSecret();
    const body = wakeEventBody(EVENT);
    const headers = await createWebhookSigner([secret]).sign(EVENT.eventId, now(), body);
    expect(headers['webhook-id']).toBe(EVENT.eventId);
    expect(Math.abs(Number(headers['webhook-timestamp']) - now())).toBeLessThanOrEqual(1);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(EVENT);
  });

  it('agrees with the reference signer byte for byte', async () => {
    const secret = newSecret(24);
    const body = wakeEventBody(EVENT);
    const at = 1_738_324_800;
    const ours = await createWebhookSigner([secret]).sign('msg_1', at, body);
    expect(ours['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', new Date(at * 1000), body));
  });

  it('is refused by the reference verifier when the body, id or secret differs', async () => {
    const secret = newSecret();
    const body = wakeEventBody(EVENT);
    const headers = await createWebhookSigner([secret]).sign(EVENT.eventId, now(), body);
    const verify =
      (b: string, h: Record<string, string>, s = secret) =>
      () =>
        new Webhook(s).verify(b, h);
    expect(verify(body.replace('"revision":3', '"revision":4'), { ...headers })).toThrow(
      /No matching signature/,
    );
    expect(verify(body, { ...headers, 'webhook-id': 'evt_other' })).toThrow(/No matching signature/);
    expect(verify(body, { ...headers }, newSecret())).toThrow(/No matching signature/);
  });

  it('signs with every secret, so a receiver that knows only the second verifies (rotation)', async () => {
    const [old, next] = [newSecret(), newSecret(64)];
    const body = wakeEventBody(EVENT);
    const headers = await createWebhookSigner([old, next]).sign(EVENT.eventId, now(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(next).verify(body, { ...headers })).toEqual(EVENT);
    expect(new Webhook(old).verify(body, { ...headers })).toEqual(EVENT);
    expect(() => new Webhook(newSecret()).verify(body, { ...headers })).toThrow(/No matching signature/);
  });
});

describe('the secret rule', () => {
  const key32 = Buffer.alloc(32, 7).toString('base64'); // 43 characters and one "="
  it.each([
    ['a 24-byte key', `whsec_${Buffer.alloc(24, 1).toString('base64')}`, true],
    ['a 32-byte key, padded', `whsec_${key32}`, true],
    ['a 32-byte key, unpadded', `whsec_${key32.replace(/=+$/, '')}`, true],
    ['a 64-byte key', `whsec_${Buffer.alloc(64, 9).toString('base64')}`, true],
    ['no prefix', key32, false],
    ['another prefix', `whsk_${key32}`, false],
    ['empty', '', false],
    ['the prefix alone', 'whsec_', false],
    ['bad base64', 'whsec_!!!!notbase64!!!!notbase64!!!!notbase64', false],
    ['base64url characters', `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`, false],
    ['wrong padding', `whsec_${key32}==`, false],
    ['a space inside', `whsec_${key32.slice(0, 10)} ${key32.slice(10)}`, false],
    ['a 16-byte key', `whsec_${Buffer.alloc(16, 1).toString('base64')}`, false],
    ['a 65-byte key', `whsec_${Buffer.alloc(65, 1).toString('base64')}`, false],
    ['not a string', 42, false],
  ])('%s: %s', (_name, secret, valid) => {
    expect(WEBHOOK_SECRET_RULE.test(secret)).toBe(valid);
    if (valid) expect(() => new Webhook(secret as string)).not.toThrow();
  });

  it.each([
    ['a short secret', ['whsec_c2VjcmV0LXZhbHVlLXNob3J0']],
    ['a good then a bad secret', [newSecret(), 'whsec_bm90LWEta2V5']],
    ['no secret', []],
  ])('refuses %s at construction without repeating it', (_name, secrets) => {
    let message = '';
    try {
      createWebhookSigner(secrets);
    } catch (error) {
      expect(error).toBeInstanceOf(TypeError);
      message = (error as Error).message;
    }
    expect(message).toMatch(/^webhook secret/);
    for (const secret of secrets) {
      expect(message).not.toContain(secret);
      expect(message).not.toContain(secret.slice('whsec_'.length, 'whsec_'.length + 8));
    }
  });
});

describe('the event body', () => {
  it('is the JSON of the event fields only: nothing else the caller object holds is sent', () => {
    const withExtras = { ...EVENT, scope: 'stdio:default', answer: { approve: true }, link: 'https://x' };
    expect(JSON.parse(wakeEventBody(withExtras))).toEqual({ ...EVENT, scope: 'stdio:default' });
    expect(Object.keys(JSON.parse(wakeEventBody(EVENT)))).toEqual([
      'eventId',
      'type',
      'handle',
      'revision',
      'sequence',
      'occurredAt',
    ]);
  });

  it.each([
    ['a valid event', EVENT, undefined],
    ['each event type', { ...EVENT, type: 'ask.closed' }, undefined],
    ['a scope', { ...EVENT, scope: 'http:origin|ws|principal' }, undefined],
    ['no object', null, /object/],
    ['an id with a space', { ...EVENT, eventId: 'evt 1' }, /eventId/],
    ['an id with a line break', { ...EVENT, eventId: 'evt\r\nX-Injected: 1' }, /eventId/],
    ['an unknown type', { ...EVENT, type: 'answer' }, /type/],
    ['an empty handle', { ...EVENT, handle: '' }, /handle/],
    ['a control character in the handle', { ...EVENT, handle: 'a\u0007' }, /handle/],
    ['a negative revision', { ...EVENT, revision: -1 }, /revision/],
    ['a fractional sequence', { ...EVENT, sequence: 1.5 }, /sequence/],
    ['a local time', { ...EVENT, occurredAt: '2025-01-31T12:00:00+01:00' }, /occurredAt/],
    ['an impossible date', { ...EVENT, occurredAt: '2025-02-31T25:00:00Z' }, /occurredAt/],
    ['an empty scope', { ...EVENT, scope: '' }, /scope/],
  ])('%s', (_name, event, problem) => {
    const found = wakeEventProblem(event);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });
});
