/**
 * The result envelope of every tool of `sess-mcp-tools/6`: `{ interaction: {...}, next }` in
 * `structuredContent` and the JSON of `{ interaction }` as text, with the few lines for the agent
 * put in front of it; and the tool-error envelope `{ error: {...}, next }` with `isError: true`.
 * `next` is one sentence saying what to do now: some hosts hand the model `structuredContent`
 * alone and drop the text, so the guidance of the text's leading lines travels in it too.
 *
 * Plain data shaped like an MCP `CallToolResult`, without importing the MCP SDK. It decides no
 * state: the engine says what happened; this module only writes it down.
 */

import type { ListState } from '../model/record.js';
import type { JsonValue, Surface } from '../model/surface.js';
import {
  ERROR_TABLE,
  type ErrorClass,
  type ErrorCode,
  isSessMcpError,
  type ToolErrorObject,
} from './errors.js';
import type { ToolName } from './schemas.js';

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
 * `next` of a `sess_request` / `sess_ask` result: the two leading lines of its text, pointing at
 * `interaction.humanUrl` instead of repeating the link.
 */
export const SHOW_LINK_NEXT =
  'Show the person the link in interaction.humanUrl now, then call sess_response with ' +
  'interaction.handle and interaction.revision to wait for the answer.';

/**
 * What a stdio result in state `waiting` or `needs_resume` carries beside `interaction` and `next`:
 * a shell command that blocks until the interaction leaves `waiting` and then prints the one tool
 * call to make. An agent that can run a command in the background runs it and ends its turn; the
 * command's exit wakes it. Never a link, an answer or a key.
 */
export interface WakeHint {
  /** POSIX shell, every word single-quoted: run it as it is, in the background. */
  command: string;
}

/**
 * `next` of a `sess_response` result still `waiting` (or `needs_resume`) that carries
 * `wake.command`: the wake sequence, then the bounded re-waits for an agent that cannot run a
 * command in the background.
 */
export const WAKE_NEXT =
  'Still waiting. If you can run a command in the background, start wake.command in the background now ' +
  '(never in the foreground), tell the person you will carry on when they answer, and end your turn; do ' +
  'not also call sess_response again or schedule a re-check. When the command exits, make the call it ' +
  'printed. Start at most one wake command per handle. Otherwise, call sess_response again with the same ' +
  'handle and revision, up to three times after your first call; then schedule a re-check if you can, else ' +
  'ask the person to say continue once they have answered.';

/** `next` of a `sess_publish` result: the follow-up is on the same page, so wait for its answer. */
export const PUBLISHED_NEXT =
  'The person sees the follow-up on the page they already have open: call sess_response with ' +
  'interaction.handle and this interaction.revision to wait for the answer.';

/** `next` of a result in state `answered`: the rule after an answer, with the values to pass. */
export const ANSWERED_NEXT =
  'Call sess_complete next with expected_revision = interaction.revision and response_event_id = ' +
  'interaction.response.eventId, unless you have a follow-up question for the person; only to show a ' +
  'follow-up, call sess_publish instead. Validate interaction.response.values before acting on them.';

/** `next` of a result in state `completed`. */
export const COMPLETED_NEXT =
  "Done: the person's page shows that you have their answer. Nothing more to call for this handle.";

/** `next` of a result in state `expired`. */
export const EXPIRED_NEXT =
  'The link closed for good with no answer and nothing was completed: do not call sess_response for ' +
  'this handle again. If the decision is still needed, ask again with sess_request or sess_ask.';

/** `next` of an Ask in state `closed`. */
export const ASK_CLOSED_NEXT =
  'The Ask is closed: interaction.ask holds every answer and no more can come. Validate the answers ' +
  'before acting on them.';

/** `next` of a `sess_withdraw` or `sess_response` result in state `withdrawn`. */
export const WITHDRAWN_NEXT =
  "The question is withdrawn: the person's page says so and takes no answer. Nothing more to call for " +
  'this handle; to ask again, call sess_request or sess_ask.';

/** `next` of a `sess_withdraw` that closed an Ask: the answers given stay readable. */
export const ASK_WITHDRAWN_NEXT =
  'The Ask is closed: no one new can start and no more answers can come. To read the answers already ' +
  'given, call sess_response with interaction.handle and interaction.revision.';

/** `next` of a state this module has no sentence of its own for. */
const STATE_NEXT = 'Read interaction.state; the sess_response description says what each state means.';

/** `next` of a `sess_list` result; with `more`, the page is not the last. */
export function listNext(more: boolean): string {
  const read =
    "To read an answer, call sess_response with an item's handle and revision; to take a question back, call sess_withdraw.";
  return more ? `${read} For the next page, call sess_list again with cursor = next_cursor.` : read;
}

/**
 * The one sentence `next` of a successful result: what the agent does now. It names fields of the
 * result, never their values, so it holds no link and no answer.
 */
