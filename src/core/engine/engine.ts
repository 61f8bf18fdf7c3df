/**
 * The interaction engine: the operations of the tool contract over the ports
 * (`SessApi`, `HandleStore`, `Authority`, `Clock`). {@link createSessEngine} returns an engine
 * whose `call(tool, args, ctx)` is what a face's tool handler runs; it never throws, every failure
 * becomes a tool error result. The typed methods (`request`, `response`, …) return the
 * `interaction` (`list` its page) and throw `SessMcpError`, for hosts that embed the engine
 * without MCP.
 *
 * Deliberately knows no transport: cancellation and progress arrive as a plain
 * {@link ToolCallContext}, and `register.ts` maps an MCP SDK request context onto it. The
 * operations live in `engine/create.ts`, `engine/response.ts`, `engine/mutate.ts` and
 * `engine/list.ts` (over the shared `engine/call.ts`), their refusals in `engine/refusals.ts`, every
 * state change in `model/transitions.ts`, and the bound on upstream waits in `engine/wait-gate.ts`.
 */

import { isSessMcpError, SessMcpError } from '../contract/errors.js';
import { MAX_TIMER_MS, optionNames, readOptions } from '../contract/options.js';
import type {
  AskRespondentsOptions,
  CallAuthority,
  Clock,
  CreateLimits,
  DiagnosticEvent,
} from '../contract/ports.js';
import { MAX_OPEN_PER_PRINCIPAL, systemClock } from '../contract/ports.js';
import {
  type InteractionResult,
  type ListResult,
  type ToolResult,
  toolError,
  toolListSuccess,
  toolSuccess,
  type WakeHint,
  wakes,
} from '../contract/result.js';
import { RANDOM_ID_RULE, readTelemetryOption, WAIT_CEILING_MS, WAIT_MS_RULE } from '../contract/rules.js';
import type {
  AskArgs,
  CompleteArgs,
  ListArgs,
  PublishArgs,
  RequestArgs,
  ResponseArgs,
  ToolName,
  WithdrawArgs,
} from '../contract/schemas.js';
import { TOOL_NAMES } from '../contract/schemas.js';
import { parseToolArguments, type ValidatedCall, validateToolCall } from '../contract/validate.js';
import { instrumentedAuthority } from '../telemetry/instrumented-ports.js';
import { type Telemetry, telemetryOf } from '../telemetry/telemetry.js';
import { Call } from './call.js';
import { create } from './create.js';
import { defaultRandomId } from './identity.js';
import { type ListOperation, list } from './list.js';
import { complete, publish, withdraw } from './mutate.js';
import { response } from './response.js';
import type {
  CompleteOperation,
  CreateOperation,
  EngineResult,
  ResponseOperation,
  SessEngineOptions,
  ToolCallContext,
  WithdrawOperation,
} from './types.js';
import { createWaitGate, type WaitGate } from './wait-gate.js';

export type { InteractionEvent } from '../model/transitions.js';
export { transition } from '../model/transitions.js';
export type {
  DurableStep,
  EngineHooks,
  EngineResult,
  SessEngineOptions,
  ToolCallContext,
  ToolProgress,
} from './types.js';
export type { GateWaitRequest, WaitGate, WaitGateOptions } from './wait-gate.js';
export { createWaitGate, DEFAULT_MAX_CONCURRENT_WAITS } from './wait-gate.js';

/**
 * The longest single wait of `sess_response`: 45 seconds.
 * @deprecated An alias of `WAIT_CEILING_MS` (`rules.ts`), kept while the public name is settled.
 */
export const MAX_WAIT_CEILING_MS = WAIT_CEILING_MS;

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
  /**
   * `sess_list`: this caller's interactions from the local records only (no Sess call), or with
   * `handle` that one plus its current Surface. Never a link or an answer. A store without
   * `listPage` lists only unfinished interactions. @throws SessMcpError
   */
  list(args: ListArgs, ctx?: ToolCallContext): Promise<ListResult>;
  /** `sess_withdraw`. @throws SessMcpError */
  withdraw(args: WithdrawArgs, ctx?: ToolCallContext): Promise<InteractionResult>;
}

/** The engine's options, checked and with their defaults. */
interface CheckedOptions {
  maxWaitMs: number;
  progressIntervalMs: number;
  clock: Clock;
  randomId: () => string;
  diagnostics: SessEngineOptions['diagnostics'];
  waitGate: WaitGate;
  createLimits: CreateLimits;
  wakeCommand: ((handle: string) => string | undefined) | undefined;
  telemetry: Telemetry;
}

