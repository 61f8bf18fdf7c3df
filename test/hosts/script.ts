/**
 * The scripted "model" every host stand-in shares: given the bytes a host sent to its model API,
 * it picks the next tool call. It knows nothing a model would not see: the flow is named in the
 * prompt, tool names come from the tool list the host offered, and every handle, revision and
 * event id is read from the last tool result the host forwarded. Nothing is hard-coded.
 *
 * It does not speak any wire format; each stand-in (Anthropic Messages, OpenAI Responses, the
 * frameworks' test models) turns what it parsed into a {@link ScriptInput} and the answer back
 * into its own format.
 */
import { approveSurface, followUpSurface, lunchAsk } from '../support/surfaces.js';

/** The flows of the host matrix. */
export type FlowName = 'ask' | 'request' | 'respondents' | 'ask_rating' | 'lifecycle' | 'long' | 'wake';

/**
 * Every flow, in the order the matrix runs them. `lifecycle` comes last: it lists what the earlier
 * flows left, inspects one item, then asks a fresh question and takes it back.
 */
export const FLOWS: readonly FlowName[] = ['ask', 'request', 'respondents', 'lifecycle'];

/** The reason the lifecycle flow gives when it withdraws its question. */
export const WITHDRAW_REASON = 'Sorted out in chat; no answer needed.';

/** The short wait every scripted `sess_response` asks for, so a person's answer needs re-waits. */
export const SCRIPT_WAIT_MS = 1_500;

/** The wait of the long-call probe: the ceiling, so a host that cuts calls early shows it. */
export const LONG_WAIT_MS = 45_000;

/** The tool results a scripted run may see before it gives up (the host loops otherwise). */
const MAX_RESULTS = 14;

/**
 * What the wake flow's model says when it ends its turn with the wake command running in the
 * background (the wake rule: tell the person you will carry on when they answer).
 */
export const WAKE_REPLY = 'I am waiting for your answer in the background and will carry on when you answer.';

/** The description the wake flow gives its background shell call. */
export const WAKE_DESCRIPTION = 'Wait for the person to answer';

/** The prompt a host is given for a flow; the script reads the flow back from it. */
export function promptFor(flow: FlowName): string {
  return `Host matrix flow: ${flow}. Use the sess tools as the scripted steps say.`;
}

/**
 * One call of a host's own tool (its shell, its file reader: not a sess tool) in the conversation,
 * with what the host forwarded of it.
 */
export interface HostToolCall {
  /** The id the host gave the call's result. */
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Its result's text, once the host forwarded one. */
  result?: string;
  /** A call run in the background: the host's notice that it finished, and where its output is. */
  finished?: { outputFile?: string };
}

/** What the script needs from one model request. */
export interface ScriptInput {
  /** Every text the host sent (system prompt, user turns), joined: the flow is read from it. */
  promptText: string;
  /** The names of the tools the host offered in this request. */
  toolNames: readonly string[];
  /** The text of each tool result in the conversation, oldest first. */
  toolResults: readonly string[];
  /** The calls of the host's own tools, oldest first (only the wake flow reads them). */
  hostCalls?: readonly HostToolCall[];
}

/** What the script answers. */
export type ScriptStep =
  | { kind: 'tool'; tool: string; name: string; arguments: Record<string, unknown> }
  | { kind: 'text'; text: string };

/** The flow named in a prompt, if any. */
export function flowOf(promptText: string): FlowName | undefined {
  const match = /Host matrix flow: (ask|request|respondents|ask_rating|lifecycle|long|wake)\./.exec(
    promptText,
  );
  return match?.[1] as FlowName | undefined;
}

/**
 * The JSON object in a tool result's text: the whole text when it is JSON (a host that forwards
 * `structuredContent`), else the first line that opens an object to the end (the text content,
 * whose leading lines are instructions for the model).
 */
export function parseToolResult(text: string): Record<string, unknown> | undefined {
  const tryParse = (s: string): Record<string, unknown> | undefined => {
    try {
      const value: unknown = JSON.parse(s);
      return value !== null && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  };
  const whole = tryParse(text.trim());
  if (whole !== undefined) {
    if ('interaction' in whole || 'error' in whole) return whole;
    // A host that forwards the content block itself, maybe with structuredContent beside it.
    if (whole.structuredContent !== null && typeof whole.structuredContent === 'object') {
      return whole.structuredContent as Record<string, unknown>;
    }
    if (typeof whole.text === 'string') return parseToolResult(whole.text);
    return whole;
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i]!.trimStart().startsWith('{')) {
      const rest = tryParse(lines.slice(i).join('\n').trim());
      if (rest !== undefined) return rest;
      // A JSON line inside a host's own wrapper (Gemini CLI's `<untrusted_context>` tags).
      const line = tryParse(lines[i]!.trim());
      if (line !== undefined) return line;
    }
  }
  return undefined;
}

