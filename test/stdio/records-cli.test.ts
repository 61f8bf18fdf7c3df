/**
 * `sess-mcp records list|show|retire` over the real file store: listing by state, redaction of
 * the link, answer values and receipts unless `--reveal`, and retiring only after confirmation.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StdioBinding } from '../../src/core/contract/ports.js';
import type { InteractionRecord, InteractionState } from '../../src/core/model/record.js';
import type { Surface } from '../../src/core/model/surface.js';
import { type RecordsCliIo, runRecordsCli } from '../../src/stdio/records-cli.js';
import { createFileHandleStore, openProfileRecords } from '../../src/store/file/index.js';
import { fileFixture010, installFileFixtures010, KINDS_010, manifest010 } from '../store/fixtures-010.js';
import { createSecretsAudit } from '../support/audit.js';

const LINK = 'https://sess.si/s/tok_SECRETLINKTOKEN0123456789';
const ANSWER_TEXT = 'Greet users by first name, zebra';
const RECEIPT = 'eyJhbGciOiJFZERTQSJ9.eyJzaWQiOiJzZXNzXzEifQ.c2lnbmF0dXJlc2lnbmF0dXJl';
const binding: StdioBinding = {
  kind: 'stdio',
  profile: 'default',
  apiOrigin: 'https://api.sess.si',
  credentialGeneration: 'g1',
};
const surface: Surface = {
  mode: 'interactive',
  title: 'Approve?',
  source: { kind: 'sess_surface', components: [] },
  actions: [{ id: 'ok', label: 'OK', intent: 'approve' }],
};

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'sess-mcp-cli-'));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

function record(handle: string, state: InteractionState, at: string): InteractionRecord {
  return { format: 1, handle, binding, createdAt: at, updatedAt: at, state } as InteractionRecord;
}

const session = {
  sessionId: 'sess_1',
  workspaceId: 'ws_1',
  humanUrl: LINK,
  expiresAt: '2030-01-01T00:00:00.000Z',
};

async function seed(): Promise<void> {
  const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(binding);
  await store.create(
    record(
      'h_answered_0000000001',
      {
        kind: 'answered',
        session,
        revision: 1,
        surface,
        response: {
          eventId: 'evt_1',
          revision: 1,
          answer: { action: 'ok', values: { message: ANSWER_TEXT } },
          submittedAt: '2030-01-01T00:00:00.000Z',
          receipt: RECEIPT,
          keyId: 'k1',
          verifiedAt: '2030-01-01T00:00:01.000Z',
        },
      },
      '2030-01-01T00:00:00.000Z',
    ),
  );
  await store.create(
    record(
      'h_blocked_00000000002',
      {
        kind: 'blocked',
        code: 'MUTATION_REJECTED',
        reason: 'conflict',
        sessionId: 'sess_2',
        revision: 2,
        previous: 'publish_pending',
      },
      '2030-01-02T00:00:00.000Z',
    ),
  );
  await store.create(
    record(
      'h_unknown_00000000003',
      {
        kind: 'create_unknown',
        request: { idempotencyKey: 'idem_1', surface },
        reason: 'transport',
      },
      '2030-01-03T00:00:00.000Z',
    ),
  );
}

function io(prompt?: (q: string) => Promise<string>) {
  const out: string[] = [];
  const err: string[] = [];
  const value: RecordsCliIo = {
    stdout: { write: (c: string) => out.push(c) },
    stderr: { write: (c: string) => err.push(c) },
    ...(prompt === undefined ? {} : { prompt }),
  };
  return { io: value, out: () => out.join(''), err: () => err.join('') };
}

const access = () => openProfileRecords({ stateDir, profile: 'default' });

describe('records list', () => {
  it('lists every record with its state and code, oldest first, without secrets', async () => {
    await seed();
    const run = io();
    expect(await runRecordsCli(['list'], run.io, access())).toBe(0);
    const lines = run.out().trim().split('\n');
    expect(lines[0]).toMatch(/^HANDLE\s+STATE\s+CODE\s+UPDATED\s+REASON$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      ['h_answered_0000000001', 'answered', '2030-01-01T00:00:00.000Z'],
      ['h_blocked_00000000002', 'blocked', 'MUTATION_REJECTED'],
      ['h_unknown_00000000003', 'create_unknown', 'CREATE_OUTCOME_UNKNOWN'],
    ]);
    const audit = createSecretsAudit();
    audit.url(LINK);
    audit.answer({ ANSWER_TEXT });
    audit.secret(RECEIPT, 'receipt');
    audit.text(run.out() + run.err(), 'cli output');
    audit.assertClean();
  });

  it('filters by state, and by unfinished', async () => {
    await seed();
    const blocked = io();
    expect(await runRecordsCli(['list', '--state', 'blocked'], blocked.io, access())).toBe(0);
    expect(blocked.out()).toContain('h_blocked_00000000002');
    expect(blocked.out()).not.toContain('h_answered');
    const none = io();
    expect(await runRecordsCli(['list', '--state=completed'], none.io, access())).toBe(0);
    expect(none.out()).toBe('No records in state completed.\n');
    const json = io();
    expect(await runRecordsCli(['list', '--state', 'unfinished', '--json'], json.io, access())).toBe(0);
    expect((JSON.parse(json.out()) as { handle: string }[]).map((r) => r.handle)).toHaveLength(3);
  });

  it('shows unreadable files as such', async () => {
    await seed();
    await writeFile(
      join(stateDir, 'profiles', 'default', 'handles', 'h_garbled_0000000004.json'),
      '{not json',
    );
    const run = io();
    expect(await runRecordsCli(['list'], run.io, access())).toBe(0);
    expect(run.out()).toMatch(/h_garbled_0000000004\s+UNREADABLE\s+STATE_STORE_ERROR/);
    expect(run.out()).toContain('cannot be read');
  });

  it.each([
    [['list', '--state', 'nope']],
    [['list', '--bogus']],
    [['list', 'extra']],
    [['frobnicate']],
    [[]],
    [['show']],
    [['retire', 'a', 'b']],
  ])('refuses %j with usage and exit 2', async (args) => {
    const run = io();
    expect(await runRecordsCli(args, run.io, access())).toBe(2);
    expect(run.err()).toContain('Usage:');
  });
});

describe('records show', () => {
  it('redacts the link, answer values and receipt unless --reveal', async () => {
    await seed();
    const run = io();
    expect(await runRecordsCli(['show', 'h_answered_0000000001'], run.io, access())).toBe(0);
    expect(run.out()).toContain('state:    answered');
    expect(run.out()).toContain('session:  sess_1 at revision 1');
    expect(run.out()).toContain('"message": "[redacted: --reveal shows it]"');
    expect(run.out()).toContain('"action": "ok"');
    const audit = createSecretsAudit();
    audit.url(LINK);
    audit.answer({ ANSWER_TEXT });
    audit.secret(RECEIPT, 'receipt');
    audit.text(run.out(), 'show output');
    audit.assertClean();

    const revealed = io();
    expect(await runRecordsCli(['show', 'h_answered_0000000001', '--reveal'], revealed.io, access())).toBe(0);
    expect(revealed.out()).toContain(LINK);
    expect(revealed.out()).toContain(ANSWER_TEXT);
    expect(revealed.out()).toContain('do not paste it');
  });

  it('redacts what a saved Surface pre-fills (field values, record fields) unless --reveal', async () => {
    const PIN = 'earlier answer: pin 4921 zebra';
    const IBAN = 'DE89 3704 0044 0532 0130 00';
    const prefilled: Surface = {
      ...surface,
      title: 'Confirm your details',
      source: {
        kind: 'sess_surface',
        components: [
          { type: 'record', label: 'You told us', fields: { 'Card PIN': PIN } },
          { type: 'field', name: 'iban', label: 'IBAN', schema: { type: 'string' }, value: IBAN },
        ],
      },
    };
    const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(binding);
    await store.create(
      record(
        'h_prefilled_000000007',
        {
          kind: 'waiting',
          session,
          revision: 2,
          surface: prefilled,
          lastMutation: { kind: 'publish', expectedRevision: 1, responseEventId: 'e1', surfaceDigest: 'x' },
        } as InteractionState,
        '2026-01-01T00:00:00.000Z',
      ),
    );
    const run = io();
    expect(await runRecordsCli(['show', 'h_prefilled_000000007'], run.io, access())).toBe(0);
    // What the record is about stays readable: captions, names and labels.
    expect(run.out()).toContain('"Card PIN": "[redacted: --reveal shows it]"');
    expect(run.out()).toContain('"name": "iban"');
    expect(run.out()).toContain('"value": "[redacted: --reveal shows it]"');
    const audit = createSecretsAudit();
    audit.url(LINK);
    audit.answer({ PIN, IBAN });
    audit.text(run.out(), 'show output');
    audit.assertClean();

    const revealed = io();
    expect(await runRecordsCli(['show', 'h_prefilled_000000007', '--reveal'], revealed.io, access())).toBe(0);
    expect(revealed.out()).toContain(PIN);
    expect(revealed.out()).toContain(IBAN);
  });

  it('says what to do next for a blocked record', async () => {
    await seed();
    const run = io();
    expect(await runRecordsCli(['show', 'h_blocked_00000000002'], run.io, access())).toBe(0);
    expect(run.out()).toContain('state:    blocked (MUTATION_REJECTED, conflict)');
    expect(run.out()).toMatch(/next: +check the Session in Sess/);
  });

  it('reports an unknown or malformed handle as not found', async () => {
    await seed();
    for (const handle of ['h_missing_0000000009', '../../etc/passwd']) {
      const run = io();
      expect(await runRecordsCli(['show', handle], run.io, access())).toBe(1);
      expect(run.err()).toContain('no record with that handle');
    }
  });
});

describe('what reaches the terminal', () => {
  it('writes every control and bidi character of a record as a visible escape, in list, show and retire', async () => {
    // A CSI (U+009B), a right-to-left override (U+202E), an ESC, a BEL and a line separator.
    const hostile = 'Approve\u009b2J?\u202egnp.exe\u001b]0;x\u0007 done\u2028end';
    const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(binding);
    await store.create(
      record(
        'h_hostile_00000000009',
        {
          kind: 'blocked',
          code: 'MUTATION_REJECTED',
          reason: hostile,
          sessionId: 'sess_9',
          revision: 1,
          previous: 'publish_pending',
        },
        '2030-01-01T00:00:00.000Z',
      ),
    );
    const printed: string[] = [];
    for (const args of [
      ['list'],
      ['show', 'h_hostile_00000000009'],
      ['show', 'h_hostile_00000000009', '--reveal'],
    ]) {
      const run = io();
      await runRecordsCli(args, run.io, access());
      printed.push(run.out(), run.err());
    }
    const asked: string[] = [];
    const retire = io(async (question) => {
      asked.push(question);
      return 'no';
    });
    await runRecordsCli(['retire', 'h_hostile_00000000009'], retire.io, access());
    printed.push(retire.out(), retire.err(), ...asked);
    const all = printed.join('');
    expect(all).toContain('h_hostile_00000000009');
    expect(all).not.toMatch(
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/,
    );
    expect(all).toContain('\\u009b2J');
    expect(all).toContain('\\u202egnp.exe');
  });
});

describe('records retire', () => {
  it('refuses without --yes and without a terminal, and keeps the file', async () => {
    await seed();
    const run = io();
    expect(await runRecordsCli(['retire', 'h_blocked_00000000002'], run.io, access())).toBe(1);
    expect(run.err()).toContain('pass --yes');
    expect(await access().read('h_blocked_00000000002')).toBeDefined();
  });

  it('asks on a terminal and retires only on "retire"', async () => {
    await seed();
    const questions: string[] = [];
    const no = io(async (q) => {
      questions.push(q);
      return 'y';
    });
    expect(await runRecordsCli(['retire', 'h_blocked_00000000002'], no.io, access())).toBe(1);
    expect(questions[0]).toContain('state blocked, session sess_2');
    expect(await access().read('h_blocked_00000000002')).toBeDefined();
    const yes = io(async () => 'retire\n');
    expect(await runRecordsCli(['retire', 'h_blocked_00000000002'], yes.io, access())).toBe(0);
    expect(yes.out()).toBe('Retired h_blocked_00000000002 (was state blocked, session sess_2).\n');
    expect(await access().read('h_blocked_00000000002')).toBeUndefined();
  });

  it('retires with --yes, also an unreadable file', async () => {
    await seed();
    await writeFile(
      join(stateDir, 'profiles', 'default', 'handles', 'h_garbled_0000000004.json'),
      '{not json',
    );
    const run = io();
    expect(await runRecordsCli(['retire', 'h_garbled_0000000004', '--yes'], run.io, access())).toBe(0);
    expect(run.out()).toContain('unreadable record file');
    const list = io();
    await runRecordsCli(['list'], list.io, access());
    expect(list.out()).not.toContain('h_garbled');
    const missing = io();
    expect(await runRecordsCli(['retire', 'h_garbled_0000000004', '--yes'], missing.io, access())).toBe(1);
  });
});

describe('records of the withdraw states', () => {
  const withdrawing = (handle: string, at: string) =>
    record(
      handle,
      {
        kind: 'withdraw_pending',
        session,
        revision: 1,
        surface,
        request: { expectedRevision: 1, reason: 'Not needed', idempotencyKey: 'idem_w' },
      },
      at,
    );
  async function seedWithdraw(): Promise<void> {
    const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(binding);
    await store.create(withdrawing('h_withdrawing_0000001', '2030-02-01T00:00:00.000Z'));
    await store.create(
      record(
        'h_withdrawn_000000002',
        {
          kind: 'withdrawn',
          sessionId: 'sess_9',
          revision: 1,
          withdrawal: { expectedRevision: 1, reasonDigest: 'd' },
        },
        '2030-02-02T00:00:00.000Z',
      ),
    );
    await store.create(
      record(
        'h_closing_00000000003',
        {
          kind: 'ask_close_pending',
          askId: 'ask_1',
          workspaceId: 'ws_1',
          humanUrl: LINK,
          expiresAt: '2030-03-01T00:00:00.000Z',
          surface,
          max: 3,
          request: { idempotencyKey: 'idem_c' },
        },
        '2030-02-03T00:00:00.000Z',
      ),
    );
  }
  const listed = async (state: string) => {
    const run = io();
    expect(await runRecordsCli(['list', '--state', state, '--json'], run.io, access())).toBe(0);
    return (JSON.parse(run.out()) as { handle: string }[]).map((r) => r.handle);
  };

  it('counts withdrawn as finished and the withdraw and Ask close in flight as pending', async () => {
    await seed();
    await seedWithdraw();
    expect(await listed('pending')).toEqual(['h_withdrawing_0000001', 'h_closing_00000000003']);
    expect(await listed('finished')).toEqual(['h_withdrawn_000000002']);
    expect(await listed('unfinished')).not.toContain('h_withdrawn_000000002');
    expect(await listed('withdrawn')).toEqual(['h_withdrawn_000000002']);
    expect(await listed('ask_close_pending')).toEqual(['h_closing_00000000003']);
    const usage = io();
    expect(await runRecordsCli(['list', '--state', 'closing'], usage.io, access())).toBe(2);
    expect(usage.err()).toContain('withdraw_pending');
    expect(usage.err()).toContain('pending, finished');
  });

  it('shows them with the next step, the link redacted, and retires them', async () => {
    await seedWithdraw();
    const pending = io();
    expect(await runRecordsCli(['show', 'h_withdrawing_0000001'], pending.io, access())).toBe(0);
    expect(pending.out()).toContain('state:    withdraw_pending');
    expect(pending.out()).toContain('session:  sess_1 at revision 1');
    expect(pending.out()).toContain('repeat the identical call');
    const closing = io();
    expect(await runRecordsCli(['show', 'h_closing_00000000003'], closing.io, access())).toBe(0);
    expect(closing.out()).toContain('session:  ask_1');
    expect(closing.out()).toContain('repeat the identical call');
    const done = io();
    expect(await runRecordsCli(['show', 'h_withdrawn_000000002'], done.io, access())).toBe(0);
    expect(done.out()).toContain('session:  sess_9 at revision 1');
    expect(done.out()).toContain('finished: retiring only tidies up.');
    const audit = createSecretsAudit();
    audit.url(LINK);
    audit.text(pending.out() + closing.out() + done.out(), 'cli output');
    audit.assertClean();
    const retire = io();
    expect(await runRecordsCli(['retire', 'h_withdrawn_000000002', '--yes'], retire.io, access())).toBe(0);
    expect(retire.out()).toBe('Retired h_withdrawn_000000002 (was state withdrawn, session sess_9).\n');
    expect(await access().read('h_withdrawn_000000002')).toBeUndefined();
  });
});

describe('records written by 0.1.0', () => {
  it('lists every state, shows the format, and retires one, with the files as 0.1.0 wrote them', async () => {
    const manifest = await manifest010();
    const handles = await installFileFixtures010(join(stateDir, 'profiles', 'default', 'handles'));
    const json = io();
    expect(await runRecordsCli(['list', '--json'], json.io, access())).toBe(0);
    const rows = JSON.parse(json.out()) as {
      handle: string;
      state: string;
      format: number;
      problem?: string;
    }[];
    expect(rows).toHaveLength(handles.length);
    expect(rows.map((row) => [row.format, row.problem])).toEqual(rows.map(() => [1, undefined]));
    expect(Object.fromEntries(rows.map((row) => [row.state, row.handle]))).toEqual(manifest.file.handles);
    const unfinished = io();
    expect(await runRecordsCli(['list', '--state', 'unfinished', '--json'], unfinished.io, access())).toBe(0);
    expect(JSON.parse(unfinished.out())).toHaveLength(KINDS_010.length - 3);

    const answered = manifest.file.handles.answered!;
    const fixture = await fileFixture010(answered);
    if (fixture.record.state.kind !== 'answered') throw new Error('fixture');
    const shown = io();
    expect(await runRecordsCli(['show', answered], shown.io, access())).toBe(0);
    expect(shown.out()).toContain('state:    answered');
    expect(shown.out()).toContain('format:   1 (written by 0.1.0');
    const audit = createSecretsAudit();
    audit.url(fixture.record.state.session.humanUrl);
    audit.secret(fixture.record.state.response.receipt, 'receipt');
    audit.text(shown.out(), 'cli output');
    audit.assertClean();

    const blocked = manifest.file.handles.blocked!;
    const retire = io();
    expect(await runRecordsCli(['retire', blocked, '--yes'], retire.io, access())).toBe(0);
    expect(retire.out()).toMatch(/^Retired .* \(was state blocked/);
    expect(await access().read(blocked)).toBeUndefined();
    expect(await access().list()).toHaveLength(handles.length - 1);
  });
});

describe('records prune', () => {
  const pruneAccess = () => ({
    ...access(),
    prune: createFileHandleStore({ stateDir, profile: 'default' }).prune,
  });
  const done = (handle: string, at: string) =>
    record(
      handle,
      {
        kind: 'completed',
        sessionId: 'sess_9',
        revision: 1,
        lastMutation: { kind: 'complete', expectedRevision: 1, responseEventId: 'evt_9' },
      },
      at,
    );

  it('removes finished records older than --older-than (30 days by default), never the others', async () => {
    await seed();
    const store = createFileHandleStore({ stateDir, profile: 'default' }).forBinding(binding);
    const day = 86_400_000;
    await store.create(done('h_done_old_000000005', new Date(Date.now() - 40 * day).toISOString()));
    await store.create(done('h_done_new_000000006', new Date(Date.now() - 2 * day).toISOString()));
    const first = io();
    expect(await runRecordsCli(['prune'], first.io, pruneAccess())).toBe(0);
    expect(first.out()).toMatch(/^Removed 1 finished record\(s\) that finished before \d{4}-/);
    expect(await access().read('h_done_old_000000005')).toBeUndefined();
    expect(await access().read('h_done_new_000000006')).toBeDefined();
    const second = io();
    expect(await runRecordsCli(['prune', '--older-than', '1d'], second.io, pruneAccess())).toBe(0);
    expect(second.out()).toMatch(/^Removed 1 /);
    // Records waiting on the person, the agent or the owner stay, however old.
    const left = (await access().list()).map((entry) => entry.handle);
    expect(left).toEqual(['h_answered_0000000001', 'h_blocked_00000000002', 'h_unknown_00000000003']);
  });

  it('refuses a duration it cannot read, and a store without prune', async () => {
    for (const bad of ['30', '0d', '1w', '-1d', '3651d', 'abc']) {
      const run = io();
      expect(await runRecordsCli(['prune', '--older-than', bad], run.io, pruneAccess()), bad).toBe(2);
      expect(run.err()).toContain('--older-than must be a whole number and a unit');
    }
    const run = io();
    expect(await runRecordsCli(['prune'], run.io, access())).toBe(2);
    expect(run.err()).toContain('this store cannot prune');
  });
});
