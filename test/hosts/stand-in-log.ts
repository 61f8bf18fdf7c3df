/**
 * What a host sent its model, as every stand-in logs it: one entry per model request, with the
 * raw body (so a test can assert what reached the model) and what the script answered.
 */
import { parseToolResult, type ScriptStep } from './script.js';

/** One model request a host made. */
export interface ModelRequest {
  /** The path or API the host called (`/v1/messages`, `/v1/responses`, `doGenerate`, …). */
  api: string;
  /** The request body exactly as received (text), or the framework's prompt as JSON. */
  body: string;
  /** The tool names offered in this request. */
  toolNames: string[];
  /** The tool results this request carried, as text, oldest first. */
  toolResults: string[];
  /** The script's answer (undefined for side requests answered with plain text). */
  step?: ScriptStep;
  /** When the request arrived (`Date.now()`). */
  at?: number;
}

/** The log of one stand-in. */
export interface StandInLog {
  readonly requests: ModelRequest[];
  /** The tool calls the script made, in order. */
  calls(): Array<{ tool: string; arguments: Record<string, unknown> }>;
}

/** A fresh log. */
export function createStandInLog(): StandInLog {
  const requests: ModelRequest[] = [];
  const push = requests.push.bind(requests);
  // Stamp every request as it is logged, so a suite can time the calls between two requests.
  requests.push = (...items: ModelRequest[]) => push(...items.map((item) => ({ at: Date.now(), ...item })));
  return {
    requests,
    calls() {
      return requests.flatMap((r) =>
        r.step?.kind === 'tool' ? [{ tool: r.step.tool, arguments: r.step.arguments }] : [],
      );
    },
  };
}

/**
 * What reached the model of a tool result, read from the first result of a flow (`sess_ask` or
 * `sess_request`, whose text content opens with the link line): `text content` (the link line
 * and one copy of the JSON), `structuredContent` (the JSON alone), or `both` (the link line and
 * two copies).
 */
export type ResultShape = 'text content' | 'structuredContent' | 'both' | 'none';

/** Classify one tool result as the host forwarded it. */
export function toolResultShape(result: string | undefined): ResultShape {
  if (result === undefined) return 'none';
  const lead = result.includes('Show the person this link now:');
  // A copy inside a JSON string has its quotes escaped.
  const copies = result.match(/\\?"interaction\\?"/g)?.length ?? 0;
  if (lead && copies >= 2) return 'both';
  if (lead) return 'text content';
  return copies >= 1 ? 'structuredContent' : 'none';
}

/** The first tool result in a log that carries an interaction (a `sess_ask` or `sess_request` result). */
export function firstInteractionResult(log: StandInLog): string | undefined {
  for (const request of log.requests) {
    const found = request.toolResults.find((r) => r.includes('interaction'));
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Every distinct `next` sentence in the tool results a host forwarded to its model, in the order
 * first seen: empty for a host that forwards only the text content (which has no `next`).
 */
export function nextSentences(log: StandInLog): string[] {
  const seen = new Set<string>();
  for (const request of log.requests)
    for (const result of request.toolResults) {
      const next = parseToolResult(result)?.next;
      if (typeof next === 'string') seen.add(next);
    }
  return [...seen];
}

/**
 * Which of the result guidance reached a host's model: the text's leading lines (the link line,
 * "Then call sess_response.", the re-wait line), `next` from `structuredContent`, both, or none.
 */
export type GuidanceReach = "the text's lines" | '`next`' | "the text's lines and `next`" | 'none';

/** Read from every tool result the host forwarded. */
export function guidanceReach(log: StandInLog): GuidanceReach {
  const results = log.requests.flatMap((r) => r.toolResults);
  const lines = results.some((r) => r.includes('Then call sess_response.'));
  const next = nextSentences(log).length > 0;
  if (lines && next) return "the text's lines and `next`";
  if (lines) return "the text's lines";
  return next ? '`next`' : 'none';
}
