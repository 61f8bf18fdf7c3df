/**
 * A stand-in for the OpenAI Chat Completions API (`POST …/chat/completions`, streamed as
 * server-sent events, or one JSON response when the request does not ask for a stream) on
 * 127.0.0.1, for driving hosts that speak to an OpenAI-compatible provider with no model: each
 * turn answers with the script's next tool call as one `tool_calls` entry, or a final assistant
 * message. Every request is logged.
 *
 * It is a named double for the model only; the host, the MCP server and Sess are real.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { nextStep, type ScriptInput, type ScriptStep } from './script.js';
import { type StandIn, startStandIn } from './stand-in-server.js';

type Content = string | null | Array<{ type?: string; text?: string }>;

interface ChatMessage {
  role?: string;
  content?: Content;
  tool_call_id?: string;
}

interface ChatBody {
  model?: string;
  stream?: boolean;
  messages?: ChatMessage[];
  tools?: Array<{ type?: string; function?: { name?: string } }>;
}

function textOf(content: Content | undefined): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((c) => c.text ?? '').join('\n');
}

/** The texts (system and user) and the tool results of a Chat Completions request. */
export function readMessages(body: ChatBody): { promptText: string; toolResults: string[] } {
  const texts: string[] = [];
  const toolResults: string[] = [];
  for (const message of body.messages ?? []) {
    if (message.role === 'tool') toolResults.push(textOf(message.content));
    else if (message.role === 'system' || message.role === 'developer' || message.role === 'user') {
      texts.push(textOf(message.content));
    }
  }
  return { promptText: texts.join('\n'), toolResults };
}

/** The texts of a request's system (or developer) messages, in order: where a host puts instructions. */
export function systemMessages(body: string): string[] {
  const parsed = JSON.parse(body) as ChatBody;
  return (parsed.messages ?? [])
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content));
}

function send(res: ServerResponse, step: ScriptStep, body: ChatBody): void {
  const model = body.model ?? 'stand-in';
  const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const call =
    step.kind === 'tool'
      ? {
          id: `call_${randomUUID().replaceAll('-', '')}`,
          type: 'function' as const,
          function: { name: step.name, arguments: JSON.stringify(step.arguments) },
        }
      : undefined;
  const finish = call === undefined ? 'stop' : 'tool_calls';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (body.stream !== true) {
    const message =
      call === undefined
        ? { role: 'assistant', content: (step as { text: string }).text }
        : { role: 'assistant', content: null, tool_calls: [call] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      }),
    );
    return;
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  });
  const chunks =
    call === undefined
      ? [
          chunk({ role: 'assistant', content: '' }, null),
          chunk({ content: (step as { text: string }).text }, null),
        ]
      : [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...call }] }, null)];
  chunks.push(chunk({}, finish, { usage }));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** Start the stand-in on 127.0.0.1; `next` picks each step (the host matrix's script by default). */
export function startChatCompletionsStandIn(
  next: (input: ScriptInput) => ScriptStep = nextStep,
): Promise<StandIn> {
  return startStandIn<ChatBody>(
    {
      path: '/chat/completions',
      read: (body) => ({
        toolNames: (body.tools ?? []).flatMap((t) =>
          typeof t.function?.name === 'string' ? [t.function.name] : [],
        ),
        ...readMessages(body),
      }),
      send,
    },
    next,
  );
}
