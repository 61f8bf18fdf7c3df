/**
 * What the local Sess runtime's API answers with: an {@link ApiFailure} (the wire error body of
 * `docs/sess-api.md`, thrown by the model and the routes alike) and an {@link ApiResult} (status,
 * JSON text, extra headers), with the two helpers that turn either into a result.
 *
 * It sends nothing (`http-io.ts` does) and decides no rule.
 */

/** An error the API answers with. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly field?: string;
  readonly limit?: number;
  readonly length?: number;

  constructor(
    status: number,
    code: string,
    message: string,
    extra: { field?: string; limit?: number; length?: number } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    if (extra.field !== undefined) this.field = extra.field;
    if (extra.limit !== undefined) this.limit = extra.limit;
    if (extra.length !== undefined) this.length = extra.length;
  }

  /** The wire error body. */
  body(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.field !== undefined) error.field = this.field;
    if (this.limit !== undefined) error.limit = this.limit;
    if (this.length !== undefined) error.length = this.length;
    return { error };
  }
}

/** A response the API layer sends (status, JSON body text, extra headers). */
export interface ApiResult {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** The result of a failure. */
export function failureResult(e: ApiFailure, headers: Record<string, string> = {}): ApiResult {
  return { status: e.status, body: JSON.stringify(e.body()), headers };
}

/** A JSON result. */
export function okResult(status: number, body: unknown, headers: Record<string, string> = {}): ApiResult {
  return { status, body: JSON.stringify(body), headers };
}

/** The result of anything a handler threw: its failure, or a generic `500` that says nothing more. */
export function thrownResult(e: unknown): ApiResult {
  return e instanceof ApiFailure
    ? failureResult(e)
    : failureResult(new ApiFailure(500, 'internal', 'The local Sess runtime failed unexpectedly.'));
}
