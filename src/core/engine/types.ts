/**
 * The engine's own option, context and result types, shared by its modules. Types only.
 *
 * Results are the tool contract's `InteractionResult` (`result.ts`); the operation inputs are
 * the already-validated, camelCase form of the tool arguments.
 */
import type { AskRespondentsOptions, Authority, Clock, DiagnosticsSink } from '../contract/ports.js';
import type { InteractionResult } from '../contract/result.js';
import type { SessMcpTelemetryOptions } from '../contract/rules.js';
import type { Surface } from '../model/surface.js';
import type { WaitGate } from './wait-gate.js';

/**
 * The named durable steps {@link EngineHooks.onStep} is called at. `event.after_state_saved`: a
 * state change that wrote an event was saved (`events.ts`); `event.after_delivered`: a sink took
 * an event and its delivery is not marked yet (the delivery loop's hook).
 */
export type DurableStep =
  | `${'create' | 'publish' | 'complete' | 'withdraw'}.${
      | 'before_intent_saved'
      | 'after_intent_saved'
      | 'after_request_sent'
      | 'after_response'
      | 'before_record_saved'
      | 'after_record_saved'}`
  | 'event.after_state_saved'
  | 'event.after_delivered';

/** Test-only hooks (crash tests). Leave unset in production. */
export interface EngineHooks {
  /**
   * Awaited at each named durable step. `*.after_request_sent` is called after the request was
   * handed to the Sess client and before its answer is awaited. A throw ends the call there.
   */
  onStep?: (step: DurableStep) => void | Promise<void>;
}

/** Options of {@link createSessEngine}. */
export interface SessEngineOptions {
  /** Who is calling: resolved once per tool call. */
  authority: Authority;
  /** @default systemClock */
  clock?: Clock;
  /**
   * The longest single wait of `sess_response`, in milliseconds: 0 to 45 000 (`WAIT_CEILING_MS`).
   * May only lower the ceiling; 0 means `sess_response` never waits.
   * @default 45000
   */
  maxWaitMs?: number;
  /** Fixed event names and codes only; never a link, key, handle, receipt or answer value. */
  diagnostics?: DiagnosticsSink;
  /**
   * A fresh identifier with at least 128 bits of randomness (handles, idempotency keys): 22 to 121
   * base64url characters, so that `sess_h_` and the id make a handle of at most 128 characters.
   * A value outside that is refused at construction (`TypeError`) and where a handle is made
   * (`NOT_CONFIGURED`).
   */
  randomId?: () => string;
  /**
   * How often a progress notification is sent during a wait when the client asked for progress.
   * @default 10000
   */
  progressIntervalMs?: number;
  /**
   * Shares and bounds the upstream waits of `sess_response`. Pass one gate to every engine of a
   * host (e.g. one per HTTP handler) so the bound holds across them.
   * @default a gate of this engine's own (`createWaitGate()`: 8 waits per binding scope)
   */
  waitGate?: WaitGate;
  /**
   * The most unfinished interactions one principal may hold over all its clients and grants (HTTP
   * bindings; a stdio profile has only its cap of 100). A `sess_request` or `sess_ask` over it is
   * refused with `PRINCIPAL_QUOTA_REACHED` before Sess is called; the store counts, exact under
   * concurrency. A whole number from 1 to 100 000.
   * @default no quota (the HTTP face sets one: `DEFAULT_MAX_OPEN_PER_PRINCIPAL`)
   */
  maxOpenPerPrincipal?: number;
  /**
   * The wake command of a handle, or `undefined` when there is none: `engine.call` puts it in
   * `structuredContent.wake.command` of every `sess_request`, `sess_ask` and `sess_response` result
   * in state `waiting` or `needs_resume`, and `next` tells the agent to run it in the background.
   * The stdio face sets it (`sess-mcp wait`); a host that cannot run commands leaves it unset.
   * @default none (results carry no `wake`)
   */
  wakeCommand?: (handle: string) => string | undefined;
  /**
   * Where spans and metrics go (`docs/operate.md` lists them): the host's OpenTelemetry providers.
   * Attributes never carry a link, key, token, answer value or free text.
   * @default the global providers of `@opentelemetry/api` (a no-op until the host registers an SDK)
   */
  telemetry?: SessMcpTelemetryOptions;
  /** Test-only hooks. */
  hooks?: EngineHooks;
}

/** One progress notification. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** What a face knows about one tool call besides its arguments. */
export interface ToolCallContext {
  /** Ends a wait as `needs_resume`: MCP cancellation, host disconnect or the request deadline. */
  signal?: AbortSignal;
  /** Set only when the client sent a progress token. */
  progress?: (p: ToolProgress) => Promise<void> | void;
}

/** What every operation returns: the `interaction` of a tool result (the contract's type). */
export type EngineResult = InteractionResult;

/** A validated create (`sess_request`, `sess_ask`). */
export interface CreateOperation {
  surface: Surface;
  expiresIn?: number;
  /** Only from `sess_ask` with `respondents`: creates an Ask. */
  respondents?: AskRespondentsOptions;
}

/** A validated `sess_response`. */
export interface ResponseOperation {
  handle: string;
  revision: number;
  waitMs?: number;
}

/** A validated `sess_publish`. */
export interface PublishOperation {
  handle: string;
  expectedRevision: number;
  responseEventId: string;
  surface: Surface;
}

/** A validated `sess_complete`. */
export interface CompleteOperation {
  handle: string;
  expectedRevision: number;
  responseEventId: string;
}

/** A validated `sess_withdraw` (of a Session, or the close of an Ask). */
export interface WithdrawOperation {
  handle: string;
  /** The current revision of a Session; 1 for an Ask. */
  expectedRevision: number;
  /** What the person's page shows, at most 160 code points. */
  reason?: string;
}
