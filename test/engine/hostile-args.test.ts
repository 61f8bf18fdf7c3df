/**
 * Hostile strings and reserved names reach neither Sess nor the store: through the engine on the
 * local runtime, each is `INVALID_ARGUMENTS` at its pointer, no request is counted by the runtime
 * and no record is saved. (The full table of positions is `test/core/hostile-strings.test.ts`.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Surface } from '../../src/core/model/surface.js';
import { approveSurface, type Harness, startHarness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function withFieldName(name: string): Surface {
  const surface = structuredClone(approveSurface);
  const field = surface.source.components[1] as { name: string };
  field.name = name;
  return surface;
}

const CASES: [string, string, Record<string, unknown>, string][] = [
  [
    'a NUL in the title',
    'sess_request',
    { interaction: { ...approveSurface, title: 'Ship\u0000it?' } },
    '/interaction/title',
  ],
  [
    'a lone surrogate in a record key',
    'sess_request',
    {
      interaction: {
        ...approveSurface,
        source: {
          kind: 'sess_surface',
          components: [{ type: 'record', label: 'L', fields: { '\uDC00': 'x' } }],
        },
      },
    },
    '/interaction/source/components/0/fields/\uDC00',
  ],
  [
    'a field named constructor',
    'sess_request',
    { interaction: withFieldName('constructor') },
    '/interaction/source/components/1/name',
  ],
  [
    'a field named __proto__',
    'sess_request',
    { interaction: withFieldName('__proto__') },
    '/interaction/source/components/1/name',
  ],
  [
    'an action id prototype',
    'sess_request',
    { interaction: { ...approveSurface, actions: [{ id: 'prototype', label: 'Go', intent: 'approve' }] } },
    '/interaction/actions/0/id',
  ],
  [
    'an Ask field named toString',
    'sess_ask',
    { question: 'Q?', fields: [{ name: 'toString', type: 'text', label: 'L' }] },
    '/fields/0/name',
  ],
  ['a lone high surrogate in a handle', 'sess_response', { handle: 'sess_h_\uD800', revision: 1 }, '/handle'],
];

describe('hostile arguments are refused before anything is saved or sent', () => {
  it.each(CASES)('%s', async (_label, tool, args, pointer) => {
    h = await startHarness();
    const before = { ...h.sess.stats.requests };
    const error = await h.fail(tool as 'sess_request', args);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS', field: pointer });
    expect(h.sess.stats.requests).toEqual(before);
    expect(await h.store().countUnfinished()).toBe(0);
    expect(h.sess.sessions.list()).toHaveLength(0);
  });
});
