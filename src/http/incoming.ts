/**
 * What a face and the pipeline hand each other: one request as a face sees it (headers now, the
 * body on demand), how a body read ended, and the pipeline's answer. The web-standard and the
 * `node:http` faces build an {@link IncomingRequest}; the pipeline and its stages read it.
 *
 * Types and one byte helper only: it reads no request and decides nothing.
 */

/** How a body read ended. */
export type BodyRead =
  | { kind: 'ok'; bytes: Uint8Array }
  | { kind: 'too_large' }
  /** `stop` fired (deadline or close); reading has stopped. */
  | { kind: 'stopped' }
  /** The client went away or the stream failed. */
  | { kind: 'failed' }
  /** Something before the handler read the body already (a body parser mounted ahead of it). */
  | { kind: 'consumed' };

/** One request as a face hands it to the pipeline: headers now, the body only on demand. */
export interface IncomingRequest {
  method: string;
  url: string;
  headers: Headers;
  /**
   * The `Host` a face knows for a request whose headers carry none (a web `Request` made in code
   * has no Host header; its URL names the host it was addressed to).
   */
  host?: string;
  /** Aborts when the client disconnects. */
  disconnected: AbortSignal;
  /** Read the whole body, at most `limit` bytes, until `stop` fires. Called at most once. */
  readBody(limit: number, stop: AbortSignal): Promise<BodyRead>;
  /**
   * True when the face reads the response body itself and calls the result's `done` once it has
   * been read, cancelled or has failed; the body is then handed over as the SDK made it. Otherwise
   * the pipeline learns it from the SDK closing the request's server (a 2025-era stream) or by
   * wrapping the body.
   */
  readsResponse?: boolean;
}

/** The pipeline's answer: the response, and whether the connection must close after it. */
export interface PipelineResult {
  response: Response;
  /** True when the body was not (fully) read: the node face closes the connection. */
  closeConnection: boolean;
  /**
   * Ends the request's bookkeeping (its deadline, its cancellation entry); a face whose request
   * says `readsResponse` calls it once the response body is done. Idempotent.
   */
  done(): void;
}

/** Concatenate the chunks of a body read into one buffer of `total` bytes. */
export function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.byteLength === total) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
