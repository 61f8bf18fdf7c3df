/**
 * Error codes through the tools over a real stdio child, one server for the file: each test
 * provokes one documented code with the local runtime's faults (or the real file store) and
 * asserts the code, its retry flag and what Sess saw. `NOT_CONFIGURED`, `BINDING_MISMATCH`,
 * `HANDLE_NOT_FOUND` (configuration.test.ts), `CREATE_OUTCOME_UNKNOWN`, `MUTATION_REJECTED`
 * (records-bin.test.ts) and `INVALID_STATE` (flow.test.ts) are covered elsewhere.
 * `CREATED_NOT_SAVED` needs the real file store to fail after a confirmed create: the tests run as
 * root, which ignores file modes, so the handles directory is made immutable (`chattr +i`) while
 * the create is in flight.
 */
import { execFileSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StdioBinding } from '../../src/core/contract/ports.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import { credentialGenerationOf, loadOrCreateCredentialKey } from '../../src/stdio/credential.js';
import { createFileHandleStore } from '../../src/store/file/index.js';
import { useSharedStdioStack } from '../support/stdio-stack.js';
import { errorOf, interactionOf, type ToolCallResult } from './harness.js';

const shared = useSharedStdioStack({ client: 'v2' });
const audit = shared.audit;

const surface = {
  mode: 'interactive',
  title: 'Rename the project?',
  source: {
    kind: 'sess_surface',
    components: [
      { type: 'field', name: 'name', label: 'New name', schema: { type: 'string', maxLength: 60 } },
    ],
  },
  actions: [{ id: 'ok', label: 'Rename', intent: 'approve' }],
};
const other = { ...surface, title: 'Something else?' };

/** One tool call; every error result also goes through the audit (no secret in error messages). */
async function call(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
  const result = await shared.stack.server.callTool(name, args);
  if (result.isError) audit.text(JSON.stringify(result), `${name} error result`);
  return result;
}

