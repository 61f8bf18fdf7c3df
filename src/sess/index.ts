/**
 * `@sess.si/mcp/sess`: the Sess client behind the `SessApi` port — origin validation, the HTTP
 * client and receipt verification — for an embedder writing its own `Authority`. Imports no
 * `node:` module, so it runs on edge runtimes like the root entry: there it uses `fetch` and
 * WebCrypto; on Node a client made without `fetch` reaches `node:http` and Node's crypto at run
 * time.
 *
 * The wire schemas and digests (`wire.ts`, `digest.ts`, `jws.ts`) are not re-exported here: they
 * are the wire's, not the client's API. This file only re-exports.
 *
 * The folder is the only code that knows Sess's wire: the client and its operations (`client.ts`,
 * `session-calls.ts`, `ask-calls.ts`, `verify-call.ts`), one call and one exchange (`calls.ts`,
 * `exchange.ts`, `node-transport.ts`), decoding (`wire.ts`, `wire-reader.ts`, `decode.ts`) and the
 * receipt check (`receipt.ts`, `jws.ts`, `digest.ts`, `key-set.ts`). Not here: the `SessApi` port
 * (`src/core/contract/ports.ts`) and what a failed call means for an interaction
 * (`src/core/engine/sess-errors.ts`).
 */
export {
  createSessClient,
  createSessClientFactory,
  type SessClientOptions,
  type SessCredentialOptions,
} from './client.js';
export type { ReceiptKeySetFailure, ReceiptKeySetStatus } from './key-set.js';
export { DEFAULT_SESS_ORIGIN, type SessOriginOptions, validateSessOrigin } from './origin.js';
export {
  createReceiptVerifier,
  type ReceiptAskContext,
  type ReceiptCheck,
  type ReceiptVerifier,
  type ReceiptVerifierOptions,
} from './receipt.js';
export {
  DEFAULT_KEY_REFRESH_COOLDOWN_MS,
  DEFAULT_KEY_SET_MAX_AGE_MS,
  DEFAULT_SESS_CALL_TIMEOUT_MS,
} from './settings.js';
