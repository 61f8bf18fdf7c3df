/**
 * One HTTP exchange with Sess: sends a request and reads its whole body, bounded, under the
 * client's deadline and the caller's signal, never following a redirect; any failure becomes a
 * {@link SessApiError} through `classifyFailure` (`errors.ts`). The bytes travel through a
 * {@link Transport}: `fetch` (every runtime), or on Node the one over `node:http`
 * (`node-transport.ts`); the deadline, the abort, the redirect refusal and the body limit are
 * this module's, the same for both.
 *
 * It knows no path, header meaning or body format (`calls.ts`, `key-set.ts` do).
 */
import { SessApiError } from '../core/contract/ports.js';
import { classifyFailure } from './errors.js';

/** The response headers the client reads: a `Headers`, or any map with the same `get`. */
export interface ResponseHeaders {
  /** The value of header `name` (any case), several joined with `, `; `null` when absent. */
  get(name: string): string | null;
}

/** What a {@link Transport} is asked to send: everything but the deadline, which the exchange keeps. */
export interface TransportRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** A request a {@link Transport} started. */
export interface SentRequest {
  /** The response head, or the transport's own error. */
  response: Promise<OpenedResponse>;
  /** End the request now, at any stage (the deadline passed, or the caller's signal fired). */
  cancel(): void;
}

/** A response whose head has arrived and whose body is still to be read. */
export interface OpenedResponse {
  status: number;
  /** A redirect, in any form the transport reports one (a 3xx, or `fetch`'s opaque redirect). */
  redirect: boolean;
  headers: ResponseHeaders;
  /**
   * The whole body as text: `oversizedBody()` past `maxBytes`, `notUtf8Body()` when it does not
   * decode; a body cut short rejects with the transport's own error.
   */
  text(maxBytes: number, what: string): Promise<string>;
  /** Drop the body unread. */
  discard(): void;
}

/**
 * How the bytes travel: starts one request whose response head resolves (never following a
 * redirect) or rejects with the transport's own error, which `classifyFailure` reads.
 */
export type Transport = (request: TransportRequest) => SentRequest;

/** One request to run with {@link runExchange}. */
export interface ExchangeRequest {
  fetch: typeof fetch;
  /** Sends the request instead of `fetch` when set (the Node transport). */
  transport?: Transport | undefined;
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
  headers: ResponseHeaders;
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
  let sent: SentRequest | undefined;
  let timedOut = false;
  let rejectAbort: (reason: typeof ABORTED) => void = () => {};
  // Settles when the call must end, even if a custom fetch ignores its signal.
  const ended = new Promise<never>((_, reject) => {
    rejectAbort = reject;
  });
  ended.catch(() => {});
  const end = () => {
    sent?.cancel();
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
    const transport = request.transport ?? fetchTransport(request.fetch);
    const transportRequest: TransportRequest = {
      url: request.url,
      method: request.method,
      headers: request.headers,
    };
    if (request.body !== undefined) transportRequest.body = request.body;
    sent = transport(transportRequest);
    const response = await Promise.race([sent.response, ended]);
    responseStarted = true;
    if (response.redirect) {
      response.discard();
      throw new SessApiError(
        'protocol',
        `Sess answered the request to ${what} with a redirect; it is not followed.`,
        { protocolReason: 'redirect' },
      );
    }
    const text = await Promise.race([response.text(request.maxBytes, what), ended]);
    return { status: response.status, headers: response.headers, text };
  } catch (error) {
    if (error instanceof SessApiError) throw error;
    throw classifyFailure(error === ABORTED ? undefined : error, {
      mutation: request.mutation,
      aborted: signal?.aborted === true,
      timedOut,
      responseStarted,
      what,
      origin: new URL(request.url).origin,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', end);
  }
}

/** The error of a body larger than `maxBytes`. */
export function oversizedBody(maxBytes: number, what: string): SessApiError {
  return new SessApiError('protocol', `Sess sent an oversized response to ${what}.`, {
    limit: maxBytes,
    protocolReason: 'oversized_body',
  });
}

/** `chunks` (of `size` bytes in all) as UTF-8 text; a `protocol` error when they are not UTF-8. */
export function decodeBody(chunks: readonly Uint8Array[], size: number, what: string): string {
  let all: Uint8Array;
  if (chunks.length === 1) all = chunks[0]!;
  else {
    all = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      all.set(chunk, offset);
      offset += chunk.byteLength;
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    throw new SessApiError('protocol', `Sess sent a response to ${what} that is not UTF-8.`, {
      protocolReason: 'body_not_utf8',
    });
  }
}

/** The transport of every runtime: `fetch`, with redirects left to the exchange to refuse. */
function fetchTransport(fetchImpl: typeof fetch): Transport {
  return (request) => {
    const controller = new AbortController();
    const init: RequestInit = {
      method: request.method,
      headers: request.headers,
      signal: controller.signal,
      redirect: 'manual',
    };
    if (request.body !== undefined) init.body = request.body;
    return { response: opened(fetchImpl, request.url, init), cancel: () => controller.abort() };
  };
}

async function opened(fetchImpl: typeof fetch, url: string, init: RequestInit): Promise<OpenedResponse> {
  const response = await fetchImpl(url, init);
  return {
    status: response.status,
    redirect: response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400),
    headers: response.headers,
    text: (maxBytes, what) => readBounded(response, maxBytes, what),
    discard: () => {
      void response.body?.cancel().catch(() => {});
    },
  };
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
      throw oversizedBody(maxBytes, what);
    }
    chunks.push(value);
  }
  return decodeBody(chunks, size, what);
}
