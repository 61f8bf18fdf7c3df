/**
 * The one `McpServer` both faces serve: the package's identity and instructions, with the Sess
 * tools (every tool, or the tool set the face was configured with) registered over an engine. A face decides where the engine comes from (one per
 * process for stdio, one per request for HTTP); this module only builds the server around it.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { toolsOf } from '../core/contract/rules.js';
import {
  type InstructionsForm,
  type McpServerLike,
  registerSessTools,
  type SessEngine,
  serverInstructions,
  type ToolSet,
} from '../index.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './package-info.js';

/**
 * A server with the Sess tools of `tools` (every tool by default) over `engine`. Without an engine
 * it has no tools: the HTTP face uses that for a request it answers before any principal is known
 * (a body that is not JSON).
 *
 * `inputSchemas` is the form of the listed input schemas (`registerSessTools`'s option), and
 * `instructions` the form of the server instructions (`serverInstructions`'s).
 *
 * With `only`, one tool name of that set, only that tool is registered: the HTTP face builds a
 * server per request, and a request that is one `tools/call` can reach no other tool, so the
 * other registrations (the SDK's per-tool objects and closures) would be built for nothing. Any
 * other name (an unknown tool, or one outside the set) registers the whole set, so the SDK
 * answers it as it always does.
 */
export function createSessMcpServer(
  engine: SessEngine | undefined,
  tools?: ToolSet,
  only?: string,
  inputSchemas?: 'exact' | 'flat',
  claudeChannel = false,
  instructions?: InstructionsForm,
): McpServer {
  const server = new McpServer(
    { name: PACKAGE_NAME, version: PACKAGE_VERSION },
    {
      // Claude Code's channel (opt-in, stdio): events pushed as `notifications/claude/channel`.
      capabilities: claudeChannel ? { tools: {}, experimental: { 'claude/channel': {} } } : { tools: {} },
      ...(engine === undefined ? {} : { instructions: serverInstructions(tools, instructions) }),
    },
  );
  if (engine === undefined) return server;
  const options = {
    engine,
    ...(tools === undefined ? {} : { tools }),
    ...(inputSchemas === undefined ? {} : { inputSchemas }),
  };
  const set: readonly string[] = toolsOf(tools);
  if (only === undefined || !set.includes(only)) {
    registerSessTools(server, options);
    return server;
  }
  const one: McpServerLike = {
    registerTool: (name, config, handler) =>
      name === only ? server.registerTool(name, config, handler) : undefined,
  };
  registerSessTools(one, options);
  return server;
}
