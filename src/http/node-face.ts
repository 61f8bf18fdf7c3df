/**
 * The `node:http` face: a thin wrapper over the same pipeline as `fetch`, adding only what Node
 * needs — the preflight runs on the headers before a byte of the body is read, the body streams
 * in under the bound and the deadline, a refused request's connection is closed once the answer
 * is flushed, the web `Response` (JSON or an SSE stream) is piped back with back-pressure, and a
 * client that disconnects aborts its request. Used as the server's `checkContinue` listener, it
 * sends `100 Continue` only once the preflight accepted the request, right before the body read.
 *
 * Node's request and response are typed structurally, so this module imports no `node:` module
 * and the package stays loadable on edge runtimes. It does not parse bodies or decide policy.
 */

import { type BodyRead, concat, type IncomingRequest, type PipelineResult } from './incoming.js';
import type { Pipeline } from './pipeline.js';

/** A listener of any Node event. */
type Listener = (...args: never[]) => void;

/** The parts of `node:http`'s `IncomingMessage` this face uses. */
export interface NodeRequestLike {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** Its `encrypted` flag tells `https` from `http`; `end`/`destroy` close the connection. */
  socket?: { encrypted?: boolean; end?(): unknown; destroy?(): unknown; destroyed?: boolean } | null;
  readableEnded?: boolean;
  on(event: string, listener: Listener): unknown;
  removeListener(event: string, listener: Listener): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** The parts of `node:http`'s `ServerResponse` this face uses. */
export interface NodeResponseLike {
  writeHead(status: number, headers: Record<string, string | string[]>): unknown;
  write(chunk: Uint8Array): boolean;
  end(callback?: () => void): unknown;
  on(event: string, listener: Listener): unknown;
  removeListener(event: string, listener: Listener): unknown;
  readonly headersSent: boolean;
  readonly writableFinished?: boolean;
  readonly destroyed?: boolean;
  flushHeaders?(): void;
  destroy?(): unknown;
  /** Send `100 Continue` (only for a request Node handed to a `checkContinue` listener). */
  writeContinue?(): void;
}

/** The parts of `node:http`'s `Server` that `handler.attach` uses. */
export interface NodeServerLike {
  on(
    event: 'request' | 'checkContinue',
    listener: (req: NodeRequestLike, res: NodeResponseLike) => void,
  ): unknown;
}

/** How long a closing connection keeps draining what the client still sends before it is cut. */
const CLOSE_GRACE_MS = 1_000;

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function toHeaders(raw: NodeRequestLike['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    const joined = headerValue(value);
    if (joined === undefined) continue;
    try {
      headers.set(name, joined);
    } catch {
      // A header value fetch cannot hold is dropped; Host and auth checks then see it missing.
    }
  }
  return headers;
}

/** Read the Node request body, at most `limit` bytes, until `stop` fires or the client leaves. */
function readNodeBody(
  req: NodeRequestLike,
  limit: number,
  stop: AbortSignal,
  disconnected: AbortSignal,
): Promise<BodyRead> {
  if (req.readableEnded === true) return Promise.resolve({ kind: 'consumed' });
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let finished = false;
    const done = (result: BodyRead) => {
      if (finished) return;
      finished = true;
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onFailed);
      req.removeListener('close', onClose);
      stop.removeEventListener('abort', onStop);
      disconnected.removeEventListener('abort', onFailed);
      if (result.kind !== 'ok') req.pause();
      resolve(result);
    };
    const onData = (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      total += bytes.byteLength;
      if (total > limit) done({ kind: 'too_large' });
      else chunks.push(bytes);
    };
    const onEnd = () => done({ kind: 'ok', bytes: concat(chunks, total) });
    const onFailed = () => done({ kind: 'failed' });
    // `close` before `end` means the body was cut off.
    const onClose = () => setImmediateLike(() => done({ kind: 'failed' }));
    const onStop = () => done({ kind: 'stopped' });
    if (stop.aborted) return onStop();
    if (disconnected.aborted) return onFailed();
    stop.addEventListener('abort', onStop, { once: true });
    disconnected.addEventListener('abort', onFailed, { once: true });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFailed);
    req.on('close', onClose);
    req.resume();
  });
}

