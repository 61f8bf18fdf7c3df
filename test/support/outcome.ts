/**
 * What one tool call produced, read the same way whichever face ran it (the engine directly, the
 * HTTP handler or the stdio server through an MCP client): the interaction, or the error object,
 * with the text content the agent sees.
 */
import type { ToolErrorObject } from '../../src/core/contract/errors.js';
import type { InteractionResult } from '../../src/core/contract/result.js';

/** One tool call's outcome. */
export type Outcome =
  | { ok: true; interaction: InteractionResult; text: string }
  | { ok: false; error: ToolErrorObject; text: string };

/** A tool result as every face returns it (the MCP `CallToolResult` shape). */
export interface ToolResultLike {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

/** Read a tool result: `structuredContent.error` when `isError`, else `structuredContent.interaction`. */
export function outcomeOf(result: ToolResultLike): Outcome {
  const text = result.content.map((c) => c.text ?? '').join('\n');
  const content = result.structuredContent as { interaction?: InteractionResult; error?: ToolErrorObject };
  if (result.isError === true) return { ok: false, error: content.error as ToolErrorObject, text };
  return { ok: true, interaction: content.interaction as InteractionResult, text };
}
