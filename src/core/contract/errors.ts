/**
 * The one error table of `sess-mcp-tools/6`: every code a tool can return, its class and its
 * retry rule. Tool results, docs and tests are derived from {@link ERROR_TABLE}; nothing else
 * lists codes.
 *
 * This module does not decide *when* an error happens (the engine and the validators do) and
 * holds no transport knowledge: an error crosses the wire as the plain {@link ToolErrorObject}.
 */

/** The error classes shared by Sess adapters. */
export type ErrorClass =
  | 'invalid_arguments'
  | 'not_found'
  | 'conflict'
  | 'create_rejected'
  | 'create_unknown'
  | 'created_not_saved'
  | 'outcome_unknown'
  | 'mutation_rejected'
  | 'verification_failed'
  | 'blocked'
  | 'unavailable'
  | 'configuration'
  | 'store';

/**
 * How a caller may retry: `never` (the same call cannot succeed), `always` (repeat later or the
 * identical call), `fix_arguments`, `owner` (after the owner fixes configuration or a record), or
 * `when_flagged` (only when the error's own `retryable` is true).
 */
export type RetryRule = 'never' | 'always' | 'fix_arguments' | 'owner' | 'when_flagged';

interface ErrorSpec {
  readonly class: ErrorClass;
  readonly retry: RetryRule;
  /** What the caller should do, as written in `docs/tools.md`. */
  readonly guidance: string;
}

/** Every error code with its class and retry rule. The order is the order of the docs table. */
export const ERROR_TABLE = {
  INVALID_ARGUMENTS: { class: 'invalid_arguments', retry: 'fix_arguments', guidance: 'Fix the arguments' },
  HANDLE_NOT_FOUND: { class: 'not_found', retry: 'never', guidance: 'No (other profile, origin or key)' },
  BINDING_MISMATCH: { class: 'not_found', retry: 'never', guidance: 'No (other profile, origin or key)' },
  REVISION_MISMATCH: { class: 'conflict', retry: 'never', guidance: 'Follow the message; nothing was sent' },
  RESPONSE_MISMATCH: { class: 'conflict', retry: 'never', guidance: 'Follow the message; nothing was sent' },
  PENDING_MUTATION_DIFFERS: {
    class: 'conflict',
    retry: 'never',
    guidance: 'Follow the message; nothing was sent',
  },
  MUTATION_PENDING: { class: 'conflict', retry: 'never', guidance: 'Follow the message; nothing was sent' },
  INVALID_STATE: { class: 'conflict', retry: 'never', guidance: 'Follow the message; nothing was sent' },
  ANSWER_ARRIVED: {
    class: 'conflict',
    retry: 'never',
    guidance: 'No; an answer arrived first. Call sess_response, which returns it',
  },
  CREATE_REJECTED: { class: 'create_rejected', retry: 'never', guidance: 'No; no Session exists' },
  PLAN_LIMIT_REACHED: {
    class: 'create_rejected',
    retry: 'never',
    guidance: 'No; no Session exists. The workspace reached a limit of its plan',
  },
  PRINCIPAL_QUOTA_REACHED: {
    class: 'create_rejected',
    retry: 'never',
    guidance: 'No; no Session exists. This caller holds as many open interactions as the server allows',
  },
  CREATE_OUTCOME_UNKNOWN: { class: 'create_unknown', retry: 'owner', guidance: 'No; owner resolution' },
  CREATED_NOT_SAVED: { class: 'created_not_saved', retry: 'never', guidance: 'No; a Session exists' },
  OUTCOME_UNKNOWN: { class: 'outcome_unknown', retry: 'always', guidance: 'Yes, repeat the identical call' },
  MUTATION_REJECTED: { class: 'mutation_rejected', retry: 'owner', guidance: 'No; owner resolution' },
  VERIFICATION_FAILED: { class: 'verification_failed', retry: 'owner', guidance: 'No; owner resolution' },
  RECOVERY_BLOCKED: { class: 'blocked', retry: 'owner', guidance: 'No; owner resolution' },
  SESS_UNAVAILABLE: { class: 'unavailable', retry: 'always', guidance: 'Yes, later; nothing changed' },
  WITHDRAW_UNAVAILABLE: {
    class: 'unavailable',
    retry: 'never',
    guidance: 'No; this Sess does not offer withdrawal. Nothing changed',
  },
  NOT_CONFIGURED: {
    class: 'configuration',
    retry: 'owner',
    guidance: 'After the owner fixes the configuration',
  },
  SESS_PROTOCOL_ERROR: {
    class: 'configuration',
    retry: 'owner',
    guidance: 'After the owner fixes the configuration',
  },
  STATE_STORE_ERROR: {
    class: 'store',
    retry: 'when_flagged',
    guidance: 'Only if `retryable` is true (a transient read/write failure)',
  },
  STATE_STORE_FULL: {
    class: 'store',
    retry: 'owner',
    guidance: 'No; finish or retire unfinished interactions first',
  },
} as const satisfies Record<string, ErrorSpec>;

