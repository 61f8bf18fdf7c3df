/**
 * The strict record codec of the durable stores: what it accepts, what it calls corrupt or
 * unsupported, and that its messages name paths, never values.
 */
import { describe, expect, it } from 'vitest';
import { isSessMcpError, type SessMcpError } from '../../src/core/contract/errors.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { decodeEnvelope, decodeRecord, encodeEnvelope, encodeRecord } from '../../src/store/record-codec.js';
import { FORMAT_1_KINDS, httpA, makeRecord, STATE_KINDS, stdioA } from './fixtures.js';

function failure(run: () => unknown): SessMcpError {
  try {
    run();
  } catch (error) {
    expect(isSessMcpError(error)).toBe(true);
    return error as SessMcpError;
  }
  throw new Error('expected a failure');
}

describe('record codec', () => {
  it('round-trips a record of every state kind and both binding kinds', () => {
    for (const binding of [stdioA, httpA]) {
      for (const kind of STATE_KINDS) {
        const record = makeRecord(binding, kind);
        const text = encodeEnvelope(3, encodeRecord(record));
        expect(decodeEnvelope(text, record.handle)).toEqual({ version: 3, record });
      }
    }
  });

  it('keeps keys it does not know inside a state (a newer optional field survives a read)', () => {
    const record = makeRecord(stdioA, 'ask_closed');
    const value = JSON.parse(encodeRecord(record));
    value.state.futureField = { kept: true };
    expect(decodeRecord(value, record.handle).state).toMatchObject({ futureField: { kept: true } });
  });

  const record = makeRecord(stdioA, 'answered');
  const base = (): Record<string, unknown> => JSON.parse(encodeRecord(record));
  const corrupt: [string, (v: Record<string, unknown>) => unknown, string][] = [
    ['an unknown top-level key', (v) => ({ ...v, extra: 1 }), 'extra'],
    ['a binding with an extra key', (v) => ({ ...v, binding: { ...stdioA, apiKey: 'x' } }), 'binding'],
    ['a binding of no known kind', (v) => ({ ...v, binding: { kind: 'ftp' } }), 'binding.kind'],
    ['an unknown state kind', (v) => ({ ...v, state: { kind: 'paused' } }), 'state.kind'],
    [
      'a state missing a field',
      (v) => ({ ...v, state: { ...(v.state as object), response: undefined } }),
      'state.response',
    ],
    [
      'a revision that is not a whole number',
      (v) => ({ ...v, state: { ...(v.state as object), revision: 1.5 } }),
      'state.revision',
    ],
    ['a missing handle', (v) => ({ ...v, handle: undefined }), 'handle'],
    ['not an object', () => ['a', 'list'], 'the record'],
  ];
  for (const [what, change, where] of corrupt) {
    it(`calls ${what} corrupt, naming ${where} and no value`, () => {
      const error = failure(() => decodeRecord(JSON.parse(JSON.stringify(change(base()))), record.handle));
      expect(error.code).toBe('STATE_STORE_ERROR');
      expect(error.retryable).toBe(false);
      expect(error.reason).toBe('corrupt');
      expect(error.message).toContain(where);
      for (const secret of ['secret-link-token', 'secret answer text', record.handle]) {
        expect(error.message).not.toContain(secret);
      }
    });
  }

  it('calls a record filed under another handle corrupt', () => {
    expect(failure(() => decodeRecord(base(), 'sess_h_other')).reason).toBe('corrupt');
  });

  it('calls another record format or envelope format unsupported', () => {
    for (const format of [3, 0, '2', null]) {
      const error = failure(() => decodeRecord({ ...base(), format }, record.handle));
      expect(error.reason, String(format)).toBe('unsupported_version');
      expect(error.message).toContain('reads formats 1 and 2');
    }
    const unnamed = JSON.parse(JSON.stringify({ ...base(), format: undefined }));
    expect(failure(() => decodeRecord(unnamed, record.handle)).reason).toBe('corrupt');
    const envelope = (format: unknown) => JSON.stringify({ format, version: 1, record: base() });
    expect(failure(() => decodeEnvelope(envelope(2), record.handle)).reason).toBe('unsupported_version');
    expect(failure(() => decodeEnvelope(envelope('1'), record.handle)).reason).toBe('unsupported_version');
  });

  it('calls a broken envelope corrupt', () => {
    for (const text of [
      '',
      '{"format":1,"version":1,"record":',
      JSON.stringify({ format: 1, version: 0, record: base() }),
      JSON.stringify({ format: 1, version: 2.5, record: base() }),
      JSON.stringify({ format: 1, record: base() }),
      JSON.stringify({ format: 1, version: 1, record: base(), extra: true }),
      JSON.stringify({ version: 1, record: base() }),
      'null',
    ]) {
      expect(failure(() => decodeEnvelope(text, record.handle)).reason, text.slice(0, 40)).toBe('corrupt');
    }
  });

  it('refuses to encode a record that would not read back, without its values in the message', () => {
    const bad = { ...record, state: { ...record.state, revision: 'two' } } as unknown as typeof record;
    const error = failure(() => encodeRecord(bad));
    expect(error.reason).toBe('invalid_record');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('state.revision');
    expect(error.message).not.toContain('two');
    const cyclic = { ...record } as Record<string, unknown>;
    cyclic.self = cyclic;
    expect(failure(() => encodeRecord(cyclic as unknown as typeof record)).reason).toBe('invalid_record');
  });
});

