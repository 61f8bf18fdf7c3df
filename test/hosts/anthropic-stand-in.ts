/**
 * A stand-in for the Anthropic Messages API (`POST /v1/messages`, `/v1/messages/count_tokens`)
 * on 127.0.0.1, for driving Claude Code with no model: each turn answers with the script's next
 * tool call as server-sent events (or one JSON message when the host does not stream). Requests
 * that offer no sess tool (titles, summaries) get a short text. Every request is logged.
 *
 * It is a named double for the model only; the host, the MCP server and Sess are real.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { listen, readBody, type TestServer } from '../http/helpers.js';
import { type HostToolCall, nextStep, type ScriptStep } from './script.js';
import { createStandInLog, type StandInLog } from './stand-in-log.js';

interface Block {
  type: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  text?: string;
  content?: string | Block[];
  tool_use_id?: string;
}

interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: string | Block[];
  tools?: Array<{ name: string }>;
  messages?: Array<{ role: string; content: string | Block[] }>;
}

function textOf(content: string | Block[] | undefined): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('\n');
}

/**
 * Claude Code's notice that a background command finished, in a user text of the conversation:
 * `<task-notification>` with the call's `<tool-use-id>`, `<output-file>` and `<status>`.
 */
const TASK_NOTIFICATION = /<task-notification>([\s\S]*?)<\/task-notification>/g;

/** One tag's text inside a task notification. */
function tagOf(notification: string, tag: string): string | undefined {
  return new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(notification)?.[1];
}

/** Mark the calls whose background command the host said finished, with their output file. */
function markFinished(texts: readonly string[], calls: readonly HostToolCall[]): void {
  for (const text of texts)
    for (const [, notification] of text.matchAll(TASK_NOTIFICATION)) {
      const call = calls.find((c) => c.id === tagOf(notification!, 'tool-use-id'));
      if (call === undefined || tagOf(notification!, 'status') !== 'completed') continue;
      const outputFile = tagOf(notification!, 'output-file');
      call.finished = outputFile === undefined ? {} : { outputFile };
    }
}

/**
 * The texts of a Messages request, the results of its sess tool calls (other tools' results,
 * such as the host's tool search, are left out), the calls of the host's own tools with their
 * results and finish notices, and how often the host's tool search ran.
 */
export function readMessages(body: MessagesBody): {
  promptText: string;
  toolResults: string[];
  hostCalls: HostToolCall[];
  searches: number;
} {
  const texts: string[] = [textOf(body.system)];
  const toolResults: string[] = [];
  const hostCalls: HostToolCall[] = [];
  const names = new Map<string, string>();
  let searches = 0;
  for (const message of body.messages ?? []) {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'text') texts.push(block.text ?? '');
      if (block.type === 'tool_use' && block.id !== undefined) {
        names.set(block.id, block.name ?? '');
        if (block.name === TOOL_SEARCH) searches += 1;
        else if (!(block.name ?? '').includes('sess_'))
          hostCalls.push({ id: block.id, name: block.name ?? '', input: block.input ?? {} });
      }
      if (block.type === 'tool_result') {
        if ((names.get(block.tool_use_id ?? '') ?? '').includes('sess_'))
          toolResults.push(textOf(block.content));
        const call = hostCalls.find((c) => c.id === block.tool_use_id);
        if (call !== undefined) call.result = textOf(block.content);
      }
    }
  }
  markFinished(texts, hostCalls);
  return { promptText: texts.join('\n'), toolResults, hostCalls, searches };
}

/** Claude Code's tool that loads deferred tools (MCP tools among them). */
const TOOL_SEARCH = 'ToolSearch';
/** How often the script searches for the sess tools before it gives up. */
const MAX_SEARCHES = 6;

function sse(res: ServerResponse, events: Array<[string, Record<string, unknown>]>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events)
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  res.end();
}

function reply(res: ServerResponse, body: MessagesBody, step: ScriptStep): void {
  const id = `msg_${randomUUID().replaceAll('-', '')}`;
  const usage = { input_tokens: 10, output_tokens: 5 };
  const block =
    step.kind === 'tool'
      ? {
          type: 'tool_use',
          id: `toolu_${randomUUID().replaceAll('-', '')}`,
          name: step.name,
          input: step.arguments,
        }
      : { type: 'text', text: step.text };
  const stopReason = step.kind === 'tool' ? 'tool_use' : 'end_turn';
  const model = body.model ?? 'claude-stand-in';
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [block],
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  const start = block.type === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
  const delta =
    step.kind === 'tool'
      ? { type: 'input_json_delta', partial_json: JSON.stringify(step.arguments) }
      : { type: 'text_delta', text: step.text };
  sse(res, [
    [
      'message_start',
      {
        message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage },
      },
    ],
    ['content_block_start', { index: 0, content_block: start }],
    ['content_block_delta', { index: 0, delta }],
    ['content_block_stop', { index: 0 }],
    [
      'message_delta',
      { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } },
    ],
    ['message_stop', {}],
  ]);
}

/** A running stand-in. */
export interface AnthropicStandIn {
  /** The base URL to give as `ANTHROPIC_BASE_URL`. */
  readonly origin: string;
  readonly log: StandInLog;
  close(): Promise<void>;
}

/** Start the stand-in on 127.0.0.1. */
export async function startAnthropicStandIn(): Promise<AnthropicStandIn> {
  const log = createStandInLog();
  const server: TestServer = await listen((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path.endsWith('/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":10}');
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      let body: MessagesBody;
      try {
        body = JSON.parse(raw) as MessagesBody;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const offeredTools = (body.tools ?? [])
        .map((t) => t.name)
        .filter((n): n is string => typeof n === 'string');
      // A deferred MCP tool is named in the request's text only (behind the host's ToolSearch).
      const deferred = [...raw.matchAll(/mcp__[A-Za-z0-9-]+__sess_[a-z]+/g)].map((m) => m[0]);
      const toolNames = [...new Set([...offeredTools, ...deferred])];
      const { promptText, toolResults, hostCalls, searches } = readMessages(body);
      const offersSess = toolNames.some((n) => n.includes('sess_')) || toolNames.includes(TOOL_SEARCH);
      let step: ScriptStep = offersSess
        ? nextStep({ promptText, toolNames, toolResults, hostCalls })
        : { kind: 'text', text: 'Host matrix' };
      // No sess tool named yet (the host may still be connecting its MCP servers): search for it,
      // as the host's prompt tells a model to do for deferred tools.
      if (
        step.kind === 'text' &&
        step.text.startsWith('The host offered no') &&
        toolNames.includes(TOOL_SEARCH) &&
        searches < MAX_SEARCHES
      ) {
        step = {
          kind: 'tool',
          tool: TOOL_SEARCH,
          name: TOOL_SEARCH,
          arguments: { query: 'sess', max_results: 5 },
        };
      }
      log.requests.push({
        api: path,
        body: raw,
        toolNames: offeredTools,
        toolResults,
        ...(offersSess ? { step } : {}),
      });
      reply(res, body, step);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  return { origin: `http://127.0.0.1:${server.port}`, log, close: () => server.close() };
}
