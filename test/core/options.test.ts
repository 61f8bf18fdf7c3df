/**
 * The one option helper's renamed-option refusal: an option given under an old name fails in the
 * one form `<factory>: option "<old>" was renamed to "<new>".`, and nothing else does. (Each
 * factory's own options are tested beside the factory.)
 */
import { describe, expect, it } from 'vitest';
import { readOptions } from '../../src/core/contract/options.js';

const RENAMED = { oldMs: 'newMs', oldName: 'newName' } as const;

function verdict(options: unknown, allowMissing = false): 'accepted' | string {
  try {
    readOptions('createThing', options, allowMissing).renamed(RENAMED);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
}

describe('readOptions(…).renamed', () => {
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
  ])('refuses %s, naming the new name', (_, options, message) => {
    expect(verdict(options)).toBe(message);
  });

  it.each([
    ['the new names', { newMs: 5, newName: 'x' }],
    ['no options at all', {}],
    ['an old name only inherited, not the bag’s own', Object.create({ oldMs: 5 })],
  ])('accepts %s', (_, options) => {
    expect(verdict(options)).toBe('accepted');
  });

  it('accepts a missing bag where the factory allows one', () => {
    expect(verdict(undefined, true)).toBe('accepted');
  });
});
