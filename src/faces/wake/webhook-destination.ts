/**
 * Where a wake webhook may be sent: the URL rules (HTTPS only; plain HTTP to a loopback host name
 * only under the testing switch; no credentials, fragment or stray characters), the address rules
 * applied to every address a host resolves to ({@link isForbiddenAddress}: no loopback, private,
 * link-local, shared, unique-local, translated, multicast or reserved address unless the owner
 * allows private destinations) and the host allowlist.
 *
 * Pure: it resolves no name and opens no socket. The Node attempt applies
 * {@link isForbiddenAddress} inside its resolver, on the addresses it connects to; the `fetch`
 * attempt, which cannot see them, relies on the allowlist. No message here repeats a URL: one may
 * carry a token in its path or query.
 */
import { LOOPBACK_HOSTS } from '../../core/contract/rules.js';

/** What an address is, for the rules: reachable on the internet, or one of the special kinds. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'never';

/** Which special addresses a destination may reach besides public ones. */
export interface AddressPolicy {
  /**
   * Loopback, private (RFC 1918), link-local, shared (100.64/10), unique-local (fc00::/7) and
   * NAT64 addresses. The owner's choice for a receiver inside their own network.
   * @default false
   */
  readonly allowPrivate?: boolean;
  /** Loopback addresses only (the testing switch, for a loopback host name). @default false */
  readonly allowLoopback?: boolean;
}

/** The four bytes of a dotted-decimal IPv4 address (no leading zeros, no short forms). */
function parseIPv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
    bytes.push(Number(part));
  }
  return bytes;
}

