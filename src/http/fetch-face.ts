/**
 * The web-standard face: a `Request` becomes the pipeline's {@link IncomingRequest}, its body read
 * from the request's stream under the size bound and the deadline.
 *
 * Runtime-neutral (Node, Bun, Deno, workerd): no `node:` import. It does not decide anything the
 * pipeline decides.
 */
import { type BodyRead, concat, type IncomingRequest } from './pipeline.js';

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
  const stopped = new Promise<'stopped'>((resolve) => {
    if (stop.aborted) resolve('stopped');
    else stop.addEventListener('abort', () => resolve('stopped'), { once: true });
  });
  const chunks: Uint8Array[] = [];
  let total = 0;
  const quit = (result: BodyRead): BodyRead => {
    reader.cancel().catch(() => {});
    return result;
  };
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array> | 'stopped';
    try {
      next = await Promise.race([reader.read(), stopped]);
    } catch {
      return quit({ kind: 'failed' });
    }
    if (next === 'stopped') return quit({ kind: 'stopped' });
    if (next.done) break;
    total += next.value.byteLength;
    if (total > limit) return quit({ kind: 'too_large' });
    chunks.push(next.value);
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
      read = true;
      return readStream(request.body, limit, stop);
    },
  };
}
