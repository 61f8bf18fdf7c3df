/**
 * Waits and crashes over a real stdio child: a wait the client cancels ends as `needs_resume` and
 * the next `sess_response` resumes it without a new Session; progress notifications arrive during
 * a wait when the client sent a progress token; and the server killed with SIGKILL and restarted
 * between every step of the flow still completes it with exactly one Session.
 */
import { describe, expect, it } from 'vitest';
import { useStdioStack } from '../support/stdio-stack.js';
import { approveSurface, followUpSurface } from '../support/surfaces.js';
import { interactionOf, publishAfter } from './harness.js';

const stdio = useStdioStack();

/** Resolves once `predicate` holds for the server's stderr (event-driven, no fixed sleep). */
async function stderrShows(
  read: () => string,
  predicate: (text: string) => boolean,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate(read())) {
    if (Date.now() > deadline) throw new Error('stderr never showed the expected event');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('waits over stdio', () => {
  it.each(['v1', 'v2'] as const)(
    'a wait cancelled by the %s client ends as needs_resume and resumes without a new Session',
    async (client) => {
      const stack = await stdio.start({ client });
      const { server, sess } = stack;
      const created = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
      stdio.audit.url(created.humanUrl!, 'sess link');
      const sessionId = sess.sessions.byUrl(created.humanUrl!)!.view.id;

      const controller = new AbortController();
      const waiting = server.callTool(
        'sess_response',
        { handle: created.handle, revision: 1, wait_ms: 45_000 },
        { signal: controller.signal },
      );
      waiting.catch(() => undefined);
      await sess.whenWaiting(sessionId, 1);
      controller.abort();
      await expect(waiting).rejects.toThrow();
      // The server ended its wait as needs_resume (the client no longer hears the answer).
      await stderrShows(server.stderr, (t) => /"tool":"sess_response","state":"needs_resume"/.test(t));
      expect(sess.pendingWaits(sessionId)).toBe(0);

      const note = 'ship after the standup, zebra';
      stdio.audit.answer({ note });
      await sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message: note } });
      const resumed = interactionOf(
        await server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 10_000 }),
      );
      expect(resumed).toMatchObject({
        handle: created.handle,
        state: 'answered',
        response: { values: { message: note } },
      });
      expect(sess.stats.of().sessionsCreated).toBe(1);
      expect(sess.sessions.list()).toHaveLength(1);
    },
  );

  it('a host that disconnects mid-wait ends it as needs_resume; the server exits; a new one resumes', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const { sess } = stack;
    const server = stack.server;
    const created = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
    stdio.audit.url(created.humanUrl!, 'sess link');
    const sessionId = sess.sessions.byUrl(created.humanUrl!)!.view.id;
    const pending = server.callTool('sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 45_000,
    });
    pending.catch(() => undefined);
    await sess.whenWaiting(sessionId, 1);
    const closing = Date.now();
    await server.close(); // stdin closes: the host went away
    expect(Date.now() - closing).toBeLessThan(10_000);
    expect(server.stderr()).toMatch(/"tool":"sess_response","state":"needs_resume"/);
    expect(sess.pendingWaits(sessionId)).toBe(0);

    const note = 'answered while the host was away';
    stdio.audit.answer({ note });
    await sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message: note } });
    const next = await stack.restart({ kill: false });
    // A fresh process does its first read through the wait, which also teaches the client the workspace.
    const resumed = interactionOf(
      await next.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 }),
    );
    expect(resumed).toMatchObject({ state: 'answered', response: { values: { message: note } } });
    expect(sess.stats.of().sessionsCreated).toBe(1);
  });

  it('ends a wait at the ceiling as waiting, with the re-wait line first', async () => {
    const stack = await stdio.start({ client: 'v2', env: { SESS_MCP_MAX_WAIT_MS: '300' } });
    const { server } = stack;
    const created = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
    stdio.audit.url(created.humanUrl!, 'sess link');
    const started = Date.now();
    const result = await server.callTool('sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 45_000,
    });
    // SESS_MCP_MAX_WAIT_MS lowered the 45 s ceiling.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(interactionOf(result).state).toBe('waiting');
    expect(result.isError).toBeFalsy();
    expect(result.content[0]?.text).not.toMatch(/^\{/);
  });

  it('sends progress notifications during a wait when the client sent a progress token', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const { server, sess } = stack;
    const created = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
    stdio.audit.url(created.humanUrl!, 'sess link');
    const progress: Array<{ progress: number; total?: number }> = [];
    const started = Date.now();
    const note = 'progress seen, answering now';
    stdio.audit.answer({ note });
    const result = await server.callTool(
      'sess_response',
      { handle: created.handle, revision: 1, wait_ms: 45_000 },
      {
        onprogress: (p) => {
          progress.push(p);
          // The person answers once the first notification arrived: the wait then ends at once.
          if (progress.length === 1)
            void sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message: note } });
        },
      },
    );
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]).toMatchObject({ progress: expect.any(Number), total: 45_000 });
    // About every 10 s: the first one came after roughly that long, and the wait then ended.
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    expect(interactionOf(result).state).toBe('answered');
  }, 40_000);
});

