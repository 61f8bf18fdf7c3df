/**
 * The one reading of a `Host` value (`host` or `host:port`, IPv6 in brackets): the Host stage of
 * the preflight reads requests with it, and the `allowedHosts` option check reads its entries with
 * it, so an entry and a request are split the same way.
 *
 * It decides nothing: whether a host is allowed is the Host stage's (`preflight/host.ts`).
 */

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
