import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/codec/canonical-json.js';
import { sameJson } from '../../src/core/engine/identity.js';

/** Comparing the canonical JSON of both; false when it refuses either. */
function byCanonicalJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

describe("the engine's sameJson", () => {
  it('answers as comparing canonical JSON does, for JSON values and anything else', () => {
    const anything = fc.anything({ withNullPrototype: true, withObjectString: true, withBoxedValues: true });
    const value = fc.oneof(fc.jsonValue(), anything);
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameJson(a, b)).toBe(byCanonicalJson(a, b));
        expect(sameJson(a, a)).toBe(byCanonicalJson(a, a));
      }),
      { numRuns: 2_000 },
    );
  });

  it('is true for an answer and its copy with the members in another order, false for another answer', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (answer) => {
        const copy = JSON.parse(canonicalJson(answer));
        expect(sameJson(answer, copy)).toBe(true);
        expect(sameJson({ action: 'go', values: answer }, { values: copy, action: 'go' })).toBe(true);
        expect(sameJson({ action: 'go', values: answer }, { action: 'stop', values: copy })).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('tells values apart that differ anywhere', () => {
    expect(sameJson({ a: [1, { b: 'x' }] }, { a: [1, { b: 'y' }] })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(sameJson({ d: new Date(0) }, { d: new Date(1) })).toBe(
      byCanonicalJson({ d: new Date(0) }, { d: new Date(1) }),
    );
  });
});
