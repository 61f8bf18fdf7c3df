/**
 * `createSessToolHandlers` on the low-level `Server` of `@modelcontextprotocol/sdk` 1.x, driven by a
 * real 1.x `Client` over the 1.x in-memory transport pair, with the engine on the local Sess
 * runtime. What the server sends is held to what a 2.x `McpServer` with `registerSessTools` sends
 * for the same request on the same engine, message for message as it crosses the transport: the
 * tool list, and each call's text, `structuredContent` and `isError`. Progress and cancellation
 * reach the engine; an unknown tool is the 2.x server's JSON-RPC error; a 1.x `McpServer` is refused
 * by `registerSessTools` by name and serves the tools from its own low-level `Server`.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as InMemoryTransportV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { SERVER_INSTRUCTIONS } from '../../src/core/contract/tool-definitions.js';
import type { SessEngine } from '../../src/core/engine/engine.js';
import { registerSessTools } from '../../src/core/engine/register.js';
import { createSessToolHandlers } from '../../src/core/engine/tool-handlers.js';
import { expectCancelledWait, type InMemoryServerOptions, useInMemoryMcp } from '../support/in-memory-mcp.js';
import { approveAnswer, approveSurface } from './harness.js';

const mcp = useInMemoryMcp();

/** A 1.x client on each server over one engine, and what each received. */
interface Pair {
  v1: ClientV1;
  v2: ClientV1;
  wireV1: unknown[];
  wireV2: unknown[];
}

async function pairOn(engine: SessEngine, options: Omit<InMemoryServerOptions, 'server' | 'wire'> = {}) {
  const wireV1: unknown[] = [];
  const wireV2: unknown[] = [];
  const client = () => new ClientV1({ name: 'tool-handlers-test', version: '1.0.0' });
  const v1 = await mcp.connect(engine, { ...options, server: 'server-v1', wire: wireV1, client: client() });
  const v2 = await mcp.connect(engine, { ...options, server: 'mcp-server', wire: wireV2, client: client() });
  return { v1, v2, wireV1, wireV2 } satisfies Pair;
}

/** The `result` of the last response `wire` holds, as the server sent it. */
function lastResult(wire: unknown[]): unknown {
  const responses = wire.filter((m) => typeof m === 'object' && m !== null && 'result' in m);
  return (responses.at(-1) as { result: unknown }).result;
}

/** The same call through both servers: each server's result, as sent, in JSON. */
async function callBoth(pair: Pair, name: string, args: Record<string, unknown>) {
  await pair.v1.callTool({ name, arguments: args });
  await pair.v2.callTool({ name, arguments: args });
  return { v1: JSON.stringify(lastResult(pair.wireV1)), v2: JSON.stringify(lastResult(pair.wireV2)) };
}

/** `json` with the values only one interaction has (handle, link, expiry) replaced by their names. */
function withoutOwnValues(json: string): string {
  const { interaction } = (JSON.parse(json) as { structuredContent: { interaction: Record<string, string> } })
    .structuredContent;
  let out = json;
  for (const key of ['handle', 'humanUrl', 'expiresAt']) {
    out = out.replaceAll(interaction[key] as string, `<${key}>`);
  }
  return out;
}

