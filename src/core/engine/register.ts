/**
 * {@link registerSessTools}: adds the tools of `sess-mcp-tools/6` (or, on request, only the five of
 * `sess-mcp-tools/5`) to a host's own MCP server (the `McpServer` of `@modelcontextprotocol/server`),
 * the same way the stdio and HTTP faces do.
 *
 * Typed structurally ({@link McpServerLike}), so the root entry imports no MCP SDK. The SDK would
 * validate arguments against `inputSchema` before the handler and answer with its own error text;
 * to keep the contract's exact error objects, each tool gets a Standard Schema that accepts any
 * arguments (the engine validates them) and publishes the tool's real JSON Schema in `tools/list`.
 * This module maps the SDK's request context onto {@link ToolCallContext}; it decides nothing.
 */

import { optionNames, readOptions } from '../contract/options.js';
import type { ToolResult } from '../contract/result.js';
import {
  INPUT_SCHEMAS_RULE,
  type InputSchemas,
  TOOL_SET_RULE,
  type ToolSet,
  toolsOf,
} from '../contract/rules.js';
import { toolDefinitionsOf } from '../contract/tool-definitions.js';
import type { SessEngine } from './engine.js';
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
 * 2.x satisfies it.
 */
export interface McpServerLike {
  registerTool(
    name: string,
    config: SessToolConfig,
    handler: (args: unknown, ctx: ToolHandlerContextLike) => Promise<ToolResult>,
  ): unknown;
}

/** Options of {@link registerSessTools}. */
export interface RegisterSessToolsOptions {
  /** The engine every tool call runs on. */
  engine: SessEngine;
  /**
   * Which tools to list: `'sess-mcp-tools/5'` lists only its five tools (for a host that wants
   * exactly that set); give the server the same set's instructions, `serverInstructions(set)`.
   * @default 'sess-mcp-tools/6' (every tool)
   */
  tools?: ToolSet;
  /**
   * How `tools/list` shows each tool's `inputSchema`: `'exact'`, the schemas as generated, or
   * `'flat'`, the same schemas without `anyOf`/`oneOf` (each union merged into one schema that
   * accepts every value of its variants), for a host that rewrites unions before it validates,
   * such as LangChain.js's `@langchain/mcp-adapters`. The engine validates every call the same
   * way with either: a flat schema only lets the host pass arguments the server then refuses
   * with `INVALID_ARGUMENTS`.
   * @default 'exact'
   */
  inputSchemas?: 'exact' | 'flat';
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
  const token = req?._meta?.progressToken;
  const notify = req?.notify;
  if ((typeof token === 'string' || typeof token === 'number') && typeof notify === 'function') {
    out.progress = async ({ progress, total, message }) => {
      const params: Record<string, unknown> = { progressToken: token, progress };
      if (total !== undefined) params.total = total;
      if (message !== undefined) params.message = message;
      await notify.call(req, { method: 'notifications/progress', params });
    };
  }
  return out;
}

/** The option names of {@link RegisterSessToolsOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<RegisterSessToolsOptions>()('engine', 'tools', 'inputSchemas');

/**
 * Add the Sess tools to `server` (every tool, or the set named by `options.tools`), with the input
 * schemas `options.inputSchemas` names. Every call runs `engine.call`, so a failure is a tool
 * error result with the contract's `{ code, message, retryable, … }`, never a protocol error.
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
  const read = readOptions('registerSessTools', options, { known: KNOWN_OPTIONS });
  const engine = options.engine as unknown;
  if (engine === null || typeof engine !== 'object' || typeof (engine as SessEngine).call !== 'function') {
    read.fail('engine', 'is required and must be a Sess engine (createSessEngine)');
  }
  const tools = toolsOf(read.optionalRule('tools', options.tools, TOOL_SET_RULE) as ToolSet | undefined);
  const definitions = toolDefinitionsOf(
    read.optionalRule('inputSchemas', options.inputSchemas, INPUT_SCHEMAS_RULE) as InputSchemas | undefined,
  );
  for (const tool of tools) {
    const definition = definitions[tool];
    const config: SessToolConfig = {
      title: definition.title,
      description: definition.description,
      inputSchema: passThroughSchema(definition.inputSchema as Record<string, unknown>),
      annotations: definition.annotations,
    };
    server.registerTool(definition.name, config, (args, ctx) =>
      options.engine.call(tool, args, toolCallContextFrom(ctx)),
    );
  }
}
