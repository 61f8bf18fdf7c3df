/**
 * The one canonical JSON (`src/core/codec/canonical-json.ts`) is written for speed: these
 * properties hold it to the straightforward writer it replaced (kept here as the reference, which
 * built the path of every member as it went), for the values it writes and, with the same
 * message, for everything it refuses. Sparse arrays are the one difference: the reference wrote a
 * hole as nothing (`[,1]`, which is not JSON), the writer refuses it as `undefined`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/core/codec/canonical-json.js';

function referenceWrite(value: unknown, at: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: a non-finite number at "${at}"`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value
          .map((item, index) => {
            if (item === undefined) throw new TypeError(`canonicalJson: undefined at "${at}/${index}"`);
            return referenceWrite(item, `${at}/${index}`);
          })
          .join(',')}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(`canonicalJson: not a plain object at "${at}"`);
      }
      const record = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const member = record[key];
        if (member === undefined) continue;
        parts.push(`${JSON.stringify(key)}:${referenceWrite(member, `${at}/${key}`)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} cannot be JSON at "${at}"`);
  }
}

/** What a function returned, or the message it threw. */
function outcome(run: () => string): { text: string } | { error: string } {
  try {
    return { text: run() };
  } catch (error) {
    return { error: String((error as Error).message) };
  }
}

describe('canonicalJson', () => {
  it('writes every JSON value as the reference does', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(referenceWrite(value, ''));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes or refuses every other value as the reference does, with the same message', () => {
    const odd = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.anything({
          maxDepth: 3,
          withNullPrototype: true,
          withBigInt: true,
          withDate: true,
          withMap: true,
        }),
        fc.constantFrom(undefined, Number.NaN, -0, Infinity, Symbol('s'), () => 1, new Date(0)),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(odd, (value) => {
        expect(outcome(() => canonicalJson(value))).toEqual(outcome(() => referenceWrite(value, '')));
      }),
      { numRuns: 3000 },
    );
  });

  it('names where a value went wrong, as before', () => {
    expect(() => canonicalJson({ a: [1, { b: Number.NaN }] })).toThrow(
      'canonicalJson: a non-finite number at "/a/1/b"',
    );
    expect(() => canonicalJson([1, undefined])).toThrow('canonicalJson: undefined at "/1"');
    expect(() => canonicalJson({ d: new Date(0) })).toThrow('canonicalJson: not a plain object at "/d"');
    expect(() => canonicalJson(undefined)).toThrow('canonicalJson: a undefined cannot be JSON at ""');
    expect(() => canonicalJson({ a: { b: 1n } })).toThrow('canonicalJson: a bigint cannot be JSON at "/a/b"');
  });

  it('refuses a hole in an array as undefined, where the reference wrote text that is not JSON', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    expect(() => canonicalJson([, 1])).toThrow('canonicalJson: undefined at "/0"');
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case under test
    expect(() => canonicalJson({ a: [1, , 2] })).toThrow('canonicalJson: undefined at "/a/1"');
    expect(() => canonicalJson(new Array(2))).toThrow('canonicalJson: undefined at "/0"');
  });

  it('writes the documented form: sorted members, no whitespace, undefined members left out', () => {
    const table: [unknown, string][] = [
      [{ b: 1, a: [true, 'x'] }, '{"a":[true,"x"],"b":1}'],
      [{ '10': 1, '9': 2, a: 3 }, '{"10":1,"9":2,"a":3}'],
      [{ b: undefined, a: null }, '{"a":null}'],
      [Object.assign(Object.create(null), { z: -0, y: 1e21 }), '{"y":1e+21,"z":0}'],
      [{ é: 1, e: 2, E: 3 }, '{"E":3,"e":2,"é":1}'],
      [['\uD800', 'é\n"'], '["\\ud800","é\\n\\""]'],
      [[], '[]'],
      [{}, '{}'],
    ];
    for (const [value, text] of table) expect(canonicalJson(value)).toBe(text);
  });
});
