/**
 * Checks the Sess API origin before anything is sent to it: HTTPS only, nothing but scheme, host
 * and port (an empty path or `/` is allowed), and plain-HTTP loopback only when a test asks for it.
 *
 * This module does not contact the origin, resolve names or read the environment; the faces read
 * `SESS_API_ORIGIN` and `SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST` and pass them here.
 */
import { SessApiError } from '../core/contract/ports.js';

/** Options of {@link validateSessOrigin}. */
export interface SessOriginOptions {
  /**
   * Testing only: accept `http://localhost`, `http://127.0.0.1` and `http://[::1]` on any port.
   * @default false
   */
  allowInsecureLocalhost?: boolean;
}

/** The default Sess API origin. */
export const DEFAULT_SESS_ORIGIN = 'https://api.sess.si';

import { LOOPBACK_HOSTS } from '../core/contract/rules.js';

export { LOOPBACK_HOSTS };

// scheme "://" authority, then at most one "/". No userinfo, path, query, fragment, backslash or
// whitespace: checked on the raw text because `URL` silently drops `?`, `#`, `/.` and empty userinfo.
const ORIGIN_SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#@\\\s]+)\/?$/;

/**
 * Validate a Sess API origin and return it normalised (lower-case scheme and host, default port
 * dropped, no trailing slash).
 *
 * The message of the error never repeats the input, which may carry credentials.
 *
 * @throws {SessApiError} kind `configuration` naming what is wrong.
 * @example
 * ```ts source="examples/snippets/sess.examples.ts#validateSessOrigin"
 * validateSessOrigin('https://API.sess.si/'); // 'https://api.sess.si'
 * validateSessOrigin('http://127.0.0.1:8787', { allowInsecureLocalhost: true }); // 'http://127.0.0.1:8787'
 * ```
 */
export function validateSessOrigin(origin: string, options: SessOriginOptions = {}): string {
  if (typeof origin !== 'string' || origin.length === 0) {
    throw invalid('the Sess API origin must be a non-empty string');
  }
  if (origin.includes('@')) {
    throw invalid('the Sess API origin must not carry credentials');
  }
  const shape = ORIGIN_SHAPE.exec(origin);
  if (shape === null) {
    throw invalid(
      'the Sess API origin must be scheme://host[:port] with no path, query, fragment, credentials or spaces',
    );
  }
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw invalid('the Sess API origin is not a valid URL');
  }
  if (url.protocol === 'https:') return url.origin;
  if (url.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(url.hostname)) {
      throw invalid('the Sess API origin must use https (plain http is allowed only for local testing)');
    }
    if (options.allowInsecureLocalhost !== true) {
      throw invalid(
        'the Sess API origin must use https; http on localhost is for testing only and needs the allowInsecureLocalhost option (SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1 for the stdio server)',
      );
    }
    return url.origin;
  }
  throw invalid('the Sess API origin must use https');
}

function invalid(message: string): SessApiError {
  return new SessApiError('configuration', `${message}.`);
}