/** The eight groups of an IPv6 address (brackets and a zone allowed, a dotted tail too). */
function parseIPv6(text: string): number[] | undefined {
  let t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = t.indexOf('%');
  if (zone >= 0) t = t.slice(0, zone);
  if (t.includes('.')) {
    const cut = t.lastIndexOf(':');
    const v4 = parseIPv4(t.slice(cut + 1));
    if (cut < 0 || v4 === undefined) return undefined;
    t = `${t.slice(0, cut + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = t.split('::');
  if (halves.length > 2) return undefined;
  const group = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = group(halves[0]!);
  const tail = halves.length === 2 ? group(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const missing = 8 - head.length - tail.length;
  return missing < 1 ? undefined : [...head, ...new Array<number>(missing).fill(0), ...tail];
}

function classifyIPv4([a, b, c]: number[]): AddressClass {
  const x = a!;
  const y = b!;
  if (x === 0) return 'never'; // 0.0.0.0/8, "this network" (0.0.0.0 reaches the host itself)
  if (x === 127) return 'loopback';
  if (x === 10 || (x === 172 && (y & 0xf0) === 16) || (x === 192 && y === 168)) return 'private';
  if (x === 100 && (y & 0xc0) === 64) return 'private'; // 100.64/10, shared address space
  if (x === 169 && y === 254) return 'private'; // link-local, cloud metadata among it
  if (x === 198 && (y & 0xfe) === 18) return 'private'; // 198.18/15, benchmarking
  if (x === 192 && y === 0 && (c === 0 || c === 2)) return 'never'; // protocol assignments, TEST-NET-1
  if (x === 192 && y === 88 && c === 99) return 'never'; // the old 6to4 relay anycast
  if ((x === 198 && y === 51 && c === 100) || (x === 203 && y === 0 && c === 113)) return 'never';
  if (x >= 224) return 'never'; // multicast, reserved, broadcast
  return 'public';
}

function classifyIPv6(g: number[]): AddressClass {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return 'never'; // ::
  if (zeroTo(7) && g7 === 1) return 'loopback'; // ::1
  // ::ffff:0:0/96: the IPv4 address it maps to is the one reached.
  if (zeroTo(5) && g5 === 0xffff) return classifyIPv4([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]);
  if (g0 === 0x64 && g1 === 0xff9b && (g2 === 1 || (g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0))) {
    return 'private'; // NAT64: 64:ff9b::/96, and the local-use 64:ff9b:1::/48
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7, unique local
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return 'private'; // link- and site-local
  if ((g0 & 0xe000) !== 0x2000) return 'never'; // outside 2000::/3: multicast, reserved, unassigned
  if (g0 === 0x2001 && (g1 < 0x200 || g1 === 0xdb8)) return 'never'; // 2001::/23 (Teredo, …), docs
  if (g0 === 0x2002) return 'never'; // 6to4: an IPv4 address behind a relay
  if (g0 === 0x3fff && g1 < 0x1000) return 'never'; // 3fff::/20, documentation
  return 'public';
}

/** The class of a textual IP address; anything that is not one is `never`. */
export function addressClass(ip: string): AddressClass {
  const v4 = parseIPv4(ip);
  if (v4 !== undefined) return classifyIPv4(v4);
  const v6 = parseIPv6(ip);
  return v6 === undefined ? 'never' : classifyIPv6(v6);
}

/**
 * True when a webhook must not be sent to `ip` (IPv4 dotted decimal, or IPv6 with or without
 * brackets and zone). Public addresses are allowed; loopback, private, link-local (169.254/16,
 * fe80::/10), shared (100.64/10), unique-local (fc00::/7) and NAT64 (64:ff9b::/96) only under
 * `policy.allowPrivate` (loopback also under `policy.allowLoopback`); an IPv4-mapped address
 * (::ffff:0:0/96) as the IPv4 address it maps to; 0.0.0.0/8, ::, multicast, reserved,
 * documentation and relay addresses (6to4, Teredo) never, and neither is anything that is not an
 * address.
 *
 * `isForbiddenAddress('169.254.169.254')` is true; `isForbiddenAddress('10.0.0.7', { allowPrivate:
 * true })` is false.
 */
export function isForbiddenAddress(ip: string, policy: AddressPolicy = {}): boolean {
  switch (addressClass(ip)) {
    case 'public':
      return false;
    case 'loopback':
      return policy.allowPrivate !== true && policy.allowLoopback !== true;
    case 'private':
      return policy.allowPrivate !== true;
    case 'never':
      return true;
  }
}

/** Why a destination is refused before anything is sent. */
export type WebhookDestinationRefusal =
  | 'invalid_url'
  | 'insecure_url'
  | 'forbidden_address'
  | 'host_not_allowed';

/** What each refusal means, in the words messages use; none repeats the URL. */
export const WEBHOOK_DESTINATION_TEXT: Readonly<Record<WebhookDestinationRefusal, string>> = {
  invalid_url:
    'it must be an absolute URL of at most 2048 characters, without credentials, fragment, spaces or backslashes',
  insecure_url:
    'it must use https; http is allowed only to localhost, 127.0.0.1 or [::1] with the testing switch (SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1, or allowInsecureLocalhost)',
  forbidden_address:
    'its host is a loopback, private, link-local or reserved address; allow private destinations only for a receiver inside your own network',
  host_not_allowed: 'its host is not in the allowed hosts',
};

/** The longest webhook URL, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** What a destination may be, besides a public HTTPS URL. */
export interface WebhookDestinationOptions extends AddressPolicy {
  /** Testing only: plain HTTP to a loopback host name, and loopback addresses for it. */
  readonly allowInsecureLocalhost?: boolean;
  /** The only host names (as `URL` writes them, e.g. `hooks.example.com`) a webhook may reach. */
  readonly allowedHosts?: readonly string[];
}

/** A checked destination: the URL and the addresses its host may resolve to. */
export interface WebhookDestination {
  readonly url: URL;
  readonly policy: AddressPolicy;
}

/** The host of `url` as an address when it is an IP literal (brackets removed), else undefined. */
function literalAddress(url: URL): string | undefined {
  const host = url.hostname;
  if (host.startsWith('[')) return host.slice(1, -1);
  return parseIPv4(host) === undefined ? undefined : host;
}

/**
 * `text` checked as a webhook destination: the URL and its address policy, or why it is refused.
 * A host that is an IP address is judged here; a host name is judged on every address it resolves
 * to when the attempt connects.
 */
export function checkWebhookDestination(
  text: unknown,
  options: WebhookDestinationOptions = {},
): WebhookDestination | { refusal: WebhookDestinationRefusal } {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_WEBHOOK_URL_LENGTH) {
    return { refusal: 'invalid_url' };
  }
  // Checked on the raw text: `URL` silently drops or rewrites these.
  if (/[\s\\]|[\u0000-\u001f\u007f]/.test(text) || text.includes('#')) return { refusal: 'invalid_url' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { refusal: 'invalid_url' };
  }
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?]*@/i.test(text)) {
    return { refusal: 'invalid_url' };
  }
  const loopbackName = LOOPBACK_HOSTS.has(url.hostname);
  const testing = options.allowInsecureLocalhost === true && loopbackName;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && testing)) return { refusal: 'insecure_url' };
  const policy: AddressPolicy = { allowPrivate: options.allowPrivate === true, allowLoopback: testing };
  const literal = literalAddress(url);
  if (literal !== undefined && isForbiddenAddress(literal, policy)) return { refusal: 'forbidden_address' };
  if (options.allowedHosts !== undefined && !options.allowedHosts.includes(url.hostname)) {
    return { refusal: 'host_not_allowed' };
  }
  return { url, policy };
}

/**
 * True when `host` is a host name as `URL` writes it (lower case, punycode, IPv6 in brackets)
 * and nothing else: no scheme, port, path or credentials. The form `allowedHosts` entries take.
 */
export function isAllowedHostEntry(host: unknown): host is string {
  if (typeof host !== 'string' || host.length === 0 || host.length > 253) return false;
  if (/[\s/\\?#@]/.test(host)) return false;
  try {
    const url = new URL(`https://${host}/`);
    return url.hostname === host && url.port === '';
  } catch {
    return false;
  }
}
