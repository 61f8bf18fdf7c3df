/**
 * The JSDoc examples of `@sess.si/mcp/stdio`. The type check covers this file and
 * `npm run snippets` copies each region into the JSDoc that names it; it is never run.
 */
import type { Authority } from '../../src/index.js';
import {
  createStderrDiagnostics,
  createStdioAuthority,
  readStdioConfig,
  type SessMcpStdioServer,
  serveSessMcpStdio,
} from '../../src/stdio/index.js';
import { createFileHandleStore } from '../../src/store/file/index.js';

export function serveExample(): SessMcpStdioServer {
  //#region serveSessMcpStdio
  // import { serveSessMcpStdio } from '@sess.si/mcp/stdio';
  const server = serveSessMcpStdio(); // reads SESS_API_KEY etc. from process.env
  //#endregion
  return server;
}

export function configExample(): string {
  //#region readStdioConfig
  const config = readStdioConfig(process.env);
  // config.profileDir === '/home/me/.local/state/sess-mcp/profiles/default'
  //#endregion
  return config.profileDir;
}

export function authorityExample(): Authority {
  //#region createStdioAuthority
  const authority = createStdioAuthority({
    env: process.env,
    config: readStdioConfig(process.env),
    store: (c) => createFileHandleStore({ stateDir: c.stateDir, profile: c.profile }),
  });
  //#endregion
  return authority;
}

export function diagnosticsExample(): void {
  //#region createStderrDiagnostics
  const diagnostics = createStderrDiagnostics();
  diagnostics({ event: 'server_started' });
  // stderr: {"source":"sess-mcp","event":"server_started"}
  //#endregion
}