describe('createSessToolHandlers on a 1.x Server', () => {
  it('tools/list is what the 2.x McpServer lists, byte for byte, for each set and schema form', async () => {
    const h = await mcp.harness();
    for (const options of [{}, { tools: 'sess-mcp-tools/5' as const }, { inputSchemas: 'flat' }]) {
      const pair = await pairOn(h.engine, options);
      expect(pair.v1.getInstructions()).toBe(pair.v2.getInstructions());
      const listed = (await pair.v1.listTools()).tools;
      expect(listed.length).toBe(options.tools === undefined ? 7 : 5);
      await pair.v2.listTools();
      expect(JSON.stringify(lastResult(pair.wireV1))).toBe(JSON.stringify(lastResult(pair.wireV2)));
    }
  });

  it('a call answers byte for byte as through the 2.x McpServer: create, wait, answer, complete, list, errors', async () => {
    const h = await mcp.harness();
    const pair = await pairOn(h.engine);
    const created = await callBoth(pair, 'sess_request', { interaction: approveSurface });
    expect(withoutOwnValues(created.v1)).toBe(withoutOwnValues(created.v2));
    expect(created.v1).toContain('"state":"waiting"');

    const { handle, humanUrl } = (
      JSON.parse(created.v1) as { structuredContent: { interaction: { handle: string; humanUrl: string } } }
    ).structuredContent.interaction;
    const same = async (name: string, args: Record<string, unknown>) => {
      const { v1, v2 } = await callBoth(pair, name, args);
      expect(v1, name).toBe(v2);
      return JSON.parse(v1) as { structuredContent: Record<string, unknown>; isError?: boolean };
    };
    expect(
      (await same('sess_response', { handle, revision: 1, wait_ms: 0 })).structuredContent,
    ).toMatchObject({
      interaction: { state: 'waiting' },
    });
    await h.sess.submitAnswer(humanUrl, approveAnswer);
    const answered = await same('sess_response', { handle, revision: 1, wait_ms: 5_000 });
    const { response } = answered.structuredContent.interaction as { response: { eventId: string } };
    const completion = { handle, expected_revision: 1, response_event_id: response.eventId };
    expect((await same('sess_complete', completion)).structuredContent).toMatchObject({
      interaction: { state: 'completed' },
    });
    expect((await same('sess_list', {})).structuredContent.items).toHaveLength(2);
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      [
        'sess_ask',
        { question: 'Q?', fields: [{ type: 'text', name: 'a', label: 'x'.repeat(72) }] },
        'INVALID_ARGUMENTS',
      ],
      ['sess_response', { handle, revision: 7 }, 'REVISION_MISMATCH'],
      ['sess_response', { handle: 'sess_h_unknown', revision: 1 }, 'HANDLE_NOT_FOUND'],
      ['sess_request', {}, 'INVALID_ARGUMENTS'],
    ];
    for (const [name, args, code] of refusals) {
      const refused = await same(name, args);
      expect(refused.isError, name).toBe(true);
      expect(refused.structuredContent, name).toMatchObject({ error: { code } });
    }
  });

  it('a call without arguments runs as through the 2.x McpServer, with {}', async () => {
    const h = await mcp.harness();
    const pair = await pairOn(h.engine);
    const call = { method: 'tools/call' as const, params: { name: 'sess_list' } };
    const listed = await pair.v1.request(call, CallToolResultSchema);
    await pair.v2.request(call, CallToolResultSchema);
    expect(listed.isError).toBeUndefined();
    expect(listed.structuredContent).toMatchObject({ items: [] });
    expect(JSON.stringify(lastResult(pair.wireV1))).toBe(JSON.stringify(lastResult(pair.wireV2)));
  });

  it('an unknown tool is the JSON-RPC error the 2.x McpServer answers', async () => {
    const h = await mcp.harness();
    const pair = await pairOn(h.engine);
    const v1 = pair.v1.callTool({ name: 'sess_nothing', arguments: {} });
    const v2 = pair.v2.callTool({ name: 'sess_nothing', arguments: {} });
    await expect(v1).rejects.toThrow();
    await expect(v2).rejects.toThrow();
    const errorOf = (wire: unknown[]) => JSON.stringify((wire.at(-1) as { error: unknown }).error);
    expect(errorOf(pair.wireV1)).toBe(errorOf(pair.wireV2));
    expect(JSON.parse(errorOf(pair.wireV1))).toMatchObject({ code: -32602 });
  });

  it('progress notifications reach the client; a cancelled call ends the wait as needs_resume', async () => {
    const h = await mcp.harness({ engine: { progressIntervalMs: 40 } });
    const client = await mcp.connect(h.engine, {
      server: 'server-v1',
      client: new ClientV1({ name: 'tool-handlers-test', version: '1.0.0' }),
    });
    const created = await h.request();
    const seen: Array<{ progress: number; total?: number }> = [];
    const waited = await client.callTool(
      { name: 'sess_response', arguments: { handle: created.handle, revision: 1, wait_ms: 300 } },
      undefined,
      { onprogress: (p) => void seen.push(p) },
    );
    expect(waited.structuredContent).toMatchObject({ interaction: { state: 'waiting' } });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen[0]).toMatchObject({ total: 300 });

    await expectCancelledWait(h, created, (signal) =>
      client.callTool(
        { name: 'sess_response', arguments: { handle: created.handle, revision: 1, wait_ms: 30_000 } },
        undefined,
        { signal },
      ),
    );
  });

  it('a 1.x McpServer: registerSessTools refuses it by name; its own Server serves the handlers', async () => {
    const h = await mcp.harness();
    const server = new McpServerV1(
      { name: 'host', version: '1.0.0' },
      { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
    );
    expect(() => registerSessTools(server as never, { engine: h.engine })).toThrow(
      new TypeError(
        'registerSessTools: server is an McpServer of @modelcontextprotocol/sdk 1.x, whose registerTool() ' +
          'takes only Zod schemas; serve the tools from its low-level Server with createSessToolHandlers() ' +
          'instead (docs/embedding.md).',
      ),
    );
    const sess = createSessToolHandlers({ engine: h.engine });
    server.server.setRequestHandler(ListToolsRequestSchema, sess.listTools);
    server.server.setRequestHandler(CallToolRequestSchema, sess.callTool);
    const [clientSide, serverSide] = InMemoryTransportV1.createLinkedPair();
    await server.connect(serverSide);
    const client = new ClientV1({ name: 'tool-handlers-test', version: '1.0.0' });
    await client.connect(clientSide);
    mcp.defer(async () => {
      await client.close();
      await server.close();
    });
    expect((await client.listTools()).tools).toHaveLength(7);
    const created = await client.callTool({
      name: 'sess_ask',
      arguments: { question: 'Go?', fields: [{ type: 'boolean', name: 'go', label: 'Go' }] },
    });
    expect(created.structuredContent).toMatchObject({ interaction: { revision: 1, state: 'waiting' } });
  });

  // A bad tool set or schema form: tool-sets.test.ts and input-schemas.test.ts, with every entry.
  it('refuses an unknown option and a missing engine by name', () => {
    expect(() => createSessToolHandlers({ engine: {} as never, bogus: 1 } as never)).toThrow(
      new TypeError('createSessToolHandlers: option "bogus" is not an option of createSessToolHandlers.'),
    );
    expect(() => createSessToolHandlers({} as never)).toThrow(
      new TypeError(
        'createSessToolHandlers: option "engine" is required and must be a Sess engine (createSessEngine).',
      ),
    );
  });
});
