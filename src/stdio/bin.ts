#!/usr/bin/env node
/**
 * The `sess-mcp` command (`npx -y @sess.si/mcp`), the package's one bin. With no arguments it
 * serves the Sess tools over stdio; `records list|show|retire` is the owner's view of local
 * records; `local` runs the local Sess runtime (`local-command.ts`); `--help`,
 * `--version`.
 *
 * Arguments never carry configuration: the API key, origin, profile and state directory come from
 * the environment only. The shebang above is kept by the build in `dist/bin/sess-mcp.js`.
 */
import { realpathSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../faces/package-info.js';
import { visible } from '../faces/visible.js';
import { isSessMcpError } from '../index.js';
import { createFileHandleStore, openProfileRecords } from '../store/file/index.js';
import { readStdioConfig } from './config.js';
import { createStderrDiagnostics } from './diagnostics.js';
import { startupNotes } from './env-notes.js';
import { type RecordsCliIo, runRecordsCli, USAGE } from './records-cli.js';
import { runWaitCommand } from './wait-command.js';

async function main(argv: readonly string[]): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    // Loaded only to serve: the records commands start without the MCP SDK.
    const { serveSessMcpStdio } = await import('./serve.js');
    for (const note of startupNotes(process.env)) process.stderr.write(visible(note));
    guardStderr(createStderrDiagnostics(process.stderr));
    // The wake command of a result runs this same node and this same bin (`sess-mcp wait`).
    serveSessMcpStdio({ wakeProgram: [process.execPath, realpathSync(process.argv[1] as string)] });
    return undefined; // keep running until stdin closes
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(visible(USAGE));
    return 0;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${PACKAGE_NAME} ${PACKAGE_VERSION}\n`);
    return 0;
  }
  if (first === 'local') {
    // Loaded only for this command: serving never loads the local runtime.
    const { runLocalCommand } = await import('./local-command.js');
    runLocalCommand(rest);
    return undefined; // runs until interrupted
  }
  if (first === 'wait') {
    const stop = new AbortController();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => stop.abort());
    const code = await runWaitCommand(rest, {
      stdout: process.stdout,
      stderr: process.stderr,
      defaults: () => {
        const config = readStdioConfig(process.env);
        return { stateDir: config.stateDir, profile: config.profile };
      },
      signal: stop.signal,
    });
    return stop.signal.aborted ? 130 : code;
  }
  if (first !== 'records') {
    process.stderr.write(
      // The argument is not echoed: it could be a pasted key.
      'sess-mcp: unknown command or option. ' +
        'Configuration comes from the environment (SESS_API_KEY, SESS_API_ORIGIN, …), never from arguments.\n\n' +
        USAGE,
    );
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(visible(USAGE));
    return 0;
  }

  let config: ReturnType<typeof readStdioConfig>;
  try {
    config = readStdioConfig(process.env);
  } catch (error) {
    process.stderr.write(
      visible(`sess-mcp: ${isSessMcpError(error) ? error.message : 'the configuration cannot be read.'}\n`),
    );
    return 2;
  }
  const io: RecordsCliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    ...(process.stdin.isTTY && process.stderr.isTTY ? { prompt: ask } : {}),
  };
  const where = { stateDir: config.stateDir, profile: config.profile };
  const store = createFileHandleStore(where);
  return runRecordsCli(rest, io, {
    ...openProfileRecords(where),
    outbox: store.outbox(),
    prune: store.prune,
  });
}

/**
 * Node prints an uncaught error's message and stack to stderr, and a message could quote a value.
 * While serving, stderr carries fixed events only: report the event instead. An uncaught
 * exception ends the process (records are durable; the host may restart it); a stray rejected
 * promise does not.
 */
function guardStderr(diagnostics: (event: { event: string }) => void): void {
  process.on('uncaughtException', () => {
    diagnostics({ event: 'uncaught_exception' });
    process.exit(1);
  });
  process.on('unhandledRejection', () => {
    diagnostics({ event: 'unhandled_rejection' });
  });
}

async function ask(question: string): Promise<string> {
  // The question goes to stderr so stdout stays clean for scripts.
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  () => {
    process.stderr.write('sess-mcp: unexpected failure.\n');
    process.exitCode = 1;
  },
);
