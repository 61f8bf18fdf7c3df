/**
 * The Host stage, the defence against DNS rebinding: a request whose `Host` header (or, for a
 * web `Request` made in code, the host its URL names) is missing or not on `allowedHosts` gets
 * `403`. Also the one reading of a `Host` value, which the `allowedHosts` option check uses too.
 *
 * It does not check `Origin` (`origin.ts`) and does not normalise the allowlist (the option check
 * does, at construction).
 */
import * as answer from '../responses.js';
import { type PreflightContext, type Refusal, refusal } from './context.js';

/** How many Host verdicts a pipeline remembers (a host's own names are few; others are not kept). */
const HOST_VERDICTS = 64;

/** A `Host` value split into its lower-case host name and its port as written (`''` when none). */
export interface HostParts {
  hostname: string;
  port: string;
}

/**
 * Split `host` or `host:port` (IPv6 in brackets). The port is taken as written, because the URL
 * parser drops a port that is the scheme's default (`:80`) and the allowlist must keep it.
 * Anything else than a host and a port (a path, credentials, a query) is `undefined`.
 */
export function hostParts(value: string): HostParts | undefined {
  const match = /^(\[[^\]]*\]|[^:]*)(?::([0-9]{1,5}))?$/.exec(value);
  if (match === null) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${match[1]}`);
  } catch {
    return undefined;
  }
  if (
    url.pathname !== '/' ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.port !== ''
  ) {
    return undefined;
  }
  const port = match[2] ?? '';
  if (port !== '' && Number(port) > 65_535) return undefined;
  return { hostname: url.hostname, port: port === '' ? '' : String(Number(port)) };
}

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

/** Refuses a request whose Host is missing or not allowed (`403`, `http.host_rejected`). */
export function hostStage(ctx: PreflightContext): Refusal | undefined {
  const { incoming } = ctx;
  const host = incoming.headers.get('host') ?? incoming.host ?? null;
  const allowed = rememberedVerdict(
    ctx.hostVerdicts,
    host,
    ctx.options.allowedHosts,
    defaultPortOf(incoming.url),
  );
  return allowed ? undefined : refusal(answer.hostRejected(), 'http.host_rejected');
}
