/**
 * Example: a hosted LangGraph agent that asks a person with Sess, pauses at `interrupt()` while
 * they decide, and is resumed by `sess-mcp`'s webhook with `Command({ resume })`.
 *
 * The graph: `agent` (your chat model, given `sess_request` through `@langchain/mcp-adapters`)
 * → `tools` → `show_link` (sends the link to the person) → `wait_for_answer`, which stops the
 * thread at `interrupt()`. The thread is checkpointed and nothing runs. When the person answers, the `sess-mcp` server's watcher sees it and posts an
 * event to this app's webhook (`wake-receiver.ts` verifies and deduplicates it). The app finds the
 * thread that waits on that handle and resumes it with the event; `wait_for_answer` then calls
 * `sess_response` and routes on its verified `response` only: `approved` (ships, then
 * `sess_complete`) for the action `approve`, `rejected` (`sess_complete`, nothing shipped) for any
 * other. The webhook is never the answer: it names a handle and a revision, nothing more, so a
 * forged or repeated event cannot approve anything.
 *
 * The saved thread state holds the Sess link (in the `sess_request` result), which lets whoever
 * holds it answer: it is a secret. The checkpointer's serializer seals every checkpoint and write
 * with AES-256-GCM under a key from your secret store (`wake-sealed-state.ts`), so the store only
 * ever holds ciphertext; keep the key out of that store, and never log a state. Here the
 * checkpointer is `MemorySaver`; a hosted app wraps its durable checkpointer the same way with
 * {@link sealCheckpoints}.
 *
 * Why stdio: `sess-mcp` (the stdio server) watches its profile's waiting questions between tool
 * calls and delivers events as webhooks, so a late answer reaches the app with no tool call. Its
 * tool schemas are served flat (`SESS_MCP_INPUT_SCHEMAS=flat`), as `@langchain/mcp-adapters`
 * needs. It imports the package by its name, as an application does.
 */
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import type { DynamicStructuredTool } from '@langchain/core/tools';
import {
  Annotation,
  type BaseCheckpointSaver,
  Command,
  END,
  interrupt,
  type LangGraphRunnableConfig,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import type { InteractionResult, WakeEvent } from '@sess.si/mcp';
import {
  type RecipeDecision,
  type SessMcpCommand,
  startWakeReceiver,
  type WakeRecipeLog,
} from './wake-receiver.js';
import { openState, sealState } from './wake-sealed-state.js';

/** What the recipe needs. */
export interface LangGraphWakeOptions {
  /** Any chat model that can call tools (`bindTools`). */
  model: BaseChatModel;
  sessMcp: SessMcpCommand;
  /** The `whsec_…` secret the webhook is signed with: from your secret store. */
  webhookSecret: string;
  /** 32 bytes from your secret store: seals every checkpoint (they hold the Sess link). */
  stateKey: Uint8Array;
  /**
   * The URL `sess-mcp` posts to, when the receiver sits behind a proxy (HTTPS in production).
   * @default the receiver's own URL
   */
  webhookUrl?: string;
  /** Send the link to the person (a chat message, an e-mail). Never log it. */
  showLink(humanUrl: string, thread: string): Promise<void>;
  /** What the person is asked to approve; called only on a verified `approve`. */
  ship(thread: string): Promise<void>;
  /** @default nothing is logged */
  log?: (line: WakeRecipeLog) => void;
}

/** Where a thread stands after a call of the recipe. */
export type ThreadStatus =
  | { status: 'waiting'; handle: string }
  | { status: 'finished'; decision: RecipeDecision };

/** A running recipe. */
export interface LangGraphWake {
  /** The receiver's own URL. */
  receiverUrl: string;
  /** Start a thread on `task`: it runs until it waits for the person (or ends). */
  start(thread: string, task: string): Promise<ThreadStatus>;
  /** Resolves when `thread` has ended, with what the person decided. */
  finished(thread: string): Promise<RecipeDecision>;
  /** The compiled graph (its state, its history). */
  graph: ReturnType<typeof buildGraph>;
  close(): Promise<void>;
}

/** The one tool the model gets: it asks; the graph, not the model, waits and reads the answer. */
const ASK_TOOLS = new Set(['sess_request']);

const INSTRUCTIONS = `You get a person's approval before anything ships. Ask with sess_request \
(actions "approve" and "stop"). This app shows the person the link, waits for their answer and \
carries on when they answer, so never run wake.command.`;

const RecipeState = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** The question the thread waits on. */
  waitingOn: Annotation<{ handle: string; revision: number } | undefined>(),
  /** Read from `sess_response`'s verified `response`, never from the webhook. */
  decision: Annotation<RecipeDecision | undefined>(),
  /** The `response.eventId` that `sess_complete` takes. */
  responseEventId: Annotation<string | undefined>(),
  /** The webhook event that resumed the thread (a reference). */
  resumedBy: Annotation<string | undefined>(),
});
type State = typeof RecipeState.State;

