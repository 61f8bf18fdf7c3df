/**
 * `@sess.si/mcp`: the transport-agnostic interaction core.
 *
 * What an embedder needs: the engine and its options, the ports (`SessApi`, `HandleStore`,
 * `Authority`) and their types, `registerSessTools` for an existing MCP server (and
 * `createSessToolHandlers` for a server of the SDK 1.x), the error table and class, the result and
 * argument types, the tool contract, and the memory store. It imports neither
 * `@modelcontextprotocol/*` nor any `node:` module.
 *
 * The valibot schemas of the tool contract live in `@sess.si/mcp/schemas`; the Sess client and
 * receipt verifier in `@sess.si/mcp/sess`; the faces in `@sess.si/mcp/stdio` and
 * `@sess.si/mcp/http`; the durable stores in `@sess.si/mcp/store/file` and
 * `@sess.si/mcp/store/postgres`. Validator internals stay behind the module boundary.
 *
 * This file only re-exports, from `core/` (the contract, the model, the engine) and
 * `store/memory/`. The other folders of `src/` are the other entries and what they share;
 * `docs/architecture.md` ("The tree") draws them, and each folder's `index.ts` header or
 * `README.md` says what it holds.
 */

// Results and errors.
export {
  ERROR_CODES,
  ERROR_TABLE,
  type ErrorClass,
  type ErrorCode,
  isSessMcpError,
  type RetryRule,
  SessMcpError,
  type SessMcpErrorDetails,
  type ToolErrorObject,
} from './core/contract/errors.js';
export type { JsonSchemaObject } from './core/contract/json-schema.js';
export { isUnsafeKey } from './core/contract/limits.js';
// The event outbox port and the event a host receives (`onEvent`, a webhook's body).
export type {
  DueQuery,
  EventOutbox,
  OutboxClaim,
  OutboxDeliveryState,
  OutboxEntry,
  OutboxEvent,
  OutboxSettlement,
  OwedEvent,
  WakeEvent,
} from './core/contract/outbox.js';
export { wakeEventReference } from './core/contract/outbox.js';
// The ports, and the memory store beside them.
export {
  type AskRespondentsOptions,
  type AskRespondentView,
  type AskView,
  type Authority,
  type Binding,
  bindingGeneration,
  bindingPrincipal,
  bindingScope,
  type CallAuthority,
  type Clock,
  type CloseAskInput,
  type CompleteInput,
  type ConnectCause,
  type CreateAskInput,
  type CreateLimits,
  type CreateSessionInput,
  DEFAULT_MAX_OPEN_PER_PRINCIPAL,
  DEFAULT_PRUNE_LIMIT,
  type DiagnosticEvent,
  type DiagnosticsSink,
  type HandleStore,
  type HandleStoreFactory,
  type HttpBinding,
  LIST_CURSOR_KEY_BYTES,
  MAX_OPEN_PER_PRINCIPAL,
  MAX_PRUNE_LIMIT,
  MAX_UNFINISHED,
  MAX_WAITING_PAGE_LIMIT,
  type PruneQuery,
  type PruneResult,
  type PublishInput,
  type ResponseEvent,
  type SessApi,
  SessApiError,
  type SessApiErrorDetails,
  type SessApiErrorKind,
  type SessCallOptions,
  type SessionStatus,
  type SessionView,
  STORE_ERROR_REASONS,
  STORE_READY_TIMEOUT_MS,
  type StdioBinding,
  type StoreErrorReason,
  type StoreNotReadyReason,
  type StoreReadiness,
  sameGeneration,
  systemClock,
  type VerificationReason,
  type VerifiedReceipt,
  type VerifyResponseInput,
  type VersionedRecord,
  type WaitingPage,
  type WaitingQuery,
  type WithdrawInput,
} from './core/contract/ports.js';
export type {
  AskAnswerResult,
  AskResult,
  InteractionResult,
  InteractionResultState,
  ListItem,
  ListResult,
  ResponseResult,
  ToolResult,
} from './core/contract/result.js';
// The tool contract: what `tools/list` publishes and what the tools accept.
export {
  type InstructionsForm,
  type SessMcpTelemetryOptions,
  type ToolSet,
  WAIT_CEILING_MS,
} from './core/contract/rules.js';
export {
  type AskArgs,
  type AskBooleanField,
  type AskChoiceField,
  type AskField,
  type AskFieldBase,
  type AskFieldType,
  type AskMultiChoiceField,
  type AskNumberField,
  type AskOption,
  type AskRatingField,
  type AskRespondentsArgs,
  type AskTextField,
  type CompleteArgs,
  type ListArgs,
  type PublishArgs,
  type RequestArgs,
  type ResponseArgs,
  TOOL_NAMES,
  TOOLS_V5,
  type ToolArgs,
  type ToolName,
  type WithdrawArgs,
} from './core/contract/tool-args.js';
export {
  SERVER_INSTRUCTIONS,
  serverInstructions,
  TOOL_DEFINITIONS,
  TOOLS_CONTRACT_VERSION,
  type ToolAnnotations,
  type ToolDefinition,
} from './core/contract/tool-definitions.js';
export { parseToolArguments } from './core/contract/validate.js';
// The engine and its options.
export {
  createSessEngine,
  createWaitGate,
  type DurableStep,
  type EngineHooks,
  type EngineResult,
  type GateWaitRequest,
  type SessEngine,
  type SessEngineOptions,
  type ToolCallContext,
  type ToolProgress,
  type WaitGate,
  type WaitGateOptions,
} from './core/engine/engine.js';
// Event delivery over an outbox: what the faces run, for a host's own sinks too.
export {
  createEventDelivery,
  DEFAULT_CLAIM_HOLD_MS,
  type EventDelivery,
  type EventDeliveryOptions,
  type EventSink,
  type SinkOutcome,
} from './core/engine/event-delivery.js';
// Registering the tools on an MCP server the host already runs: a 2.x McpServer, or the
// low-level Server of the SDK 1.x.
export {
  type McpServerLike,
  registerSessTools,
  type SessToolConfig,
  type StandardSchemaWithJsonLike,
  type ToolAnnotationsLike,
  type ToolHandlerContextLike,
} from './core/engine/register.js';
export type { ProgressNotificationLike, RegisterSessToolsOptions } from './core/engine/sess-tools.js';
export {
  type CallToolRequestLike,
  createSessToolHandlers,
  type ListToolsResultLike,
  type RequestHandlerExtraLike,
  type SessToolHandlers,
  type SessToolHandlersOptions,
} from './core/engine/tool-handlers.js';
export {
  type ConfirmedMutation,
  type CreateRequest,
  INTERACTION_EVENT_TYPES,
  INTERACTION_STATE_KINDS,
  type InteractionEventType,
  type InteractionRecord,
  type InteractionState,
  type InteractionStateKind,
  isUnfinished,
  isWatched,
  LIST_STATES,
  type ListState,
  listStateOf,
  MAX_RECORD_EVENTS,
  type RecordEvent,
  type SessionRef,
  type VerifiedResponse,
  WATCHED_STATE_KINDS,
} from './core/model/record.js';
export type {
  ActionIntent,
  Answer,
  BooleanFieldSchema,
  ChoiceFieldSchema,
  FieldComponent,
  FieldSchema,
  HeadingComponent,
  JsonValue,
  MultiChoiceFieldSchema,
  NumberFieldSchema,
  RatingFieldSchema,
  RecordComponent,
  StringFieldSchema,
  Surface,
  SurfaceAction,
  SurfaceComponent,
  TextComponent,
} from './core/model/surface.js';
export { isStoreHandle } from './core/store-kit/kit.js';
export { createMemoryHandleStore } from './store/memory/memory-store.js';
