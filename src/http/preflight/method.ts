/**
 * The method stage: builds the one `Request` of the exchange (the request's method, URL and
 * headers, no body), which `authenticate` sees and the SDK later serves, and refuses a method or
 * URL `fetch` cannot carry (`CONNECT`, `TRACE`, an unparsable URL) with `405`.
 *
 * It reads no body and decides nothing about which methods MCP serves: the SDK answers those.
 */
import * as answer from '../responses.js';
import { type PreflightContext, type Refusal, refusal } from './context.js';

/** Sets `ctx.request`, or refuses a request `fetch` cannot represent (`405`, `http.method_rejected`). */
export function methodStage(ctx: PreflightContext): Refusal | undefined {
  const { incoming } = ctx;
  let request: Request;
  try {
    // One `Request` for the whole exchange, so the headers are copied once.
    request = new Request(incoming.url, {
      method: incoming.method,
      headers: incoming.headers,
      // The SDK tears a 2025-era exchange down when this aborts: only a disconnect may do that.
      signal: incoming.disconnected,
    });
  } catch {
    return refusal(
      answer.jsonRpcError(405, -32000, 'Method not allowed.', null, undefined, { Allow: 'POST' }),
      'http.method_rejected',
    );
  }
  if (incoming.host !== undefined && !request.headers.has('host')) {
    request.headers.set('host', incoming.host);
  }
  ctx.request = request;
  return undefined;
}
