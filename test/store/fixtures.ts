/**
 * Bindings and well-formed records for the store tests. Records are built the way the engine
 * builds them (`src/core/model/record.ts`), one per state kind, so the strict codec of the durable
 * stores accepts them. Nothing here touches a store.
 */
import type { Binding, HttpBinding, StdioBinding } from '../../src/core/contract/ports.js';
import {
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  type InteractionState,
  RECORD_FORMAT,
} from '../../src/core/model/record.js';
import type { Surface } from '../../src/core/model/surface.js';

/** A stdio binding of profile `default` on the local origin. */
export const stdioA: StdioBinding = {
  kind: 'stdio',
  profile: 'default',
  apiOrigin: 'http://127.0.0.1:4010',
  credentialGeneration: 'gen-a1',
};

/** The same scope as {@link stdioA} after a key rotation. */
export const stdioA2: StdioBinding = { ...stdioA, credentialGeneration: 'gen-a2' };

/** Another scope: same profile, another API origin. */
export const stdioB: StdioBinding = { ...stdioA, apiOrigin: 'http://127.0.0.1:4020' };

/** An HTTP binding. */
export const httpA: HttpBinding = {
  kind: 'http',
  origin: 'https://mcp.example.test',
  workspaceId: 'ws_1',
  principalId: 'user_1',
  clientId: 'client_1',
  grantId: 'grant_1',
  grantGeneration: 'g1',
};

/** Another HTTP principal of the same workspace: another scope. */
export const httpB: HttpBinding = { ...httpA, principalId: 'user_2' };

/** A small valid Surface. */
export const surface: Surface = {
  mode: 'interactive',
  title: 'Approve this commit?',
  source: {
    kind: 'sess_surface',
    components: [{ type: 'field', name: 'message', label: 'Commit message', schema: { type: 'string' } }],
  },
  actions: [{ id: 'approve', label: 'Approve', intent: 'approve' }],
} as Surface;

let sequence = 0;

/** A fresh handle in the shape of the engine's (`sh_` and random letters). */
export function newHandle(): string {
  sequence++;
  return `sh_${sequence.toString(36)}_${Math.random().toString(36).slice(2, 12)}`;
}

/** A state of each kind, with plausible data. */
export function stateOf(kind: InteractionState['kind'], revision = 1): InteractionState {
  const session = {
    sessionId: 'ses_1',
    workspaceId: 'ws_1',
    humanUrl: 'https://sess.example.test/s/secret-link-token',
    expiresAt: '2026-12-01T00:00:00.000Z',
  };
  const response = {
    eventId: 'evt_1',
    revision,
    answer: { action: 'approve', values: { message: 'secret answer text' } },
    submittedAt: '2026-11-30T00:00:00.000Z',
    receipt: 'eyJhbGciOiJFZERTQSJ9.e30.c2ln',
    keyId: 'k1',
    verifiedAt: '2026-11-30T00:00:01.000Z',
  };
  const ask = {
    askId: 'ask_1',
    workspaceId: 'ws_1',
    humanUrl: 'https://sess.example.test/a/secret',
    expiresAt: '2026-12-01T00:00:00.000Z',
    surface,
    max: 3,
  };
  switch (kind) {
    case 'create_intent':
      return { kind, request: { idempotencyKey: 'idem-1', surface, expiresIn: 600 } };
    case 'create_unknown':
      return { kind, request: { idempotencyKey: 'idem-1', surface }, reason: 'timeout' };
    case 'waiting':
      return { kind, session, revision, surface };
    case 'answered':
      return { kind, session, revision, surface, response };
    case 'publish_pending':
    case 'complete_pending': {
      const request =
        kind === 'publish_pending'
          ? { expectedRevision: revision, responseEventId: 'evt_1', surface, idempotencyKey: 'idem-2' }
          : { expectedRevision: revision, responseEventId: 'evt_1', idempotencyKey: 'idem-3' };
      return { kind, session, revision, surface, response, request } as InteractionState;
    }
    case 'completed':
      return {
        kind,
        sessionId: 'ses_1',
        revision,
        lastMutation: { kind: 'complete', expectedRevision: revision, responseEventId: 'evt_1' },
      };
    case 'expired':
      return { kind, sessionId: 'ses_1', revision };
    case 'blocked':
      return {
        kind,
        code: 'MUTATION_REJECTED',
        reason: 'conflict',
        sessionId: 'ses_1',
        revision,
        previous: 'waiting',
      };
    case 'ask_open':
      return { kind, ...ask };
    case 'ask_closed':
      return { kind, askId: 'ask_1' };
    case 'withdraw_pending':
      return {
        kind,
        session,
        revision,
        surface,
        request: { expectedRevision: revision, reason: 'No longer needed', idempotencyKey: 'idem-4' },
      };
    case 'withdrawn':
      return {
        kind,
        sessionId: 'ses_1',
        revision,
        withdrawal: { expectedRevision: revision, reasonDigest: 'digest-of-reason' },
      };
    case 'ask_close_pending':
      return { kind, ...ask, request: { idempotencyKey: 'idem-5' } };
  }
}

