/**
 * The tool-set option of every face: `registerSessTools({ tools })`, `createSessToolHandlers({
 * tools })`, `createSessMcpHttpHandler({ tools })` and the stdio server's `SESS_MCP_TOOLS`. With `sess-mcp-tools/5` a client lists exactly
 * the five tools of `/5` (and the instructions for them); by default it lists every tool. A bad
 * value is the factory's `TypeError` (`<factory>: option "tools" <rule>.`), or for stdio a
 * `NOT_CONFIGURED` naming the variable, reported at start and on every call.
 *
 * Real parts: a real `McpServer` with the v2 and v1 SDK clients in memory, the HTTP handler in a
 * real `node:http` server, and the built `sess-mcp` bin as a child process.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { TOOL_SET_RULE, toolsOf } from '../../src/core/contract/rules.js';
import { TOOL_NAMES, TOOLS_V5 } from '../../src/core/contract/tool-args.js';
import { serverInstructions, TOOLS_CONTRACT_VERSION } from '../../src/core/contract/tool-definitions.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { registerSessTools } from '../../src/core/engine/register.js';
import { createSessToolHandlers } from '../../src/core/engine/tool-handlers.js';
import { createSessMcpHttpHandler } from '../../src/http/index.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { startHttpHarness } from '../http/harness.js';
import { connectLegacy, connectModern, MINIMAL_HTTP_OPTIONS } from '../http/helpers.js';
import { useInMemoryMcp } from '../support/in-memory-mcp.js';
import { useStdioStack } from '../support/stdio-stack.js';

const FIVE = ['sess_request', 'sess_response', 'sess_publish', 'sess_complete', 'sess_ask'];
const BAD_VALUES: unknown[] = [
  'sess-mcp-tools/4',
  'sess-mcp-tools/7',
  '5',
  '',
  'SESS-MCP-TOOLS/5',
  'toString',
  5,
  null,
  [],
];

const mcp = useInMemoryMcp();

describe('the tool sets', () => {
  it('sess-mcp-tools/5 is the five tools of /5; the default is every tool', () => {
    expect([...TOOLS_V5]).toEqual(FIVE);
    expect(toolsOf('sess-mcp-tools/5')).toEqual(TOOLS_V5);
    expect(toolsOf(undefined)).toEqual(TOOL_NAMES);
    expect(toolsOf(TOOLS_CONTRACT_VERSION)).toEqual(TOOL_NAMES);
    expect(TOOLS_CONTRACT_VERSION).toBe('sess-mcp-tools/6');
    for (const value of BAD_VALUES) expect(TOOL_SET_RULE.test(value), String(value)).toBe(false);
  });

  it('the instructions mention sess_list and sess_withdraw only for a set that lists them', () => {
    const five = serverInstructions('sess-mcp-tools/5');
    expect(five).not.toMatch(/sess_list|sess_withdraw/);
    const all = serverInstructions();
    for (const tool of ['sess_list', 'sess_withdraw']) {
      expect(all.includes(tool)).toBe((TOOL_NAMES as readonly string[]).includes(tool));
    }
  });
});

describe('registerSessTools({ tools })', () => {
  it('lists exactly the five tools with sess-mcp-tools/5 (v2 and v1 clients), every tool by default', async () => {
    const { engine } = await mcp.harness();
    const v2 = await mcp.connect(engine, { tools: 'sess-mcp-tools/5' });
    expect((await v2.listTools()).tools.map((t) => t.name)).toEqual(FIVE);
    expect(v2.getInstructions()).toBe(serverInstructions('sess-mcp-tools/5'));
    const v1 = await mcp.connect(engine, {
      client: new ClientV1({ name: 'sets', version: '1.0.0' }),
      tools: 'sess-mcp-tools/5',
    });
    expect((await v1.listTools()).tools.map((t) => t.name)).toEqual(FIVE);
    const all = await mcp.connect(engine);
    expect((await all.listTools()).tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    const named = await mcp.connect(engine, { tools: 'sess-mcp-tools/6' });
    expect((await named.listTools()).tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
  });

  it.each(BAD_VALUES)('refuses tools: %j with the option TypeError', async (value) => {
    const { engine } = await mcp.harness();
    const server = new McpServer({ name: 'x', version: '0' }, { capabilities: { tools: {} } });
    expect(() => registerSessTools(server, { engine, tools: value as never })).toThrow(
      new TypeError('registerSessTools: option "tools" must be "sess-mcp-tools/5" or "sess-mcp-tools/6".'),
    );
  });
});

describe('createSessToolHandlers({ tools })', () => {
  // What the handlers list for each set is held to registerSessTools's in tool-handlers.test.ts.
  it.each(BAD_VALUES)('refuses tools: %j with the option TypeError', (value) => {
    const engine = createSessEngine({ authority: { resolve: async () => ({}) as never } });
    expect(() => createSessToolHandlers({ engine, tools: value as never })).toThrow(
      new TypeError(
        'createSessToolHandlers: option "tools" must be "sess-mcp-tools/5" or "sess-mcp-tools/6".',
      ),
    );
  });
});

describe('createSessMcpHttpHandler({ tools })', () => {
  it('lists exactly the five tools with sess-mcp-tools/5 (2026 and 2025-era clients), every tool by default', async () => {
    const five = await startHttpHarness({ tools: 'sess-mcp-tools/5' });
    mcp.defer(() => five.close());
    five.principal('t5');
    const modern = await connectModern(five.server.url, { authorization: 'Bearer t5' });
    mcp.defer(() => modern.close());
    expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(FIVE);
    expect(modern.getInstructions()).toBe(serverInstructions('sess-mcp-tools/5'));
    const legacy = await connectLegacy(five.server.url, { authorization: 'Bearer t5' });
    mcp.defer(() => legacy.close());
    expect((await legacy.listTools()).tools.map((t) => t.name)).toEqual(FIVE);

    const all = await startHttpHarness();
    mcp.defer(() => all.close());
    all.principal('t6');
    const client = await connectModern(all.server.url, { authorization: 'Bearer t6' });
    mcp.defer(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(client.getInstructions()).toBe(serverInstructions());
  });

  it.each(BAD_VALUES)('refuses tools: %j with the option TypeError', (value) => {
    expect(() => createSessMcpHttpHandler({ ...MINIMAL_HTTP_OPTIONS, tools: value as never })).toThrow(
      new TypeError(
        'createSessMcpHttpHandler: option "tools" must be "sess-mcp-tools/5" or "sess-mcp-tools/6".',
      ),
    );
  });
});

describe('SESS_MCP_TOOLS (stdio)', () => {
  const stdio = useStdioStack();
  const linux = { platform: 'linux', homedir: () => '/home/me' };

  it('reads sess-mcp-tools/5 and sess-mcp-tools/6; unset and empty mean every tool', () => {
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_TOOLS: 'sess-mcp-tools/5' }, linux).tools).toBe(
      'sess-mcp-tools/5',
    );
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_TOOLS: 'sess-mcp-tools/6' }, linux).tools).toBe(
      'sess-mcp-tools/6',
    );
    expect(readStdioConfig({ HOME: '/h' }, linux).tools).toBeUndefined();
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_TOOLS: '' }, linux).tools).toBeUndefined();
  });

  it.each([
    ...BAD_VALUES.filter((v): v is string => typeof v === 'string' && v !== ''),
    'sess_request,sess_response',
    ' sess-mcp-tools/5',
  ])('refuses SESS_MCP_TOOLS=%j naming the variable and the rule, never the value', (value) => {
    expect(() => readStdioConfig({ HOME: '/h', SESS_MCP_TOOLS: value }, linux)).toThrow(
      'SESS_MCP_TOOLS must be sess-mcp-tools/5 or sess-mcp-tools/6, or unset for every tool.',
    );
  });

  it('the sess-mcp process lists exactly the five tools with SESS_MCP_TOOLS=sess-mcp-tools/5 (v1 client)', async () => {
    const stack = await stdio.start({ client: 'v1', env: { SESS_MCP_TOOLS: 'sess-mcp-tools/5' } });
    expect((await stack.server.listTools()).map((t) => t.name)).toEqual(FIVE);
    expect(stack.server.serverInfo().instructions).toBe(serverInstructions('sess-mcp-tools/5'));
    const all = await stdio.start({ client: 'v1' });
    expect((await all.server.listTools()).map((t) => t.name)).toEqual([...TOOL_NAMES]);
  });

  it('a bad SESS_MCP_TOOLS is reported at start and on every call, naming the variable', async () => {
    const stack = await stdio.start({ client: 'v1', env: { SESS_MCP_TOOLS: 'sess-mcp-tools/9' } });
    const result = await stack.server.callTool('sess_response', { handle: 'sess_h_x', revision: 1 });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      error: {
        code: 'NOT_CONFIGURED',
        message: 'SESS_MCP_TOOLS must be sess-mcp-tools/5 or sess-mcp-tools/6, or unset for every tool.',
      },
    });
    expect(stack.server.stderr()).toContain('"event":"config_invalid"');
    expect(stack.server.stderr()).not.toContain('sess-mcp-tools/9');
  });
});
