/**
 * The checks of a request to the local Sess runtime's API, as `docs/sess-api.md` states them:
 * the Idempotency-Key and If-Match headers, the wait query, lifetimes, Surfaces (shape and the
 * rules that span values) and a withdraw's or close's reason. A failed check is an
 * {@link ApiFailure} with the status, code and `field` the wire gives it.
 *
 * Checks only: it knows no key or workspace (`api-endpoints.ts` does) and changes no state (the
 * model does).
 */
import type { IncomingMessage } from 'node:http';
import * as v from 'valibot';
import type { SessionStatus } from '../../core/contract/ports.js';
import { WAIT_CEILING_MS } from '../../core/contract/rules.js';
import type { Surface } from '../../core/model/surface.js';
import {
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_WITHDRAW_REASON_LENGTH,
  MIN_EXPIRES_IN,
  SESSION_STATUSES,
  SurfaceSchema,
} from '../../sess/wire.js';
import { checkSurfaceRules } from '../model/surface-rules.js';
import { codePoints, escapePointer } from '../model/text.js';
import { ApiFailure } from './api-failure.js';

function pointer(path: readonly { key: unknown }[] | undefined, base = ''): string {
  if (!path || path.length === 0) return base;
  return base + path.map((p) => `/${escapePointer(String(p.key))}`).join('');
}

/** The refusal of the first valibot issue, its `field` a JSON pointer under `base`. */
export function invalid(issues: readonly v.BaseIssue<unknown>[], base = ''): ApiFailure {
  const issue = issues[0]!;
  const field = pointer(issue.path as { key: unknown }[] | undefined, base) || '/';
  return new ApiFailure(422, 'invalid_request', `${field}: ${issue.message}`, { field });
}

/** The request's Idempotency-Key: 1–255 printable ASCII characters without spaces. */
export function idempotencyKey(req: IncomingMessage): string {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || key.length === 0) {
    throw new ApiFailure(400, 'invalid_request', 'The Idempotency-Key header is required.');
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiFailure(
      400,
      'invalid_request',
      `The Idempotency-Key header must be 1–${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without spaces.`,
    );
  }
  return key;
}

/** The revision If-Match names: `"<revision>"`, an integer from 1. */
export function ifMatch(req: IncomingMessage): number {
  const raw = req.headers['if-match'];
  const m = typeof raw === 'string' ? /^\s*(?:"(\d{1,15})"|(\d{1,15}))\s*$/.exec(raw) : null;
  const n = m ? Number(m[1] ?? m[2]) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ApiFailure(
      400,
      'invalid_request',
      'The If-Match header must be the current revision, as "<revision>".',
    );
  }
  return n;
}

/** Refuses a lifetime under the minimum with 422 naming `field`. */
export function checkExpiresIn(value: unknown, field: string): void {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value < MIN_EXPIRES_IN) {
    throw new ApiFailure(
      422,
      'invalid_request',
      `${field} is ${value} seconds; the minimum is ${MIN_EXPIRES_IN}.`,
      { field, limit: MIN_EXPIRES_IN, length: value },
    );
  }
}

/** A Surface checked by shape and by the rules that span values, or a 422 under `base`. */
export function parseSurface(value: unknown, base: string): Surface {
  const parsed = v.safeParse(SurfaceSchema, value);
  if (!parsed.success) throw invalid(parsed.issues, base);
  const surface = parsed.output as Surface;
  const violation = checkSurfaceRules(surface, base);
  if (violation) {
    const { field, message, ...rest } = violation;
    throw new ApiFailure(422, 'invalid_request', message, { field, ...rest });
  }
  return surface;
}

/** The `reason` of a withdraw or close: at most {@link MAX_WITHDRAW_REASON_LENGTH} code points. */
export function checkReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  const length = codePoints(reason);
  if (length > MAX_WITHDRAW_REASON_LENGTH) {
    throw new ApiFailure(
      422,
      'invalid_request',
      `/reason is ${length} characters; at most ${MAX_WITHDRAW_REASON_LENGTH}.`,
      { field: '/reason', limit: MAX_WITHDRAW_REASON_LENGTH, length },
    );
  }
  return reason;
}

/** The `wait` query: revision ≥ 1, a wire status, `timeout_ms` from 0 to the wait ceiling. */
export function waitQuery(q: URLSearchParams): { revision: number; status: SessionStatus; timeout: number } {
  const revision = Number(q.get('revision'));
  const status = q.get('status') as SessionStatus;
  const timeout = Number(q.get('timeout_ms'));
  if (!/^\d{1,15}$/.test(q.get('revision') ?? '') || !Number.isSafeInteger(revision) || revision < 1) {
    throw new ApiFailure(400, 'invalid_request', 'The query parameter revision must be an integer ≥ 1.');
  }
  if (!(SESSION_STATUSES as readonly string[]).includes(status)) {
    throw new ApiFailure(
      400,
      'invalid_request',
      `The query parameter status must be one of ${SESSION_STATUSES.join(', ')}.`,
    );
  }
  if (!/^\d{1,6}$/.test(q.get('timeout_ms') ?? '') || timeout > WAIT_CEILING_MS) {
    throw new ApiFailure(
      400,
      'invalid_request',
      `The query parameter timeout_ms must be an integer from 0 to ${WAIT_CEILING_MS}.`,
    );
  }
  return { revision, status, timeout };
}
