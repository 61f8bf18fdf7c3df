/**
 * The HTTP side every model API stand-in shares (the OpenAI Responses and Chat Completions ones):
 * one endpoint on 127.0.0.1 that parses each request of its wire format, asks the script for the
 * next step when the host offered sess tools (a side request without them, such as a title, gets a
 * short text), logs the request, and answers in the format. Anything else is a 404, noted.
 */
import type { ServerResponse } from 'node:http';
import { listen, readBody } from '../http/helpers.js';
import type { ScriptInput, ScriptStep } from './script.js';
import { createStandInLog, type StandInLog } from './stand-in-log.js';

/** A running stand-in. */
export interface StandIn {
  /** The base URL for the provider's `base_url` (ends with `/v1`). */
  readonly baseUrl: string;
  readonly log: StandInLog;
  /** Paths the host requested that the stand-in does not serve. */
  readonly unserved: string[];
  close(): Promise<void>;
}

/** A wire format: the path it serves, what the script reads of a request, and the answer. */
export interface StandInFormat<Body> {
  /** The end of the path it serves (`/responses`, `/chat/completions`). */
  path: string;
  /** The prompt texts, the tool names offered and the tool results of a request. */
  read(body: Body): { promptText: string; toolNames: string[]; toolResults: string[] };
  send(res: ServerResponse, step: ScriptStep, body: Body): void;
}

/** Start a stand-in of `format`; `next` picks each step. */
export async function startStandIn<Body>(
  format: StandInFormat<Body>,
  next: (input: ScriptInput) => ScriptStep,
): Promise<StandIn> {
  const log = createStandInLog();
  const unserved: string[] = [];
  const server = await listen((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (req.method !== 'POST' || !path.endsWith(format.path)) {
        unserved.push(`${req.method} ${path}`);
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not here"}}');
        return;
      }
      let body: Body;
      try {
        body = JSON.parse(raw) as Body;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const { promptText, toolNames, toolResults } = format.read(body);
      const offersSess = toolNames.some((n) => n.includes('sess_'));
      const step: ScriptStep = offersSess
        ? next({ promptText, toolNames, toolResults })
        : { kind: 'text', text: 'Host matrix' };
      log.requests.push({ api: path, body: raw, toolNames, toolResults, ...(offersSess ? { step } : {}) });
      format.send(res, step, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    log,
    unserved,
    close: () => server.close(),
  };
}