/** Every state kind. */
export const STATE_KINDS: InteractionState['kind'][] = [...INTERACTION_STATE_KINDS];

/** The state kinds record format 1 (0.1.0) has. */
export const FORMAT_1_KINDS = [
  'create_intent',
  'create_unknown',
  'waiting',
  'answered',
  'publish_pending',
  'complete_pending',
  'completed',
  'expired',
  'blocked',
  'ask_open',
  'ask_closed',
] as const satisfies readonly InteractionState['kind'][];

/**
 * A record of `binding` in state `kind`, created at `createdAt` (default: a fresh, later time),
 * with the record-level `title` and (once created at Sess, until final) `expiresAt` the engine keeps.
 */
export function makeRecord(
  binding: Binding,
  kind: InteractionState['kind'] = 'waiting',
  options: { handle?: string; createdAt?: string } = {},
): InteractionRecord {
  const createdAt = options.createdAt ?? new Date(Date.UTC(2026, 10, 30) + sequence * 1000).toISOString();
  const state = stateOf(kind);
  const live = 'session' in state || state.kind === 'ask_open' || state.kind === 'ask_close_pending';
  return {
    format: RECORD_FORMAT,
    handle: options.handle ?? newHandle(),
    binding,
    createdAt,
    updatedAt: createdAt,
    title: surface.title,
    ...(live ? { expiresAt: '2026-12-01T00:00:00.000Z' } : {}),
    state,
  };
}

/** `record` as 0.1.0 wrote it: format 1, without the record-level `title` and `expiresAt`. */
export function as010(record: InteractionRecord): InteractionRecord {
  const { title: _title, expiresAt: _expiresAt, ...rest } = record;
  return { ...rest, format: 1 };
}

/**
 * Strings a store must keep exactly as they came (answers are untrusted input): U+0000 (which
 * PostgreSQL's `jsonb` and `text` refuse raw), lone and reversed surrogates (which `jsonb`
 * refuses as escapes), astral characters, and text that looks like an escape.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  '\u0000',
  'a\u0000b\u0000',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
  'x\ud83d',
  '😀𝄞',
  'é\u0000😀\ud800\udfff',
  '\\u0000 \\ud800',
  '\u0001\u001f\u007f\u2028\u2029\ufeff\uffff',
  '"\\\'',
];

/** Keys whose value a record fixes (a discriminant, a key, a picklist): not free text. */
const FIXED_KEYS = new Set(['format', 'handle', 'kind', 'code']);

/** `value` with `text` appended to every free string in it (object keys stay). */
function appendToStrings<T>(value: T, text: string, key?: string): T {
  if (typeof value === 'string')
    return (key !== undefined && FIXED_KEYS.has(key) ? value : value + text) as T;
  if (Array.isArray(value)) return value.map((item) => appendToStrings(item, text)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // defineProperty: a key such as `__proto__` stays an own property.
    Object.defineProperty(out, k, {
      value: appendToStrings(v, text, k),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out as T;
}

/** `binding` with `text` in every string field (its identity, hence its scope, holds it too). */
export function hostileBinding<B extends Binding>(binding: B, text: string): B {
  return appendToStrings(binding, text);
}

/**
 * A record of `binding` in state `kind` with `text` appended to every free string position
 * (times, ids, links, receipts, Surface text, answer values); an answer also gets `text`, the
 * unsafe names `__proto__` and `constructor` as field names.
 */
export function hostileRecord(
  binding: Binding,
  kind: InteractionState['kind'],
  text: string,
  options: { handle?: string; createdAt?: string } = {},
): InteractionRecord {
  const record = appendToStrings(makeRecord(binding, kind, options), text);
  record.binding = binding;
  const state = record.state as { response?: { answer: { values?: Record<string, unknown> } } };
  const values = state.response?.answer.values;
  if (values !== undefined) {
    for (const name of [text, '__proto__', 'constructor']) {
      Object.defineProperty(values, name, {
        value: `${name}=${text}`,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return record;
}
