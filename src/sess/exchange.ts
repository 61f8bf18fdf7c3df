/**
 * One HTTP exchange with Sess: sends a request and reads its whole body, bounded, under the
 * client's deadline and the caller's signal, never following a redirect; any failure becomes a
 * {@link SessApiError} through `classifyFailure` (`errors.ts`).
 *
 * It knows no path, header meaning or body format (`calls.ts`, `key-set.ts` do).
 */
import { SessApiError } from '../core/ports.js';
import { classifyFailure } from './errors.js';

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
        { protocolReason: 'redirect' },
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
      throw new SessApiError('protocol', `Sess sent an oversized response to ${what}.`, {
        limit: maxBytes,
        protocolReason: 'oversized_body',
      });
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
    throw new SessApiError('protocol', `Sess sent a response to ${what} that is not UTF-8.`, {
      protocolReason: 'body_not_utf8',
    });
  }
}
