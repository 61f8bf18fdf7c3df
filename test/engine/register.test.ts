/**
 * `registerSessTools` on a real `McpServer` (`@modelcontextprotocol/server` 2.x) driven by a real
 * MCP client (`@modelcontextprotocol/client`) over the SDK's in-memory transport pair, with the
 * engine on the local Sess runtime: `tools/list` publishes the contract's schemas, a call returns
 * the contract's exact result and error objects (not the SDK's validation text), progress
 * notifications reach the client, and a cancelled call ends the wait as `needs_resume`.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import {
  ANSWERED_NEXT,
  REWAIT_LINE,
  SHOW_LINK_NEXT,
  SHOW_LINK_PREFIX,
  THEN_CALL_RESPONSE_LINE,
} from '../../src/core/contract/result.js';
import { TOOL_NAMES } from '../../src/core/contract/schemas.js';
import {
  SERVER_INSTRUCTIONS,
  type TOOL_DEFINITIONS,
  toolDefinitionsFor,
} from '../../src/core/contract/tool-definitions.js';
import { registerSessTools, toolCallContextFrom } from '../../src/core/engine/register.js';
import { expectCancelledWait, useInMemoryMcp } from '../support/in-memory-mcp.js';
import { approveAnswer, approveSurface } from './harness.js';

const mcp = useInMemoryMcp();

describe('registerSessTools', () => {
  it('tools/list shows every tool with the contract schemas, titles and annotations', async () => {
    const h = await mcp.harness();
    const client = await mcp.connect(h.engine);
    expect(client.getInstructions()).toBe(SERVER_INSTRUCTIONS);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    for (const tool of tools) {
      const definition = toolDefinitionsFor()[tool.name as keyof typeof TOOL_DEFINITIONS];
      expect(tool.inputSchema).toEqual(definition.inputSchema);
      expect(tool.title).toBe(definition.title);
      expect(tool.description).toBe(definition.description);
      expect(tool.annotations).toEqual(definition.annotations);
    }
  });

  it('a call runs the engine: the flow over MCP returns structured interactions', async () => {
    const h = await mcp.harness();
    const client = await mcp.connect(h.engine);
    const created = await client.callTool({
      name: 'sess_request',
      arguments: { interaction: approveSurface },
    });
    expect(created.isError).toBeFalsy();
    const interaction = (created.structuredContent as { interaction: { handle: string; humanUrl: string } })
      .interaction;
    expect(interaction).toMatchObject({ revision: 1, state: 'waiting' });
    await h.sess.submitAnswer(interaction.humanUrl, approveAnswer);
    const answered = await client.callTool({
      name: 'sess_response',
      arguments: { handle: interaction.handle, revision: 1, wait_ms: 5_000 },
    });
    expect(answered.structuredContent).toMatchObject({
      interaction: { state: 'answered', response: { verified: true, values: approveAnswer.values } },
    });
  });

  it('under /6 every text is next, a blank line, then the JSON of /5; under /5 the text is as it always was', async () => {
    const h = await mcp.harness();
    const v6 = await mcp.connect(h.engine);
    const v5 = await mcp.connect(h.engine, { tools: 'sess-mcp-tools/5' });
    type Result = { content: Array<{ text: string }>; structuredContent: Record<string, unknown> };
    const both = async (name: string, args: Record<string, unknown>) => {
      const six = (await v6.callTool({ name, arguments: args })) as unknown as Result;
      const five = (await v5.callTool({ name, arguments: args })) as unknown as Result;
      return { six, five };
    };
    /** The `/5` text of a result with this structured content, as the engine writes it. */
    const fiveJson = (structured: Record<string, unknown>) => {
      const { next: _next, ...rest } = structured;
      return JSON.stringify(rest);
    };
    const expectGuided = ({ six, five }: { six: Result; five: Result }, fiveText: string) => {
      const next = six.structuredContent.next as string;
      expect(six.content.map((c) => c.text)).toEqual([`${next}\n\n${fiveJson(six.structuredContent)}`]);
      expect(five.content.map((c) => c.text)).toEqual([fiveText]);
    };

    // A create: /5 shows the link in its first line; /6 leads with next, the link in the JSON.
    const six = (await v6.callTool({
      name: 'sess_request',
      arguments: { interaction: approveSurface },
    })) as unknown as Result;
    const created = (six.structuredContent as { interaction: { handle: string; humanUrl: string } })
      .interaction;
    expect(six.content[0]!.text).toBe(`${SHOW_LINK_NEXT}\n\n${JSON.stringify({ interaction: created })}`);
    const five = (await v5.callTool({
      name: 'sess_request',
      arguments: { interaction: approveSurface },
    })) as unknown as Result;
    const created5 = (five.structuredContent as { interaction: { humanUrl: string } }).interaction;
    expect(five.content[0]!.text).toBe(
      `${SHOW_LINK_PREFIX}${created5.humanUrl}\n${THEN_CALL_RESPONSE_LINE}\n\n${fiveJson(five.structuredContent)}`,
    );
    // Waiting, answered, a listing and an error, each under both sets.
    const waiting = await both('sess_response', { handle: created.handle, revision: 1, wait_ms: 0 });
    expectGuided(waiting, `${REWAIT_LINE}\n\n${fiveJson(waiting.five.structuredContent)}`);
    expect(waiting.six.structuredContent.next).toBe(REWAIT_LINE);
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const answered = await both('sess_response', { handle: created.handle, revision: 1, wait_ms: 5_000 });
    expect(answered.six.structuredContent.next).toBe(ANSWERED_NEXT);
    expectGuided(answered, fiveJson(answered.five.structuredContent));
    const error = await both('sess_response', { handle: 'h_unknown_0123456789abcdef', revision: 1 });
    expectGuided(error, fiveJson(error.five.structuredContent));
    const listed = (await v6.callTool({ name: 'sess_list', arguments: {} })) as unknown as Result;
    expect(listed.content[0]!.text).toBe(
      `${listed.structuredContent.next as string}\n\n${fiveJson(listed.structuredContent)}`,
    );
  });

  it('invalid arguments get the contract error object, not the SDK validation text', async () => {
    const h = await mcp.harness();
    const client = await mcp.connect(h.engine);
    const result = await client.callTool({
      name: 'sess_ask',
      arguments: { question: 'Q?', fields: [{ type: 'text', name: 'a', label: 'x'.repeat(72) }] },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: {
        code: 'INVALID_ARGUMENTS',
        message: '/fields/0/label is 72 characters; the limit is 60. Shorten it to at most 60 characters.',
        retryable: false,
        field: '/fields/0/label',
        limit: 60,
        length: 72,
      },
      next: 'Fix the arguments as error.message says (error.field points at the value), then call again.',
    });
    expect(h.sess.stats.requests.create ?? 0).toBe(0);
  });

  it('sends progress notifications when the client sent a progress token', async () => {
    const h = await mcp.harness({ engine: { progressIntervalMs: 40 } });
    const client = await mcp.connect(h.engine);
    const created = await h.request();
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool(
      { name: 'sess_response', arguments: { handle: created.handle, revision: 1, wait_ms: 300 } },
      { onprogress: (p) => void seen.push(p) },
    );
    expect((result.structuredContent as { interaction: { state: string } }).interaction.state).toBe(
      'waiting',
    );
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[0]).toMatchObject({ total: 300 });
  });

  it('a cancelled call ends the wait as needs_resume and the next call resumes the same Session', async () => {
    const h = await mcp.harness();
    const client = await mcp.connect(h.engine);
    const created = await h.request();
    await expectCancelledWait(h, created, (signal) =>
      client.callTool(
        { name: 'sess_response', arguments: { handle: created.handle, revision: 1, wait_ms: 30_000 } },
        { signal },
      ),
    );
    await h.sess.submitAnswer(created.humanUrl, approveAnswer);
    const resumed = await client.callTool({
      name: 'sess_response',
      arguments: { handle: created.handle, revision: 1, wait_ms: 5_000 },
    });
    expect((resumed.structuredContent as { interaction: { state: string } }).interaction.state).toBe(
      'answered',
    );
    expect(h.sess.stats.of().sessionsCreated).toBe(1);
  });

  it('serves a 2025-era client (the v1 SDK): tools, a call, progress and the contract errors', async () => {
    const h = await mcp.harness({ engine: { progressIntervalMs: 40 } });
    const client = await mcp.connect(h.engine, {
      client: new ClientV1({ name: 'engine-test-v1', version: '1.0.0' }),
    });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    const created = await client.callTool({
      name: 'sess_request',
      arguments: { interaction: approveSurface },
    });
    const { handle } = (created.structuredContent as { interaction: { handle: string } }).interaction;
    const seen: unknown[] = [];
    const waited = await client.callTool(
      { name: 'sess_response', arguments: { handle, revision: 1, wait_ms: 250 } },
      undefined,
      { onprogress: (p) => void seen.push(p) },
    );
    expect(waited.structuredContent).toEqual({
      interaction: { handle, revision: 1, state: 'waiting' },
      next: REWAIT_LINE,
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    const refused = await client.callTool({ name: 'sess_response', arguments: { handle, revision: 7 } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { code: 'REVISION_MISMATCH', retryable: false },
    });
  });

  it('refuses a server without registerTool and options without an engine', () => {
    expect(() => registerSessTools({} as never, { engine: {} as never })).toThrow(TypeError);
    expect(() => registerSessTools({ registerTool: () => undefined }, {} as never)).toThrow(/engine/);
    expect(() => registerSessTools({ registerTool: () => undefined }, {} as never)).toThrow(
      new TypeError(
        'registerSessTools: option "engine" is required and must be a Sess engine (createSessEngine).',
      ),
    );
    expect(() => registerSessTools({ registerTool: () => undefined }, undefined as never)).toThrow(
      new TypeError('registerSessTools: options must be an object.'),
    );
  });

  it('maps the SDK context: signal always, progress only with a token', async () => {
    const signal = new AbortController().signal;
    const sent: unknown[] = [];
    const notify = async (n: unknown) => void sent.push(n);
    expect(toolCallContextFrom({ mcpReq: { signal, notify } })).toEqual({ signal });
    const ctx = toolCallContextFrom({ mcpReq: { signal, notify, _meta: { progressToken: 7 } } });
    await ctx.progress?.({ progress: 1, total: 2, message: 'm' });
    expect(sent).toEqual([
      { method: 'notifications/progress', params: { progressToken: 7, progress: 1, total: 2, message: 'm' } },
    ]);
  });
});
