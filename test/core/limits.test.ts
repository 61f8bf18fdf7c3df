import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  codePointLength,
  jsonByteLength,
  TEXT_LIMITS,
  TITLE_TOO_LONG_MESSAGE,
  tooLongMessage,
  utf8ByteLength,
} from '../../src/core/contract/limits.js';

describe('measuring', () => {
  it('counts code points: an emoji counts 1, a combining mark 1, a lone surrogate 1', () => {
    expect(codePointLength('')).toBe(0);
    expect(codePointLength('abc')).toBe(3);
    expect(codePointLength('\u{1F600}')).toBe(1);
    expect(codePointLength('e\u0301')).toBe(2);
    expect(codePointLength('\uD83D')).toBe(1);
    expect(codePointLength('\uDE00x')).toBe(2);
  });

  it('agrees with the string iterator on any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(codePointLength(text)).toBe([...text].length);
      }),
    );
  });

  it('counts UTF-8 bytes exactly as TextEncoder writes them', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(utf8ByteLength(text)).toBe(encoder.encode(text).length);
      }),
    );
    expect(utf8ByteLength('\uD83D')).toBe(3);
  });

  it('measures JSON as compact UTF-8', () => {
    expect(jsonByteLength({ a: '\u{1F600}' })).toBe('{"a":""}'.length + 4);
    expect(jsonByteLength(undefined)).toBe(0);
  });
});

describe('messages', () => {
  it('uses Sess wording for the title and for every other value', () => {
    expect(TITLE_TOO_LONG_MESSAGE).toBe(
      'The title can be at most 80 characters. Keep it to a short heading, about 40.',
    );
    expect(tooLongMessage('/fields/0/label', 72, TEXT_LIMITS.fieldLabel)).toBe(
      '/fields/0/label is 72 characters; the limit is 60. Shorten it to at most 60 characters.',
    );
  });
});
