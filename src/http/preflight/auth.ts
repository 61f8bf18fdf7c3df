/**
 * The authentication stages: the host's `authenticate`, called exactly once with the request's
 * headers and no body, raced against the request deadline; what it returned checked as a
 * principal and kept as a snapshot; then the `requiredScopes`.
 *
 * It verifies no credential itself (the host's `authenticate` does) and never echoes what the
 * host returned or threw: every refusal is a fixed answer.
 */
import { SESS_ID_RULE } from '../../core/contract/rules.js';
import type { SessHttpPrincipal } from '../options.js';
import * as answer from '../responses.js';
import { type PreflightContext, type Refusal, refusal, requestOf } from './context.js';

/** How a call raced against the deadline ended. */
export type Raced<T> = { kind: 'value'; value: T } | { kind: 'threw' } | { kind: 'stopped' };

/**
 * Call `work(input)`: its outcome when it answered synchronously (a value, or a throw), or the
 * promise it returned, for {@link race}. Most hosts' `authenticate` answers synchronously; that
 * answer is taken as it is, with no listener on `stop` and no wait for the microtask queue.
 */
export function callNow<I, T>(
  work: (input: I) => T | PromiseLike<T>,
  input: I,
): Raced<T> | { kind: 'pending'; promise: PromiseLike<T> } {
  let value: T | PromiseLike<T>;
  try {
    value = work(input);
  } catch {
    return { kind: 'threw' };
  }
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    if (typeof (value as { then?: unknown }).then === 'function') {
      return { kind: 'pending', promise: value as PromiseLike<T> };
    }
  }
  return { kind: 'value', value: value as T };
}

/** Await `work` unless `stop` fires first; a late result or rejection is dropped. */
export function race<T>(work: PromiseLike<T>, stop: AbortSignal): Promise<Raced<T>> {
  if (stop.aborted) return Promise.resolve({ kind: 'stopped' });
  return new Promise((resolve) => {
    const onStop = () => resolve({ kind: 'stopped' });
    stop.addEventListener('abort', onStop, { once: true });
    Promise.resolve(work).then(
      (value) => {
        stop.removeEventListener('abort', onStop);
        resolve({ kind: 'value', value });
      },
      () => {
        stop.removeEventListener('abort', onStop);
        resolve({ kind: 'threw' });
      },
    );
  });
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** True when `value` has every field of a {@link SessHttpPrincipal} with the right type. */
export function isPrincipal(value: unknown): value is SessHttpPrincipal {
  return principalProblem(value) === undefined;
}

/** The identity fields of a principal, each a non-empty string. */
const PRINCIPAL_STRINGS = ['principalId', 'clientId', 'grantId', 'grantGeneration'] as const;

/**
 * The first field of `value` that a principal cannot have, with what it must be; `undefined` for
 * a principal. Names only: never a value, which may be a token's claim. `workspaceId` is a Sess
 * workspace id, checked against the one the API key belongs to at the first Sess call.
 */
export function principalProblem(value: unknown): { field: string; expected: string } | undefined {
  if (value === null || typeof value !== 'object') return { field: 'principal', expected: 'an object' };
  const p = value as Record<string, unknown>;
  if (!SESS_ID_RULE.test(p.workspaceId)) {
    return { field: 'workspaceId', expected: `a Sess workspace id, ${SESS_ID_RULE.text}` };
  }
  for (const field of PRINCIPAL_STRINGS) {
    if (!isNonEmptyString(p[field])) return { field, expected: 'a non-empty string' };
  }
  if (!Array.isArray(p.scopes) || !p.scopes.every((s) => typeof s === 'string')) {
    return { field: 'scopes', expected: 'an array of strings' };
  }
  if (typeof p.credential !== 'function') return { field: 'credential', expected: 'a function' };
  return undefined;
}

/** A snapshot of `given`: the binding of this request cannot change under it. */
function snapshot(given: SessHttpPrincipal): SessHttpPrincipal {
  return {
    workspaceId: given.workspaceId,
    principalId: given.principalId,
    clientId: given.clientId,
    grantId: given.grantId,
    grantGeneration: given.grantGeneration,
    scopes: [...given.scopes],
    credential: () => given.credential(),
  };
}

/** What `authenticate`'s outcome means: the principal's snapshot set on `ctx`, or a refusal. */
function principalFrom(
  ctx: PreflightContext,
  outcome: Raced<SessHttpPrincipal | undefined>,
): Refusal | undefined {
  if (outcome.kind === 'stopped') {
    return ctx.closing.aborted
      ? refusal(answer.handlerClosed(), 'http.closed')
      : refusal(answer.authenticationTimedOut(), 'http.authenticate_timeout');
  }
  if (outcome.kind === 'threw') return refusal(answer.authenticationFailed(), 'http.authenticate_failed');
  const given: unknown = outcome.value;
  if (given === undefined || given === null) {
    const presented = ctx.incoming.headers.has('authorization');
    const { requiredScopes, resourceMetadataUrl } = ctx.options;
    return refusal(
      answer.unauthenticated(presented, requiredScopes, resourceMetadataUrl),
      'http.unauthenticated',
    );
  }
  const problem = principalProblem(given);
  if (problem !== undefined) {
    return refusal(answer.authenticationFailed(), 'http.principal_invalid', true, problem);
  }
  ctx.principal = snapshot(given as SessHttpPrincipal);
  return undefined;
}

/**
 * Calls `authenticate` once and sets `ctx.principal`, or refuses: `401` without a principal, `500`
 * when it threw or returned something else, `503` when it did not answer before the deadline.
 */
export function authenticationStage(
  ctx: PreflightContext,
): Refusal | undefined | Promise<Refusal | undefined> {
  // `stop` cannot have fired before a synchronous answer: no timer or close() runs in between.
  const called = callNow(ctx.options.authenticate, requestOf(ctx));
  if (called.kind !== 'pending') return principalFrom(ctx, called);
  return race(called.promise, ctx.stop).then((outcome) => principalFrom(ctx, outcome));
}

/** Refuses a principal missing any of `requiredScopes` (`403 insufficient_scope`). */
export function scopeStage(ctx: PreflightContext): Refusal | undefined {
  const { requiredScopes, resourceMetadataUrl } = ctx.options;
  const scopes = ctx.principal?.scopes ?? [];
  if (requiredScopes.every((scope) => scopes.includes(scope))) return undefined;
  return refusal(answer.insufficientScope(requiredScopes, resourceMetadataUrl), 'http.insufficient_scope');
}
