/**
 * The readers that run before the schemas (the Session view, a receipt's header and claims):
 * whatever one accepts, its schema accepts and decodes to the same value; whatever it leaves, the
 * schema decides (so a refusal and its message are the schema's). Session bodies are real views of
 * the local runtime with random changes.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessApiError } from '../../src/core/ports.js';
import { decodeSession } from '../../src/sess/decode.js';
import {
  ReceiptClaimsSchema,
  ReceiptHeaderSchema,
  type WireSessionView,
  WireSessionViewSchema,
} from '../../src/sess/wire.js';
import { readReceiptClaims, readReceiptHeader, readSessionView } from '../../src/sess/wire-reader.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { twiceAnsweredView } from './helpers.js';

let sess: LocalSess;
let base: WireSessionView;

beforeAll(async () => {
  sess = await startLocalSess();
  base = JSON.parse(JSON.stringify(await twiceAnsweredView(sess)));
});
afterAll(async () => {
  await sess.close();
});

const members = [
  'id',
  'workspace_id',
  'revision',
  'status',
  'human_url',
  'expires_at',
  'extendable_until',
  'responses',
  'other',
];
const eventMembers = ['event_id', 'revision', 'answer', 'submitted_at', 'receipt', 'other'];
const answerMembers = ['action', 'values', 'other'];

/** Values near the edges of what the schema accepts, beside any JSON. */
const edgy = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    '',
    'x'.repeat(64),
    'x'.repeat(65),
    'r'.repeat(8192),
    'r'.repeat(8193),
    0,
    1,
    -1,
    1.5,
    2 ** 53,
    '2026-12-01T10:00:00Z',
    '2026-12-01T10:00:00.123456789Z',
    '2026-13-01T10:00:00Z',
    '2026-12-01 10:00:00Z',
    'https://example.test/s/1',
    'ftp://example.test/',
    `https://example.test/${'a'.repeat(2040)}`,
    'not a url',
    'ws_ok.id:1',
    'bad id',
    'a'.repeat(129),
    'active',
    'answered',
    'unknown',
    [],
    {},
    null,
  ),
  fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'a', 'toString'), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 3,
  }),
);

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), member: fc.constantFrom(...members), value: edgy }),
  fc.record({ kind: fc.constant('delete' as const), member: fc.constantFrom(...members) }),
  fc.record({
    kind: fc.constant('event' as const),
    index: fc.nat({ max: 2 }),
    member: fc.constantFrom(...eventMembers),
    value: edgy,
  }),
  fc.record({
    kind: fc.constant('answer' as const),
    index: fc.nat({ max: 1 }),
    member: fc.constantFrom(...answerMembers),
    value: edgy,
  }),
  fc.record({ kind: fc.constant('drop_event' as const), index: fc.nat({ max: 1 }) }),
  fc.record({ kind: fc.constant('event_not_object' as const), index: fc.nat({ max: 1 }), value: edgy }),
);

type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutated(mutations: Mutation[]): unknown {
  const body = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  const events = () => (Array.isArray(body.responses) ? (body.responses as unknown[]) : []);
  for (const m of mutations) {
    if (m.kind === 'set') body[m.member] = m.value;
    else if (m.kind === 'delete') delete body[m.member];
    else if (m.kind === 'drop_event') events().splice(m.index, 1);
    else if (m.kind === 'event_not_object') {
      if (m.index < events().length) events()[m.index] = m.value;
    } else {
      const event = events()[m.index];
      if (typeof event !== 'object' || event === null) continue;
      const record = event as Record<string, unknown>;
      if (m.kind === 'event') record[m.member] = m.value;
      else if (typeof record.answer === 'object' && record.answer !== null)
        (record.answer as Record<string, unknown>)[m.member] = m.value;
    }
  }
  // Through JSON, as the client gets it (a `__proto__` member stays an own member).
  return JSON.parse(JSON.stringify(body));
}

