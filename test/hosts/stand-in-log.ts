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
 * `sess_request`): `text content` (the text block: `next`, a blank line, and one copy of the
 * JSON), `structuredContent` (the JSON object alone, `next` in it), or `both` (the text block and
 * a second copy of the JSON beside it).
 */
export type ResultShape = 'text content' | 'structuredContent' | 'both' | 'none';

/**
 * The sentence a tool result's text block opens with (its `next`), when `result` holds the text
 * block: the text up to the blank line before its JSON, as it is or inside a JSON string (a host
 * that forwards the block as JSON escapes its line breaks). `undefined` for the JSON alone.
 */
export function textLead(result: string): string | undefined {
  const raw = /(?:^|\n)([^\n{}"]+)\n\n\{/.exec(result);
  const escaped = /(?:^|"|\\n)([^{}"\\]+)\\n\\n\{/.exec(result);
  return (raw ?? escaped)?.[1]?.trim() || undefined;
}

/** Classify one tool result as the host forwarded it. */
export function toolResultShape(result: string | undefined): ResultShape {
  if (result === undefined) return 'none';
  const lead = textLead(result) !== undefined;
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
 * Every distinct `next` sentence of `structuredContent` in the tool results a host forwarded to
 * its model, in the order first seen: empty for a host that forwards only the text block (whose
 * JSON has no `next`: the sentence leads the text, {@link textLead}).
 */
export function nextSentences(log: StandInLog): string[] {
  const seen = new Set<string>();
  for (const request of log.requests)
    for (const result of request.toolResults) {
      const next = parseToolResult(result)?.next;
      if (typeof next === 'string') seen.add(next);
      // A host that forwards structuredContent on a line of its own before the text block (Qwen Code).
      for (const line of result.split('\n')) {
        const lineNext = line.startsWith('{') ? jsonNext(line) : undefined;
        if (lineNext !== undefined) seen.add(lineNext);
      }
    }
  return [...seen];
}

/** The `next` string of a line that is one JSON object, if it has one. */
function jsonNext(line: string): string | undefined {
  try {
    const next = (JSON.parse(line) as { next?: unknown } | null)?.next;
    return typeof next === 'string' ? next : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a result's guidance, its `next` sentence, reached a host's model: at the head of the text
 * block, in `structuredContent`, in both, or nowhere.
 */
export type GuidanceReach =
  | '`next`, in the text'
  | '`next`, in structuredContent'
  | '`next`, in the text and in structuredContent'
  | 'none';

/** Read from every tool result the host forwarded. */
export function guidanceReach(log: StandInLog): GuidanceReach {
  const results = log.requests.flatMap((r) => r.toolResults);
  const inText = results.some((r) => textLead(r) !== undefined);
  const inStructured = nextSentences(log).length > 0;
  if (inText && inStructured) return '`next`, in the text and in structuredContent';
  if (inText) return '`next`, in the text';
  return inStructured ? '`next`, in structuredContent' : 'none';
}

/** Every distinct `next` sentence that reached the model, at the head of a text block or in `structuredContent`. */
export function nextsReached(log: StandInLog): string[] {
  const seen = new Set(nextSentences(log));
  for (const request of log.requests)
    for (const result of request.toolResults) {
      const lead = textLead(result);
      if (lead !== undefined) seen.add(lead);
    }
  return [...seen];
}
