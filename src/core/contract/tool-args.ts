/**
 * The tool names of `sess-mcp-tools/6` (and the five of `/5`) and the TypeScript types of each tool's validated
 * arguments. The valibot schemas of `schemas.ts` produce exactly these types
 * (`test/core/types.test.ts` proves it).
 *
 * Types and the one list of tool names only: no validation happens here (`validate.ts`).
 */
import type { ListState } from '../model/record.js';
import type { Surface } from '../model/surface.js';

/** The tools of `sess-mcp-tools/6`. */
export type ToolName =
  | 'sess_request'
  | 'sess_response'
  | 'sess_publish'
  | 'sess_complete'
  | 'sess_ask'
  | 'sess_list'
  | 'sess_withdraw';

/** Every tool name, in the order `tools/list` shows them. */
export const TOOL_NAMES: readonly ToolName[] = Object.freeze([
  'sess_request',
  'sess_response',
  'sess_publish',
  'sess_complete',
  'sess_ask',
  'sess_list',
  'sess_withdraw',
] as const);

/** The five tools of `sess-mcp-tools/5`, in `tools/list` order: what a server lists on request. */
export const TOOLS_V5: readonly ToolName[] = Object.freeze([
  'sess_request',
  'sess_response',
  'sess_publish',
  'sess_complete',
  'sess_ask',
] as const);

/** `sess_request`: create an interaction. */
export interface RequestArgs {
  interaction: Surface;
  /** Whole seconds ≥ 30. */
  expires_in?: number;
}

/** `sess_response`: wait for and read the answer. */
export interface ResponseArgs {
  handle: string;
  /** ≥ 1. */
  revision: number;
  /** 0–45 000 ms. */
  wait_ms?: number;
}

/** `sess_publish`: show a follow-up Surface after an answer. */
export interface PublishArgs {
  handle: string;
  expected_revision: number;
  response_event_id: string;
  interaction: Surface;
}

/** `sess_complete`: tell the person's page that the agent has the answer. */
export interface CompleteArgs {
  handle: string;
  expected_revision: number;
  response_event_id: string;
}

/** The kinds of a `sess_ask` field. */
export type AskFieldType = 'text' | 'number' | 'integer' | 'boolean' | 'choice' | 'multi_choice' | 'rating';

/** A `choice` / `multi_choice` option: a label (also its ID) or `{ id, label }`. */
export type AskOption = string | { id: string; label: string };

/** What every `sess_ask` field has. */
export interface AskFieldBase {
  /** The key of this value in the answer. */
  name: string;
  label: string;
  /** Help, one hint. */
  description?: string;
  required?: boolean;
}

/** Free text; `min`/`max` bound its length in code points. */
export interface AskTextField extends AskFieldBase {
  type: 'text';
  multiline?: boolean;
  min?: number;
  max?: number;
  value?: string;
}

/** A number or a whole number within `min`..`max`. */
export interface AskNumberField extends AskFieldBase {
  type: 'number' | 'integer';
  min?: number;
  max?: number;
  value?: number;
}

/** Yes or no. */
export interface AskBooleanField extends AskFieldBase {
  type: 'boolean';
  value?: boolean;
}

/** One of `options`. */
export interface AskChoiceField extends AskFieldBase {
  type: 'choice';
  options: AskOption[];
  /** The preselected option ID. */
  value?: string;
}

/** Any of `options`; `min`/`max` bound how many. */
export interface AskMultiChoiceField extends AskFieldBase {
  type: 'multi_choice';
  options: AskOption[];
  min?: number;
  max?: number;
  value?: string[];
}

/** A rating from `min` (default 1) to `max` (default 5), within 0..10. */
export interface AskRatingField extends AskFieldBase {
  type: 'rating';
  min?: number;
  max?: number;
  value?: number;
}

/** One `sess_ask` field. */
export type AskField =
  | AskTextField
  | AskNumberField
  | AskBooleanField
  | AskChoiceField
  | AskMultiChoiceField
  | AskRatingField;

/** Advanced: many respondents through one link (a Sess Ask). */
export interface AskRespondentsArgs {
  max: number;
  name?: boolean;
  expires_in?: number;
  respondent_expires_in?: number;
}

/** `sess_ask`: a question and 1–12 simple fields, turned into an ordinary Surface. */
export interface AskArgs {
  question: string;
  fields: AskField[];
  details?: string;
  submit_label?: string;
  expires_in?: number;
  respondents?: AskRespondentsArgs;
}

/**
 * `sess_list`: what this caller has (from the local records only), or with `handle` one of them.
 * `handle` stands alone: `state`, `limit` and `cursor` only apply to a listing.
 */
export interface ListArgs {
  /** Only records in this public state. */
  state?: ListState;
  /** 1–100 items per page (default 20). */
  limit?: number;
  /** The `next_cursor` of the previous page, exactly as returned. */
  cursor?: string;
  /** Inspect this one interaction instead of listing. */
  handle?: string;
}

/** `sess_withdraw`: take back a question that has no answer yet (or close an Ask). */
export interface WithdrawArgs {
  handle: string;
  /** The current revision of the Session; 1 for an Ask. */
  expected_revision: number;
  /** What the person's page shows, at most 160 code points. */
  reason?: string;
}

/** The validated arguments of each tool. */
export interface ToolArgs {
  sess_request: RequestArgs;
  sess_response: ResponseArgs;
  sess_publish: PublishArgs;
  sess_complete: CompleteArgs;
  sess_ask: AskArgs;
  sess_list: ListArgs;
  sess_withdraw: WithdrawArgs;
}
