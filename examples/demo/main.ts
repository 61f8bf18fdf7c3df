/**
 * `npm start`: the command line of the newcomer demo (see `demo.ts`). It reads the flags, brings
 * in the headless browser for `--auto`, runs the demo once and exits 0 when it completed.
 *
 * It does not build anything: `npm start` (start.mjs) bundles this file with esbuild first, from the
 * sources, so it works right after `npm ci`.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { checkDemoHost, type DemoOutput, type DemoPerson, runDemo } from './demo.js';
import { chromiumPath, haveChromium, launchAutoPerson } from './person.js';

const HELP = `Sess MCP demo: an agent asks you a question on your phone and carries on with your verified answer.

Usage: npm start [-- options]

  --host <address>  Where the answer page listens. 0.0.0.0 makes the link work from a phone on
                    the same network (the MCP endpoint stays on 127.0.0.1). Default 127.0.0.1.
  --auto            Answer by itself in headless Chromium (${chromiumPath()}).
  --help            Show this.

Everything runs on this computer with an in-memory Sess runtime; no account is needed.
`;

const out: DemoOutput = { line: (text = '') => process.stdout.write(`${text}\n`) };

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

let values: { host?: string; auto?: boolean; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      host: { type: 'string' },
      auto: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (error) {
  fail(
    `${error instanceof Error ? error.message : String(error)}\nRun npm start -- --help for the options.`,
    2,
  );
}

if (values.help === true) {
  process.stdout.write(HELP);
  process.exit(0);
}
if (values.host !== undefined) {
  const problem = checkDemoHost(values.host.trim());
  if (problem !== undefined) fail(problem, 2);
}

let person: DemoPerson | undefined;
if (values.auto === true) {
  if (!haveChromium()) {
    fail(
      `--auto needs Chromium at ${chromiumPath()} and there is none.\n` +
        'Install it (Debian/Ubuntu: sudo apt-get install chromium) or set SESS_TEST_CHROMIUM to its path,\n' +
        'or run npm start without --auto and answer in your own browser. No browser is downloaded.',
      1,
    );
  }
  try {
    person = await launchAutoPerson(out);
  } catch (error) {
    fail(
      `Could not start Chromium at ${chromiumPath()}: ${error instanceof Error ? error.message : error}`,
      1,
    );
  }
}

const stop = new AbortController();
process.once('SIGINT', () => {
  out.line('\nStopping…');
  stop.abort();
});

/** What a host does after four calls without an answer: ask the person to say "continue". */
async function askToContinue(): Promise<void> {
  if (!process.stdin.isTTY) return;
  out.line('  The form is still open. Answer it, then press Enter here to continue (Ctrl+C stops).');
  const rl = createInterface({ input: process.stdin });
  try {
    await new Promise<void>((resolve, reject) => {
      rl.once('line', () => resolve());
      stop.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
    });
  } finally {
    rl.close();
  }
}

let code = 0;
const started = Date.now();
try {
  await runDemo(out, {
    ...(values.host === undefined ? {} : { host: values.host.trim() }),
    ...(person === undefined ? {} : { person }),
    askToContinue,
    signal: stop.signal,
  });
  out.line();
  out.line(
    `Done in ${((Date.now() - started) / 1000).toFixed(1)} s: asked, answered, published, answered, completed.`,
  );
} catch (error) {
  code = stop.signal.aborted ? 130 : 1;
  if (!stop.signal.aborted) {
    process.stderr.write(`The demo stopped: ${error instanceof Error ? error.message : String(error)}\n`);
  }
} finally {
  await person?.close().catch(() => {});
}
process.exit(code);
