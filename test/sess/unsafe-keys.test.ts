/**
 * Keys a plain object or a schema library would lose: answers to fields named `__proto__`,
 * `constructor` and `prototype` (Sessions created with such names by 0.1.0) and record fields
 * with those keys are decoded whole, so their receipts still verify and the values arrive as
 * the JSON the person sent.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/codec/canonical-json.js';
import type { Answer, Surface } from '../../src/core/model/surface.js';
import { digestJson } from '../../src/sess/digest.js';
import { answeredSession, clientFor, proofOf, useRuntime } from './helpers.js';

const sess = useRuntime();

const UNSAFE = ['__proto__', 'constructor', 'prototype'] as const;

/** A Surface with one text field per unsafe name, and a record whose keys are those names. */
function unsafeSurface(): Surface {
  // JSON.parse makes `__proto__` an own key, as a request body would.
  const fields = JSON.parse('{"__proto__":"a","constructor":"b","prototype":"c","plain":1}');
  return {
    mode: 'interactive',
    title: 'Ship it?',
    source: {
      kind: 'sess_surface',
      components: [
        { type: 'record', label: 'Build', fields },
        ...UNSAFE.map((name) => ({
          type: 'field' as const,
          name,
          label: `Field ${name}`,
          schema: { type: 'string' as const },
        })),
      ],
    },
    actions: [{ id: 'approve', label: 'Approve', intent: 'approve' }],
  };
}

function unsafeAnswer(): Answer {
  return {
    action: 'approve',
    values: JSON.parse('{"__proto__":"first","constructor":"second","prototype":"third"}'),
  };
}

describe('fields named __proto__, constructor and prototype', () => {
  it('the answer keeps every value, and its receipt verifies', async () => {
    const client = clientFor(sess);
    const s = unsafeSurface();
    const { answered } = await answeredSession(sess, client, { surface: s, answer: unsafeAnswer() });
    const values = answered.responses[0]!.answer.values;
    for (const name of UNSAFE) expect(Object.hasOwn(values, name), name).toBe(true);
    expect(JSON.parse(JSON.stringify(values))).toEqual(JSON.parse(JSON.stringify(unsafeAnswer().values)));
    expect(JSON.stringify(values)).toBe('{"__proto__":"first","constructor":"second","prototype":"third"}');
    // Nothing leaked onto the prototype chain of other objects.
    expect(({} as Record<string, unknown>).first).toBeUndefined();
    const proved = await client.verifyResponse(proofOf(answered, s));
    expect(proved).toMatchObject({ sessionId: answered.sessionId, revision: 1 });
  });

  it('a wait and an Ask respondent keep them too', async () => {
    const client = clientFor(sess);
    const s = unsafeSurface();
    const created = await client.createSession({ surface: s, idempotencyKey: crypto.randomUUID() });
    const waiting = client.waitSession(
      created.sessionId,
      { revision: 1, status: 'active', timeoutMs: 5_000 },
      {},
    );
    await sess.whenWaiting(created.sessionId);
    await sess.submitAnswer(created.humanUrl, unsafeAnswer());
    const woken = await waiting;
    expect(Object.keys(woken.responses[0]!.answer.values)).toEqual([...UNSAFE]);
    await client.verifyResponse(proofOf(woken, s));

    const ask = await client.createAsk({
      surface: s,
      respondents: { max: 1 },
      idempotencyKey: crypto.randomUUID(),
    });
    const started = await sess.startRespondent(ask.humanUrl);
    await sess.submitAnswer(started.humanUrl!, unsafeAnswer());
    const read = await client.getAsk(ask.askId);
    const respondent = read.respondents[0]!;
    expect(Object.keys(respondent.response!.answer.values)).toEqual([...UNSAFE]);
    const view = await client.getSession(respondent.sessionId);
    await client.verifyResponse(proofOf(view, s));
  });
});

describe('canonical JSON of such keys', () => {
  it('writes a null-prototype map and a parsed object alike, every key included', async () => {
    const parsed = JSON.parse('{"prototype":3,"__proto__":{"constructor":[1]},"a":null}');
    const bare = Object.create(null) as Record<string, unknown>;
    bare.a = null;
    bare.prototype = 3;
    const inner = Object.create(null) as { constructor: unknown };
    inner.constructor = [1];
    // On a null-prototype object this defines an own member (there is no accessor to call).
    Object.defineProperty(bare, '__proto__', { value: inner, enumerable: true, writable: true });
    const expected = '{"__proto__":{"constructor":[1]},"a":null,"prototype":3}';
    expect(canonicalJson(parsed)).toBe(expected);
    expect(canonicalJson(bare)).toBe(expected);
    expect(await digestJson(bare)).toBe(await digestJson(parsed));
  });
});