export function successNext(tool: ToolName, interaction: InteractionResult): string {
  switch (interaction.state) {
    case 'waiting':
    case 'needs_resume':
      if ((tool === 'sess_request' || tool === 'sess_ask') && interaction.humanUrl !== undefined) {
        return SHOW_LINK_NEXT;
      }
      if (tool === 'sess_response') return interaction.ask === undefined ? REWAIT_LINE : ASK_REWAIT_LINE;
      return PUBLISHED_NEXT;
    case 'answered':
      return ANSWERED_NEXT;
    case 'completed':
      return COMPLETED_NEXT;
    case 'expired':
      return EXPIRED_NEXT;
    case 'closed':
      return tool === 'sess_withdraw' ? ASK_WITHDRAWN_NEXT : ASK_CLOSED_NEXT;
    case 'withdrawn':
      return WITHDRAWN_NEXT;
    default:
      return STATE_NEXT;
  }
}

/** `next` of an error, by its class; a class whose advice depends on `retryable` has two. */
export const ERROR_NEXT: Readonly<Record<ErrorClass, string | { retryable: string; not: string }>> = {
  invalid_arguments:
    'Fix the arguments as error.message says (error.field points at the value), then call again.',
  not_found:
    'Do not retry: this handle is not known here (another profile, origin or key). Ask again with a new ' +
    'sess_request or sess_ask if you still need the decision.',
  conflict: 'Nothing was sent: do what error.message says.',
  create_rejected:
    'No Session exists and the same call cannot succeed: change it as error.message says, or tell the person.',
  create_unknown:
    'Do not retry: a Session may exist. Tell the person that the owner has to resolve this interaction.',
  created_not_saved:
    'Do not repeat the call: a Session exists but this server could not keep it. Tell the person that the ' +
    'owner has to resolve it.',
  outcome_unknown: 'Repeat the identical call (the same tool and arguments) to learn the outcome.',
  mutation_rejected: 'Do not retry: tell the person that the owner has to resolve this interaction.',
  verification_failed:
    'Do not retry and do not act on any answer: tell the person that the owner has to resolve this interaction.',
  blocked: 'Do not retry: tell the person that the owner has to resolve this interaction.',
  unavailable: 'Nothing changed: call again later with the same arguments.',
  configuration: 'Do not retry: tell the person that the owner has to fix the server configuration.',
  store: {
    retryable: 'A transient failure: call again with the same arguments.',
    not: 'Do not retry: tell the person that the owner has to look at the server.',
  },
};

/**
 * `next` of the few codes whose advice is not their class's: an answer that came before a withdraw
 * is read, not retried, a Sess without withdrawal is not a passing outage, and a caller at its
 * quota frees a place before it asks again.
 */
export const CODE_NEXT: Readonly<Partial<Record<ErrorCode, string>>> = {
  ANSWER_ARRIVED:
    'Do not withdraw: call sess_response with this handle and its revision, which returns the answer; then ' +
    'call sess_complete as usual.',
  WITHDRAW_UNAVAILABLE:
    'Do not retry: the question stays open. Tell the person in the chat that you no longer need an answer, ' +
    'or keep waiting with sess_response.',
  PRINCIPAL_QUOTA_REACHED:
    'Nothing was created: you already hold as many open interactions as this server allows. Complete one ' +
    'that was answered (sess_complete) or withdraw one you no longer need (sess_withdraw), then ask again.',
};

/** The one sentence `next` of an error result: what the agent does now, by the error's class. */
export function errorNext(error: ToolErrorObject): string {
  const own = CODE_NEXT[error.code];
  if (own !== undefined) return own;
  const spec = ERROR_TABLE[error.code] as { class: ErrorClass } | undefined;
  const advice = ERROR_NEXT[spec?.class ?? 'store'];
  if (typeof advice === 'string') return advice;
  return error.retryable ? advice.retryable : advice.not;
}

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
 * A successful tool result: `structuredContent = { interaction, next }` ({@link successNext}) and
 * the JSON of `{ interaction }` as text, as `sess-mcp-tools/5` writes it (the `/6` adapters put
 * `next` in front of the JSON instead: {@link withNextInText}). A
 * `sess_request` / `sess_ask` text begins with "Show the person this link now: <humanUrl>" and
 * "Then call sess_response."; a `sess_response` text in state `waiting` or `needs_resume` begins
 * with {@link REWAIT_LINE} ({@link ASK_REWAIT_LINE} for an Ask); each is followed by a blank line. Never `isError`, even while waiting.
 * For example, `toolSuccess('sess_response', { handle, revision: 1, state: 'waiting' })` is the
 * result of a wait that ended with nothing new.
 */
