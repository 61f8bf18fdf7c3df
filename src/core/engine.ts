/**
 * The interaction engine: the five operations of `sess-mcp-tools/5` over the ports
 * (`SessApi`, `HandleStore`, `Authority`, `Clock`). {@link createSessEngine} returns an engine
 * whose `call(tool, args, ctx)` is what a face's tool handler runs; it never throws, every failure
 * becomes a tool error result. The typed methods (`request`, `response`, …) return the
 * `interaction` and throw `SessMcpError`, for hosts that embed the engine without MCP.
 *
 * Deliberately knows no transport: cancellation and progress arrive as a plain
 * {@link ToolCallContext}, and `register.ts` maps an MCP SDK request context onto it. The state
 * rules live in `engine/operations.ts` and every state change in `engine/transitions.ts`.
 */

import { defaultRandomId } from './engine/identity.js';
import { Operations } from './engine/operations.js';
import type {
  CompleteOperation,
  CreateOperation,
  EngineResult,
  PublishOperation,
  ResponseOperation,
  SessEngineOptions,
  ToolCallContext,
} from './engine/types.js';
import { isSessMcpError, SessMcpError } from './errors.js';
import type { AskRespondentsOptions, CallAuthority, DiagnosticEvent } from './ports.js';
import { systemClock } from './ports.js';
import { type InteractionResult, type ToolResult, toolError, toolSuccess } from './result.js';
import type { AskArgs, CompleteArgs, PublishArgs, RequestArgs, ResponseArgs, ToolName } from './schemas.js';
import { TOOL_NAMES } from './schemas.js';
import { askToSurface, parseToolArguments } from './validate.js';

export type { InteractionEvent } from './engine/transitions.js';
export { transition } from './engine/transitions.js';
export type {
  DurableStep,
  EngineHooks,
  EngineResult,
  SessEngineOptions,
  ToolCallContext,
  ToolProgress,
} from './engine/types.js';

/** The longest single wait of `sess_response`: 45 seconds. */
export const MAX_WAIT_CEILING_MS = 45_000;

/** The default interval of progress notifications during a wait. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 10_000;

/**
 * The interaction engine. Build it with {@link createSessEngine}.
 *
 * Every method resolves the caller's authority once, validates its arguments before anything
 * reaches Sess or the store, and re-checks every loaded record against the caller's binding.
 */
export interface SessEngine {
  /**
   * Run one tool: validate, run, and shape the result. Never throws: a failure is a tool error
   * result (`isError: true`) carrying `{ code, message, retryable, … }`.
   */
  call(tool: ToolName, rawArgs: unknown, ctx?: ToolCallContext): Promise<ToolResult>;
  /** `sess_request`. @throws SessMcpError */
  request(args: RequestArgs, ctx?: ToolCallContext): Promise<InteractionResult>;
  /** `sess_response`. @throws SessMcpError */
  response(args: ResponseArgs, ctx?: ToolCallContext): Promise<InteractionResult>;
  /** `sess_publish`. @throws SessMcpError */
  publish(args: PublishArgs, ctx?: ToolCallContext): Promise<InteractionResult>;
  /** `sess_complete`. @throws SessMcpError */
  complete(args: CompleteArgs, ctx?: ToolCallContext): Promise<InteractionResult>;
  /** `sess_ask`. @throws SessMcpError */
  ask(args: AskArgs, ctx?: ToolCallContext): Promise<InteractionResult>;
}

/** What a random id must look like: base64url, at least 22 characters (128 bits). */
const RANDOM_ID = /^[A-Za-z0-9_-]{22,128}$/;

function checkOptions(options: SessEngineOptions): { maxWaitMs: number; progressIntervalMs: number } {
  if (options === null || typeof options !== 'object')
    throw new TypeError('createSessEngine: options must be an object');
  if (options.authority === null || typeof options.authority?.resolve !== 'function') {
    throw new TypeError('createSessEngine: options.authority must have a resolve() method');
  }
  const maxWaitMs = options.maxWaitMs ?? MAX_WAIT_CEILING_MS;
  if (!Number.isInteger(maxWaitMs) || maxWaitMs < 0 || maxWaitMs > MAX_WAIT_CEILING_MS) {
    throw new TypeError(
      `createSessEngine: options.maxWaitMs must be a whole number from 0 to ${MAX_WAIT_CEILING_MS} (it may only lower the ceiling)`,
    );
  }
  const progressIntervalMs = options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  if (!Number.isInteger(progressIntervalMs) || progressIntervalMs < 1) {
    throw new TypeError('createSessEngine: options.progressIntervalMs must be a whole number of at least 1');
  }
  if (options.randomId !== undefined) {
    // Handles are bearer references: refuse an id source that cannot carry 128 bits.
    const sample = typeof options.randomId === 'function' ? options.randomId() : undefined;
    if (typeof sample !== 'string' || !RANDOM_ID.test(sample)) {
      throw new TypeError(
        'createSessEngine: options.randomId must be a function returning 22–128 base64url characters (at least 128 bits)',
      );
    }
  }
  if (options.diagnostics !== undefined && typeof options.diagnostics !== 'function') {
    throw new TypeError('createSessEngine: options.diagnostics must be a function');
  }
  return { maxWaitMs, progressIntervalMs };
}