/** A new interaction answered by the person and read as `answered` (verified). */
async function answeredInteraction(value: string) {
  const created = interactionOf(await call('sess_request', { interaction: surface }));
  audit.url(created.humanUrl!, 'sess link');
  audit.answer({ value });
  await shared.stack.sess.submitAnswer(created.humanUrl!, { action: 'ok', values: { name: value } });
  const answered = interactionOf(
    await call('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 }),
  );
  expect(answered.state).toBe('answered');
  return { handle: created.handle, eventId: answered.response!.eventId };
}

/** A new request whose link the audit knows. */
async function auditedRequest() {
  const created = interactionOf(await call('sess_request', { interaction: surface }));
  audit.url(created.humanUrl!, 'sess link');
  return created;
}

/** Read the first revision of `handle`, waiting up to `waitMs`. */
function firstResponse(handle: string, waitMs: number): Promise<ToolCallResult> {
  return call('sess_response', { handle, revision: 1, wait_ms: waitMs });
}

describe('error codes over stdio', () => {
  it('INVALID_ARGUMENTS: a title over 80 code points, refused before anything is sent', async () => {
    const before = shared.stack.sess.stats.requests.create ?? 0;
    const error = errorOf(await call('sess_request', { interaction: { ...surface, title: '✓'.repeat(81) } }));
    expect(error).toMatchObject({
      code: 'INVALID_ARGUMENTS',
      retryable: false,
      field: '/interaction/title',
      limit: 80,
      length: 81,
    });
    expect(shared.stack.sess.stats.requests.create ?? 0).toBe(before);
    expect(errorOf(await call('sess_response', { handle: 'x', revision: 1, extra: true })).code).toBe(
      'INVALID_ARGUMENTS',
    );
  });

  it('CREATE_REJECTED and PLAN_LIMIT_REACHED: nothing is kept', async () => {
    const records = () =>
      readdir(join(shared.stack.stateDir, 'profiles', 'default', 'handles')).catch(() => []);
    const before = (await records()).length;
    shared.stack.sess.faults.fail('create', 422, {
      code: 'invalid_request',
      field: '/interaction/title',
      limit: 10,
      length: 19,
    });
    expect(errorOf(await call('sess_request', { interaction: surface }))).toMatchObject({
      code: 'CREATE_REJECTED',
      retryable: false,
    });
    shared.stack.sess.faults.fail('create', 403, { code: 'plan_limit' });
    expect(errorOf(await call('sess_request', { interaction: surface })).code).toBe('PLAN_LIMIT_REACHED');
    expect((await records()).length).toBe(before);
  });

  it('SESS_UNAVAILABLE: retryable, nothing changed, the retry succeeds', async () => {
    const created = await auditedRequest();
    shared.stack.sess.faults.fail('wait', 503);
    expect(errorOf(await firstResponse(created.handle, 100))).toMatchObject({
      code: 'SESS_UNAVAILABLE',
      retryable: true,
    });
    expect(interactionOf(await firstResponse(created.handle, 0)).state).toBe('waiting');
  });

  it('SESS_PROTOCOL_ERROR: a self-contradictory view fails closed and changes nothing', async () => {
    const created = await auditedRequest();
    shared.stack.sess.faults.contradictory('wait', { variant: 'answered_without_answer' });
    expect(errorOf(await firstResponse(created.handle, 100))).toMatchObject({
      code: 'SESS_PROTOCOL_ERROR',
      retryable: false,
    });
    expect(interactionOf(await firstResponse(created.handle, 0)).state).toBe('waiting');
  });

  it('REVISION_MISMATCH and RESPONSE_MISMATCH: refused without a request', async () => {
    const { handle, eventId } = await answeredInteraction('project zebra one');
    expect(errorOf(await call('sess_response', { handle, revision: 2 })).code).toBe('REVISION_MISMATCH');
    const completes = shared.stack.sess.stats.requests.complete ?? 0;
    expect(
      errorOf(await call('sess_complete', { handle, expected_revision: 1, response_event_id: `${eventId}x` }))
        .code,
    ).toBe('RESPONSE_MISMATCH');
    expect(
      errorOf(await call('sess_complete', { handle, expected_revision: 3, response_event_id: eventId })).code,
    ).toBe('REVISION_MISMATCH');
    expect(shared.stack.sess.stats.requests.complete ?? 0).toBe(completes);
  });

  it('OUTCOME_UNKNOWN: a lost complete is reconciled by repeating the identical call', async () => {
    const { handle, eventId } = await answeredInteraction('project zebra two');
    shared.stack.sess.faults.commitThenDrop('complete');
    const args = { handle, expected_revision: 1, response_event_id: eventId };
    expect(errorOf(await call('sess_complete', args))).toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      retryable: true,
    });
    expect(interactionOf(await call('sess_complete', args)).state).toBe('completed');
    const session = shared.stack.sess.sessions
      .list()
      .find(
        (s) =>
          s.view.status === 'completed' && s.view.responses[0]?.answer.values.name === 'project zebra two',
      );
    expect(session).toBeDefined();
  });

  it('PENDING_MUTATION_DIFFERS and MUTATION_PENDING while a publish is unconfirmed', async () => {
    const { handle, eventId } = await answeredInteraction('project zebra three');
    shared.stack.sess.faults.fail('publish', 500);
    const publish = { handle, expected_revision: 1, response_event_id: eventId, interaction: surface };
    expect(errorOf(await call('sess_publish', publish)).code).toBe('OUTCOME_UNKNOWN');
    const sent = shared.stack.sess.stats.requests.publish ?? 0;
    expect(errorOf(await call('sess_publish', { ...publish, interaction: other })).code).toBe(
      'PENDING_MUTATION_DIFFERS',
    );
    expect(
      errorOf(await call('sess_complete', { handle, expected_revision: 1, response_event_id: eventId })).code,
    ).toBe('MUTATION_PENDING');
    expect(shared.stack.sess.stats.requests.publish ?? 0).toBe(sent);
    // The identical repeat replays the saved request.
    expect(interactionOf(await call('sess_publish', publish))).toMatchObject({
      revision: 2,
      state: 'waiting',
    });
  });

  it('VERIFICATION_FAILED: a tampered receipt blocks and releases nothing', async () => {
    const created = interactionOf(await call('sess_request', { interaction: surface }));
    audit.url(created.humanUrl!, 'sess link');
    const value = 'forged answer zebra';
    audit.answer({ value });
    await shared.stack.sess.submitAnswer(created.humanUrl!, { action: 'ok', values: { name: value } });
    shared.stack.sess.faults.tamperReceipt('wait', { mode: 'signature' });
    const result = await call('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
    expect(errorOf(result)).toMatchObject({ code: 'VERIFICATION_FAILED', retryable: false });
    expect(JSON.stringify(result)).not.toContain(value);
    // Blocked for good: the next call answers the same code without releasing the answer.
    const again = await call('sess_response', { handle: created.handle, revision: 1 });
    expect(errorOf(again)).toMatchObject({ code: 'VERIFICATION_FAILED', state: 'blocked' });
    expect(JSON.stringify(again)).not.toContain(value);
  });

  it('RECOVERY_BLOCKED: the Session vanished while a saved answer was re-confirmed', async () => {
    const { handle } = await answeredInteraction('project zebra four');
    shared.stack.sess.faults.fail('get', 404, { code: 'not_found' });
    expect(errorOf(await call('sess_response', { handle, revision: 1 }))).toMatchObject({
      code: 'RECOVERY_BLOCKED',
      reason: 'session_not_found',
    });
  });

  it('CREATED_NOT_SAVED: a confirmed create whose record cannot be saved is reported, not repeated', async () => {
    const handles = join(shared.stack.stateDir, 'profiles', 'default', 'handles');
    const list = () => readdir(handles).catch(() => [] as string[]);
    const before = new Set(await list());
    const created = shared.stack.sess.stats.of().sessionsCreated;
    // Hold the create in Sess long enough to freeze the directory once the intent is on disk.
    shared.stack.sess.faults.delay('create', 1_500);
    const pending = call('sess_request', { interaction: surface });
    let intent: string | undefined;
    for (let i = 0; i < 300 && intent === undefined; i += 1) {
      intent = (await list()).find((file) => file.endsWith('.json') && !before.has(file));
      if (intent === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(intent, 'the create intent is saved before the create request').toBeDefined();
    execFileSync('chattr', ['+i', handles]);
    let error: ReturnType<typeof errorOf>;
    try {
      error = errorOf(await pending);
    } finally {
      execFileSync('chattr', ['-i', handles]);
    }
    expect(error).toMatchObject({ code: 'CREATED_NOT_SAVED', retryable: false });
    // Exactly one Session exists, and the handle is never used to create another one.
    expect(shared.stack.sess.stats.of().sessionsCreated).toBe(created + 1);
    const handle = intent!.replace(/\.json$/, '');
    const again = errorOf(await call('sess_response', { handle, revision: 1 }));
    expect(again.code).toBe('CREATE_OUTCOME_UNKNOWN');
    expect(shared.stack.sess.stats.of().sessionsCreated).toBe(created + 1);
  });

  it('STATE_STORE_ERROR: an unreadable record file is not retryable', async () => {
    const created = interactionOf(await call('sess_request', { interaction: surface }));
    audit.url(created.humanUrl!, 'sess link');
    await writeFile(
      join(shared.stack.stateDir, 'profiles', 'default', 'handles', `${created.handle}.json`),
      '{"format":',
    );
    expect(errorOf(await call('sess_response', { handle: created.handle, revision: 1 }))).toMatchObject({
      code: 'STATE_STORE_ERROR',
      retryable: false,
    });
  });

  it('STATE_STORE_FULL: the 101st unfinished interaction of a profile is refused before Sess', async () => {
    // Fill the profile up to 100 unfinished records with the server's own binding.
    const secret = await loadOrCreateCredentialKey(join(shared.stack.stateDir, 'profiles', 'default'));
    const binding: StdioBinding = {
      kind: 'stdio',
      profile: 'default',
      apiOrigin: shared.stack.sess.origin,
      credentialGeneration: credentialGenerationOf(secret, shared.stack.sess.apiKey),
    };
    const store = createFileHandleStore({ stateDir: shared.stack.stateDir, profile: 'default' }).forBinding(
      binding,
    );
    let n = await store.countUnfinished();
    const now = new Date().toISOString();
    while (n < 100) {
      const record: InteractionRecord = {
        format: 1,
        handle: `sess_h_filler_${String(n).padStart(4, '0')}`,
        binding,
        createdAt: now,
        updatedAt: now,
        state: { kind: 'create_intent', request: { idempotencyKey: `idem_${n}`, surface: surface as never } },
      };
      await store.create(record);
      n += 1;
    }
    const before = shared.stack.sess.stats.requests.create ?? 0;
    expect(errorOf(await call('sess_request', { interaction: surface }))).toMatchObject({
      code: 'STATE_STORE_FULL',
    });
    expect(shared.stack.sess.stats.requests.create ?? 0).toBe(before);
  });
});
