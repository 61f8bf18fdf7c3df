/**
 * A stand-in for the OpenAI Responses API (`POST …/responses`, streamed as server-sent events, or
 * one JSON response when the request says `stream: false`) on 127.0.0.1, for driving Codex CLI and
 * the OpenAI Agents SDK with no model: each turn answers with the script's next tool call as a
 * `function_call` output item, or a final assistant message. Every request is logged.
 *
 * It is a named double for the model only; the host, the MCP server and Sess are real.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { nextStep, type ScriptInput, type ScriptStep } from './script.js';
import { type StandIn, startStandIn } from './stand-in-server.js';

interface InputItem {
  type?: string;
  role?: string;
  content?: string | Array<{ type: string; text?: string }>;
  output?: string | Array<{ type: string; text?: string }>;
  name?: string;
  call_id?: string;
}

interface ResponsesBody {
  model?: string;
  stream?: boolean;
  instructions?: string;
  input?: string | InputItem[];
  tools?: Array<{ type?: string; name?: string; tools?: Array<{ name?: string }> }>;
}

function textOf(content: InputItem['content']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((c) => c.text ?? '').join('\n');
}

/** The texts and the tool results of a Responses request. */
export function readInput(body: ResponsesBody): { promptText: string; toolResults: string[] } {
  const texts = [body.instructions ?? ''];
  const toolResults: string[] = [];
  if (typeof body.input === 'string') texts.push(body.input);
  else
    for (const item of body.input ?? []) {
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
        toolResults.push(textOf(item.output));
      } else if (item.type === 'message' || item.role !== undefined) {
        texts.push(textOf(item.content));
      }
    }
  return { promptText: texts.join('\n'), toolResults };
}

/**
 * The tools a request offers, by the name the script sees: a namespace's tools (Codex puts each
 * MCP server's tools in one, `mcp__<server>`) as `<namespace>__<tool>`, with how to call each.
 */
export function offeredTools(body: ResponsesBody): Map<string, { name: string; namespace?: string }> {
  const tools = new Map<string, { name: string; namespace?: string }>();
  for (const tool of body.tools ?? []) {
    if (typeof tool.name !== 'string') continue;
    if (tool.type === 'namespace') {
      for (const inner of tool.tools ?? []) {
        if (typeof inner.name === 'string') {
          tools.set(`${tool.name}__${inner.name}`, { name: inner.name, namespace: tool.name });
        }
      }
    } else tools.set(tool.name, { name: tool.name });
  }
  return tools;
}

function send(
  res: ServerResponse,
  step: ScriptStep,
  body: ResponsesBody,
  target: { name: string; namespace?: string } | undefined,
): void {
  const model = body.model ?? 'stand-in';
  const id = `resp_${randomUUID().replaceAll('-', '')}`;
  const item =
    step.kind === 'tool'
      ? {
          type: 'function_call',
          id: `fc_${randomUUID().replaceAll('-', '')}`,
          call_id: `call_${randomUUID().replaceAll('-', '')}`,
          name: target?.name ?? step.name,
          ...(target?.namespace === undefined ? {} : { namespace: target.namespace }),
          arguments: JSON.stringify(step.arguments),
          status: 'completed',
        }
      : {
          type: 'message',
          id: `msg_${randomUUID().replaceAll('-', '')}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: step.text, annotations: [] }],
        };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const completed = { id, object: 'response', model, status: 'completed', output: [item], usage };
  if (body.stream === false) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completed));
    return;
  }
  const events: Array<Record<string, unknown>> = [
    {
      type: 'response.created',
      response: { id, object: 'response', model, status: 'in_progress', output: [] },
    },
    { type: 'response.output_item.added', output_index: 0, item },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: completed },
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`event: ${event.type as string}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

/** A running stand-in. */
export type ResponsesStandIn = StandIn;

/** Start the stand-in on 127.0.0.1; `next` picks each step (the host matrix's script by default). */
export function startResponsesStandIn(
  next: (input: ScriptInput) => ScriptStep = nextStep,
): Promise<ResponsesStandIn> {
  return startStandIn<ResponsesBody>(
    {
      path: '/responses',
      read: (body) => ({ toolNames: [...offeredTools(body).keys()], ...readInput(body) }),
      send: (res, step, body) =>
        send(res, step, body, step.kind === 'tool' ? offeredTools(body).get(step.name) : undefined),
    },
    next,
  );
}