function toRespondents(args: AskArgs['respondents']): AskRespondentsOptions | undefined {
  if (args === undefined) return undefined;
  const out: AskRespondentsOptions = { max: args.max };
  if (args.name !== undefined) out.name = args.name;
  if (args.expires_in !== undefined) out.expiresIn = args.expires_in;
  if (args.respondent_expires_in !== undefined) out.respondentExpiresIn = args.respondent_expires_in;
  return out;
}

/**
 * Build the engine.
 *
 * @throws TypeError naming the option when an option is invalid (`maxWaitMs` above 45 000, …).
 *
 * @example
 * ```ts
 * const engine = createSessEngine({ authority, maxWaitMs: 30_000 });
 * const result = await engine.call('sess_response', { handle, revision: 1 }, { signal });
 * ```
 */
export function createSessEngine(options: SessEngineOptions): SessEngine {
  const { maxWaitMs, progressIntervalMs } = checkOptions(options);
  const clock = options.clock ?? systemClock;
  const diagnostics = options.diagnostics;
  const emit = (event: DiagnosticEvent): void => {
    if (diagnostics === undefined) return;
    try {
      diagnostics(event);
    } catch {
      // A failing sink never changes a tool's outcome.
    }
  };
  const settings = {
    clock,
    maxWaitMs,
    progressIntervalMs,
    randomId: options.randomId ?? defaultRandomId,
    hooks: options.hooks,
    emit,
  };

  async function resolve(): Promise<CallAuthority> {
    try {
      return await options.authority.resolve();
    } catch (error) {
      if (isSessMcpError(error)) throw error;
      throw new SessMcpError(
        'NOT_CONFIGURED',
        'No Sess credential is available for this call. Ask the owner to configure it.',
        {
          cause: error,
        },
      );
    }
  }

  async function run<T extends ToolName>(
    tool: T,
    rawArgs: unknown,
    ctx: ToolCallContext,
  ): Promise<EngineResult> {
    // Validation first: nothing reaches the authority, Sess or the store on invalid input.
    const args = parseToolArguments(tool, rawArgs);
    switch (tool) {
      case 'sess_request': {
        const a = args as RequestArgs;
        const op: CreateOperation = { surface: a.interaction };
        if (a.expires_in !== undefined) op.expiresIn = a.expires_in;
        return new Operations(settings, await resolve(), ctx).create(op);
      }
      case 'sess_ask': {
        const a = args as AskArgs;
        const op: CreateOperation = { surface: askToSurface(a) };
        if (a.expires_in !== undefined) op.expiresIn = a.expires_in;
        const respondents = toRespondents(a.respondents);
        if (respondents !== undefined) op.respondents = respondents;
        return new Operations(settings, await resolve(), ctx).create(op);
      }
      case 'sess_response': {
        const a = args as ResponseArgs;
        const op: ResponseOperation = { handle: a.handle, revision: a.revision };
        if (a.wait_ms !== undefined) op.waitMs = a.wait_ms;
        return new Operations(settings, await resolve(), ctx).response(op);
      }
      case 'sess_publish': {
        const a = args as PublishArgs;
        const op: PublishOperation = {
          handle: a.handle,
          expectedRevision: a.expected_revision,
          responseEventId: a.response_event_id,
          surface: a.interaction,
        };
        return new Operations(settings, await resolve(), ctx).publish(op);
      }
      case 'sess_complete': {
        const a = args as CompleteArgs;
        const op: CompleteOperation = {
          handle: a.handle,
          expectedRevision: a.expected_revision,
          responseEventId: a.response_event_id,
        };
        return new Operations(settings, await resolve(), ctx).complete(op);
      }
      default:
        throw new SessMcpError('INVALID_ARGUMENTS', `Unknown tool ${String(tool)}.`);
    }
  }

  async function timed<T extends ToolName>(
    tool: T,
    rawArgs: unknown,
    ctx: ToolCallContext = {},
  ): Promise<InteractionResult> {
    const started = clock.now();
    try {
      const result = await run(tool, rawArgs, ctx);
      emit({ event: 'tool_result', tool, state: result.state, ms: clock.now() - started });
      return result as InteractionResult;
    } catch (error) {
      const code = isSessMcpError(error) ? error.code : undefined;
      emit(
        code === undefined
          ? { event: 'tool_failed', tool, ms: clock.now() - started }
          : { event: 'tool_error', tool, code, ms: clock.now() - started },
      );
      throw error;
    }
  }

  return {
    async call(tool, rawArgs, ctx = {}) {
      try {
        if (!TOOL_NAMES.includes(tool))
          throw new SessMcpError('INVALID_ARGUMENTS', `Unknown tool ${String(tool)}.`);
        return toolSuccess(tool, await timed(tool, rawArgs, ctx));
      } catch (error) {
        return toolError(error);
      }
    },
    request: (args, ctx) => timed('sess_request', args, ctx),
    response: (args, ctx) => timed('sess_response', args, ctx),
    publish: (args, ctx) => timed('sess_publish', args, ctx),
    complete: (args, ctx) => timed('sess_complete', args, ctx),
    ask: (args, ctx) => timed('sess_ask', args, ctx),
  };
}
