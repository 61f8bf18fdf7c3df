/**
 * Example: a hosted OpenAI Agents SDK agent that asks a person with Sess, pauses its run while
 * they decide, saves the run's state, and resumes it from that saved state when `sess-mcp`'s
 * webhook says the question is answered.
 *
 * The agent's model gets `sess_request` (from `sess-mcp` over stdio) and one tool of the app,
 * `wait_for_person`, which needs approval: when the model calls it after asking, the run stops
 * with an approval interruption. The app sends the person the link, seals
 * `result.state.toString()` and keeps it by the handle; nothing runs. When the person answers,
 * the `sess-mcp` server's watcher sees it and posts an event to this app's webhook
 * (`wake-receiver.ts` verifies and deduplicates it). The app opens the saved state
 * (`RunState.fromString`), approves the pending `wait_for_person` call and runs on. Only then does
 * `wait_for_person` run: it calls `sess_response` and acts on its verified `response` alone:
 * it ships for the action `approve`, ships nothing for any other, and completes the interaction
 * either way. The webhook is never the answer (it names a handle and a revision, nothing more),
 * and the model cannot approve anything itself: it has no tool that ships.
 *
 * The saved run state holds the conversation, with the `sess_request` result and so the Sess link,
 * which lets whoever holds it answer: it is a secret. The app seals it with AES-256-GCM under a key
 * from your secret store (`wake-sealed-state.ts`) before it keeps it, and never logs it. Tracing is
 * off for the same reason: a trace would carry the tool results, the link among them.
 *
 * Why stdio: `sess-mcp` (the stdio server) watches its profile's waiting questions between tool
 * calls and delivers events as webhooks, so a late answer reaches the app with no tool call. It
 * imports the package by its name, as an application does. The OpenAI Agents SDK needs Node 22.
 */
import {
  Agent,
  type AgentInputItem,
  MCPServerStdio,
  OpenAIResponsesModel,
  type RunContext,
  Runner,
  RunState,
  type RunToolApprovalItem,
  tool,
} from '@openai/agents';
import type { InteractionResult, WakeEvent } from '@sess.si/mcp';
import type { OpenAI } from 'openai';
import {
  type RecipeDecision,
  type SessMcpCommand,
  startWakeReceiver,
  type WakeRecipeLog,
} from './wake-receiver.js';
import { openState, sealState } from './wake-sealed-state.js';

/** A paused run, kept by the handle it waits on. */
export interface PausedRun {
  run: string;
  /** `result.state.toString()`, sealed: it holds the Sess link. */
  sealedState: Uint8Array;
}

/** Where paused runs are kept: a table of your database in production. */
export interface PausedRuns {
  get(handle: string): PausedRun | undefined;
  set(handle: string, paused: PausedRun): unknown;
  delete(handle: string): unknown;
}

/** What the recipe needs. */
export interface OpenAIAgentsWakeOptions {
  /** The OpenAI client, e.g. `new OpenAI({ apiKey })`. */
  openai: OpenAI;
  /** The Responses model, e.g. `'gpt-5'`. */
  model: string;
  sessMcp: SessMcpCommand;
  /** The `whsec_…` secret the webhook is signed with: from your secret store. */
  webhookSecret: string;
  /** 32 bytes from your secret store: seals every saved run state (they hold the Sess link). */
  stateKey: Uint8Array;
  /**
   * The URL `sess-mcp` posts to, when the receiver sits behind a proxy (HTTPS in production).
   * @default the receiver's own URL
   */
  webhookUrl?: string;
  /** @default a `Map` in memory */
  pausedRuns?: PausedRuns;
  /** Send the link to the person (a chat message, an e-mail). Never log it. */
  showLink(humanUrl: string, run: string): Promise<void>;
  /** What the person is asked to approve; called only on a verified `approve`. */
  ship(run: string): Promise<void>;
  /** @default nothing is logged */
  log?: (line: WakeRecipeLog) => void;
}

/** Where a run stands after a call of the recipe. */
export type RunStatus =
  | { status: 'waiting'; handle: string }
  | { status: 'finished'; decision: RecipeDecision; finalOutput: string };

/** A running recipe. */
export interface OpenAIAgentsWake {
  /** The receiver's own URL. */
  receiverUrl: string;
  /** Start a run on `task`: it runs until it waits for the person (or ends). */
  start(run: string, task: string): Promise<RunStatus>;
  /** Resolves when `run` has ended. */
  finished(run: string): Promise<Extract<RunStatus, { status: 'finished' }>>;
  close(): Promise<void>;
}

/** The tool of `sess-mcp` the model gets: it asks; the app, not the model, reads the answer. */
const ASK_TOOLS = ['sess_request'];

