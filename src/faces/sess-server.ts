/**
 * The one `McpServer` both faces serve: the package's identity and instructions, with the five
 * Sess tools registered over an engine. A face decides where the engine comes from (one per
 * process for stdio, one per request for HTTP); this module only builds the server around it.
 */
import { McpServer } from '@modelcontextprotocol/server';
import {
  type McpServerLike,
  registerSessTools,
  SERVER_INSTRUCTIONS,
  type SessEngine,
  TOOL_NAMES,
} from '../index.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './package-info.js';

/**
 * A server with the five Sess tools over `engine`. Without an engine it has no tools: the HTTP
 * face uses that for a request it answers before any principal is known (a body that is not JSON).
 *
 * With `only`, one of the five tool names, only that tool is registered: the HTTP face builds a
 * server per request, and a request that is one `tools/call` can reach no other tool, so the
 * other four registrations (the SDK's per-tool objects and closures) would be built for nothing.
 * Any other name (an unknown tool) registers all five, so the SDK answers it as it always does.
 */
export function createSessMcpServer(engine: SessEngine | undefined, only?: string): McpServer {
  const server = new McpServer(
    { name: PACKAGE_NAME, version: PACKAGE_VERSION },
    {
      capabilities: { tools: {} },
      ...(engine === undefined ? {} : { instructions: SERVER_INSTRUCTIONS }),
    },
  );
  if (engine === undefined) return server;
  if (only === undefined || !(TOOL_NAMES as readonly string[]).includes(only)) {
    registerSessTools(server, { engine });
    return server;
  }
  const one: McpServerLike = {
    registerTool: (name, config, handler) =>
      name === only ? server.registerTool(name, config, handler) : undefined,
  };
  registerSessTools(one, { engine });
  return server;
}
