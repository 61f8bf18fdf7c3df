/**
 * The secrets audit itself: it must catch a secret in every form it can take on stderr, name the
 * leak without repeating it, and stay quiet when nothing leaked.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createSecretsAudit } from '../support/audit.js';

describe('createSecretsAudit', () => {
  it('is clean when no secret was written', () => {
    const audit = createSecretsAudit();
    audit.secret('sk_test_0123456789abcdef', 'api key');
    audit.text('{"event":"tool_call","tool":"sess_request"}', 'stderr');
    expect(() => audit.assertClean()).not.toThrow();
  });

  it.each([
    ['raw', (s: string) => `key=${s}`],
    ['JSON-escaped', (s: string) => JSON.stringify({ v: s })],
    ['URL-encoded', (s: string) => `?q=${encodeURIComponent(s)}`],
    ['base64', (s: string) => Buffer.from(s).toString('base64')],
  ])('catches a secret written %s, without repeating it', (_name, encode) => {
    const secret = 'answer "lunch at 13:45" / zebra';
    const audit = createSecretsAudit();
    audit.secret(secret, 'answer value');
    audit.text(encode(secret), 'stderr');
    let message = '';
    try {
      audit.assertClean();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('answer value in stderr');
    expect(message).not.toContain('zebra');
  });

  it('reads streams, live arrays and getters at check time', () => {
    const audit = createSecretsAudit();
    const stream = new PassThrough();
    const lines: unknown[] = [];
    let later = '';
    audit.watch(stream, 'stream');
    audit.watch(lines, 'array');
    audit.watch(() => later, 'getter');
    audit.secret('Bearer abcdefghijklmnop', 'bearer token');
    expect(() => audit.assertClean()).not.toThrow();
    lines.push({ event: 'x', leaked: 'Bearer abcdefghijklmnop' });
    expect(() => audit.assertClean()).toThrow(/bearer token in array/);
    lines.length = 0;
    stream.write('Bearer abcdefghijklmnop\n');
    expect(() => audit.assertClean()).toThrow(/bearer token in stream/);
    const b = createSecretsAudit();
    b.watch(() => later, 'getter');
    b.secret('Bearer abcdefghijklmnop', 'bearer token');
    later = 'Bearer abcdefghijklmnop';
    expect(() => b.assertClean()).toThrow(/bearer token in getter/);
  });

  it('registers a link and its tokens, and answer leaves', () => {
    const audit = createSecretsAudit();
    audit.url('http://127.0.0.1:4000/s/tok_AbCdEfGhIjKlMnOp?k=QrStUvWxYz012345', 'sess link');
    audit.answer({
      message: 'Greet users by first name',
      ok: true,
      n: 3,
      tags: ['short', 'a longer tag value'],
    });
    expect(audit.labels()).toEqual([
      'sess link',
      'sess link path token',
      'sess link query token',
      'answer value',
      'answer value',
    ]);
    audit.text('the token tok_AbCdEfGhIjKlMnOp alone', 'stderr');
    expect(() => audit.assertClean()).toThrow(/sess link path token in stderr/);
  });

  it('refuses secrets short enough to match by chance', () => {
    expect(() => createSecretsAudit().secret('yes')).toThrow(/distinctive/);
  });
});
