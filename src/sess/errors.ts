/**
 * One HTTP exchange with Sess under a deadline, and how its failures become {@link SessApiError}
 * kinds: whether a request was definitely not sent (`not_sent`), may have been sent (`transport`),
 * was a mutation whose answer was lost (`unknown_outcome`), ran out of time (`timeout`) or was
 * ended by the caller (`aborted`). The mapping of these kinds to tool error codes is the engine's,
 * in `docs/architecture.md` ("Error mapping").
 *
 * Only error shapes are inspected here: codes and names, never messages, and nothing a message
 * could leak. This module knows no paths and does not decode bodies (`client.ts`, `receipt.ts`).
 */
import { SessApiError } from '../core/ports.js';

/**
 * Error codes, as Node's fetch (undici) puts them on `cause.code`, that fail before a single
 * request byte can reach the server: refused or unreachable connections, name resolution and TLS
 * handshake failures. Edge runtimes give no code; their failures count as possibly sent.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EAI_FAIL',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function codeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * True when a fetch failure proves the request never left this process: the failure (or, for a
 * happy-eyeballs `AggregateError`, every attempt) carries a connect-phase code.
 */
export function isDefinitelyNotSent(error: unknown): boolean {
  let current: unknown = error;
  // The code sits on `cause` (undici) or one level deeper (wrapped by a custom fetch).
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = codeOf(current);
    if (code !== undefined && NOT_SENT_CODES.has(code)) return true;
    const nested = (current as { errors?: unknown }).errors;
    if (Array.isArray(nested) && nested.length > 0) {
      return nested.every((inner) => isDefinitelyNotSent(inner));
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** What a request was doing when it failed, for {@link classifyFailure}. */
export interface FailureContext {
  /** A create, publish or complete: losing its answer leaves the outcome unknown. */
  mutation: boolean;
  /** The caller's signal ended the call. */
  aborted: boolean;
  /** The client's own deadline ended the call. */
  timedOut: boolean;
  /** `fetch` had already resolved with the response head: the server surely received the request. */
  responseStarted: boolean;
  /** A short, secret-free description of the request, such as `create a Session`. */
  what: string;
}

/**
 * Turn anything `fetch` (or reading its body) threw into a {@link SessApiError}.
 *
 * Order matters: the caller's abort wins, then the client's own deadline, then a proven
 * not-sent failure, then the possibly-sent ones.
 */
export function classifyFailure(error: unknown, context: FailureContext): SessApiError {
  const { what } = context;
  if (context.aborted) {
    return new SessApiError('aborted', `The call to ${what} was aborted by the caller.`);
  }
  if (context.timedOut) {
    if (context.mutation) {
      return new SessApiError(
        'unknown_outcome',
        `No answer in time to ${what}; the request may have taken effect (repeat the identical request to learn the outcome).`,
      );
    }
    return new SessApiError('timeout', `Sess did not answer in time to ${what}.`);
  }
  if (!context.responseStarted && isDefinitelyNotSent(error)) {
    return new SessApiError('not_sent', `Could not connect to Sess to ${what}; nothing was sent.`, {
      notSentKind: 'transport',
      cause: safeCause(error),
    });
  }
  if (context.mutation) {
    return new SessApiError(
      'unknown_outcome',
      `The connection to Sess failed after the request to ${what} was sent; its outcome is unknown.`,
      { cause: safeCause(error) },
    );
  }
  return new SessApiError('transport', `The connection to Sess failed while trying to ${what}.`, {
    cause: safeCause(error),
  });
}

/**
 * A cause that is safe to keep: only the error's name and code, rebuilt, so that no message of a
 * custom `fetch` (which might echo headers) rides along.
 */
function safeCause(error: unknown): Error {
  const inner =
    typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  const code = codeOf(inner) ?? codeOf(error);
  const name = error instanceof Error ? error.name : typeof error;
  const safe = new Error(code === undefined ? name : `${name} (${code})`);
  if (code !== undefined) (safe as Error & { code?: string }).code = code;
  return safe;
}

/** One request to run with {@link runExchange}. */
export interface ExchangeRequest {
  fetch: typeof fetch;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** A create, publish or complete. */
  mutation: boolean;
  /** A short, secret-free description, such as `create a Session`. */
  what: string;
  /** The client's own deadline for the whole exchange, body included. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** The largest response body read; a larger one is a `protocol` error. */
  maxBytes: number;
}

/** What came back: the status, headers and the whole body as text. */
export interface ExchangeResponse {
  status: number;
  headers: Headers;
  text: string;
}

const ABORTED = Symbol('aborted');

/**
 * Send one request and read its whole body, under the client's deadline and the caller's signal.
 * Redirects are never followed (the API key must not travel to another URL): a redirect is a
 * `protocol` error. Throws only {@link SessApiError}.
 */
export async function runExchange(request: ExchangeRequest): Promise<ExchangeResponse> {
  const { signal, what } = request;
  if (signal?.aborted) throw new SessApiError('aborted', `The call to ${what} was aborted by the caller.`);
  const controller = new AbortController();
  let timedOut = false;
  let rejectAbort: (reason: typeof ABORTED) => void = () => {};
  // Settles when the call must end, even if a custom fetch ignores its signal.
  const ended = new Promise<never>((_, reject) => {
    rejectAbort = reject;
  });
  ended.catch(() => {});
  const end = () => {
    controller.abort();
    rejectAbort(ABORTED);
  };
  // A lagging event loop runs every due timer before it reads the sockets again, so the deadline
  // is only applied one turn later: a response that arrived in time is read first, not lost.
  let timer = setTimeout(() => {
    timer = setTimeout(() => {
      timedOut = true;
      end();
    }, 0);
  }, request.timeoutMs);
  signal?.addEventListener('abort', end, { once: true });
  let responseStarted = false;
  try {
    const init: RequestInit = {
      method: request.method,
      headers: request.headers,
      signal: controller.signal,
      redirect: 'manual',
    };
    if (request.body !== undefined) init.body = request.body;
    const response = await Promise.race([request.fetch(request.url, init), ended]);
    responseStarted = true;
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      void response.body?.cancel().catch(() => {});
      throw new SessApiError(
        'protocol',
        `Sess answered the request to ${what} with a redirect; it is not followed.`,
      );
    }
    const text = await Promise.race([readBounded(response, request.maxBytes, what), ended]);
    return { status: response.status, headers: response.headers, text };
  } catch (error) {
    if (error instanceof SessApiError) throw error;
    throw classifyFailure(error === ABORTED ? undefined : error, {
      mutation: request.mutation,
      aborted: signal?.aborted === true,
      timedOut,
      responseStarted,
      what,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', end);
  }
}

async function readBounded(response: Response, maxBytes: number, what: string): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => {});
      throw new SessApiError('protocol', `Sess sent an oversized response to ${what}.`, { limit: maxBytes });
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    throw new SessApiError('protocol', `Sess sent a response to ${what} that is not UTF-8.`);
  }
}
