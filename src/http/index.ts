/**
 * `@sess.si/mcp/http`: the five Sess tools as a stateless Streamable HTTP handler for a hosting
 * runtime, with a web-standard `fetch` face and a `node:http` face.
 *
 * A library, not a server: nothing here starts a listener, authenticates or stores. The host
 * supplies `authenticate` and `handleStore`; see {@link createSessMcpHttpHandler}.
 */
export { createSessMcpHttpHandler, httpBindingOf } from './handler.js';
export type { NodeRequestLike, NodeResponseLike } from './node-face.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type SessHttpPrincipal,
  type SessMcpHttpHandlerOptions,
  WAIT_CEILING_MS,
} from './options.js';
export type { SessMcpHttpHandler } from './shell.js';
