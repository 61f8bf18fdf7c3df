/**
 * One webhook attempt: what it is handed, what it can end as, and the rules both transports share
 * (the Node one, `webhook-node-attempt.ts`, and the `fetch` one, `webhook-fetch-attempt.ts`): how
 * a status or a failure becomes an outcome, how much of a response is read, how long an attempt
 * may take.
 *
 * The outcome is decided by the status line alone: 2xx delivered; 410 gone (the receiver asks to
 * be left alone: the endpoint stays disabled until its URL or secrets change); every other status
 * a retry, 3xx included (a redirect is never followed: it would send the signed event to a place
 * nobody checked), and 4xx included, as Standard Webhooks practice has it (a receiver that answers
 * 400 or 401 during a deploy or a secret rotation usually accepts the same event later; the
 * schedule ends the retries). A failure to connect, resolve, agree on TLS or answer in time is a
 * retry. A bad URL, a forbidden address or a bad event is refused and never retried.
 *
 * Not here: signing (`webhook-signature.ts`), the address rules (`webhook-destination.ts`), when to
 * try again (`webhook-schedule.ts`).
 */
import type { AddressPolicy, WebhookDestinationRefusal } from './webhook-destination.js';

/** How much of a response an attempt reads before it closes the connection. */
export const WEBHOOK_RESPONSE_READ_BYTES = 64 * 1024;

/** How long one attempt may take, connect, headers and body together, by default. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;

/** The range `timeoutMs` takes, in milliseconds. */
export const WEBHOOK_TIMEOUT_RANGE = { min: 100, max: 120_000 } as const;

/** Why an attempt should be tried again later. */
export type WebhookRetryReason =
  /** No answer (or no whole status line) within the attempt's time. */
  | 'timeout'
  /** The connection failed or broke before a status arrived. */
  | 'connection'
  /** The host name did not resolve. */
  | 'dns'
  /** The TLS handshake failed (certificate, name, protocol). */
  | 'tls'
  /** A 3xx: never followed. */
  | 'redirect'
  /** A 429. */
  | 'throttled'
  /** A 5xx. */
  | 'server_error'
  /** A 4xx other than 410 and 429. */
  | 'rejected'
  /** A status outside 200–599. */
  | 'bad_status'
  /** Something this module did not expect went wrong; nothing may have been sent. */
  | 'unexpected';

/** Why an attempt is refused before (or instead of) connecting; it is never retried. */
export type WebhookRefusalReason =
  | WebhookDestinationRefusal
  /** The endpoint's secrets break the rule. */
  | 'invalid_secret'
  /** The event breaks the rule. */
  | 'invalid_event';

/** How one attempt ended. */
export type WebhookOutcome =
  /** The receiver answered 2xx: done. */
  | { readonly kind: 'delivered'; readonly status: number }
  /** Try again per the schedule; `status` when the receiver answered. */
  | { readonly kind: 'retry'; readonly reason: WebhookRetryReason; readonly status?: number }
  /** The receiver answered 410: disable the endpoint until its URL or secrets change. */
  | { readonly kind: 'gone' }
  /** Nothing was (or may be) sent to this destination: no retry. */
  | { readonly kind: 'refused'; readonly reason: WebhookRefusalReason };

/** What a transport is handed for one attempt: checked and signed already. */
export interface WebhookAttempt {
  readonly url: URL;
  /** Every address the host resolves to must pass this (where the transport sees them). */
  readonly policy: AddressPolicy;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
}

/** One way to send an attempt; it never rejects. */
export type WebhookTransport = (attempt: WebhookAttempt) => Promise<WebhookOutcome>;

/** The outcome of a response's status. */
export function outcomeOfStatus(status: number): WebhookOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 410) return { kind: 'gone' };
  if (status >= 300 && status < 400) return { kind: 'retry', reason: 'redirect', status };
  if (status === 429) return { kind: 'retry', reason: 'throttled', status };
  if (status >= 400 && status < 500) return { kind: 'retry', reason: 'rejected', status };
  if (status >= 500 && status < 600) return { kind: 'retry', reason: 'server_error', status };
  return { kind: 'retry', reason: 'bad_status', status };
}

/** The system error codes of a name that did not resolve. */
const DNS_CODES: ReadonlySet<string> = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'ENODATA',
]);

/**
 * The retry reason of a failure before a status arrived, from its `code` (Node's, or the `cause`'s
 * under `fetch`): a resolver code is `dns`, a certificate or TLS code `tls`, anything else
 * `connection`.
 */
export function retryReasonOf(error: unknown): WebhookRetryReason {
  const codeOf = (e: unknown): string | undefined => {
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : undefined;
  };
  const code = codeOf(error) ?? codeOf((error as { cause?: unknown } | null)?.cause);
  if (code === undefined) return 'connection';
  if (DNS_CODES.has(code)) return 'dns';
  if (/CERT|^ERR_TLS|^ERR_SSL|^UNABLE_TO_|SELF_SIGNED|^HOSTNAME_MISMATCH/.test(code)) return 'tls';
  return 'connection';
}

/** The error a checked resolver fails with when an address is forbidden. */
export const FORBIDDEN_ADDRESS_CODE = 'ERR_WEBHOOK_FORBIDDEN_ADDRESS';