/** Wrap a checkpointer's serializer so every checkpoint and write it stores is sealed. */
export function sealCheckpoints<T extends BaseCheckpointSaver>(saver: T, key: Uint8Array): T {
  const inner = saver.serde;
  saver.serde = {
    async dumpsTyped(data: unknown): Promise<[string, Uint8Array]> {
      const [type, bytes] = await inner.dumpsTyped(data);
      return [type, sealState(bytes, key)];
    },
    async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
      if (typeof data === 'string') throw new Error('an unsealed checkpoint');
      return inner.loadsTyped(type, openState(data, key));
    },
  };
  return saver;
}

/** The interaction in a tool result of `@langchain/mcp-adapters` (its `structuredContent`). */
function interactionOfMessage(message: BaseMessage | undefined): InteractionResult | undefined {
  if (!(message instanceof ToolMessage) || !Array.isArray(message.artifact)) return undefined;
  const structured = (
    message.artifact as Array<{ type?: string; data?: { interaction?: InteractionResult } }>
  ).find((a) => a.type === 'mcp_structured_content');
  return structured?.data?.interaction;
}

/** The thread a node runs in. */
function threadOf(config: LangGraphRunnableConfig): string {
  return String(config.configurable?.thread_id);
}

/** A call of a sess tool by the app itself: the interaction, or an error naming only the code. */
type SessCall = (name: string, args: Record<string, unknown>) => Promise<InteractionResult>;

function buildGraph(options: LangGraphWakeOptions, tools: DynamicStructuredTool[], callSess: SessCall) {
  if (options.model.bindTools === undefined) throw new TypeError('model must support bindTools');
  const model = options.model.bindTools(tools);
  const log = options.log ?? (() => undefined);

  const agent = async (state: State) => ({
    messages: [await model.invoke([new SystemMessage(INSTRUCTIONS), ...state.messages])],
  });

  const afterAgent = (state: State) => {
    const last = state.messages.at(-1);
    return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
  };

  const afterTools = (state: State) =>
    interactionOfMessage(state.messages.at(-1))?.state === 'waiting' ? 'show_link' : 'agent';

  const showLink = async (state: State, config: LangGraphRunnableConfig) => {
    const interaction = interactionOfMessage(state.messages.at(-1))!;
    await options.showLink(interaction.humanUrl!, threadOf(config));
    return { waitingOn: { handle: interaction.handle, revision: interaction.revision } };
  };

  // Everything before interrupt() runs again on resume, so nothing comes before it.
  const waitForAnswer = async (state: State, config: LangGraphRunnableConfig) => {
    const waitingOn = state.waitingOn!;
    const event = interrupt<typeof waitingOn, WakeEvent>(waitingOn);
    // Resumed by a webhook. The event is a reference: read the answer from sess_response.
    if (event.handle !== waitingOn.handle) return {};
    const read = await callSess('sess_response', { ...waitingOn, wait_ms: 0 });
    log({ event: 'run_verified', run: threadOf(config), handle: read.handle, state: read.state });
    if (read.state === 'waiting' || read.state === 'needs_resume') return { resumedBy: event.eventId };
    if (read.state !== 'answered' || read.response === undefined) {
      return { decision: 'no_answer' as const, resumedBy: event.eventId };
    }
    return {
      decision: read.response.action === 'approve' ? ('approve' as const) : ('reject' as const),
      responseEventId: read.response.eventId,
      resumedBy: event.eventId,
    };
  };

  const afterWait = (state: State) =>
    state.decision === 'approve'
      ? 'approved'
      : state.decision === 'reject'
        ? 'rejected'
        : state.decision === 'no_answer'
          ? END
          : 'wait_for_answer';

  const complete = (state: State) =>
    callSess('sess_complete', {
      handle: state.waitingOn!.handle,
      expected_revision: state.waitingOn!.revision,
      response_event_id: state.responseEventId,
    });

  const approved = async (state: State, config: LangGraphRunnableConfig) => {
    await options.ship(threadOf(config));
    await complete(state);
    return { messages: [new AIMessage('The person approved: shipped.')] };
  };

  const rejected = async (state: State) => {
    await complete(state);
    return { messages: [new AIMessage('The person rejected: nothing was shipped.')] };
  };

  return new StateGraph(RecipeState)
    .addNode('agent', agent)
    .addNode('tools', new ToolNode(tools))
    .addNode('show_link', showLink)
    .addNode('wait_for_answer', waitForAnswer)
    .addNode('approved', approved)
    .addNode('rejected', rejected)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', afterAgent, ['tools', END])
    .addConditionalEdges('tools', afterTools, ['show_link', 'agent'])
    .addEdge('show_link', 'wait_for_answer')
    .addConditionalEdges('wait_for_answer', afterWait, ['approved', 'rejected', 'wait_for_answer', END])
    .addEdge('approved', END)
    .addEdge('rejected', END)
    .compile({ checkpointer: sealCheckpoints(new MemorySaver(), options.stateKey) });
}

