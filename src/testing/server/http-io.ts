/**
 * Request and response plumbing the local Sess runtime's routes share: reading a bounded body
 * (JSON for the API, a form for the answer page) and writing a JSON result, an HTML page or a
 * redirect with the headers each must carry.
 *
 * It routes nothing and decides no rule beyond the body limits it is given; it never logs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_REQUEST_BYTES } from '../../sess/wire.js';
import { PAGE_CSP } from '../page/index.js';
import { ApiFailure, type ApiResult } from './api-failure.js';

/** Largest answer-page form post, in bytes (a person's answer is far smaller). */
export const MAX_FORM_BYTES = 65_536;

/** Read a request body up to `limit` bytes; over it is `413`. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw new ApiFailure(413, 'invalid_request', `The body is ${declared} bytes; the limit is ${limit}.`, {
      limit,
      length: declared,
    });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      throw new ApiFailure(413, 'invalid_request', `The body is over ${limit} bytes.`, {
        limit,
        length: size,
      });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Read an API request's JSON object body (`415`, `413`, `400` as `docs/sess-api.md` orders them). */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    throw new ApiFailure(415, 'invalid_request', 'The body must be application/json.');
  }
  const raw = await readBody(req, MAX_REQUEST_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new ApiFailure(400, 'invalid_request', 'The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiFailure(400, 'invalid_request', 'The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

/** Read an answer-page form post. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const raw = await readBody(req, MAX_FORM_BYTES);
  return new URLSearchParams(raw.toString('utf8'));
}

/** True once nothing more can be written to `res`. */
function gone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded;
}

/** Write an API result as JSON, never cached. */
export function sendJson(res: ServerResponse, result: ApiResult, headers: Record<string, string> = {}): void {
  if (gone(res)) return;
  res.writeHead(result.status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...result.headers,
    ...headers,
  });
  res.end(result.body);
}

/** Headers of everything the answer page sends: its URL is a capability, so nothing is kept or leaked. */
const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;

/** Write an answer-page document under the page's Content-Security-Policy. */
export function sendHtml(
  res: ServerResponse,
  status: number,
  html: string,
  headers: Record<string, string> = {},
): void {
  if (gone(res)) return;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': PAGE_CSP,
    ...PAGE_HEADERS,
    ...headers,
  });
  res.end(html);
}

/** Write a small JSON answer of the answer page (its watch), with the page's headers. */
export function sendPageJson(res: ServerResponse, body: unknown): void {
  if (gone(res)) return;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...PAGE_HEADERS });
  res.end(JSON.stringify(body));
}

/** `303 See Other` to `location`. */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  if (gone(res)) return;
  res.writeHead(303, { location, ...PAGE_HEADERS, ...headers });
  res.end();
}

/** Whether the client of one request went away before its answer was written. */
export interface ClientWatch {
  /** True once it went away. */
  readonly aborted: boolean;
  /** An `AbortSignal` that fires then, made on first use (most requests never wait on one). */
  readonly signal: AbortSignal;
}

/**
 * Watch `res` for its client going away before its answer was written, so a long wait is
 * abandoned with it (no AbortError per finished request).
 */
export function watchClient(res: ServerResponse): ClientWatch {
  let gone = false;
  let controller: AbortController | undefined;
  res.on('close', () => {
    if (res.writableEnded) return;
    gone = true;
    controller?.abort();
  });
  return {
    get aborted() {
      return gone;
    },
    get signal() {
      if (controller === undefined) {
        controller = new AbortController();
        if (gone) controller.abort();
      }
      return controller.signal;
    },
  };
}

/** {@link watchClient}'s signal, for a request that waits on it. */
export function closedSignal(res: ServerResponse): AbortSignal {
  return watchClient(res).signal;
}
