/**
 * The JSDoc examples of `createSessEngine` and `registerSessTools`, kept compiling by the type
 * check (this file is not a test and is never run).
 */
import { McpServer } from '@modelcontextprotocol/server';
import type { Authority } from '../../src/core/ports.js';
import {
  createSessEngine,
  registerSessTools,
  SERVER_INSTRUCTIONS,
  type SessEngine,
} from '../../src/index.js';

declare const authority: Authority;
declare const handle: string;
declare const signal: AbortSignal;
declare const version: string;

/** `createSessEngine`: build once, run every tool call through `call`. */
export async function engineExample(): Promise<void> {
  const engine = createSessEngine({ authority, maxWaitMs: 30_000 });
  const result = await engine.call('sess_response', { handle, revision: 1 }, { signal });
  if (result.isError === true) console.error(result.structuredContent);
}

/** `registerSessTools`: the five tools on a host's own MCP server. */
export function registerExample(engine: SessEngine): McpServer {
  const server = new McpServer(
    { name: '@sess.si/mcp', version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
  );
  registerSessTools(server, { engine });
  return server;
}

/** The typed methods throw `SessMcpError`; callers switch on its code. */
export async function typedExample(engine: SessEngine): Promise<void> {
  try {
    await engine.response({ handle, revision: 1 });
  } catch (error) {
    const { isSessMcpError } = await import('../../src/core/errors.js');
    if (isSessMcpError(error) && error.code === 'SESS_UNAVAILABLE') {
      // retry later
    }
  }
}
