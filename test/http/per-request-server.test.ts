/**
 * The server the handler builds per request: a request that is one `tools/call` of a Sess tool
 * gets a server with that tool alone, and that must not show. An unknown tool is answered as a
 * server with every tool answers it, `tools/list` still lists every tool, and a 2025-03-26 batch that
 * calls two tools serves both.
 */
import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/index.js';
import { useCleanup } from '../support/cleanup.js';
import { approveSurface, type HttpHarness, startHttpHarness } from './harness.js';
import { legacyPost } from './helpers.js';

const open = useCleanup();

const TOKEN = 'per-request-server-token';
const HEADERS = { authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': '2025-11-25' };

async function harness(): Promise<HttpHarness> {
  const h = await startHttpHarness();
  open.push(h);
  h.principal(TOKEN);
  return h;
}

/** What these tests read of a JSON-RPC answer. */
interface RpcAnswer {
  id?: unknown;
  error?: { code: number; message: string };
  result?: {
    isError?: boolean;
    tools?: Array<{ name: string }>;
    structuredContent?: { interaction?: { state: string; handle: string } };
  };
}

/** The JSON-RPC messages of an answer sent as JSON or as SSE events. */
async function messagesOf(response: Response): Promise<RpcAnswer[]> {
  const text = await response.text();
  if (text.startsWith('{') || text.startsWith('[')) {
    const json = JSON.parse(text);
    return Array.isArray(json) ? json : [json];
  }
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
}

async function post(h: HttpHarness, body: unknown, headers: Record<string, string> = HEADERS) {
  const response = await h.handler.fetch(legacyPost(`${h.server.url}/mcp`, body, headers));
  expect(response.status).toBe(200);
  return messagesOf(response);
}

describe('the per-request server', () => {
  it('answers a call of an unknown tool as the SDK does: tool not found', async () => {
    const h = await harness();
    const [answer] = await post(h, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'sess_no_such_tool', arguments: {} },
    });
    // The SDK's own answer to an unknown tool, as with every tool registered.
    expect(answer!.error).toEqual({ code: -32602, message: 'Tool sess_no_such_tool not found' });
  });

  it('still lists every tool, and serves a single call of one of them', async () => {
    const h = await harness();
    const [listed] = await post(h, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(listed!.result!.tools!.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    const [created] = await post(h, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'sess_request', arguments: { interaction: approveSurface } },
    });
    expect(created!.result!.isError).not.toBe(true);
    expect(created!.result!.structuredContent!.interaction!.state).toBe('waiting');
  });

  it('serves a 2025-03-26 batch that calls two different tools', async () => {
    const h = await harness();
    const [created] = await post(h, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'sess_request', arguments: { interaction: approveSurface } },
    });
    const { handle } = created!.result!.structuredContent!.interaction!;
    const answers = await post(
      h,
      [
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'sess_response', arguments: { handle, revision: 1, wait_ms: 0 } },
        },
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name: 'sess_request', arguments: { interaction: approveSurface } },
        },
      ],
      { authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': '2025-03-26' },
    );
    const byId = new Map(answers.map((a) => [a.id, a]));
    expect(byId.get(2)?.result?.structuredContent?.interaction?.state).toBe('waiting');
    expect(byId.get(3)?.result?.structuredContent?.interaction?.state).toBe('waiting');
  });
});
