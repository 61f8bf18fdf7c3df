/**
 * The web-standard face: a `Request` becomes the pipeline's {@link IncomingRequest}, its body read
 * from the request's stream under the size bound and the deadline.
 *
 * Runtime-neutral (Node, Bun, Deno, workerd): no `node:` import. It does not decide anything the
 * pipeline decides.
 */
import { type BodyRead, concat, type IncomingRequest } from './incoming.js';

/** Read a web stream to the end, at most `limit` bytes, until `stop` fires. */
export async function readStream(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  stop: AbortSignal,
): Promise<BodyRead> {
  if (stream === null) return { kind: 'ok', bytes: new Uint8Array(0) };
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = stream.getReader();
  } catch {
    return { kind: 'failed' };
  }
  if (stop.aborted) {
    reader.cancel().catch(() => {});
    return { kind: 'stopped' };
  }
  // `stop` cancels the stream, which ends a pending read as done; `stop.aborted` tells it apart
  // from the body's end. One listener for the whole read, no race per chunk.
  const onStop = () => {
    reader.cancel().catch(() => {});
  };
  stop.addEventListener('abort', onStop, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch {
        if (stop.aborted) return { kind: 'stopped' };
        reader.cancel().catch(() => {});
        return { kind: 'failed' };
      }
      if (stop.aborted) return { kind: 'stopped' };
      if (next.done) break;
      total += next.value.byteLength;
      if (total > limit) {
        reader.cancel().catch(() => {});
        return { kind: 'too_large' };
      }
      chunks.push(next.value);
    }
  } finally {
    stop.removeEventListener('abort', onStop);
  }
  // The stream (and the request holding it) outlives the read: let the reader go with it done.
  try {
    reader.releaseLock();
  } catch {
    // Nothing is pending once the stream has ended; a runtime that still refuses keeps the lock.
  }
  return { kind: 'ok', bytes: concat(chunks, total) };
}

/** The pipeline's view of a web `Request`. */
export function incomingFromRequest(request: Request): IncomingRequest {
  let host: string | undefined;
  if (!request.headers.has('host')) {
    // Fetch runtimes build `request.url` from the Host header; a Request made in code has no
    // Host header at all, so its URL's authority is the host it was addressed to.
    try {
      host = new URL(request.url).host;
    } catch {
      // No usable URL: the Host check refuses the request.
    }
  }
  let read = false;
  return {
    method: request.method,
    url: request.url,
    headers: request.headers,
    ...(host === undefined ? {} : { host }),
    disconnected: request.signal,
    readBody(limit, stop) {
      if (read) return Promise.resolve({ kind: 'failed' });
      if (request.bodyUsed) return Promise.resolve({ kind: 'consumed' });
      read = true;
      return readStream(request.body, limit, stop);
    },
  };
}
