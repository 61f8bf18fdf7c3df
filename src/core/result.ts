/**
 * The result envelope of every tool of `sess-mcp-tools/5`: `{ interaction: {...} }` in
 * `structuredContent` and the same JSON as text, with the few lines for the agent put in
 * front of it; and the tool-error envelope `{ error: {...} }` with `isError: true`.
 *
 * Plain data shaped like an MCP `CallToolResult`, without importing the MCP SDK. It decides no
 * state: the engine says what happened; this module only writes it down.
 */
import { type ErrorCode, isSessMcpError, type ToolErrorObject } from './errors.js';
import type { ToolName } from './schemas.js';
import type { JsonValue } from './surface.js';

/**
 * The `interaction.state` a tool result reports; `withdrawn` once `sess_withdraw` took the question
 * back before it was answered (final; an Ask it closed reports `closed`).
 */
export type InteractionResultState =
  | 'waiting'
  | 'needs_resume'
  | 'answered'
  | 'completed'
  | 'expired'
  | 'closed'
  | 'withdrawn';

/** A verified answer, as `sess_response` returns it in state `answered`. */
export interface ResponseResult {
  eventId: string;
  revision: number;
  action: string;
  values: Record<string, JsonValue>;
  submittedAt: string;
  verified: true;
  actorAssurance: 'link_holder';
}

/** One respondent's verified answer to an Ask. */
export interface AskAnswerResult {
  respondentId: string;
  name?: string;
  action: string;
  values: Record<string, JsonValue>;
  submittedAt: string;
  verified: true;
  actorAssurance: 'link_holder';
}

/** An Ask (`sess_ask` with `respondents`): whether it is open, its counts and answers so far. */
export interface AskResult {
  id: string;
  open: boolean;
  max: number;
  started: number;
  answered: number;
  answers: AskAnswerResult[];
}

/** `structuredContent.interaction` of every successful tool result. */
export interface InteractionResult {
  handle: string;
  revision: number;
  state: InteractionResultState;
  /** The Sess link: a bearer capability, returned only by `sess_request` and `sess_ask`. */
  humanUrl?: string;
  expiresAt?: string;
  response?: ResponseResult;
  ask?: AskResult;
}

/** An MCP `CallToolResult` as plain data. */
export interface ToolResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Lets the value stand where the MCP SDK expects its own result type. */
  [key: string]: unknown;
}

/** The first line of a `sess_request` / `sess_ask` result, before the link. */
export const SHOW_LINK_PREFIX = 'Show the person this link now: ';

/** The second line of a `sess_request` / `sess_ask` result. */
export const THEN_CALL_RESPONSE_LINE = 'Then call sess_response.';

/**
 * The line in front of a `sess_response` result in state `waiting` or `needs_resume`. The server
 * keeps no count; the host does.
 */
export const REWAIT_LINE =
  'No answer yet. Call sess_response again with the same handle and revision, up to three times after ' +
  'your first call; then tell the person the form is still open and ask them to say continue once they ' +
  'have answered.';

/**
 * The re-wait line of an Ask (`interaction.ask` present) that is still `waiting`: answers so far are
 * already in the result, so it does not say "no answer yet"; the three-calls rule is the same.
 */
export const ASK_REWAIT_LINE =
  'The Ask is still open; the answers so far are in interaction.ask. To collect more, call sess_response ' +
  'again with the same handle and revision, up to three times after your first call; then ask the ' +
  'person to say continue once more people have answered.';

/**
 * The code a thrown value that is not a `SessMcpError` is reported as. Such a value is a defect or a
 * broken store; the owner has to look, so it is not retryable.
 */
export const INTERNAL_ERROR_CODE: ErrorCode = 'STATE_STORE_ERROR';

/** The fixed message of {@link INTERNAL_ERROR_CODE}; the original message is never shown. */
export const INTERNAL_ERROR_MESSAGE =
  'The server failed unexpectedly; nothing more is known. Do not retry; ask the owner to check the server.';

/** Copies only the defined, known properties, in a fixed order. */
function cleanInteraction(result: InteractionResult): InteractionResult {
  const out: InteractionResult = { handle: result.handle, revision: result.revision, state: result.state };
  if (result.humanUrl !== undefined) out.humanUrl = result.humanUrl;
  if (result.expiresAt !== undefined) out.expiresAt = result.expiresAt;
  if (result.response !== undefined) out.response = result.response;
  if (result.ask !== undefined) out.ask = result.ask;
  return out;
}

/**
 * A successful tool result: `structuredContent = { interaction }` and the same JSON as text. A
 * `sess_request` / `sess_ask` text begins with "Show the person this link now: <humanUrl>" and
 * "Then call sess_response."; a `sess_response` text in state `waiting` or `needs_resume` begins
 * with {@link REWAIT_LINE} ({@link ASK_REWAIT_LINE} for an Ask); each is followed by a blank line. Never `isError`, even while waiting.
 * For example, `toolSuccess('sess_response', { handle, revision: 1, state: 'waiting' })` is the
 * result of a wait that ended with nothing new.
 */
export function toolSuccess(tool: ToolName, result: InteractionResult): ToolResult {
  const interaction = cleanInteraction(result);
  const json = JSON.stringify({ interaction });
  let text = json;
  if ((tool === 'sess_request' || tool === 'sess_ask') && interaction.humanUrl !== undefined) {
    text = `${SHOW_LINK_PREFIX}${interaction.humanUrl}\n${THEN_CALL_RESPONSE_LINE}\n\n${json}`;
  } else if (
    tool === 'sess_response' &&
    (interaction.state === 'waiting' || interaction.state === 'needs_resume')
  ) {
    text = `${interaction.ask === undefined ? REWAIT_LINE : ASK_REWAIT_LINE}\n\n${json}`;
  }
  return { content: [{ type: 'text', text }], structuredContent: { interaction } };
}

/** The wire form of any thrown value: a `SessMcpError` as itself, anything else as a fixed error. */
export function toErrorObject(error: unknown): ToolErrorObject {
  if (isSessMcpError(error)) {
    return typeof error.toObject === 'function'
      ? error.toObject()
      : { code: error.code, message: error.message, retryable: error.retryable === true };
  }
  return { code: INTERNAL_ERROR_CODE, message: INTERNAL_ERROR_MESSAGE, retryable: false, reason: 'internal' };
}

/**
 * A tool error: `isError: true`, `structuredContent = { error }`, text = the JSON of `{ error }`.
 * A thrown value that is not a `SessMcpError` becomes {@link INTERNAL_ERROR_CODE} with a fixed
 * message; its own message (which may hold secrets) is never shown.
 */
export function toolError(error: unknown): ToolResult {
  const body = { error: toErrorObject(error) };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}