describe('crash and restart over stdio', () => {
  it('kills the server (SIGKILL) between every step and still completes with one Session', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const { sess } = stack;
    const steps: string[] = [];

    let server = await stack.restart();
    const created = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
    steps.push('request');
    stdio.audit.url(created.humanUrl!, 'sess link');
    /** Restart the server, then read `revision` of the request (waiting up to `waitMs` when given). */
    const responseAfterRestart = async (revision: number, waitMs?: number) => {
      server = await stack.restart();
      const wait = waitMs === undefined ? {} : { wait_ms: waitMs };
      return interactionOf(
        await server.callTool('sess_response', { handle: created.handle, revision, ...wait }),
      );
    };

    server = await stack.restart();
    expect(
      interactionOf(
        await server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 0 }),
      ).state,
    ).toBe('waiting');
    steps.push('response (waiting)');

    const note = 'survived the crash, zebra';
    stdio.audit.answer({ note });
    await sess.submitAnswer(created.humanUrl!, { action: 'approve', values: { message: note } });

    const answered = await responseAfterRestart(1, 5_000);
    expect(answered.state).toBe('answered');
    steps.push('response (answered)');

    // A saved `answered` is re-confirmed after a restart, the same answer again.
    const again = await responseAfterRestart(1);
    expect(again.response).toEqual(answered.response);
    steps.push('response (re-confirmed)');

    server = await stack.restart();
    const published = interactionOf(await publishAfter(server, answered, followUpSurface));
    expect(published).toMatchObject({ revision: 2, state: 'waiting' });
    steps.push('publish');

    // Repeating the identical publish after a restart is answered without a second revision.
    server = await stack.restart();
    const replay = interactionOf(await publishAfter(server, answered, followUpSurface));
    expect(replay).toMatchObject({ revision: 2, state: 'waiting' });
    expect(sess.stats.of().revisionsPublished).toBe(1);
    steps.push('publish (identical repeat)');

    await sess.submitAnswer(created.humanUrl!, { action: 'push', values: {} });
    const second = await responseAfterRestart(2, 5_000);
    expect(second.state).toBe('answered');
    steps.push('response (2nd answer)');

    server = await stack.restart();
    const done = interactionOf(
      await server.callTool('sess_complete', {
        handle: created.handle,
        expected_revision: 2,
        response_event_id: second.response!.eventId,
      }),
    );
    expect(done.state).toBe('completed');
    steps.push('complete');

    server = await stack.restart();
    expect(
      interactionOf(await server.callTool('sess_response', { handle: created.handle, revision: 2 })).state,
    ).toBe('completed');
    steps.push('response (completed)');

    expect(steps).toHaveLength(9);
    expect(sess.stats.of().sessionsCreated).toBe(1);
    expect(sess.sessions.list()).toHaveLength(1);
    expect(sess.stats.of().sessionsCompleted).toBe(1);
    expect((await sess.openPage(created.humanUrl!)).html).toContain('Done — the agent has your answer.');
  }, 90_000);

  it('kills itself at a named durable step (test hook) and the owner finds the record', async () => {
    const stack = await stdio.start({
      client: 'v1',
      env: { SESS_MCP_TEST_CRASH_AT: 'create.after_response' },
    });
    const { server, sess } = stack;
    const call = server.callTool('sess_request', { interaction: approveSurface });
    call.catch(() => undefined);
    const exit = await server.exited();
    expect(exit).toBeDefined();
    await expect(call).rejects.toThrow();
    // The create reached Sess; the record was left at its saved intent for the owner.
    expect(sess.stats.of().sessionsCreated).toBe(1);
    const { openProfileRecords } = await import('../../src/store/file/index.js');
    const records = await openProfileRecords({ stateDir: stack.stateDir, profile: 'default' }).list();
    expect(records.map((r) => r.state)).toEqual(['create_intent']);
  });

  it('counts occurrences of the crash step (step@N)', async () => {
    const stack = await stdio.start({
      client: 'v2',
      env: { SESS_MCP_TEST_CRASH_AT: 'create.after_intent_saved@2' },
    });
    const { server, sess } = stack;
    const first = interactionOf(await server.callTool('sess_request', { interaction: approveSurface }));
    stdio.audit.url(first.humanUrl!, 'sess link');
    const second = server.callTool('sess_request', { interaction: approveSurface });
    second.catch(() => undefined);
    await server.exited();
    await expect(second).rejects.toThrow();
    // Killed after the second intent was saved and before its create was sent.
    expect(sess.stats.of().sessionsCreated).toBe(1);
    const { openProfileRecords } = await import('../../src/store/file/index.js');
    const states = (await openProfileRecords({ stateDir: stack.stateDir }).list()).map((r) => r.state).sort();
    expect(states).toEqual(['create_intent', 'waiting']);
  });
});
