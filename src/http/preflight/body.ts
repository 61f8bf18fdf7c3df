/**
 * The body stage: a POST's body, bounded by `maxBodyBytes` (by its declared length before any
 * byte is read, then as it streams), of a JSON media type, read before the request deadline, and
 * parsed once. Any other method has no body to read and passes.
 *
 * It does not judge what the JSON says: unsafe keys (`unsafe-keys.ts`) and batches (`era.ts`)
 * are their own stages, and a body that is not JSON goes on to the SDK, which answers it.
 */
import { isJsonContentType } from '@modelcontextprotocol/server';
import * as answer from '../responses.js';
import { type PreflightContext, type Refusal, refusal } from './context.js';
import { parseBody } from './unsafe-keys.js';

/** Decodes request bodies (not fatal: the SDK answers a body that is not JSON). */
const UTF8 = new TextDecoder();

/** True when the request declares a `Content-Length` over `limit`. */
function declaredTooLarge(headers: Headers, limit: number): boolean {
  const declared = headers.get('content-length');
  return declared !== null && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > limit;
}

/**
 * Reads and parses a POST's body into `ctx.bytes` and `ctx.parsed`, or refuses: `413` over the
 * size bound, `415` not JSON by its media type, `408` not arrived before the deadline, `400`
 * unreadable, `503` when the handler closed meanwhile.
 */
export function bodyStage(ctx: PreflightContext): Refusal | undefined | Promise<Refusal | undefined> {
  const { incoming, options } = ctx;
  if (incoming.method.toUpperCase() !== 'POST') return undefined;
  if (declaredTooLarge(incoming.headers, options.maxBodyBytes)) {
    return refusal(answer.bodyTooLarge(options.maxBodyBytes), 'http.body_too_large');
  }
  if (!isJsonContentType(incoming.headers.get('content-type'))) {
    return refusal(answer.unsupportedMediaType(), 'http.unsupported_media_type');
  }
  return incoming.readBody(options.maxBodyBytes, ctx.stop).then((read): Refusal | undefined => {
    switch (read.kind) {
      case 'too_large':
        return refusal(answer.bodyTooLarge(options.maxBodyBytes), 'http.body_too_large');
      case 'stopped':
        return ctx.closing.aborted
          ? refusal(answer.handlerClosed(), 'http.closed')
          : refusal(answer.bodyTimedOut(), 'http.body_timeout');
      case 'failed':
        return refusal(answer.bodyUnreadable(), 'http.body_failed');
      case 'consumed':
        return refusal(answer.bodyConsumed(), 'http.body_consumed');
    }
    ctx.bytes = read.bytes;
    ctx.parsed = parseBody(UTF8.decode(read.bytes));
    return undefined;
  });
}