/** The option names of {@link SessEngineOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<SessEngineOptions>()(
  'authority',
  'clock',
  'maxWaitMs',
  'diagnostics',
  'randomId',
  'progressIntervalMs',
  'waitGate',
  'maxOpenPerPrincipal',
  'wakeCommand',
  'telemetry',
  'hooks',
);

function checkOptions(options: SessEngineOptions): CheckedOptions {
  const read = readOptions('createSessEngine', options, { known: KNOWN_OPTIONS });
  const authority = options.authority as unknown;
  if (
    authority === null ||
    typeof authority !== 'object' ||
    typeof options.authority.resolve !== 'function'
  ) {
    read.fail('authority', 'is required and must have a resolve() method');
  }
  const maxWaitMs = options.maxWaitMs ?? WAIT_CEILING_MS;
  if (!WAIT_MS_RULE.test(maxWaitMs))
    read.fail('maxWaitMs', `must be ${WAIT_MS_RULE.text} (it may only lower the ceiling)`);
  const progressIntervalMs = read.integer(
    'progressIntervalMs',
    options.progressIntervalMs,
    { min: 1, max: MAX_TIMER_MS },
    DEFAULT_PROGRESS_INTERVAL_MS,
  );
  const randomId = read.func<() => string>('randomId', options.randomId, true);
  if (randomId !== undefined) {
    // Handles are bearer references: refuse an id source that cannot carry 128 bits, or whose
    // handles the tools would refuse. Each handle's id is checked again where it is made.
    if (!RANDOM_ID_RULE.test(randomId())) {
      read.fail('randomId', `must be a function returning ${RANDOM_ID_RULE.text}`);
    }
  }
  const diagnostics = read.func<NonNullable<SessEngineOptions['diagnostics']>>(
    'diagnostics',
    options.diagnostics,
    true,
  );
  const gate = options.waitGate as unknown;
  if (gate !== undefined && (gate === null || typeof (gate as WaitGate).wait !== 'function')) {
    read.fail('waitGate', 'must be a wait gate (createWaitGate)');
  }
  const wakeCommand = read.func<(handle: string) => string | undefined>(
    'wakeCommand',
    options.wakeCommand,
    true,
  );
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function') read.fail('clock', 'must have a now() method');
  const maxOpenPerPrincipal = read.optionalInteger('maxOpenPerPrincipal', options.maxOpenPerPrincipal, {
    min: 1,
    max: MAX_OPEN_PER_PRINCIPAL,
  });
  return {
    maxWaitMs,
    progressIntervalMs,
    clock,
    randomId: randomId ?? defaultRandomId,
    diagnostics,
    waitGate: options.waitGate ?? createWaitGate(),
    createLimits: maxOpenPerPrincipal === undefined ? {} : { maxOpenPerPrincipal },
    wakeCommand,
    telemetry: telemetryOf(readTelemetryOption(read, options.telemetry)),
  };
}

function toRespondents(args: AskArgs['respondents']): AskRespondentsOptions | undefined {
  if (args === undefined) return undefined;
  const out: AskRespondentsOptions = { max: args.max };
  if (args.name !== undefined) out.name = args.name;
  if (args.expires_in !== undefined) out.expiresIn = args.expires_in;
  if (args.respondent_expires_in !== undefined) out.respondentExpiresIn = args.respondent_expires_in;
  return out;
}

/** The answered revision a `sess_publish` or `sess_complete` acts on. */
function mutationTarget(args: PublishArgs | CompleteArgs): CompleteOperation {
  return {
    handle: args.handle,
    expectedRevision: args.expected_revision,
    responseEventId: args.response_event_id,
  };
}

/** The `sess_withdraw` operation of validated arguments. */
function toWithdraw(args: WithdrawArgs): WithdrawOperation {
  const op: WithdrawOperation = { handle: args.handle, expectedRevision: args.expected_revision };
  if (args.reason !== undefined) op.reason = args.reason;
  return op;
}

/**
 * Run the operation of one validated call; `start` resolves the caller's authority and opens the
 * call. `sess_list` is not an operation here: it returns a page, not an interaction (`listed`).
 */
function operate(validated: ValidatedCall, start: () => Promise<Call>): Promise<EngineResult> {
  switch (validated.tool) {
    case 'sess_request': {
      const { args } = validated;
      const op: CreateOperation = { surface: args.interaction };
      if (args.expires_in !== undefined) op.expiresIn = args.expires_in;
      return start().then((call) => create(call, op));
    }
    case 'sess_ask': {
      const { args, surface } = validated;
      const op: CreateOperation = { surface };
      if (args.expires_in !== undefined) op.expiresIn = args.expires_in;
      const respondents = toRespondents(args.respondents);
      if (respondents !== undefined) op.respondents = respondents;
      return start().then((call) => create(call, op));
    }
    case 'sess_response': {
      const { args } = validated;
      const op: ResponseOperation = { handle: args.handle, revision: args.revision };
      if (args.wait_ms !== undefined) op.waitMs = args.wait_ms;
      return start().then((call) => response(call, op));
    }
    case 'sess_publish': {
      const { args } = validated;
      return start().then((call) => publish(call, { ...mutationTarget(args), surface: args.interaction }));
    }
    case 'sess_complete':
      return start().then((call) => complete(call, mutationTarget(validated.args)));
    case 'sess_withdraw':
      return start().then((call) => withdraw(call, toWithdraw(validated.args)));
    case 'sess_list':
      throw new SessMcpError('INVALID_ARGUMENTS', `Unknown tool ${validated.tool}.`);
  }
}