/** Start the recipe: the webhook receiver, `sess-mcp` posting to it, and the graph. */
export async function startLangGraphWake(options: LangGraphWakeOptions): Promise<LangGraphWake> {
  const log = options.log ?? (() => undefined);
  /** handle → the thread paused on it. A hosted app keeps this beside its checkpoints. */
  const waiting = new Map<string, string>();
  /** Events for a handle no thread waits on yet (the answer came before the thread paused). */
  const early = new Map<string, WakeEvent>();
  const ends = new Map<string, { promise: Promise<RecipeDecision>; resolve(d: RecipeDecision): void }>();
  const endOf = (thread: string) => {
    let entry = ends.get(thread);
    if (entry === undefined) {
      let resolve!: (d: RecipeDecision) => void;
      const promise = new Promise<RecipeDecision>((r) => {
        resolve = r;
      });
      entry = { promise, resolve };
      ends.set(thread, entry);
    }
    return entry;
  };

  const receiver = await startWakeReceiver({
    secret: options.webhookSecret,
    log,
    async onEvent(event) {
      const thread = waiting.get(event.handle);
      if (thread === undefined) {
        early.set(event.handle, event);
        return;
      }
      waiting.delete(event.handle);
      // Answer the webhook now; the run goes on in the background.
      void resume(thread, event);
    },
  });

  const client = new MultiServerMCPClient({
    mcpServers: {
      sess: {
        transport: 'stdio',
        command: options.sessMcp.command,
        args: options.sessMcp.args ?? [],
        env: {
          ...options.sessMcp.env,
          SESS_MCP_INPUT_SCHEMAS: 'flat',
          SESS_MCP_WEBHOOK_URL: options.webhookUrl ?? receiver.url,
          SESS_MCP_WEBHOOK_SECRET: options.webhookSecret,
        },
      },
    },
  });
  const tools = (await client.getTools()).filter((t) => ASK_TOOLS.has(t.name));
  const mcp = (await client.getClient('sess'))!;
  const callSess: SessCall = async (name, args) => {
    const result = await mcp.callTool({ name, arguments: args });
    const structured = result.structuredContent as
      | { interaction?: InteractionResult; error?: { code?: string } }
      | undefined;
    if (result.isError === true || structured?.interaction === undefined) {
      throw new Error(`${name} failed: ${structured?.error?.code ?? 'no result'}`);
    }
    return structured.interaction;
  };
  const graph = buildGraph(options, tools, callSess);

  /** After a run of `thread` returned: it waits on a handle, or it has ended. */
  async function settle(thread: string): Promise<ThreadStatus> {
    const snapshot = await graph.getState({ configurable: { thread_id: thread } });
    const pause = snapshot.tasks.flatMap((t) => t.interrupts)[0]?.value as { handle: string } | undefined;
    if (pause === undefined) {
      const decision = (snapshot.values as State).decision ?? 'no_answer';
      log({ event: 'run_finished', run: thread, decision });
      endOf(thread).resolve(decision);
      return { status: 'finished', decision };
    }
    log({ event: 'run_waiting', run: thread, handle: pause.handle });
    const already = early.get(pause.handle);
    if (already !== undefined) {
      early.delete(pause.handle);
      void resume(thread, already);
    } else waiting.set(pause.handle, thread);
    return { status: 'waiting', handle: pause.handle };
  }

  let queue = Promise.resolve<unknown>(undefined);
  /** Resume `thread` with `event`, one run at a time. */
  function resume(thread: string, event: WakeEvent): Promise<unknown> {
    queue = queue.then(async () => {
      log({ event: 'run_resumed', run: thread, eventId: event.eventId });
      try {
        await graph.invoke(new Command({ resume: event }), { configurable: { thread_id: thread } });
        await settle(thread);
      } catch (error) {
        // The message could quote a tool result: log its class only.
        log({ event: 'run_failed', run: thread, error: (error as Error).name });
      }
    });
    return queue;
  }

  return {
    receiverUrl: receiver.url,
    graph,
    async start(thread, task) {
      await graph.invoke({ messages: [new HumanMessage(task)] }, { configurable: { thread_id: thread } });
      return settle(thread);
    },
    finished: (thread) => endOf(thread).promise,
    async close() {
      await receiver.close();
      await client.close();
    },
  };
}