interface Interaction {
  handle: string;
  revision: number;
  state: string;
  response?: { eventId: string; revision: number };
  ask?: { max: number; answered: number };
}

/** One item of a `sess_list` result. */
interface ListItem {
  handle: string;
  revision: number;
  state: string;
}

/** The items of a `sess_list` result, or undefined for any other result. */
export function listItemsOf(result: Record<string, unknown> | undefined): ListItem[] | undefined {
  const items = result?.items;
  return Array.isArray(items) &&
    items.every((i) => typeof (i as ListItem | null)?.handle === 'string' && typeof i.state === 'string')
    ? (items as ListItem[])
    : undefined;
}

function interactionOf(result: Record<string, unknown> | undefined): Interaction | undefined {
  const interaction = result?.interaction as Interaction | undefined;
  return typeof interaction?.handle === 'string' && typeof interaction.revision === 'number'
    ? interaction
    : undefined;
}

const askArguments = {
  question: 'Which day suits the release?',
  fields: [{ name: 'note', label: 'Anything to add?', type: 'text', required: true }],
};

/** The ask flow with one rating field: the only field type LangChain's adapter lets through. */
const ratingArguments = {
  question: 'How ready is the release?',
  fields: [{ name: 'score', label: 'Readiness', type: 'rating', required: true }],
};

const respondentArguments = { ...lunchAsk(), respondents: { max: 2 } };

/** The step that stops a flow on a tool result that is not an interaction (an error names its code). */
function notAnInteraction(result: Record<string, unknown> | undefined): ScriptStep {
  const code = (result?.error as { code?: string } | undefined)?.code ?? 'unreadable';
  return { kind: 'text', text: `Stopped on a tool result that is not an interaction: ${code}.` };
}

/** The next step of a flow, from what the host sent. */
export function nextStep(input: ScriptInput): ScriptStep {
  const flow = flowOf(input.promptText);
  if (flow === undefined) return { kind: 'text', text: 'No flow here.' };
  const tool = (base: string, args: Record<string, unknown>): ScriptStep => {
    const name = input.toolNames.find((n) => n === base || n.endsWith(`__${base}`) || n.endsWith(`_${base}`));
    if (name === undefined) return { kind: 'text', text: `The host offered no ${base} tool.` };
    return { kind: 'tool', tool: base, name, arguments: args };
  };
  if (flow === 'lifecycle') return lifecycleStep(input.toolResults, tool);
  if (flow === 'wake') return wakeStep(input, tool);
  if (input.toolResults.length === 0) {
    if (flow === 'request') return tool('sess_request', { interaction: approveSurface });
    if (flow === 'long') return tool('sess_ask', ratingArguments);
    return tool(
      'sess_ask',
      flow === 'ask' ? askArguments : flow === 'ask_rating' ? ratingArguments : respondentArguments,
    );
  }
  if (flow === 'long') {
    // One wait at the ceiling with nobody answering, then stop: what came back says whether the
    // host let the call run.
    if (input.toolResults.length >= 2) return { kind: 'text', text: 'Done: the long call returned.' };
    const first = interactionOf(parseToolResult(input.toolResults[0]!));
    if (first === undefined) return { kind: 'text', text: 'Stopped: no interaction to wait on.' };
    return tool('sess_response', { handle: first.handle, revision: first.revision, wait_ms: LONG_WAIT_MS });
  }
  if (input.toolResults.length >= MAX_RESULTS) return { kind: 'text', text: 'Stopped: too many steps.' };
  const last = parseToolResult(input.toolResults[input.toolResults.length - 1]!);
  const interaction = interactionOf(last);
  if (interaction === undefined) return notAnInteraction(last);
  const { handle, revision, state } = interaction;
  if (interaction.ask !== undefined) {
    if (state === 'closed' || interaction.ask.answered >= interaction.ask.max) {
      return { kind: 'text', text: `Done: ${interaction.ask.answered} answers.` };
    }
    return tool('sess_response', { handle, revision, wait_ms: SCRIPT_WAIT_MS });
  }
  if (state === 'waiting' || state === 'needs_resume') {
    return tool('sess_response', { handle, revision, wait_ms: SCRIPT_WAIT_MS });
  }
  if (state === 'answered' && interaction.response !== undefined) {
    const { eventId } = interaction.response;
    if (flow === 'request' && revision === 1) {
      return tool('sess_publish', {
        handle,
        expected_revision: revision,
        response_event_id: eventId,
        interaction: followUpSurface,
      });
    }
    return tool('sess_complete', { handle, expected_revision: revision, response_event_id: eventId });
  }
  if (state === 'completed') return { kind: 'text', text: 'Done: completed.' };
  return { kind: 'text', text: `Stopped in state ${state}.` };
}

/**
 * The lifecycle flow: `sess_list`; `sess_list` with a handle picked from that list (inspect);
 * a fresh `sess_request`; `sess_withdraw` at the revision of its result; `sess_list` with that
 * handle, which must say `withdrawn`. Each step is read from the results so far, as a model would.
 */
