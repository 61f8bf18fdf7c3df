/**
 * `@sess.si/mcp/stdio`: the Sess tools over stdio, for an owner's own private MCP client.
 *
 * {@link serveSessMcpStdio} serves them; the configuration reader, the authority, the credential
 * generation and the stderr diagnostics it is built from are exported for hosts that assemble
 * their own. This file only re-exports.
 *
 * Beside them in this folder: the owner's `sess-mcp records …` commands (`records-cli.ts`) and the
 * `sess-mcp` command itself (`bin.ts`). Not here: the file store it serves over
 * (`src/store/file/`), the server it serves (`src/faces/`) and the engine (`src/core/engine/`).
 */

export type { WebhookConfig, WebhookEndpoint, WebhookSenderConfig } from '../faces/wake/webhook-config.js';
export { createStdioAuthority, type StdioAuthorityOptions, type StdioStoreFactory } from './authority.js';
export {
  DEFAULT_PROFILE,
  type EnvLike,
  readStdioConfig,
  STDIO_ENV,
  type StdioConfig,
  type StdioConfigPlatform,
} from './config.js';
export { credentialGenerationOf, loadOrCreateCredentialKey } from './credential.js';
export { createStderrDiagnostics, sanitizeDiagnostic } from './diagnostics.js';
export {
  type SessMcpStdioOptions,
  type SessMcpStdioServer,
  type StdinLike,
  type StdoutLike,
  serveSessMcpStdio,
} from './serve.js';
