/**
 * {@link registerSessTools}: adds the tools of `sess-mcp-tools/6` (or, on request, only the five of
 * `sess-mcp-tools/5`) to a host's own MCP server (the `McpServer` of `@modelcontextprotocol/server`
 * 2.x), the same way the stdio and HTTP faces do. The `McpServer` of `@modelcontextprotocol/sdk` 1.x
 * is refused by name: its `registerTool` takes only Zod schemas, so a 1.x server serves the tools
 * from its low-level `Server` (`tool-handlers.ts`).
 *
 * Typed structurally ({@link McpServerLike}), so the root entry imports no MCP SDK. The SDK would
 * validate arguments against `inputSchema` before the handler and answer with its own error text;
 * to keep the contract's exact error objects, each tool gets a Standard Schema that accepts any
 * arguments (the engine validates them) and publishes the tool's real JSON Schema in `tools/list`.
 * This module maps the SDK's request context onto {@link ToolCallContext}; it decides nothing: the
 * tools and their calls are `sess-tools.ts`'s, which `createSessToolHandlers` (for the SDK 1.x)
 * serves too.
 */

import type { ToolResult } from '../contract/result.js';
import { progressTo, type RegisterSessToolsOptions, sessToolsOf } from './sess-tools.js';
import type { ToolCallContext } from './types.js';

/**
 * A Standard Schema with a JSON Schema converter (`StandardSchemaWithJSON` of the MCP SDK),
 * structurally.
 */
export interface StandardSchemaWithJsonLike {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => { value: unknown; issues?: undefined };
    readonly jsonSchema: {
      readonly input: (options: { target: string }) => Record<string, unknown>;
      readonly output: (options: { target: string }) => Record<string, unknown>;
    };
  };
}

/** The part of the SDK's tool handler context this package reads, structurally. */
export interface ToolHandlerContextLike {
  mcpReq: {
    signal?: AbortSignal;
    _meta?: { progressToken?: string | number; [key: string]: unknown };
    notify?: (notification: { method: string; params?: Record<string, unknown> }) => Promise<void>;
  };
}

/** Tool annotations as `tools/list` shows them. */
export interface ToolAnnotationsLike {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** What {@link registerSessTools} passes to `registerTool` as the tool's config. */
export interface SessToolConfig {
  title?: string;
  description?: string;
  inputSchema: StandardSchemaWithJsonLike;
  annotations?: ToolAnnotationsLike;
}

/**
 * An MCP server that tools can be registered on: `McpServer` of `@modelcontextprotocol/server`
 * 2.x satisfies it. (The `McpServer` of `@modelcontextprotocol/sdk` 1.x does not: serve the tools
 * from its low-level `Server` with `createSessToolHandlers`.)
 */
export interface McpServerLike {
  registerTool(
    name: string,
    config: SessToolConfig,
    handler: (args: unknown, ctx: ToolHandlerContextLike) => Promise<ToolResult>,
  ): unknown;
}

/** A Standard Schema that lets any arguments through and publishes `jsonSchema` in `tools/list`. */
function passThroughSchema(jsonSchema: Record<string, unknown>): StandardSchemaWithJsonLike {
  return {
    '~standard': {
      version: 1,
      vendor: '@sess.si/mcp',
      // The engine validates: this keeps the contract's exact INVALID_ARGUMENTS objects.
      validate: (value) => ({ value }),
      jsonSchema: {
        input: () => structuredClone(jsonSchema),
        output: () => structuredClone(jsonSchema),
      },
    },
  };
}

/** The engine's view of one SDK tool call: its abort signal and, with a progress token, progress. */
export function toolCallContextFrom(ctx: ToolHandlerContextLike | undefined): ToolCallContext {
  const out: ToolCallContext = {};
  const req = ctx?.mcpReq;
  if (req?.signal !== undefined) out.signal = req.signal;
  const notify = req?.notify;
  const progress = progressTo(
    req?._meta?.progressToken,
    typeof notify === 'function' ? (notification) => notify.call(req, notification) : undefined,
  );
  if (progress !== undefined) out.progress = progress;
  return out;
}

/**
 * Whether `server` is the `McpServer` of `@modelcontextprotocol/sdk` 1.x: it still has the `tool()`
 * method 2.x removed, and its `registerTool` takes only Zod schemas.
 */
function isSdkV1McpServer(server: object): boolean {
  return typeof (server as { tool?: unknown }).tool === 'function';
}

/**
 * Add the Sess tools to `server` (every tool, or the set named by `options.tools`), with the input
 * schemas `options.inputSchemas` names. Every call runs `engine.call`, so a failure is a tool
 * error result with the contract's `{ code, message, retryable, … }`, never a protocol error.
 *
 * `server` is the `McpServer` of `@modelcontextprotocol/server` 2.x. The `McpServer` of
 * `@modelcontextprotocol/sdk` 1.x is refused with a `TypeError`: serve the tools from its
 * low-level `Server` with `createSessToolHandlers`, which lists and answers them the same way.
 *
 * @example
 * ```ts source="examples/snippets/core.examples.ts#registerSessTools"
 * const server = new McpServer(
 *   { name: '@sess.si/mcp', version },
 *   { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS },
 * );
 * registerSessTools(server, { engine: createSessEngine({ authority }) });
 * ```
 */
export function registerSessTools(server: McpServerLike, options: RegisterSessToolsOptions): void {
  if (server === null || typeof server !== 'object' || typeof server.registerTool !== 'function') {
    throw new TypeError('registerSessTools: server must have a registerTool() method.');
  }
  if (isSdkV1McpServer(server)) {
    throw new TypeError(
      'registerSessTools: server is an McpServer of @modelcontextprotocol/sdk 1.x, whose registerTool() ' +
        'takes only Zod schemas; serve the tools from its low-level Server with createSessToolHandlers() ' +
        'instead (docs/embedding.md).',
    );
  }
  for (const tool of sessToolsOf('registerSessTools', options)) {
    const { definition } = tool;
    const config: SessToolConfig = {
      title: definition.title,
      description: definition.description,
      inputSchema: passThroughSchema(definition.inputSchema as Record<string, unknown>),
      annotations: definition.annotations,
    };
    server.registerTool(definition.name, config, (args, ctx) => tool.call(args, toolCallContextFrom(ctx)));
  }
}