const INSTRUCTIONS = `You get a person's approval before anything ships. Ask with sess_request \
(actions "approve" and "stop"), then call wait_for_person with the handle and revision of its \
result, and nothing else: this app shows the person the link and resumes you when they answer, \
so never run wake.command and never call sess_response. When wait_for_person reports the \
decision, say in one sentence what happened.`;

/** The run's own context (serialized with its state). */
interface RecipeContext {
  run: string;
}

/** What the recipe reads of a run's result. */
interface RunOutcome {
  interruptions?: RunToolApprovalItem[];
  history: AgentInputItem[];
  state: { toString(): string };
  finalOutput?: unknown;
}

/** The interaction in a tool's output (`sess-mcp`'s `structuredContent` as JSON text). */
function interactionOfOutput(output: unknown): InteractionResult | undefined {
  const text =
    typeof output === 'string'
      ? output
      : (output as { type?: string; text?: string } | undefined)?.type === 'text'
        ? (output as { text: string }).text
        : undefined;
  if (text === undefined) return undefined;
  try {
    return (JSON.parse(text) as { interaction?: InteractionResult }).interaction;
  } catch {
    return undefined;
  }
}

/** The interaction `handle` as an ask tool returned it in this run (with its link). */
function askedIn(history: AgentInputItem[], handle: string): InteractionResult | undefined {
  for (const item of history) {
    if (item.type !== 'function_call_result' || !ASK_TOOLS.includes(item.name)) continue;
    const interaction = interactionOfOutput(item.output);
    if (interaction?.handle === handle) return interaction;
  }
  return undefined;
}

