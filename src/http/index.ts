/**
 * `@sess.si/mcp/http`: the Sess tools as a stateless Streamable HTTP handler for a hosting runtime,
 * with a web-standard `fetch` face and a `node:http` face.
 *
 * A library, not a server: nothing here starts a listener, authenticates or stores. The host
 * supplies `authenticate` and `handleStore`; see {@link createSessMcpHttpHandler}. This file only
 * re-exports.
 */
export { createSessMcpHttpHandler, httpBindingOf, type SessMcpHttpHandler } from './handler.js';
export type { NodeRequestLike, NodeResponseLike, NodeServerLike } from './node-face.js';
export {
  DEFAULT_HTTP_REQUEST_DEADLINE_MS,
  DEFAULT_MAX_BODY_BYTES,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
} from './options.js';