describe('record codec: formats 1 (0.1.0) and 2', () => {
  /** A record as 0.1.0 wrote it: format 1, no title, no expiry. */
  const format1 = (kind: (typeof STATE_KINDS)[number]) => {
    const { title: _title, expiresAt: _expiresAt, ...rest } = makeRecord(stdioA, kind);
    return { ...rest, format: 1 } as unknown as InteractionRecord;
  };

  it('reads a format 1 record of every 0.1.0 state as it is, format 1 kept', () => {
    for (const kind of FORMAT_1_KINDS) {
      const record = format1(kind);
      expect(decodeRecord(JSON.parse(JSON.stringify(record)), record.handle)).toEqual(record);
    }
  });

  it('reads format 2 with a title and an expiry, and the withdraw states', () => {
    for (const kind of ['withdraw_pending', 'withdrawn', 'ask_close_pending', 'waiting'] as const) {
      const record = { ...makeRecord(httpA, kind), title: 'Ship it?', expiresAt: '2026-12-02T00:00:00.000Z' };
      expect(decodeRecord(JSON.parse(encodeRecord(record)), record.handle)).toEqual(record);
    }
    const closed = makeRecord(httpA, 'ask_closed');
    closed.state = {
      kind: 'ask_closed',
      askId: 'ask_1',
      withdrawal: { expectedRevision: 1, reasonDigest: 'd' },
    };
    expect(decodeRecord(JSON.parse(encodeRecord(closed)), closed.handle)).toEqual(closed);
  });

  const cases: [string, () => Record<string, unknown>, string][] = [
    ['a format 1 record with a title', () => ({ ...format1('waiting'), title: 'x' }), 'title'],
    ['a format 1 record with an expiry', () => ({ ...format1('waiting'), expiresAt: 'x' }), 'expiresAt'],
    [
      'a format 1 record in a withdraw state',
      () => ({ ...format1('waiting'), state: makeRecord(stdioA, 'withdrawn').state }),
      'state.kind',
    ],
    ['a title that is not text', () => ({ ...makeRecord(stdioA, 'waiting'), title: 7 }), 'title'],
    ['an expiry that is not text', () => ({ ...makeRecord(stdioA, 'waiting'), expiresAt: {} }), 'expiresAt'],
    [
      'a withdrawn record without its withdrawal',
      () => ({
        ...makeRecord(stdioA, 'withdrawn'),
        state: { kind: 'withdrawn', sessionId: 's', revision: 1 },
      }),
      'state.withdrawal',
    ],
    [
      'a withdraw request without its idempotency key',
      () => {
        const record = makeRecord(stdioA, 'withdraw_pending');
        return { ...record, state: { ...record.state, request: { expectedRevision: 1 } } };
      },
      'state.request.idempotencyKey',
    ],
    [
      'a reason that is not text',
      () => {
        const record = makeRecord(stdioA, 'ask_close_pending');
        return { ...record, state: { ...record.state, request: { idempotencyKey: 'k', reason: 5 } } };
      },
      'state.request.reason',
    ],
    [
      'a closed Ask with a withdrawal of the wrong shape',
      () => ({
        ...makeRecord(stdioA, 'ask_closed'),
        state: { kind: 'ask_closed', askId: 'a', withdrawal: { expectedRevision: 'one', reasonDigest: 'd' } },
      }),
      'state.withdrawal.expectedRevision',
    ],
  ];
  for (const [what, make, where] of cases) {
    it(`calls ${what} corrupt, naming ${where}`, () => {
      const value = make();
      const error = failure(() => decodeRecord(JSON.parse(JSON.stringify(value)), String(value.handle)));
      expect([error.code, error.reason, error.retryable]).toEqual(['STATE_STORE_ERROR', 'corrupt', false]);
      expect(error.message).toContain(where);
    });
  }

  it('writes format 2 only: a format 1 record is not encoded as it is', () => {
    const error = failure(() => encodeRecord(format1('waiting')));
    expect([error.reason, error.message]).toEqual(['invalid_record', expect.stringContaining('at format')]);
  });
});