/**
 * Whether two decoded values are the same: the same prototype at every level (a null-prototype map
 * is not a plain object), the same own keys in the same order, the same scalars. (A deep equality
 * that reads `constructor` to compare types would be misled by a member of that name.)
 */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length || keys.some((key, i) => key !== other[i])) return false;
  return keys.every((key) => same((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/**
 * Checks one reader against its schema over a property: a body the reader accepts is one the
 * schema accepts, decoded to the same value; `both` then says each outcome occurred often.
 */
function againstSchema() {
  let accepted = 0;
  let left = 0;
  return {
    check(read: unknown, parsed: { success: boolean; output?: unknown }): void {
      if (read === undefined) {
        left += 1;
        return;
      }
      accepted += 1;
      expect(parsed.success).toBe(true);
      if (parsed.success) expect(same(read, parsed.output)).toBe(true);
    },
    /** Both outcomes occur, each more than `least` times: the property is not vacuous. */
    both(least: number): void {
      expect(accepted).toBeGreaterThan(least);
      expect(left).toBeGreaterThan(least);
    },
  };
}

it('accepts only what the schema accepts, decoded to the same value', () => {
  const reader = againstSchema();
  fc.assert(
    fc.property(fc.array(mutation, { maxLength: 3 }), (mutations) => {
      const json = mutated(mutations);
      reader.check(readSessionView(json), v.safeParse(WireSessionViewSchema, json));
    }),
    { numRuns: 3000, seed: Number(process.env.FC_SEED ?? 20261201) },
  );
  reader.both(100);
});

it('reads the runtime view itself, with every answer value kept', () => {
  const read = readSessionView(JSON.parse(JSON.stringify(base)));
  expect(same(read, v.parse(WireSessionViewSchema, base))).toBe(true);
  expect(same(read, { ...v.parse(WireSessionViewSchema, base), revision: 3 })).toBe(false);
  const hostile = JSON.parse(JSON.stringify(base));
  hostile.responses[0].answer.values = JSON.parse('{"__proto__":{"x":1},"constructor":"c"}');
  const decoded = readSessionView(hostile)!;
  expect(Object.getPrototypeOf(decoded.responses[0]!.answer.values)).toBeNull();
  expect(Object.keys(decoded.responses[0]!.answer.values)).toEqual(['__proto__', 'constructor']);
});

it('leaves a refusal to the schema: decodeSession refuses what the schema refuses, with its words', () => {
  const headers = { get: () => null };
  fc.assert(
    fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
      const json = mutated(mutations);
      const parsed = v.safeParse(WireSessionViewSchema, json);
      let error: unknown;
      try {
        decodeSession({ json, headers }, 'read a Session', { workspaceId: undefined });
      } catch (caught) {
        error = caught;
      }
      if (!parsed.success) {
        expect(error).toBeInstanceOf(SessApiError);
        expect((error as SessApiError).protocolReason).toBe('view_malformed');
        expect((error as Error).message).toMatch(/malformed Session at /);
      } else if (error !== undefined) {
        // A view the schema decodes is refused only for what it says about itself.
        expect((error as SessApiError).protocolReason).toBe('view_inconsistent');
      }
    }),
    { numRuns: 1000, seed: Number(process.env.FC_SEED ?? 20261202) },
  );
});

describe('the receipt readers', () => {
  const claimsBase: Record<string, unknown> = {
    iss: 'https://sess.example',
    ws: 'ws_1',
    sid: 'sess_1',
    rev: 2,
    evt: 'evt_1',
    sdg: `sha-256:${'A'.repeat(43)}`,
    adg: `sha-256:${'b'.repeat(42)}_`,
    act: 'link_holder',
    iat: 1_764_000_000,
  };
  const headerBase: Record<string, unknown> = { alg: 'EdDSA', kid: 'k1', typ: 'sess-receipt+jwt' };
  const claimMembers = [...Object.keys(claimsBase), 'ask', 'name', 'other'];
  const claimValue = fc.oneof(
    edgy,
    fc.constantFrom(
      `sha-256:${'x'.repeat(43)}`,
      `sha-256:${'x'.repeat(44)}`,
      'sha256:abc',
      'link_holder',
      'someone_else',
      'EdDSA',
      'sess-receipt+jwt',
      'k'.repeat(128),
      'k'.repeat(129),
      'n'.repeat(200),
      'n'.repeat(201),
      2 ** 53 - 1,
    ),
  );
  const change = fc.oneof(
    fc.record({ set: fc.constantFrom(...claimMembers), value: claimValue }),
    fc.record({ drop: fc.constantFrom(...claimMembers) }),
  );
  const changed = (
    base: Record<string, unknown>,
    changes: ({ set: string; value: unknown } | { drop: string })[],
  ) => {
    const out: Record<string, unknown> = { ...base };
    for (const c of changes) {
      if ('drop' in c) delete out[c.drop];
      else out[c.set] = c.value;
    }
    return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
  };

  it('accept only claims the schema accepts (with a string act read as link_holder), decoded the same', () => {
    const reader = againstSchema();
    fc.assert(
      fc.property(fc.array(change, { maxLength: 3 }), (changes) => {
        const payload = changed(claimsBase, changes);
        const act = payload.act;
        const parsed = v.safeParse(
          ReceiptClaimsSchema,
          typeof act === 'string' ? { ...payload, act: 'link_holder' } : payload,
        );
        reader.check(readReceiptClaims(payload), parsed);
      }),
      { numRuns: 3000, seed: Number(process.env.FC_SEED ?? 20261203) },
    );
    reader.both(100);
  });

  it('accept only headers the schema accepts, decoded the same', () => {
    const reader = againstSchema();
    const headerChange = fc.oneof(
      fc.record({ set: fc.constantFrom('alg', 'kid', 'typ', 'crit'), value: claimValue }),
      fc.record({ drop: fc.constantFrom('alg', 'kid', 'typ') }),
    );
    fc.assert(
      fc.property(fc.array(headerChange, { maxLength: 2 }), (changes) => {
        const header = changed(headerBase, changes);
        const parsed = v.safeParse(ReceiptHeaderSchema, header);
        reader.check(readReceiptHeader(header), parsed);
      }),
      { numRuns: 2000, seed: Number(process.env.FC_SEED ?? 20261204) },
    );
    reader.both(50);
  });
});
