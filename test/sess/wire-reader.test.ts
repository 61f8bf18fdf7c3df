/**
 * The wire reader is the one definition of the views and the receipt Sess answers with: what it
 * accepts and refuses, table by table, and where it says a refused view went wrong (the first
 * wrong member, in member order, as wire member names and indices). Base bodies are real views of
 * the local runtime; a property then holds every refusal of a randomly changed view to wire words
 * and to `decodeSession`'s `view_malformed`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessApiError } from '../../src/core/contract/ports.js';
import { decodeSession } from '../../src/sess/decode.js';
import {
  readAskView,
  readReceiptClaims,
  readReceiptHeader,
  readSessionView,
  type WireAskView,
  WireRefusal,
  type WireSessionView,
} from '../../src/sess/wire-reader.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { answer, clientFor, idemKey, surface, twiceAnsweredView } from './helpers.js';

let sess: LocalSess;
let sessionBase: WireSessionView;
let askBase: WireAskView;

beforeAll(async () => {
  sess = await startLocalSess();
  sessionBase = JSON.parse(JSON.stringify(await twiceAnsweredView(sess)));
  const client = clientFor(sess);
  const ask = await client.createAsk({
    surface: surface('Which option?'),
    respondents: { max: 3, name: true },
    idempotencyKey: idemKey(),
  });
  const first = await sess.startRespondent(ask.humanUrl, { name: 'Ana' });
  await sess.submitAnswer(first.humanUrl!, answer());
  await sess.startRespondent(ask.humanUrl, { name: 'Bo' });
  askBase = JSON.parse(JSON.stringify(sess.asks.get(ask.askId)));
});
afterAll(async () => {
  await sess.close();
});

type Body = Record<string, unknown>;

/** A copy of `base` with `change` applied (it may edit the copy in place or return another body). */
function changed(base: unknown, change: (body: Body) => unknown): unknown {
  const body = JSON.parse(JSON.stringify(base)) as Body;
  const out = change(body);
  return out === undefined ? body : out;
}

/** Where a reader refused a body, or `'accepted'`. */
function verdict(read: unknown): string {
  return read instanceof WireRefusal ? read.path : 'accepted';
}

const events = (body: Body) => body.responses as Body[];
const answerOf = (body: Body, i: number) => events(body)[i]!.answer as Body;
const url = (length: number) => `https://example.test/${'a'.repeat(length - 'https://example.test/'.length)}`;

type Change = (body: Body) => unknown;

/** A change setting the member at the dotted `path` to `value`, or removing it (`drop`). */
function set(path: string, value: unknown, drop = false): Change {
  return (body) => {
    const keys = path.split('.');
    let target = body;
    for (const key of keys.slice(0, -1)) target = target[key] as Body;
    const last = keys[keys.length - 1]!;
    if (drop) delete target[last];
    else target[last] = value;
  };
}
const drop = (path: string): Change => set(path, undefined, true);
/** A change replacing the whole body. */
const instead =
  (value: unknown): Change =>
  () =>
    value;

/** One row: a change to the base view, and where the reader refuses it (`''`: the body) or `'accepted'`. */
type Row = [name: string, change: Change, expected: string];

