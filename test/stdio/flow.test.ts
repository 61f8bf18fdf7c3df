/**
 * The stdio server end to end: a real `sess-mcp` child process, real MCP clients (SDK v1, v2 in
 * the 2025 era, v2 negotiating 2026-07-28) and the local Sess runtime with its answer page.
 * Every test's server stderr goes through the secrets audit.
 */
import { describe, expect, it } from 'vitest';
import { SHOW_LINK_NEXT } from '../../src/core/contract/result.js';
import {
  SERVER_INSTRUCTIONS,
  type TOOL_DEFINITIONS,
  toolDefinitionsFor,
} from '../../src/core/contract/tool-definitions.js';
import { useStdioStack } from '../support/stdio-stack.js';
import { approveSurface, followUpSurface, lunchAsk } from '../support/surfaces.js';
import { errorOf, interactionOf, publishAfter } from './harness.js';

const stdio = useStdioStack();

/** The engine suite's approve-before-commit Surface and its follow-up. */
const commitSurface = approveSurface;

const CLIENTS = ['v1', 'v2', 'v2-modern'] as const;

describe.each(CLIENTS)('over stdio with the %s client', (client) => {
  it('lists every tool with the published JSON Schemas and the server instructions', async () => {
    const stack = await stdio.start({ client });
    const tools = await stack.server.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'sess_request',
      'sess_response',
      'sess_publish',
      'sess_complete',
      'sess_ask',
      'sess_list',
      'sess_withdraw',
    ]);
    for (const tool of tools) {
      const definition = toolDefinitionsFor()[tool.name as keyof typeof TOOL_DEFINITIONS];
      expect(tool.inputSchema).toEqual(definition.inputSchema);
      expect(tool.description).toBe(definition.description);
    }
    const info = stack.server.serverInfo();
    expect(info.name).toBe('@sess.si/mcp');
    expect(info.instructions).toBe(SERVER_INSTRUCTIONS);
    if (client === 'v2') expect(stack.server.protocolVersion()).toBe('2025-11-25');
    if (client === 'v2-modern') expect(stack.server.protocolVersion()).toBe('2026-07-28');
    // Listing tools reads no key and contacts nothing.
    expect(Object.values(stack.sess.stats.requests).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('request → answer on the page → answered (verified) → publish → answer → complete → done', async () => {
    const stack = await stdio.start({ client });
    const { server, sess } = stack;
    const audit = stdio.audit;

    const created = await server.callTool('sess_request', { interaction: commitSurface });
    const first = interactionOf(created);
    expect(first).toMatchObject({ revision: 1, state: 'waiting' });
    expect(first.humanUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(created.content[0]?.text?.startsWith(`${SHOW_LINK_NEXT}\n\n{`)).toBe(true);
    expect(created.content[0]?.text).toContain('"humanUrl":"http');
    audit.url(first.humanUrl!, 'sess link');

    const message = 'Greet users by their first name, approved';
    audit.answer({ message });
    expect(
      (await sess.submitAnswer(first.humanUrl!, { action: 'approve', values: { message } })).status,
    ).toBe(303);

    const answered = interactionOf(
      await server.callTool('sess_response', { handle: first.handle, revision: 1, wait_ms: 10_000 }),
    );
    expect(answered.state).toBe('answered');
    expect(answered.response).toMatchObject({
      revision: 1,
      action: 'approve',
      values: { message },
      verified: true,
      actorAssurance: 'link_holder',
    });

    const published = interactionOf(await publishAfter(server, answered, followUpSurface));
    expect(published).toMatchObject({ handle: first.handle, revision: 2, state: 'waiting' });

    await sess.submitAnswer(first.humanUrl!, { action: 'push', values: {} });
    const second = interactionOf(
      await server.callTool('sess_response', { handle: first.handle, revision: 2, wait_ms: 10_000 }),
    );
    expect(second).toMatchObject({
      state: 'answered',
      response: { revision: 2, action: 'push', verified: true },
    });

    const completed = interactionOf(
      await server.callTool('sess_complete', {
        handle: first.handle,
        expected_revision: 2,
        response_event_id: second.response!.eventId,
      }),
    );
    expect(completed).toMatchObject({ handle: first.handle, revision: 2, state: 'completed' });
    expect((await sess.openPage(first.humanUrl!)).html).toContain('Done — the agent has your answer.');
    expect(sess.stats.of().sessionsCreated).toBe(1);
    expect(sess.stats.of().sessionsCompleted).toBe(1);
    // One client per key in the process: the receipt key set was fetched once for both answers.
    expect(sess.stats.requests.jwks).toBe(1);
    // A completed handle keeps answering `completed`, without the link.
    const after = interactionOf(
      await server.callTool('sess_response', { handle: first.handle, revision: 2 }),
    );
    expect(after.state).toBe('completed');
    expect(after.humanUrl).toBeUndefined();
  });
});

describe('sess_ask over stdio', () => {
  it('turns a question and fields into one Session and returns the verified answer', async () => {
    const stack = await stdio.start({ client: 'v2' });
    const { server, sess } = stack;
    const result = await server.callTool('sess_ask', {
      question: 'What time works for a call tomorrow?',
      details: 'A 30-minute call about the release plan.',
      fields: [
        {
          name: 'time',
          label: 'Best time',
          type: 'choice',
          required: true,
          options: [
            { id: 'am', label: 'Morning' },
            { id: 'pm', label: 'Afternoon' },
          ],
        },
        { name: 'note', label: 'Anything else?', type: 'text', multiline: true },
        { name: 'score', label: 'How urgent?', type: 'rating', min: 1, max: 5 },
      ],
      submit_label: 'Send',
    });
    const asked = interactionOf(result);
    expect(asked).toMatchObject({ revision: 1, state: 'waiting' });
    expect(asked.ask).toBeUndefined();
    stdio.audit.url(asked.humanUrl!, 'sess link');
    const snapshot = sess.sessions.byUrl(asked.humanUrl!);
    expect(snapshot?.surfaces[0]?.title).toBe('What time works for a call tomorrow?');

    const note = 'After lunch is best for me, zebra';
    stdio.audit.answer({ note });
    const action = snapshot!.surfaces[0]!.actions[0]!.id;
    await sess.submitAnswer(asked.humanUrl!, { action, values: { time: 'pm', note, score: 4 } });
    const answered = interactionOf(
      await server.callTool('sess_response', { handle: asked.handle, revision: 1, wait_ms: 5_000 }),
    );
    expect(answered.response).toMatchObject({ values: { time: 'pm', note, score: 4 }, verified: true });
    expect(sess.stats.of().sessionsCreated).toBe(1);
  });

  it('asks three people through one link (respondents) and reports each verified answer', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const { server, sess } = stack;
    const asked = interactionOf(
      await server.callTool('sess_ask', { ...lunchAsk(), respondents: { max: 3, name: true } }),
    );
    expect(asked.state).toBe('waiting');
    expect(asked.ask?.id).toEqual(expect.any(String));
    stdio.audit.url(asked.humanUrl!, 'ask link');
    const askView = sess.asks.get(asked.ask!.id)!;
    expect(askView.max).toBe(3);

    const people = [
      { name: 'Ana', day: 'thu', diet: 'vegetarian, no mushrooms' },
      { name: 'Bo', day: 'fri', diet: 'no restrictions at all' },
      { name: 'Cy', day: 'thu', diet: 'gluten free please thanks' },
    ];
    for (const person of people) {
      const started = await sess.startRespondent(asked.humanUrl!, { name: person.name });
      expect(started.humanUrl).toEqual(expect.any(String));
      stdio.audit.url(started.humanUrl!, 'respondent link');
      stdio.audit.answer({ diet: person.diet });
      const surface = sess.sessions.byUrl(started.humanUrl!)!.surfaces[0]!;
      await sess.submitAnswer(started.humanUrl!, {
        action: surface.actions[0]!.id,
        values: { day: person.day, diet: person.diet },
      });
    }
    // A fourth browser finds the Ask full: the cap is exact.
    expect((await sess.startRespondent(asked.humanUrl!, { name: 'Dee' })).humanUrl).toBeUndefined();

    const read = interactionOf(await server.callTool('sess_response', { handle: asked.handle, revision: 1 }));
    expect(read.ask).toMatchObject({ id: asked.ask!.id, max: 3, started: 3, answered: 3 });
    const answers = read.ask!.answers as Array<{
      name?: string;
      values: Record<string, unknown>;
      verified: boolean;
    }>;
    expect(answers.map((a) => [a.name, a.values.day, a.values.diet, a.verified]).sort()).toEqual(
      people.map((p) => [p.name, p.day, p.diet, true]).sort(),
    );
    expect(['waiting', 'closed']).toContain(read.state);

    // An Ask's handle cannot be published or completed.
    const refused = await server.callTool('sess_complete', {
      handle: asked.handle,
      expected_revision: 1,
      response_event_id: 'evt_x',
    });
    expect(errorOf(refused).code).toBe('INVALID_STATE');
  });

  it('reports expired once the link closes for good with no answer', async () => {
    const stack = await stdio.start({ client: 'v2' });
    const { server, sess } = stack;
    // Over 20 hours: not extendable, so it expires for good at its end.
    const created = interactionOf(
      await server.callTool('sess_request', { interaction: commitSurface, expires_in: 21 * 3600 }),
    );
    stdio.audit.url(created.humanUrl!, 'sess link');
    sess.clock.advance(21 * 3600 * 1000 + 1000);
    const result = interactionOf(
      await server.callTool('sess_response', { handle: created.handle, revision: 1, wait_ms: 2_000 }),
    );
    expect(result.state).toBe('expired');
    // Final: it stays expired.
    const again = interactionOf(
      await server.callTool('sess_response', { handle: created.handle, revision: 1 }),
    );
    expect(again.state).toBe('expired');
  });
});