/** A stable error code of `sess-mcp-tools/6`. */
export type ErrorCode = keyof typeof ERROR_TABLE;

/** Every code, in table order. */
export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

/** The class of a code. */
export function errorClassOf(code: ErrorCode): ErrorClass {
  return ERROR_TABLE[code].class;
}

/** The `retryable` flag a code carries by default (`when_flagged` codes decide per error). */
export function defaultRetryable(code: ErrorCode): boolean {
  return ERROR_TABLE[code].retry === 'always';
}

/** An error as it crosses the wire inside a tool result: data, never a stack trace. */
export interface ToolErrorObject {
  readonly code: ErrorCode;
  readonly message: string;
  readonly retryable: boolean;
  /** A JSON pointer into the tool arguments, for `INVALID_ARGUMENTS` and length refusals. */
  readonly field?: string;
  /** The limit that was exceeded. */
  readonly limit?: number;
  /** The measured length or size. */
  readonly length?: number;
  /** Why a record is blocked, for `RECOVERY_BLOCKED` and friends. A fixed word, never user data. */
  readonly reason?: string;
  /** The interaction state the handle is in, where that helps the caller. */
  readonly state?: string;
}

/** Details an error may carry besides its code and message. */
export interface SessMcpErrorDetails {
  retryable?: boolean;
  field?: string;
  limit?: number;
  length?: number;
  reason?: string;
  state?: string;
  cause?: unknown;
}

/**
 * The one error class of this package. Callers switch on {@link SessMcpError.code}.
 *
 * @example
 * ```ts source="examples/snippets/core.examples.ts#SessMcpError"
 * try {
 *   await engine.response({ handle, revision: 1 });
 * } catch (error) {
 *   if (error instanceof SessMcpError && error.code === 'SESS_UNAVAILABLE') retryLater();
 * }
 * ```
 */
export class SessMcpError extends Error {
  override readonly name = 'SessMcpError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly field?: string;
  readonly limit?: number;
  readonly length?: number;
  readonly reason?: string;
  readonly state?: string;

  constructor(code: ErrorCode, message: string, details: SessMcpErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.retryable = details.retryable ?? defaultRetryable(code);
    if (details.field !== undefined) this.field = details.field;
    if (details.limit !== undefined) this.limit = details.limit;
    if (details.length !== undefined) this.length = details.length;
    if (details.reason !== undefined) this.reason = details.reason;
    if (details.state !== undefined) this.state = details.state;
  }

  /** The wire form: `{ code, message, retryable, field?, limit?, length?, reason?, state? }`. */
  toObject(): ToolErrorObject {
    const out: { -readonly [K in keyof ToolErrorObject]: ToolErrorObject[K] } = {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
    };
    if (this.field !== undefined) out.field = this.field;
    if (this.limit !== undefined) out.limit = this.limit;
    if (this.length !== undefined) out.length = this.length;
    if (this.reason !== undefined) out.reason = this.reason;
    if (this.state !== undefined) out.state = this.state;
    return out;
  }
}

/** True for a {@link SessMcpError}, across realms and bundle copies. */
export function isSessMcpError(value: unknown): value is SessMcpError {
  return (
    value instanceof SessMcpError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'SessMcpError' &&
      typeof (value as { code?: unknown }).code === 'string' &&
      (value as { code: string }).code in ERROR_TABLE)
  );
}
