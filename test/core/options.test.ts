/**
 * The one option helper's refusals of keys: an option given under an old name fails in the one
 * form `<factory>: option "<old>" was renamed to "<new>".`, any other key the factory does not know
 * fails as `<factory>: option "<key>" is not an option of <factory>.` (with the near miss, when a
 * known name is one), and the known names pass. (Each factory's own options are tested beside the
 * factory; `test/package/unknown-options.test.ts` passes an unknown key to every public factory.)
 */
import { describe, expect, it } from 'vitest';
import { nearestOption, readOptions } from '../../src/core/contract/options.js';

const RULES = {
  known: ['newMs', 'newName', 'maxTotalWaits', 'maxConcurrentWaits'],
  renamed: { oldMs: 'newMs', oldName: 'newName' },
} as const;

function verdict(options: unknown, allowMissing = false): 'accepted' | string {
  try {
    readOptions('createThing', options, { ...RULES, allowMissing });
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
}

describe('readOptions: renamed options', () => {
  it.each([
    ['an old name with a value', { oldMs: 5 }, 'createThing: option "oldMs" was renamed to "newMs".'],
    [
      'an old name set to undefined',
      { oldName: undefined },
      'createThing: option "oldName" was renamed to "newName".',
    ],
    [
      'an old name beside its new one',
      { newMs: 5, oldMs: 5 },
      'createThing: option "oldMs" was renamed to "newMs".',
    ],
    [
      'an old name after an unknown key (the rename is the more useful message)',
      { bogus: 1, oldMs: 5 },
      'createThing: option "oldMs" was renamed to "newMs".',
    ],
  ])('refuses %s, naming the new name', (_, options, message) => {
    expect(verdict(options)).toBe(message);
  });
});

describe('readOptions: unknown options', () => {
  it.each([
    [
      'a key far from every name',
      { bogus: 1 },
      'createThing: option "bogus" is not an option of createThing.',
    ],
    [
      'an unknown key set to undefined',
      { bogus: undefined },
      'createThing: option "bogus" is not an option of createThing.',
    ],
    [
      'a missing letter',
      { maxTotalWait: 16 },
      'createThing: option "maxTotalWait" is not an option of createThing (did you mean "maxTotalWaits"?).',
    ],
    [
      'a case slip',
      { maxconcurrentwaits: 16 },
      'createThing: option "maxconcurrentwaits" is not an option of createThing (did you mean "maxConcurrentWaits"?).',
    ],
    [
      'an unknown key beside known ones',
      { newMs: 5, newNam: 'x' },
      'createThing: option "newNam" is not an option of createThing (did you mean "newName"?).',
    ],
    [
      'a key with control and bidi characters (shown escaped, never raw)',
      { 'a\u0000b\u202ec\u009b': 1 },
      'createThing: option "a\\u0000b\\u202ec\\u009b" is not an option of createThing.',
    ],
    [
      'a very long key (cut: it is a name, never a value)',
      { ['k'.repeat(200)]: 1 },
      `createThing: option "${'k'.repeat(64)}…" is not an option of createThing.`,
    ],
  ])('refuses %s', (_, options, message) => {
    expect(verdict(options)).toBe(message);
  });

  it.each([
    ['the known names', { newMs: 5, newName: 'x', maxTotalWaits: undefined }],
    ['no options at all', {}],
    ['a key only inherited, not the bag’s own', Object.create({ bogus: 5 })],
    ['a symbol key (not a name an option could have)', { [Symbol('x')]: 1 }],
  ])('accepts %s', (_, options) => {
    expect(verdict(options)).toBe('accepted');
  });

  it('accepts a missing bag where the factory allows one, and refuses it where not', () => {
    expect(verdict(undefined, true)).toBe('accepted');
    expect(verdict(undefined)).toBe('createThing: options must be an object.');
  });

  it('names the nearest option only for a near miss', () => {
    const known = ['maxTotalWaits', 'maxConcurrentWaits', 'tools'];
    expect(nearestOption('maxTotalWait', known)).toBe('maxTotalWaits');
    expect(nearestOption('tool', known)).toBe('tools');
    expect(nearestOption('maxWaits', known)).toBeUndefined();
    expect(nearestOption('tx', known)).toBeUndefined();
  });
});

describe('readOptions(…).bag: a bag within the bag', () => {
  const read = () => readOptions('createThing', {}, RULES);
  it('refuses a key it does not know, naming <option>.<key> and the keys it takes', () => {
    expect(() => read().bag('plan', { maxOpen: 1 }, ['maxOpenSessions', 'maxExpiresIn'])).toThrow(
      new TypeError(
        'createThing: option "plan.maxOpen" is not a key of "plan" (maxOpenSessions, maxExpiresIn).',
      ),
    );
    expect(() => read().bag('plan', { maxOpenSession: 1 }, ['maxOpenSessions'])).toThrow(
      new TypeError(
        'createThing: option "plan.maxOpenSession" is not a key of "plan" (maxOpenSessions) (did you mean "maxOpenSessions"?).',
      ),
    );
  });
  it('refuses a value that is not an object and reads undefined as empty', () => {
    expect(() => read().bag('plan', [], ['a'])).toThrow(
      new TypeError('createThing: option "plan" must be an object.'),
    );
    expect(read().bag('plan', undefined, ['a'])).toEqual({});
    expect(read().bag('plan', { a: 1 }, ['a'])).toEqual({ a: 1 });
  });
});
