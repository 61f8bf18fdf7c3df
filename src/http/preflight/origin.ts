/**
 * The Origin stage: a browser request whose `Origin` is not on `allowedOrigins` gets `403`. A
 * request without `Origin` (any non-browser client) passes.
 *
 * It does not check `Host` (`host.ts`) and does not normalise the allowlist (the option check
 * does, at construction).
 */
import { receivedValue } from '../../faces/visible.js';
import * as answer from '../responses.js';
import { type PreflightContext, type Refusal, refusal } from './context.js';

/** Is the request's `Origin` acceptable? Absent is; present must equal an allowed origin exactly. */
export function originAllowed(originHeader: string | null, allowedOrigins: ReadonlySet<string>): boolean {
  if (originHeader === null) return true;
  return allowedOrigins.has(originHeader.toLowerCase());
}

/**
 * Refuses a request with an `Origin` not allowed (`403`, `http.origin_rejected`, naming
 * `allowedOrigins` and the Origin received). The answer's body stays fixed words.
 */
export function originStage(ctx: PreflightContext): Refusal | undefined {
  const origin = ctx.incoming.headers.get('origin');
  if (originAllowed(origin, ctx.options.allowedOrigins)) return undefined;
  return refusal(answer.originRejected(), 'http.origin_rejected', true, {
    variable: 'allowedOrigins',
    received: receivedValue(origin ?? ''),
  });
}
