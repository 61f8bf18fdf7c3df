/**
 * The one `McpServer` both faces serve: the package's identity and instructions, with the Sess
 * tools (every tool, or the tool set the face was configured with) registered over an engine. A face decides where the engine comes from (one per
 * process for stdio, one per request for HTTP); this module only builds the server around it.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { registerSessTools, type SessEngine, serverInstructions, type ToolSet } from '../index.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './package-info.js';

/**
 * A server with the Sess tools of `tools` (every tool by default) over `engine`. Without an engine
 * it has no tools: the HTTP face uses that for a request it answers before any principal is known
 * (a body that is not JSON).
 */
export function createSessMcpServer(engine: SessEngine | undefined, tools?: ToolSet): McpServer {
  const server = new McpServer(
    { name: PACKAGE_NAME, version: PACKAGE_VERSION },
    {
      capabilities: { tools: {} },
      ...(engine === undefined ? {} : { instructions: serverInstructions(tools) }),
    },
  );
  if (engine !== undefined) registerSessTools(server, { engine, ...(tools === undefined ? {} : { tools }) });
  return server;
}
