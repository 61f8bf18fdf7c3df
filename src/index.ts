/**
 * `@sess.si/mcp`: the transport-agnostic interaction core of `sess-mcp-tools/5`.
 *
 * This entry holds the tool contract (schemas, limits, errors, results), the interaction engine,
 * the ports and the memory store. It imports neither `@modelcontextprotocol/*` nor any `node:`
 * module; the stdio and HTTP faces live behind `@sess.si/mcp/stdio` and `@sess.si/mcp/http`.
 */

export * from './core/ask-surface.js';
export {
  createSessEngine,
  DEFAULT_PROGRESS_INTERVAL_MS,
  type DurableStep,
  type EngineHooks,
  type EngineResult,
  MAX_WAIT_CEILING_MS,
  type SessEngine,
  type SessEngineOptions,
  type ToolCallContext,
  type ToolProgress,
} from './core/engine.js';
export * from './core/errors.js';
export * from './core/json-schema.js';
export * from './core/limits.js';
export { createMemoryHandleStore, type HandleStoreFactory } from './core/memory-store.js';
export * from './core/ports.js';
export * from './core/record.js';
export {
  type McpServerLike,
  type RegisterSessToolsOptions,
  registerSessTools,
  type SessToolConfig,
  type StandardSchemaWithJsonLike,
  type ToolAnnotationsLike,
  type ToolHandlerContextLike,
  toolCallContextFrom,
} from './core/register.js';
export * from './core/result.js';
export * from './core/schemas.js';
export type * from './core/surface.js';
export * from './core/tool-definitions.js';
export * from './core/validate.js';
export * from './sess/index.js';
