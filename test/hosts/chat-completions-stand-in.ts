/**
 * A stand-in for the OpenAI-compatible Chat Completions API (`POST …/chat/completions`, streamed as
 * `chat.completion.chunk` server-sent events or one `chat.completion` JSON when the request does
 * not stream, and `GET …/models`) on 127.0.0.1, for driving the CLI hosts that speak it (Qwen
 * Code, opencode, Cline) with no model: each turn answers with the script's next tool call as a
 * `tool_calls` entry, or a final assistant message. Requests that offer no sess tool (titles,
 * summaries, a host's own checks) get a short text. A host that defers its MCP tools behind a
 * `tool_search` / `tool_call` bridge (Qwen Code) is driven through it, as a model would: the
 * schemas searched once, then each call made by name. Every request is logged.
 *
 * It is a named double for the model only; the host, the MCP server and Sess are real.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, readBody } from '../http/helpers.js';
import { nextStep, type ScriptInput, type ScriptStep } from './script.js';
import { createStandInLog, type StandInLog } from './stand-in-log.js';

type Content = string | null | Array<{ type?: string; text?: string }>;

interface ChatMessage {
  role?: string;
  content?: Content;
  tool_call_id?: string;
  tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
}

interface ChatBody {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: ChatMessage[];
  tools?: Array<{ type?: string; function?: { name?: string } }>;
}

function textOf(content: Content | undefined): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => part.text ?? '').join('\n');
}

/** The bridge a host may hide its MCP tools behind: a search that shows a schema, a call by name. */
const BRIDGE = { search: 'tool_search', call: 'tool_call' } as const;

/** One tool call of the conversation, with the name of the tool it ran (through the bridge or not). */
interface ChatCall {
  name: string;
  arguments: Record<string, unknown>;
  result?: string;
}

function parseArguments(text: string | undefined): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text ?? '{}');
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The texts of a request's system (or developer) messages, in order: where a host puts instructions. */
export function systemMessages(body: string): string[] {
  const parsed = JSON.parse(body) as ChatBody;
  return (parsed.messages ?? [])
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content));
}

/**
 * The texts of a Chat Completions request, the text of each sess tool result (`role: 'tool'`,
 * oldest first; a call made through the host's `tool_call` bridge counts as the tool it named,
 * other tools' results such as `tool_search` are left out), and every call with its result.
 */
export function readChat(body: ChatBody): { promptText: string; toolResults: string[]; calls: ChatCall[] } {
  const texts: string[] = [];
  const toolResults: string[] = [];
  const calls = new Map<string, ChatCall>();
  for (const message of body.messages ?? []) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        const args = parseArguments(call.function?.arguments);
        const bridged = call.function?.name === BRIDGE.call && typeof args.name === 'string';
        calls.set(call.id ?? '', {
          name: bridged ? (args.name as string) : (call.function?.name ?? ''),
          arguments: bridged ? ((args.arguments ?? {}) as Record<string, unknown>) : args,
        });
      }
    } else if (message.role === 'tool') {
      const text = textOf(message.content);
      const call = calls.get(message.tool_call_id ?? '');
      if (call !== undefined) call.result = text;
      // A result whose call is not in the conversation (a host that trims it) is the script's.
      if (call === undefined || call.name.includes('sess_')) toolResults.push(text);
    } else texts.push(textOf(message.content));
  }
  return { promptText: texts.join('\n'), toolResults, calls: [...calls.values()] };
}

/**
 * The sess tools a host named in its prompt but did not offer (deferred behind its tool search),
 * as `<prefix>__sess_<tool>` in quotes or backticks.
 */