function lifecycleStep(
  toolResults: readonly string[],
  tool: (base: string, args: Record<string, unknown>) => ScriptStep,
): ScriptStep {
  if (toolResults.length === 0) return tool('sess_list', {});
  if (toolResults.length >= MAX_RESULTS) return { kind: 'text', text: 'Stopped: too many steps.' };
  const parsed = toolResults.map(parseToolResult);
  const last = parsed[parsed.length - 1];
  const lastItems = listItemsOf(last);
  const lastInteraction = interactionOf(last);
  if (lastItems === undefined && lastInteraction === undefined) {
    const code = (last?.error as { code?: string } | undefined)?.code ?? 'unreadable';
    return {
      kind: 'text',
      text: `Stopped on a tool result that is neither a list nor an interaction: ${code}.`,
    };
  }
  const asked = parsed.some((r) => interactionOf(r) !== undefined);
  if (!asked) {
    const lists = parsed.filter((r) => listItemsOf(r) !== undefined).length;
    if (lists === 1) {
      // Inspect the first item the list returned: the handle comes from the result, nowhere else.
      const picked = lastItems?.[0];
      if (picked === undefined) return { kind: 'text', text: 'Stopped: the list was empty.' };
      return tool('sess_list', { handle: picked.handle });
    }
    return tool('sess_request', { interaction: approveSurface });
  }
  if (lastInteraction !== undefined) {
    const { handle, revision, state } = lastInteraction;
    if (state === 'waiting') {
      return tool('sess_withdraw', { handle, expected_revision: revision, reason: WITHDRAW_REASON });
    }
    if (state === 'withdrawn') return tool('sess_list', { handle });
    return { kind: 'text', text: `Stopped in state ${state}.` };
  }
  const state = lastItems?.[0]?.state ?? 'none';
  return { kind: 'text', text: state === 'withdrawn' ? 'Done: withdrawn.' : `Stopped: listed as ${state}.` };
}

/** The `wake.command` of a result, if it carries one. */
function wakeCommandIn(result: Record<string, unknown> | undefined): string | undefined {
  const command = (result?.wake as { command?: unknown } | undefined)?.command;
  return typeof command === 'string' ? command : undefined;
}

/**
 * The wake flow, as the wake rule tells a model: `sess_request`; one `sess_response` (at the
 * server's wait ceiling); when that is still `waiting`, `wake.command` in the host's shell in the
 * background (`Bash` with `run_in_background`), then end the turn with {@link WAKE_REPLY}. When
 * the host says the command finished, read its output (the file the host named) and make the call
 * it printed; then `sess_complete` on the answer.
 */
function wakeStep(
  input: ScriptInput,
  tool: (base: string, args: Record<string, unknown>) => ScriptStep,
): ScriptStep {
  const results = input.toolResults;
  if (results.length === 0) return tool('sess_request', { interaction: approveSurface });
  if (results.length >= MAX_RESULTS) return { kind: 'text', text: 'Stopped: too many steps.' };
  const last = parseToolResult(results[results.length - 1]!);
  const interaction = interactionOf(last);
  if (interaction === undefined) return notAnInteraction(last);
  const { handle, revision, state } = interaction;
  if (state === 'answered' && interaction.response !== undefined) {
    const { eventId } = interaction.response;
    return tool('sess_complete', { handle, expected_revision: revision, response_event_id: eventId });
  }
  if (state === 'completed') return { kind: 'text', text: 'Done: completed.' };
  if (state !== 'waiting') return { kind: 'text', text: `Stopped in state ${state}.` };
  if (results.length === 1) return tool('sess_response', { handle, revision });
  const command = wakeCommandIn(last);
  if (command === undefined)
    return { kind: 'text', text: 'Stopped: the waiting result carried no wake.command.' };
  const calls = input.hostCalls ?? [];
  const shell = calls.find((c) => c.name === 'Bash' && c.input.command === command);
  if (shell === undefined) {
    return tool('Bash', { command, description: WAKE_DESCRIPTION, run_in_background: true });
  }
  const outputFile = shell.finished?.outputFile;
  if (outputFile === undefined) {
    return shell.finished === undefined
      ? { kind: 'text', text: WAKE_REPLY }
      : { kind: 'text', text: 'Stopped: the host named no output of the finished command.' };
  }
  const read = calls.find(
    (c) => c.name === 'Read' && c.input.file_path === outputFile && c.result !== undefined,
  );
  if (read === undefined) return tool('Read', { file_path: outputFile });
  const printed = /call sess_response (\{[^\n]*\})/.exec(read.result!);
  if (printed === null) return { kind: 'text', text: 'Stopped: the wake command printed no call.' };
  return tool('sess_response', JSON.parse(printed[1]!) as Record<string, unknown>);
}
