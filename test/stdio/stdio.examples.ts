/**
 * The JSDoc examples of `src/stdio`, kept compiling by the type check (this file is not a test and
 * is never run).
 */
import type { Authority } from '../../src/core/ports.js';
import { createStdioAuthority } from '../../src/stdio/authority.js';
import {
  createStderrDiagnostics,
  readStdioConfig,
  type SessMcpStdioServer,
  serveSessMcpStdio,
} from '../../src/stdio/index.js';
import { type CliExitCode, type RecordsCliIo, runRecordsCli } from '../../src/stdio/records-cli.js';
import { createFileHandleStore, openProfileRecords } from '../../src/store/file.js';

/** `serveSessMcpStdio`: everything from the current process. */
export function serveExample(): SessMcpStdioServer {
  return serveSessMcpStdio(); // reads SESS_API_KEY etc. from process.env
}

/** `readStdioConfig`: checked configuration, all but the key. */
export function configExample(): string {
  const config = readStdioConfig(process.env);
  return config.profileDir; // e.g. '/home/me/.local/state/sess-mcp/profiles/default'
}

/** `createStdioAuthority`: the key is read on each `resolve()`. */
export function authorityExample(): Authority {
  return createStdioAuthority({
    env: process.env,
    config: readStdioConfig(process.env),
    store: (c) => createFileHandleStore({ stateDir: c.stateDir, profile: c.profile }),
  });
}

/** `createStderrDiagnostics`: one JSON line per event. */
export function diagnosticsExample(): void {
  const diagnostics = createStderrDiagnostics();
  diagnostics({ event: 'server_started' });
  // stderr: {"source":"sess-mcp","event":"server_started"}
}

/** `runRecordsCli`: the owner's records commands over the file store. */
export async function recordsExample(io: RecordsCliIo): Promise<CliExitCode> {
  const { stateDir, profile } = readStdioConfig(process.env);
  const access = openProfileRecords({ stateDir, profile });
  return runRecordsCli(['list', '--state', 'blocked'], io, access);
}
