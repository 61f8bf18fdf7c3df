/**
 * The Host stage, the defence against DNS rebinding: a request whose `Host` header (or, for a
 * web `Request` made in code, the host its URL names) is missing or not on `allowedHosts` gets
 * `403`. A `Host` value is read by `host-syntax.ts`, as the `allowedHosts` option check reads it.
 *
 * It does not check `Origin` (`origin.ts`) and does not normalise the allowlist (the option check
 * does, at construction).
 */

import { receivedValue } from '../../faces/visible.js';
import { hostParts } from '../host-syntax.js';
import * as answer from '../responses.js';
import { type PreflightContext, type Refusal, refusal } from './context.js';

/** How many Host verdicts a pipeline remembers (a host's own names are few; others are not kept). */
const HOST_VERDICTS = 64;

/**
 * Does the `Host` header value match an allowlist entry? An entry without a port matches the host
 * on any port; an entry with a port only on that port. A `Host` without a port is on the default
 * port of the request's scheme (`defaultPort`: 80 for `http:`, 443 for `https:`).
 */
export function hostAllowed(
  hostHeader: string | null,
  allowedHosts: readonly string[],
  defaultPort: string,
): boolean {
  if (hostHeader === null || hostHeader.length === 0) return false;
  const parts = hostParts(hostHeader);
  if (parts === undefined) return false;
  const withPort = `${parts.hostname}:${parts.port === '' ? defaultPort : parts.port}`;
  return allowedHosts.some((entry) => entry === parts.hostname || entry === withPort);
}

/** The default port of a request URL's scheme, as a `Host` header without a port implies it. */
export function defaultPortOf(url: string): string {
  return url.startsWith('https:') ? '443' : '80';
}

/** {@link hostAllowed}, remembering the verdict per header value and default port in `verdicts`. */
function rememberedVerdict(
  verdicts: Map<string, boolean>,
  host: string | null,
  allowedHosts: readonly string[],
  defaultPort: string,
): boolean {
  if (host === null) return false;
  const key = `${defaultPort} ${host}`;
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = hostAllowed(host, allowedHosts, defaultPort);
    if (verdict && verdicts.size < HOST_VERDICTS) verdicts.set(key, verdict);
  }
  return verdict;
}

/**
 * Refuses a request whose Host is missing or not allowed (`403`, `http.host_rejected`, naming
 * `allowedHosts` and the Host received). The answer's body stays fixed words.
 */
export function hostStage(ctx: PreflightContext): Refusal | undefined {
  const { incoming } = ctx;
  const host = incoming.headers.get('host') ?? incoming.host ?? null;
  const allowed = rememberedVerdict(
    ctx.hostVerdicts,
    host,
    ctx.options.allowedHosts,
    defaultPortOf(incoming.url),
  );
  if (allowed) return undefined;
  // The Host received is no secret and the diagnostic names it, so the owner sees what to allow.
  const about =
    host === null
      ? { variable: 'allowedHosts' }
      : { variable: 'allowedHosts', received: receivedValue(host) };
  return refusal(answer.hostRejected(), 'http.host_rejected', true, about);
}