export function toolSuccess(tool: ToolName, result: InteractionResult, wake?: WakeHint): ToolResult {
  const interaction = cleanInteraction(result);
  const hint = wake !== undefined && wakes(tool, interaction) ? { command: wake.command } : undefined;
  const json = JSON.stringify(hint === undefined ? { interaction } : { interaction, wake: hint });
  let text = json;
  if ((tool === 'sess_request' || tool === 'sess_ask') && interaction.humanUrl !== undefined) {
    text = `${SHOW_LINK_PREFIX}${interaction.humanUrl}\n${THEN_CALL_RESPONSE_LINE}\n\n${json}`;
  } else if (
    tool === 'sess_response' &&
    (interaction.state === 'waiting' || interaction.state === 'needs_resume')
  ) {
    const line =
      hint !== undefined ? WAKE_NEXT : interaction.ask === undefined ? REWAIT_LINE : ASK_REWAIT_LINE;
    text = `${line}\n\n${json}`;
  }
  const next = hint !== undefined && tool === 'sess_response' ? WAKE_NEXT : successNext(tool, interaction);
  return {
    content: [{ type: 'text', text }],
    structuredContent: hint === undefined ? { interaction, next } : { interaction, next, wake: hint },
  };
}

/**
 * True when a result of `tool` in this state carries `wake`: `sess_request`, `sess_ask` and
 * `sess_response` while `waiting` or `needs_resume`.
 */
export function wakes(tool: ToolName, interaction: InteractionResult): boolean {
  return (
    (tool === 'sess_request' || tool === 'sess_ask' || tool === 'sess_response') &&
    (interaction.state === 'waiting' || interaction.state === 'needs_resume')
  );
}

/**
 * One interaction as `sess_list` shows it, from the local record only: never the link and never
 * answer values (an answer is returned only by `sess_response`, after verification).
 */
export interface ListItem {
  handle: string;
  /** The current revision (1 for an Ask and for a create not yet confirmed). */
  revision: number;
  /** The public state; never an internal record kind. */
  state: ListState;
  /** For `needs_owner`: the code every other tool answers this handle with. */
  code?: ErrorCode;
  /** `ask` for an Ask (`sess_ask` with `respondents`), else `session`. */
  kind: 'session' | 'ask';
  /** The Surface's title; `null` for a record written before titles were kept. */
  title: string | null;
  createdAt: string;
  updatedAt: string;
  /** When the link (or Ask) expires, as Sess last confirmed it; absent when the record has none. */
  expiresAt?: string;
  /** For an Ask, the most respondents it takes (where the record holds it). */
  max?: number;
  /**
   * Only when inspecting one `handle`: the agent's own current Surface (what the person is
   * looking at), while the record still holds it.
   */
  surface?: Surface;
}

/** `structuredContent` of a `sess_list` result. */
export interface ListResult {
  /** In listing order; exactly one item when inspecting a `handle`. */
  items: ListItem[];
  /** Pass it as `cursor` (with the same `state`) for the next page; absent on the last page. */
  next_cursor?: string;
}

/** Copies only the defined, known properties of a listing item, in a fixed order. */
function cleanItem(item: ListItem): ListItem {
  const out: ListItem = { handle: item.handle, revision: item.revision, state: item.state } as ListItem;
  if (item.code !== undefined) out.code = item.code;
  out.kind = item.kind;
  out.title = item.title;
  out.createdAt = item.createdAt;
  out.updatedAt = item.updatedAt;
  if (item.expiresAt !== undefined) out.expiresAt = item.expiresAt;
  if (item.max !== undefined) out.max = item.max;
  if (item.surface !== undefined) out.surface = item.surface;
  return out;
}

/**
 * A successful `sess_list` result: `structuredContent = { items, next_cursor?, next }`
 * ({@link listNext}) and the JSON of `{ items, next_cursor? }` as text. Never `isError`, even when
 * nothing is listed.
 */
export function toolListSuccess(result: ListResult): ToolResult {
  const body: ListResult = { items: result.items.map(cleanItem) };
  if (result.next_cursor !== undefined) body.next_cursor = result.next_cursor;
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: { ...body, next: listNext(body.next_cursor !== undefined) },
  };
}

/**
 * The text of a `sess-mcp-tools/6` result (a success, a listing or a tool error): its `next`, a
 * blank line, then the same compact JSON the `/5` text carries, so a host that hands its model
 * only the text reads the same guidance as one that hands it `structuredContent`. The `/5` text
 * is the JSON, or a few lines, a blank line and the JSON; `JSON.stringify` never writes a line
 * break, so the JSON is what follows the last blank line. A result without a `next` is returned
 * as it is.
 */
export function withNextInText(result: ToolResult): ToolResult {
  const next = result.structuredContent?.next;
  const text = result.content[0]?.text;
  if (typeof next !== 'string' || text === undefined) return result;
  const gap = text.lastIndexOf('\n\n');
  const json = gap < 0 ? text : text.slice(gap + 2);
  return { ...result, content: [{ type: 'text', text: `${next}\n\n${json}` }] };
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
 * A tool error: `isError: true`, `structuredContent = { error, next }` ({@link errorNext}), text =
 * the JSON of `{ error }`.
 * A thrown value that is not a `SessMcpError` becomes {@link INTERNAL_ERROR_CODE} with a fixed
 * message; its own message (which may hold secrets) is never shown.
 */
export function toolError(error: unknown): ToolResult {
  const body = { error: toErrorObject(error) };
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: { ...body, next: errorNext(body.error) },
    isError: true,
  };
}