const SESSION_TABLE: Row[] = [
  ['the runtime view itself', () => undefined, 'accepted'],
  ['an unknown member', set('other', { x: 1 }), 'accepted'],
  ['null', instead(null), ''],
  ['an array', instead([]), ''],
  ['a string', instead('view'), ''],
  ['no id', drop('id'), 'id'],
  ['an id with a space', set('id', 'bad id'), 'id'],
  ['an id of 129 characters', set('id', 'a'.repeat(129)), 'id'],
  ['an id of 128 characters', set('id', 'a'.repeat(128)), 'accepted'],
  ['a numeric workspace_id', set('workspace_id', 5), 'workspace_id'],
  ['revision 0', set('revision', 0), 'revision'],
  ['revision 1.5', set('revision', 1.5), 'revision'],
  ['revision 2^53', set('revision', 2 ** 53), 'revision'],
  ['revision as text', set('revision', '2'), 'revision'],
  ['an unknown status', set('status', 'done'), 'status'],
  ['a relative human_url', set('human_url', '/s/tok'), 'human_url'],
  ['a javascript: human_url', set('human_url', 'javascript:alert(1)'), 'human_url'],
  ['an ftp: human_url', set('human_url', 'ftp://example.test/'), 'human_url'],
  ['a human_url of 2049 characters', set('human_url', url(2049)), 'human_url'],
  ['a human_url of 2048 characters', set('human_url', url(2048)), 'accepted'],
  ['expires_at with a space', set('expires_at', '2026-12-01 10:00:00Z'), 'expires_at'],
  ['expires_at in month 13', set('expires_at', '2026-13-01T10:00:00Z'), 'expires_at'],
  ['expires_at with nanoseconds', set('expires_at', '2026-12-01T10:00:00.123456789Z'), 'accepted'],
  ['extendable_until null', set('extendable_until', null), 'extendable_until'],
  ['extendable_until a timestamp', set('extendable_until', '2026-12-02T10:00:00Z'), 'accepted'],
  ['no extendable_until', drop('extendable_until'), 'accepted'],
  ['no responses', drop('responses'), 'responses'],
  ['responses an object', set('responses', {}), 'responses'],
  ['a response that is text', set('responses.0', 'x'), 'responses.0'],
  ['a bad event_id in the second response', set('responses.1.event_id', 'bad id'), 'responses.1.event_id'],
  ['a response at revision 0', set('responses.0.revision', 0), 'responses.0.revision'],
  ['an answer that is null', set('responses.0.answer', null), 'responses.0.answer'],
  ['an empty action', set('responses.0.answer.action', ''), 'responses.0.answer.action'],
  [
    'an action of 65 characters',
    set('responses.0.answer.action', 'x'.repeat(65)),
    'responses.0.answer.action',
  ],
  ['an action of 64 characters', set('responses.0.answer.action', 'x'.repeat(64)), 'accepted'],
  ['values that are a list', set('responses.0.answer.values', []), 'responses.0.answer.values'],
  [
    'a value that is not JSON',
    set('responses.1.answer.values', { secret_key: Number.POSITIVE_INFINITY }),
    'responses.1.answer.values',
  ],
  ['a submitted_at that is a number', set('responses.0.submitted_at', 0), 'responses.0.submitted_at'],
  ['an empty receipt', set('responses.0.receipt', ''), 'responses.0.receipt'],
  ['a receipt of 8193 characters', set('responses.0.receipt', 'r'.repeat(8193)), 'responses.0.receipt'],
  ['a receipt of 8192 characters', set('responses.0.receipt', 'r'.repeat(8192)), 'accepted'],
  [
    'two wrong members: the first in member order',
    (b) => {
      b.responses = 'x';
      b.revision = 0;
    },
    'revision',
  ],
];

describe('the Session view', () => {
  it.each(SESSION_TABLE)('%s', (_name, change, expected) => {
    expect(verdict(readSessionView(changed(sessionBase, change)))).toBe(expected);
  });

  it('decodes to a fresh view: members in order, unknown ones left out, answer values with every key', () => {
    const body = changed(sessionBase, (b) => {
      b.other = 1;
      delete b.extendable_until;
      answerOf(b, 0).values = JSON.parse('{"__proto__":{"x":1},"constructor":"c"}');
    });
    const view = readSessionView(body) as WireSessionView;
    expect(Object.keys(view)).toEqual([
      'id',
      'workspace_id',
      'revision',
      'status',
      'human_url',
      'expires_at',
      'responses',
    ]);
    expect(view).toMatchObject({ id: sessionBase.id, revision: 2, status: 'answered' });
    const values = view.responses[0]!.answer.values;
    expect(Object.getPrototypeOf(values)).toBeNull();
    expect(Object.keys(values)).toEqual(['__proto__', 'constructor']);
    expect(values.constructor).toBe('c');
    expect(view.responses[1]).toEqual(sessionBase.responses[1]);
    expect(view.responses[1]).not.toBe((body as Body as { responses: unknown[] }).responses[1]);
  });

  it('keeps extendable_until only when the body has it', () => {
    const lapsed = readSessionView(changed(sessionBase, set('extendable_until', '2026-12-02T10:00:00Z')));
    expect(lapsed).toHaveProperty('extendable_until', '2026-12-02T10:00:00Z');
    const without = readSessionView(changed(sessionBase, drop('extendable_until')));
    expect(without).not.toHaveProperty('extendable_until');
  });
});

