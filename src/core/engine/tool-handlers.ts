/**
 * {@link createSessToolHandlers}: the Sess tools as the two request handlers of a low-level MCP
 * server, `tools/list` and `tools/call`, for the `Server` of `@modelcontextprotocol/sdk` 1.x. Its
 * `McpServer.registerTool` takes only Zod schemas, so `registerSessTools` cannot use it; a 1.x
 * host passes these two to its own `setRequestHandler(ListToolsRequestSchema, …)` and
 * `setRequestHandler(CallToolRequestSchema, …)`.
 *
 * Typed structurally, so the root entry imports no MCP SDK. The tools and their calls are
 * `sess-tools.ts`'s, the same `registerSessTools` serves, so a 1.x and a 2.x server list the same
 * tools and answer a call with the same result. This module maps the 1.x request and its `extra`
 * onto the engine's context; it decides nothing.
 */

import type { ToolResult } from '../contract/result.js';
import type { ToolDefinition } from '../contract/tool-definitions.js';
import {
  type ProgressNotificationLike,
  progressTo,
  type RegisterSessToolsOptions,
  type SessTool,
  sessToolsOf,
} from './sess-tools.js';
import type { ToolCallContext } from './types.js';

/** A `tools/call` request as the SDK's `CallToolRequestSchema` hands it over, structurally. */
export interface CallToolRequestLike {
  /** The tool's name, its arguments and the request's `_meta` (with a progress token, progress). */
  params: {
    name: string;
    arguments?: Record<string, unknown>;
    _meta?: { progressToken?: string | number; [key: string]: unknown };
  };
}

/** The part of the SDK 1.x request handler's `extra` this package reads, structurally. */
export interface RequestHandlerExtraLike {
  /** Aborted when the client cancels the request or the connection closes. */
  signal?: AbortSignal;
  /** Sends a notification related to the request (progress, here). */
  sendNotification?(notification: ProgressNotificationLike): Promise<void>;
}

/** A `tools/list` result as plain data. */
export interface ListToolsResultLike {
  /** Every tool of the set, in `tools/list` order. */
  tools: ToolDefinition[];
  /** Lets the value stand where the MCP SDK expects its own result type. */
  [key: string]: unknown;
}

/** Options of {@link createSessToolHandlers}: the same as `registerSessTools`'s. */
export type SessToolHandlersOptions = RegisterSessToolsOptions;

/** The two request handlers {@link createSessToolHandlers} returns; neither needs `this`. */
export interface SessToolHandlers {
  /** `tools/list`: every tool of the set, with the contract's schemas, titles and annotations. */
  readonly listTools: () => ListToolsResultLike;
  /**
   * `tools/call`: runs the engine, so a failure is a tool error result with the contract's
   * `{ code, message, retryable, … }`. A tool outside the set is a JSON-RPC error (`-32602`,
   * `Tool <name> not found`), as the 2.x `McpServer` answers it.
   */
  readonly callTool: (request: CallToolRequestLike, extra?: RequestHandlerExtraLike) => Promise<ToolResult>;
}

/** JSON-RPC's "Invalid params": what the 2.x `McpServer` answers a call of an unknown tool with. */
const INVALID_PARAMS = -32602;

/** The error of a call of a tool outside the set; the SDK sends its `code` and `message`. */
function unknownTool(name: unknown): Error {
  return Object.assign(new Error(`Tool ${String(name)} not found`), { code: INVALID_PARAMS });
}

/** The engine's view of one 1.x tool call: its abort signal and, with a progress token, progress. */
function contextFromExtra(
  request: CallToolRequestLike,
  extra: RequestHandlerExtraLike | undefined,
): ToolCallContext {
  const out: ToolCallContext = {};
  if (extra?.signal !== undefined) out.signal = extra.signal;
  const send = extra?.sendNotification;
  const progress = progressTo(
    request.params._meta?.progressToken,
    typeof send === 'function' ? (notification) => send.call(extra, notification) : undefined,
  );
  if (progress !== undefined) out.progress = progress;
  return out;
}

/**
 * The Sess tools (every tool, or the set named by `options.tools`) as a `tools/list` and a
 * `tools/call` handler for the low-level `Server` of `@modelcontextprotocol/sdk` 1.x, with the
 * input schemas `options.inputSchemas` names. Declare the `tools` capability on the server; the
 * handlers serve the tools exactly as `registerSessTools` does on a 2.x `McpServer`.
 *
 * The handlers take over the server's `tools/list` and `tools/call`: on the `server` of a 1.x
 * `McpServer`, only when that `McpServer` registers no tools of its own.
 *
 * @example
 * ```ts source="examples/snippets/core.examples.ts#createSessToolHandlers"
 * const server = new Server(
 *   { name: 'my-server', version },
 *   { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
 * );
 * const sess = createSessToolHandlers({ engine: createSessEngine({ authority }) });
 * server.setRequestHandler(ListToolsRequestSchema, sess.listTools);
 * server.setRequestHandler(CallToolRequestSchema, sess.callTool);
 * ```
 */
export function createSessToolHandlers(options: SessToolHandlersOptions): SessToolHandlers {
  const tools = sessToolsOf('createSessToolHandlers', options);
  const byName = new Map<unknown, SessTool>(tools.map((tool) => [tool.definition.name, tool]));
  return {
    // A fresh copy each time: a host that edits one cannot change the contract.
    listTools: () => ({ tools: tools.map((tool) => structuredClone(tool.definition)) }),
    callTool: async (request, extra) => {
      const tool = byName.get(request.params.name);
      if (tool === undefined) throw unknownTool(request.params.name);
      // The 2.x McpServer hands a call without arguments to its tool as {}; so does this.
      return tool.call(request.params.arguments ?? {}, contextFromExtra(request, extra));
    },
  };
}
