/**
 * A stand-in for the Gemini API's `generateContent` and `streamGenerateContent` (`POST
 * …/v1beta/models/<model>:<method>`, streamed as server-sent events when the URL asks `alt=sse`)
 * and `countTokens`, on 127.0.0.1, for driving Gemini CLI with no model (its
 * `GOOGLE_GEMINI_BASE_URL`): each turn answers with the script's next tool call as a
 * `functionCall` part, or a final text. Requests that offer no sess tool (a JSON check of the
 * host's own) get a short text, or a JSON object when the request asks for JSON. Every request
 * is logged.
 *
 * It is a named double for the model only; the host, the MCP server and Sess are real.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, readBody } from '../http/helpers.js';
import type { ModelStandIn } from './chat-host-run.js';
import { MARKERS } from './run-flow.js';
import { nextStep, type ScriptInput, type ScriptStep } from './script.js';
import { createStandInLog } from './stand-in-log.js';

interface GeminiPart {
  text?: string;
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> };
}

interface GeminiBody {
  contents?: Array<{ role?: string; parts?: GeminiPart[] }>;
  systemInstruction?: { parts?: GeminiPart[] } | string;
  tools?: Array<{ functionDeclarations?: Array<{ name?: string }> }>;
  generationConfig?: { responseMimeType?: string };
}

function systemText(body: GeminiBody): string {
  const system = body.systemInstruction;
  if (system === undefined) return '';
  if (typeof system === 'string') return system;
  return (system.parts ?? []).map((p) => p.text ?? '').join('\n');
}

/** What a function response gave the model: its `output` text, else its JSON. */
function responseText(response: Record<string, unknown> | undefined): string {
  if (typeof response?.output === 'string') return response.output;
  return JSON.stringify(response ?? {});
}

/**
 * The texts of a Gemini request (system instruction, user text parts) and the text of each sess
 * function response, oldest first.
 */
export function readGemini(body: GeminiBody): { promptText: string; toolResults: string[] } {
  const texts = [systemText(body)];
  const toolResults: string[] = [];
  for (const content of body.contents ?? []) {
    for (const part of content.parts ?? []) {
      if (part.functionResponse !== undefined) {
        if ((part.functionResponse.name ?? '').includes('sess_'))
          toolResults.push(responseText(part.functionResponse.response));
      } else if (content.role !== 'model' && typeof part.text === 'string') texts.push(part.text);
    }
  }
  return { promptText: texts.join('\n'), toolResults };
}

/** The names of the functions a request declares. */
export function geminiToolNames(body: GeminiBody): string[] {
  return (body.tools ?? []).flatMap((t) =>
    (t.functionDeclarations ?? []).flatMap((f) => (typeof f.name === 'string' ? [f.name] : [])),
  );
}

/** Where the server instructions were in a Gemini request (its raw body). */
export function geminiInstructionsWhere(body: string | undefined): string {
  const parsed = JSON.parse(body ?? '{}') as GeminiBody;
  if (systemText(parsed).includes(MARKERS.instructions)) return 'in the system prompt';
  const turn = parsed.contents?.find((c) => JSON.stringify(c.parts ?? []).includes(MARKERS.instructions));
  return turn === undefined ? 'not sent to the model' : `in the ${turn.role ?? 'user'} turn`;
}

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function send(res: ServerResponse, step: ScriptStep, stream: boolean, json: boolean): void {
  const part: GeminiPart =
    step.kind === 'tool'
      ? { functionCall: { name: step.name, args: step.arguments } }
      : { text: json ? '{}' : step.kind === 'text' ? step.text : '' };
  const response = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: USAGE,
    modelVersion: 'stand-in',
  };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(`data: ${JSON.stringify(response)}\r\n\r\n`);
}

function parseBody(raw: string): GeminiBody | undefined {
  try {
    return JSON.parse(raw) as GeminiBody;
  } catch {
    return undefined;
  }
}

/** Start the stand-in on 127.0.0.1; `next` picks each step (the host matrix's script by default). */
export async function startGeminiStandIn(
  next: (input: ScriptInput) => ScriptStep = nextStep,
): Promise<ModelStandIn> {
  const log = createStandInLog();
  const unserved: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://x');
    const method = /:(\w+)$/.exec(url.pathname)?.[1];
    if (req.method === 'POST' && method === 'countTokens') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":10}');
      return;
    }
    if (req.method !== 'POST' || (method !== 'generateContent' && method !== 'streamGenerateContent')) {
      unserved.push(`${req.method} ${url.pathname}`);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not here"}}');
      return;
    }
    const body = parseBody(raw);
    if (body === undefined) {
      res.writeHead(400).end();
      return;
    }
    const toolNames = geminiToolNames(body);
    const { promptText, toolResults } = readGemini(body);
    const step = toolNames.some((n) => n.includes('sess_'))
      ? next({ promptText, toolNames, toolResults })
      : undefined;
    log.requests.push({ api: url.pathname, body: raw, toolNames, toolResults, ...(step && { step }) });
    const json = body.generationConfig?.responseMimeType === 'application/json';
    send(res, step ?? { kind: 'text', text: 'Host matrix' }, method === 'streamGenerateContent', json);
  };
  const server = await listen((req, res) => {
    handle(req, res).catch(() => (res.headersSent ? undefined : res.writeHead(500).end()));
  });
  return { log, unserved, baseUrl: `http://127.0.0.1:${server.port}`, close: () => server.close() };
}