const ASK_TABLE: Row[] = [
  ['the runtime view itself', () => undefined, 'accepted'],
  ['null', instead(null), ''],
  ['a bad id', set('id', 'bad id'), 'id'],
  ['an unknown status', set('status', 'answered'), 'status'],
  ['a relative human_url', set('human_url', '/a/tok'), 'human_url'],
  ['expires_at not a date', set('expires_at', 'soon'), 'expires_at'],
  ['max 0', set('max', 0), 'max'],
  ['started -1', set('started', -1), 'started'],
  ['answered 1.5', set('answered', 1.5), 'answered'],
  ['respondents an object', set('respondents', {}), 'respondents'],
  ['a respondent that is null', set('respondents.1', null), 'respondents.1'],
  ['a bad session_id', set('respondents.0.session_id', ''), 'respondents.0.session_id'],
  ['an empty name', set('respondents.0.name', ''), 'respondents.0.name'],
  ['a name of 201 characters', set('respondents.0.name', 'n'.repeat(201)), 'respondents.0.name'],
  ['a name of 200 characters', set('respondents.0.name', 'n'.repeat(200)), 'accepted'],
  ['no name', drop('respondents.0.name'), 'accepted'],
  ['an unknown respondent status', set('respondents.1.status', 'open'), 'respondents.1.status'],
  [
    'a response with an empty action',
    set('respondents.0.response.answer', { action: '', values: {} }),
    'respondents.0.response.answer.action',
  ],
  ['a response that is null', set('respondents.1.response', null), 'respondents.1.response'],
];

describe('the Ask view', () => {
  it.each(ASK_TABLE)('%s', (_name, change, expected) => {
    expect(verdict(readAskView(changed(askBase, change)))).toBe(expected);
  });

  it('decodes each respondent with its name and response only when the body has them', () => {
    const view = readAskView(askBase) as WireAskView;
    const [answered, started] = view.respondents;
    expect(Object.keys(answered!)).toEqual(['id', 'session_id', 'name', 'status', 'response']);
    expect(Object.keys(started!)).toEqual(['id', 'session_id', 'name', 'status']);
    expect(Object.getPrototypeOf(answered!.response!.answer.values)).toBeNull();
  });
});

describe('the receipt header', () => {
  const base = { alg: 'EdDSA', kid: 'k1', typ: 'sess-receipt+jwt' };
  const table: [string, Body, boolean][] = [
    ['the header', base, true],
    ['another member (refused later, by the receipt check)', { ...base, crit: ['x'] }, true],
    ['another alg', { ...base, alg: 'ES256' }, false],
    ['another typ', { ...base, typ: 'JWT' }, false],
    ['an empty kid', { ...base, kid: '' }, false],
    ['a kid of 129 characters', { ...base, kid: 'k'.repeat(129) }, false],
    ['a kid of 128 characters', { ...base, kid: 'k'.repeat(128) }, true],
    ['no kid', { alg: 'EdDSA', typ: 'sess-receipt+jwt' }, false],
  ];
  it.each(table)('%s', (_name, header, accepted) => {
    const read = readReceiptHeader(header);
    expect(read !== undefined).toBe(accepted);
    if (accepted) expect(read).toEqual({ alg: header.alg, kid: header.kid, typ: header.typ });
  });
});