/** Let a pending `end` event win over `close` when both are queued. */
function setImmediateLike(fn: () => void): void {
  setTimeout(fn, 0);
}

/** Pipe `result` into `res`; close the connection afterwards when the pipeline asks for it. */
async function send(req: NodeRequestLike, res: NodeResponseLike, result: PipelineResult): Promise<void> {
  const { response, closeConnection } = result;
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie?.() ?? [];
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  if (closeConnection) headers.connection = 'close';
  if (res.destroyed === true) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  res.writeHead(response.status, headers);
  const afterEnd = closeConnection ? () => closeSoon(req) : undefined;
  if (response.body === null) {
    res.end(afterEnd);
    return;
  }
  res.flushHeaders?.();
  const reader = response.body.getReader();
  let gone = false;
  const onClose = () => {
    if (res.writableFinished !== true) {
      gone = true;
      reader.cancel().catch(() => {});
    }
  };
  res.on('close', onClose);
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done || gone) break;
      if (!res.write(chunk.value)) {
        await new Promise<void>((resolve) => {
          const resume = () => {
            res.removeListener('drain', resume);
            res.removeListener('close', resume);
            resolve();
          };
          res.on('drain', resume);
          res.on('close', resume);
        });
      }
    }
  } catch {
    // The stream failed mid-way: end what was sent; the client sees a cut-off answer.
  } finally {
    res.removeListener('close', onClose);
  }
  if (!gone) res.end(afterEnd);
}

/**
 * After a refused request's answer is flushed: stop serving the connection. What the client is
 * still sending is drained for a short grace (so the answer is not lost to a TCP reset), then the
 * socket is destroyed.
 */
function closeSoon(req: NodeRequestLike): void {
  const socket = req.socket;
  req.resume();
  if (socket === null || socket === undefined) return;
  socket.end?.();
  const timer = setTimeout(() => socket.destroy?.(), CLOSE_GRACE_MS);
  (timer as { unref?: () => void }).unref?.();
}

/** How the node face is mounted. */
export interface NodeFaceOptions {
  /**
   * True for the server's `checkContinue` listener: Node has not answered
   * `Expect: 100-continue`, so the face sends `100 Continue` once the preflight passed.
   */
  sendContinue?: boolean;
}

/** Does the request ask for `100 Continue` before it sends its body? */
function expectsContinue(headers: Headers): boolean {
  return /(^|,)\s*100-continue\s*($|,)/i.test(headers.get('expect') ?? '');
}

/** The `node:http` request (or `checkContinue`) listener over `pipeline`. */
export function createNodeFace(
  pipeline: Pipeline,
  options: NodeFaceOptions = {},
): (req: NodeRequestLike, res: NodeResponseLike) => void {
  return (req, res) => {
    const disconnect = new AbortController();
    const onClose = () => {
      if (res.writableFinished !== true) disconnect.abort();
      res.removeListener('close', onClose);
    };
    res.on('close', onClose);
    const headers = toHeaders(req.headers);
    const scheme = req.socket?.encrypted === true ? 'https' : 'http';
    const path = typeof req.url === 'string' && req.url.startsWith('/') ? req.url : '/';
    const host = headers.get('host') ?? 'invalid.invalid';
    let bodyRead = false;
    const incoming: IncomingRequest = {
      method: req.method ?? 'GET',
      url: `${scheme}://${host}${path}`,
      headers,
      disconnected: disconnect.signal,
      readsResponse: true,
      readBody(limit, stop) {
        if (bodyRead) return Promise.resolve({ kind: 'failed' });
        bodyRead = true;
        // Only now, after the preflight: a refused client is never invited to send its body.
        if (options.sendContinue === true && expectsContinue(headers)) res.writeContinue?.();
        return readNodeBody(req, limit, stop, disconnect.signal);
      },
    };
    pipeline
      .handle(incoming)
      .then(async (result) => {
        try {
          await send(req, res, result);
        } finally {
          result.done();
        }
      })
      .catch(() => {
        // Nothing to tell a client whose answer could not be written; never crash the server.
        if (!res.headersSent) {
          try {
            res.writeHead(500, { 'content-type': 'application/json', connection: 'close' });
            res.end(() => closeSoon(req));
          } catch {
            res.destroy?.();
          }
        } else {
          res.destroy?.();
        }
      });
  };
}
