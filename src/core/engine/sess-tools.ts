/**
 * The Sess tools as a host serves them, whichever MCP SDK it runs: the options checked once, each
 * tool's definition (what `tools/list` shows) and its call (the engine's `call`, which never
 * throws), and the progress notification a call sends when the client asked for progress.
 *
 * `registerSessTools` (`register.ts`, the `McpServer` of `@modelcontextprotocol/server` 2.x) and
 * `createSessToolHandlers` (`tool-handlers.ts`, the low-level `Server` of
 * `@modelcontextprotocol/sdk` 1.x) both serve what this module returns, so the two cannot list or
 * answer differently. It knows no SDK: mapping an SDK's request context is the adapters' job.
 */

import { optionNames, readOptions } from '../contract/options.js';
import { type ToolResult, withNextInText } from '../contract/result.js';
import {
  INPUT_SCHEMAS_RULE,
  type InputSchemas,
  TOOL_SET_RULE,
  type ToolSet,
  toolsOf,
} from '../contract/rules.js';
import {
  TOOLS_CONTRACT_VERSION,
  type ToolDefinition,
  toolDefinitionsFor,
} from '../contract/tool-definitions.js';
import type { SessEngine } from './engine.js';
import type { ToolCallContext, ToolProgress } from './types.js';

/** Options of `registerSessTools` and `createSessToolHandlers`. */
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

/** One Sess tool as a host serves it. */
export interface SessTool {
  /** What `tools/list` shows for it. */
  readonly definition: ToolDefinition;
  /** Run one call of it: the contract's result or tool error, never a throw. */
  call(args: unknown, ctx: ToolCallContext): Promise<ToolResult>;
}

/** The option names of {@link RegisterSessToolsOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<RegisterSessToolsOptions>()('engine', 'tools', 'inputSchemas');

/**
 * The tools `options` names, in `tools/list` order, each calling `options.engine`. The options are
 * checked with the one option helper under `factory`'s name, so a bad or unknown option fails the
 * same way through every adapter.
 */
export function sessToolsOf(factory: string, options: RegisterSessToolsOptions): readonly SessTool[] {
  const read = readOptions(factory, options, { known: KNOWN_OPTIONS });
  const engine = options.engine as unknown;
  if (engine === null || typeof engine !== 'object' || typeof (engine as SessEngine).call !== 'function') {
    read.fail('engine', 'is required and must be a Sess engine (createSessEngine)');
  }
  const set =
    (read.optionalRule('tools', options.tools, TOOL_SET_RULE) as ToolSet | undefined) ??
    TOOLS_CONTRACT_VERSION;
  const tools = toolsOf(set);
  // `/6` texts lead with `next`; `/5` texts stay as they always were.
  const guided = set === TOOLS_CONTRACT_VERSION;
  const definitions = toolDefinitionsFor(
    set,
    read.optionalRule('inputSchemas', options.inputSchemas, INPUT_SCHEMAS_RULE) as InputSchemas | undefined,
  );
  return tools.map((tool) => ({
    definition: definitions[tool],
    call: guided
      ? async (args, ctx) => withNextInText(await options.engine.call(tool, args, ctx))
      : (args, ctx) => options.engine.call(tool, args, ctx),
  }));
}

/** The `notifications/progress` a call sends, as both SDK generations take it. */
export interface ProgressNotificationLike {
  /** Always `notifications/progress`. */
  method: 'notifications/progress';
  /** The client's progress token, and the wait's progress so far (in milliseconds). */
  params: { progressToken: string | number; progress: number; total?: number; message?: string };
}

/**
 * The engine's `progress` for one call: a `notifications/progress` for `token` through `send`, or
 * `undefined` when the client sent no progress token (or the SDK gave no way to notify).
 */
export function progressTo(
  token: unknown,
  send: ((notification: ProgressNotificationLike) => Promise<void>) | undefined,
): ToolCallContext['progress'] {
  if ((typeof token !== 'string' && typeof token !== 'number') || send === undefined) return undefined;
  return async ({ progress, total, message }: ToolProgress) => {
    const params: ProgressNotificationLike['params'] = { progressToken: token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    await send({ method: 'notifications/progress', params });
  };
}