describe('the receipt claims', () => {
  const base: Body = {
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
  const table: [string, Body, boolean][] = [
    ['the claims', base, true],
    ['with ask and name', { ...base, ask: 'ask_1', name: 'Ana' }, true],
    ['another member', { ...base, other: 1 }, true],
    ['another act (read as link_holder; the check compares it)', { ...base, act: 'someone_else' }, true],
    ['an act that is not text', { ...base, act: 1 }, false],
    ['an empty iss', { ...base, iss: '' }, false],
    ['a bad ws', { ...base, ws: 'bad id' }, false],
    ['no sid', { ...base, sid: undefined }, false],
    ['rev 0', { ...base, rev: 0 }, false],
    ['a bad evt', { ...base, evt: 'a'.repeat(129) }, false],
    ['an sdg of 44 characters', { ...base, sdg: `sha-256:${'x'.repeat(44)}` }, false],
    ['an adg without its prefix', { ...base, adg: 'sha256:abc' }, false],
    ['iat -1', { ...base, iat: -1 }, false],
    ['iat 0', { ...base, iat: 0 }, true],
    ['a bad ask', { ...base, ask: 'bad id' }, false],
    ['an empty name', { ...base, name: '' }, false],
    ['a name of 201 characters', { ...base, name: 'n'.repeat(201) }, false],
    ['a name of 200 characters', { ...base, name: 'n'.repeat(200) }, true],
  ];
  it.each(table)('%s', (_name, claims, accepted) => {
    const payload = JSON.parse(JSON.stringify(claims));
    const read = readReceiptClaims(payload);
    expect(read !== undefined).toBe(accepted);
    if (accepted) expect(read).toEqual({ ...payload, other: undefined, act: 'link_holder' });
  });
});

describe('a refused Session view through decodeSession', () => {
  const headers = { get: () => null };
  const decode = (json: unknown) => {
    try {
      decodeSession({ json, headers }, 'read a Session', { workspaceId: undefined });
    } catch (error) {
      return error as SessApiError;
    }
    return undefined;
  };

  it('is view_malformed, naming the reader’s path and never a key Sess sent', () => {
    const error = decode(changed(sessionBase, set('responses.1.answer.values', { secret_key: Number.NaN })));
    expect(error).toBeInstanceOf(SessApiError);
    expect(error!.protocolReason).toBe('view_malformed');
    expect(error!.message).toBe(
      'Sess sent an invalid response to read a Session: malformed Session at responses.1.answer.values.',
    );
    expect(decode(null)!.message).toMatch(/malformed Session at the body\.$/);
  });

  /** Values near the edges of what the reader accepts, beside any JSON. */
  const edgy = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(
      '',
      'x'.repeat(65),
      'r'.repeat(8193),
      0,
      -1,
      1.5,
      2 ** 53,
      'bad id',
      'not a url',
      [],
      {},
      null,
    ),
    fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'secret_key'), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 3,
    }),
  );
  const WIRE_WORDS = /^(?:(?:[a-z_]+|\d{1,6})(?:\.(?:[a-z_]+|\d{1,6}))*)?$/;
  const WIRE_MEMBERS = new Set([
    'id',
    'workspace_id',
    'revision',
    'status',
    'human_url',
    'expires_at',
    'extendable_until',
    'responses',
    'event_id',
    'answer',
    'action',
    'values',
    'submitted_at',
    'receipt',
  ]);

  it('whatever changes, a refusal names wire members and indices only, and decodeSession reports it', () => {
    let refused = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            event: fc.option(fc.nat({ max: 1 })),
            member: fc.constantFrom(
              'id',
              'revision',
              'status',
              'responses',
              'event_id',
              'answer',
              'values',
              'action',
            ),
            value: edgy,
          }),
          { minLength: 1, maxLength: 3 },
        ),
        (changes) => {
          const body = changed(sessionBase, (b) => {
            for (const { event, member, value } of changes) {
              const target = event === null ? b : events(b)[event];
              if (typeof target !== 'object' || target === null) continue;
              if (member === 'values' || member === 'action') {
                const a = (target as Body).answer;
                if (typeof a === 'object' && a !== null) (a as Body)[member] = value;
              } else (target as Body)[member] = value;
            }
          });
          const read = readSessionView(body);
          const error = decode(body);
          if (!(read instanceof WireRefusal)) {
            if (error !== undefined) expect(error.protocolReason).toBe('view_inconsistent');
            return;
          }
          refused += 1;
          expect(read.path).toMatch(WIRE_WORDS);
          for (const segment of read.path.split('.').filter((s) => !/^\d+$/.test(s) && s !== '')) {
            expect(WIRE_MEMBERS.has(segment), segment).toBe(true);
          }
          expect(error?.protocolReason).toBe('view_malformed');
          expect(error!.message).not.toMatch(/secret_key|__proto__|constructor/);
        },
      ),
      { numRuns: 1000, seed: Number(process.env.FC_SEED ?? 20261202) },
    );
    expect(refused).toBeGreaterThan(200);
  });
});