export function deferredSessTools(promptText: string, offered: readonly string[]): string[] {
  const named = promptText.matchAll(/["`](\w+__sess_[a-z]+)(?:\\)?["`]/g);
  return [...new Set([...named].map((m) => m[1]!))].filter((n) => !offered.includes(n));
}

/**
 * What to send for a scripted step: the call itself when the host offered the tool; through the
 * bridge when the tool is deferred, after a `tool_search` that shows its schema, as a model would.
 */
function bridged(step: ScriptStep, offered: readonly string[], calls: readonly ChatCall[]): ScriptStep {
  if (step.kind !== 'tool' || offered.includes(step.name)) return step;
  if (!offered.includes(BRIDGE.search) || !offered.includes(BRIDGE.call)) return step;
  // Reviewed: a search result that shows the tool's declaration (its name in quotes).
  const reviewed = calls.some((c) => c.name === BRIDGE.search && (c.result ?? '').includes(`"${step.name}"`));
  if (!reviewed) {
    return {
      kind: 'tool',
      tool: BRIDGE.search,
      name: BRIDGE.search,
      // One tool a search: Qwen Code 0.24.4 puts a search result over its output budget in a file
      // and shows the model a preview with no schema (all seven sess schemas are about 35 KB).
      arguments: { query: `select:${step.name}` },
    };
  }
  return { ...step, name: BRIDGE.call, arguments: { name: step.name, arguments: step.arguments } };
}

/** The names of the function tools a request offers. */
export function chatToolNames(body: ChatBody): string[] {
  return (body.tools ?? []).flatMap((t) => (typeof t.function?.name === 'string' ? [t.function.name] : []));
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function send(res: ServerResponse, step: ScriptStep, body: ChatBody): void {
  const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? 'stand-in';
  const call =
    step.kind === 'tool'
      ? {
          id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
          type: 'function' as const,
          function: { name: step.name, arguments: JSON.stringify(step.arguments) },
        }
      : undefined;
  const finish = call === undefined ? 'stop' : 'tool_calls';
  if (body.stream !== true) {
    const message =
      call === undefined
        ? { role: 'assistant', content: step.kind === 'text' ? step.text : '' }
        : { role: 'assistant', content: null, tool_calls: [call] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
        usage: USAGE,
      }),
    );
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...extra,
  });
  const chunks: Array<Record<string, unknown>> = [];
  if (call === undefined) {
    chunks.push(chunk({ role: 'assistant', content: '' }, null));
    chunks.push(chunk({ content: step.kind === 'text' ? step.text : '' }, null));
  } else {
    // The name and id first, then the arguments in two pieces, as a model streams them.
    const args = call.function.arguments;
    const half = Math.floor(args.length / 2);
    chunks.push(
      chunk(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              index: 0,
              id: call.id,
              type: 'function',
              function: { name: call.function.name, arguments: '' },
            },
          ],
        },
        null,
      ),
    );
    for (const piece of [args.slice(0, half), args.slice(half)]) {
      chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
    }
  }
  chunks.push(chunk({}, finish));
  if (body.stream_options?.include_usage === true) {
    chunks.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: USAGE });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** A running stand-in. */
export interface ChatCompletionsStandIn {
  /** The base URL a host's OpenAI-compatible provider takes (ends with `/v1`). */
  readonly baseUrl: string;
  readonly log: StandInLog;
  /** Requests the stand-in does not serve (`METHOD path`). */
  readonly unserved: string[];
  close(): Promise<void>;
}

/** Start the stand-in on 127.0.0.1; `next` picks each step (the host matrix's script by default). */
export async function startChatCompletionsStandIn(
  next: (input: ScriptInput) => ScriptStep = nextStep,
): Promise<ChatCompletionsStandIn> {
  const log = createStandInLog();
  const unserved: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          data: [{ id: 'stand-in', object: 'model', owned_by: 'host-matrix' }],
        }),
      );
      return;
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      unserved.push(`${req.method} ${path}`);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not here"}}');
      return;
    }
    let body: ChatBody;
    try {
      body = JSON.parse(raw) as ChatBody;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const toolNames = chatToolNames(body);
    const { promptText, toolResults, calls } = readChat(body);
    const deferred = toolNames.includes(BRIDGE.call) ? deferredSessTools(promptText, toolNames) : [];
    const offersSess = [...toolNames, ...deferred].some((n) => n.includes('sess_'));
    const step: ScriptStep = offersSess
      ? next({ promptText, toolNames: [...toolNames, ...deferred], toolResults })
      : { kind: 'text', text: 'Host matrix' };
    const sent = bridged(step, toolNames, calls);
    // The log keeps the script's step (the sess call it made), or the search the bridge needed first.
    const logged = sent.kind === 'tool' && sent.tool === BRIDGE.search ? sent : step;
    log.requests.push({
      api: path,
      body: raw,
      toolNames,
      toolResults,
      ...(offersSess ? { step: logged } : {}),
    });
    send(res, sent, body);
  };
  const server = await listen((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const standIn: ChatCompletionsStandIn = {
    log,
    unserved,
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    close: () => server.close(),
  };
  return standIn;
}
