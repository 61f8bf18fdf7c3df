#!/usr/bin/env node
/**
 * `sess-local`: start the local Sess runtime and print its origin, API key and workspace id, for
 * trying `@sess.si/mcp` by hand against a Sess that runs on this machine.
 *
 * Usage: `sess-local [--port <n>] [--host <address>]` (default 127.0.0.1, a random port). It runs
 * until interrupted. The printed API key is a throwaway key of this in-memory runtime; the runtime
 * itself logs nothing else (no links, receipts or answers).
 */
import { startLocalSess } from './index.js';

function usage(message?: string): never {
  if (message) process.stderr.write(`sess-local: ${message}\n`);
  process.stderr.write('Usage: sess-local [--port <0-65535>] [--host <address>]\n');
  process.exit(2);
}

/** Parse `--port`/`--host` (also `--port=n`). */
function parseArgs(argv: string[]): { port: number; host: string } {
  let port = 0;
  let host = '127.0.0.1';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=')
      ? (arg.split(/=(.*)/s, 2) as [string, string])
      : [arg, undefined];
    const value = () => inline ?? argv[++i] ?? usage(`${name} needs a value`);
    if (name === '--port') {
      const text = value();
      if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535)
        usage('--port must be an integer from 0 to 65535');
      port = Number(text);
    } else if (name === '--host') {
      host = value();
    } else if (name === '--help' || name === '-h') {
      usage();
    } else {
      usage(`unknown argument ${JSON.stringify(name)}`);
    }
  }
  return { port, host };
}

const { port, host } = parseArgs(process.argv.slice(2));
startLocalSess({ port, host }).then(
  (sess) => {
    process.stdout.write(
      `Local Sess runtime running.\n` +
        `SESS_API_ORIGIN=${sess.origin}\n` +
        `SESS_API_KEY=${sess.apiKey}\n` +
        `SESS_EXPECTED_WORKSPACE_ID=${sess.workspaceId}\n` +
        `SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1\n`,
    );
    const stop = () => {
      void sess.close().then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  },
  (error: unknown) => {
    const code = (error as { code?: unknown })?.code;
    process.stderr.write(`sess-local: could not start (${typeof code === 'string' ? code : 'error'})\n`);
    process.exit(1);
  },
);