/**
 * Build the engine.
 *
 * @throws TypeError naming the option when an option is invalid (`maxWaitMs` above 45 000, …).
 *
 * @example
 * ```ts source="examples/snippets/core.examples.ts#createSessEngine"
 * const engine = createSessEngine({ authority, maxWaitMs: 30_000 });
 * const result = await engine.call('sess_response', { handle, revision: 1 }, { signal });
 * ```
 */
export function createSessEngine(options: SessEngineOptions): SessEngine {
  const checked = checkOptions(options);
  const { clock, diagnostics, telemetry } = checked;
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
    maxWaitMs: checked.maxWaitMs,
    progressIntervalMs: checked.progressIntervalMs,
    randomId: checked.randomId,
    hooks: options.hooks,
    emit,
    waitGate: checked.waitGate,
    createLimits: checked.createLimits,
    telemetry,
  };

  async function resolve(): Promise<CallAuthority> {
    try {
      return instrumentedAuthority(await options.authority.resolve(), telemetry);
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

  /** Validation first: nothing reaches the authority, Sess or the store on invalid input. */
  async function run(tool: ToolName, rawArgs: unknown, ctx: ToolCallContext): Promise<EngineResult> {
    const validated = validateToolCall(tool, rawArgs);
    return operate(validated, async () => new Call(settings, await resolve(), ctx));
  }

  /** Run `exec` for `tool` and report it: `tool_result` with its state, or the failure. */
  async function observed<R>(
    tool: ToolName,
    exec: () => Promise<R>,
    stateOf: (result: R) => string | undefined,
    handleOf: (result: R) => string | undefined,
  ): Promise<R> {
    const started = clock.now();
    try {
      const result = await telemetry.tool(tool, exec, (r) => ({ state: stateOf(r), handle: handleOf(r) }));
      const state = stateOf(result);
      emit({
        event: 'tool_result',
        tool,
        ...(state === undefined ? {} : { state }),
        ms: clock.now() - started,
      });
      return result;
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

  async function timed<T extends ToolName>(
    tool: T,
    rawArgs: unknown,
    ctx: ToolCallContext = {},
  ): Promise<InteractionResult> {
    return observed(
      tool,
      () => run(tool, rawArgs, ctx),
      (r) => r.state,
      (r) => r.handle,
    );
  }

  /** `sess_list`: validated like every tool, then local records only (no Sess call). */
  function listed(rawArgs: unknown, ctx: ToolCallContext = {}): Promise<ListResult> {
    return observed(
      'sess_list',
      async () => {
        const a = parseToolArguments('sess_list', rawArgs);
        const op: ListOperation = {};
        if (a.state !== undefined) op.state = a.state;
        if (a.limit !== undefined) op.limit = a.limit;
        if (a.cursor !== undefined) op.cursor = a.cursor;
        if (a.handle !== undefined) op.handle = a.handle;
        return list(new Call(settings, await resolve(), ctx), op);
      },
      () => undefined,
      () => undefined,
    );
  }

  /** The wake hint of a result that carries one (`wakeCommand`, when the host gave one). */
  function wakeOf(tool: ToolName, result: InteractionResult): WakeHint | undefined {
    if (checked.wakeCommand === undefined || !wakes(tool, result)) return undefined;
    let command: string | undefined;
    try {
      command = checked.wakeCommand(result.handle);
    } catch {
      return undefined; // a failing source only costs the hint, never the result
    }
    return typeof command === 'string' && command !== '' ? { command } : undefined;
  }

  return {
    async call(tool, rawArgs, ctx = {}) {
      try {
        if (!TOOL_NAMES.includes(tool))
          throw new SessMcpError('INVALID_ARGUMENTS', `Unknown tool ${String(tool)}.`);
        if (tool === 'sess_list') return toolListSuccess(await listed(rawArgs, ctx));
        const result = await timed(tool, rawArgs, ctx);
        return toolSuccess(tool, result, wakeOf(tool, result));
      } catch (error) {
        return toolError(error);
      }
    },
    request: (args, ctx) => timed('sess_request', args, ctx),
    response: (args, ctx) => timed('sess_response', args, ctx),
    publish: (args, ctx) => timed('sess_publish', args, ctx),
    complete: (args, ctx) => timed('sess_complete', args, ctx),
    ask: (args, ctx) => timed('sess_ask', args, ctx),
    list: (args, ctx) => listed(args, ctx),
    withdraw: (args, ctx) => timed('sess_withdraw', args, ctx),
  };
}