/** The `{ handle, revision }` a `wait_for_person` call was given. */
function waitArguments(text: string | undefined): { handle: string; revision: number } | undefined {
  try {
    const args = JSON.parse(text ?? '') as { handle?: unknown; revision?: unknown };
    return typeof args.handle === 'string' && Number.isSafeInteger(args.revision)
      ? { handle: args.handle, revision: args.revision as number }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Start the recipe: the webhook receiver, `sess-mcp` posting to it, and the agent. */
export async function startOpenAIAgentsWake(options: OpenAIAgentsWakeOptions): Promise<OpenAIAgentsWake> {
  const log = options.log ?? (() => undefined);
  const paused = options.pausedRuns ?? new Map<string, PausedRun>();
  /** Events for a handle no run waits on yet (the answer came before the run paused). */
  const early = new Map<string, WakeEvent>();
  /** run → what `wait_for_person` read from `sess_response`. */
  const decisions = new Map<string, RecipeDecision>();
  /** Handles whose link the person has been sent. */
  const shown = new Set<string>();
  type Finished = Extract<RunStatus, { status: 'finished' }>;
  const ends = new Map<string, { promise: Promise<Finished>; resolve(status: Finished): void }>();
  const endOf = (run: string) => {
    let entry = ends.get(run);
    if (entry === undefined) {
      let resolve!: (status: Finished) => void;
      const promise = new Promise<Finished>((r) => {
        resolve = r;
      });
      entry = { promise, resolve };
      ends.set(run, entry);
    }
    return entry;
  };

  const receiver = await startWakeReceiver({
    secret: options.webhookSecret,
    log,
    async onEvent(event) {
      const saved = paused.get(event.handle);
      if (saved === undefined) {
        early.set(event.handle, event);
        return;
      }
      paused.delete(event.handle);
      // Answer the webhook now; the run goes on in the background.
      void resume(saved, event);
    },
  });

  const sess = new MCPServerStdio({
    name: 'sess',
    command: options.sessMcp.command,
    args: options.sessMcp.args ?? [],
    env: {
      ...options.sessMcp.env,
      SESS_MCP_WEBHOOK_URL: options.webhookUrl ?? receiver.url,
      SESS_MCP_WEBHOOK_SECRET: options.webhookSecret,
    },
    useStructuredContent: true,
    toolFilter: { allowedToolNames: ASK_TOOLS },
  });
  await sess.connect();

  /** A call of a sess tool by the app itself: the interaction, or an error naming only the code. */
  async function callSess(name: string, args: Record<string, unknown>): Promise<InteractionResult> {
    const result = await sess.callToolResult(name, args);
    const structured = result.structuredContent as
      | { interaction?: InteractionResult; error?: { code?: string } }
      | undefined;
    if (result.isError === true || structured?.interaction === undefined) {
      throw new Error(`${name} failed: ${structured?.error?.code ?? 'no result'}`);
    }
    return structured.interaction;
  }

  const waitForPerson = tool({
    name: 'wait_for_person',
    description:
      'Pause until the person answers the question you asked with sess_request; give its handle and revision. Returns what they decided.',
    parameters: {
      type: 'object',
      properties: { handle: { type: 'string' }, revision: { type: 'integer' } },
      required: ['handle', 'revision'],
      additionalProperties: false,
    },
    strict: true,
    // The pause: the run stops here until the webhook approves this call.
    needsApproval: true,
    async execute(input: unknown, context?: RunContext<RecipeContext>) {
      const { handle, revision } = input as { handle: string; revision: number };
      const run = context?.context.run ?? '';
      // Resumed by a webhook. The event is a reference: read the answer from sess_response.
      const read = await callSess('sess_response', { handle, revision, wait_ms: 0 });
      log({ event: 'run_verified', run, handle, state: read.state });
      if (read.state === 'waiting' || read.state === 'needs_resume') {
        return 'Still waiting: call wait_for_person again with the same handle and revision.';
      }
      if (read.state !== 'answered' || read.response === undefined) {
        decisions.set(run, 'no_answer');
        return `No answer: the question is ${read.state}. Nothing was shipped.`;
      }
      const decision = read.response.action === 'approve' ? 'approve' : 'reject';
      decisions.set(run, decision);
      if (decision === 'approve') await options.ship(run);
      await callSess('sess_complete', {
        handle,
        expected_revision: revision,
        response_event_id: read.response.eventId,
      });
      return decision === 'approve'
        ? 'The person approved (verified by Sess): shipped.'
        : 'The person rejected (verified by Sess): nothing was shipped.';
    },
  });

  const agent = new Agent<RecipeContext>({
    name: 'Release agent',
    instructions: INSTRUCTIONS,
    model: new OpenAIResponsesModel(options.openai, options.model),
    mcpServers: [sess],
    tools: [waitForPerson],
  });
  // Tracing off: a trace would carry the tool results, and with them the Sess link.
  const runner = new Runner({ tracingDisabled: true });

  /** After a run returned: it waits on a handle (its state saved, sealed), or it has ended. */
  async function settle(run: string, result: RunOutcome): Promise<RunStatus> {
    const pending = result.interruptions?.find((i) => i.name === 'wait_for_person');
    const waitingOn = waitArguments(pending?.arguments);
    if (pending === undefined || waitingOn === undefined) {
      const decision = decisions.get(run) ?? 'no_answer';
      log({ event: 'run_finished', run, decision });
      const status = { status: 'finished' as const, decision, finalOutput: String(result.finalOutput ?? '') };
      endOf(run).resolve(status);
      return status;
    }
    // Pause only on a question this run asked: the link comes from the tool's result, not the model.
    const asked = askedIn(result.history, waitingOn.handle);
    if (asked === undefined) throw new Error('wait_for_person named a handle this run did not ask');
    if (!shown.has(asked.handle)) {
      shown.add(asked.handle);
      await options.showLink(asked.humanUrl!, run);
    }
    const sealedState = sealState(new TextEncoder().encode(result.state.toString()), options.stateKey);
    log({ event: 'run_waiting', run, handle: waitingOn.handle });
    const already = early.get(waitingOn.handle);
    if (already !== undefined) {
      early.delete(waitingOn.handle);
      void resume({ run, sealedState }, already);
    } else paused.set(waitingOn.handle, { run, sealedState });
    return { status: 'waiting', handle: waitingOn.handle };
  }

  let queue = Promise.resolve<unknown>(undefined);
  /** Resume a paused run from its saved state, one run at a time. */
  function resume(saved: PausedRun, event: WakeEvent): Promise<unknown> {
    queue = queue.then(async () => {
      log({ event: 'run_resumed', run: saved.run, eventId: event.eventId });
      try {
        const text = new TextDecoder().decode(openState(saved.sealedState, options.stateKey));
        const state = await RunState.fromString<RecipeContext, typeof agent>(agent, text);
        for (const item of state.getInterruptions()) {
          if (item.name === 'wait_for_person' && waitArguments(item.arguments)?.handle === event.handle) {
            state.approve(item);
          }
        }
        await settle(saved.run, await runner.run(agent, state));
      } catch (error) {
        // The message could quote a tool result: log its class only.
        log({ event: 'run_failed', run: saved.run, error: (error as Error).name });
      }
    });
    return queue;
  }

  return {
    receiverUrl: receiver.url,
    async start(run, task) {
      return settle(run, await runner.run(agent, task, { context: { run } }));
    },
    finished: (run) => endOf(run).promise,
    async close() {
      await receiver.close();
      await sess.close();
    },
  };
}
