/**
 * `sess-mcp local`: start the local Sess runtime and print its origin, API key and workspace id,
 * for trying `@sess.si/mcp` by hand against a Sess that runs on this machine. The `sess-mcp`
 * command (`bin.ts`) loads this module only for that command; the runtime is the public
 * `@sess.si/mcp/testing` entry's.
 *
 * Usage: `sess-mcp local [--port <n>] [--host <address>]` (default 127.0.0.1, a random port). It
 * runs until interrupted. The printed API key is a throwaway key of this in-memory runtime.
 *
 * On loopback it prints nothing else (no links, receipts or answers). With `--host` on another
 * address (`0.0.0.0` for every interface) it is meant to reach a phone, so it prints the link of
 * each new Session as a phone on the network opens it, with a QR code of it when the optional
 * `qrcode` package is installed (`npm install qrcode`); without it, the link alone.
 */
import { networkInterfaces } from 'node:os';
import { type LocalSess, startLocalSess } from '../testing/index.js';

/** The usage line of the command. */
export const LOCAL_USAGE = 'Usage: sess-mcp local [--port <0-65535>] [--host <address>]\n';

function usage(message?: string): never {
  if (message) process.stderr.write(`sess-mcp local: ${message}\n`);
  process.stderr.write(LOCAL_USAGE);
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

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;
const WILDCARD = /^(0\.0\.0\.0|::|\[::\])$/;

/** The first non-internal IPv4 address of this machine: what a phone on the same network reaches. */
function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) if (info.family === 'IPv4' && !info.internal) return info.address;
  }
  return undefined;
}

type DrawQr = (text: string) => Promise<string>;

/** `qrcode`'s terminal renderer, or `undefined` when that optional package is not installed. */
async function loadQr(): Promise<DrawQr | undefined> {
  try {
    const { default: QRCode } = await import('qrcode');
    return (text) => QRCode.toString(text, { type: 'terminal', small: true, errorCorrectionLevel: 'L' });
  } catch {
    return undefined;
  }
}

/**
 * Print the link of every Session created from now on, on `linkOrigin`, with its QR code. The
 * runtime offers no event for a new Session, so this looks every 250 ms (a person is slower).
 */
function announceLinks(sess: LocalSess, linkOrigin: string, qr: DrawQr | undefined): () => void {
  const seen = new Set<string>();
  let busy = false;
  const look = async () => {
    if (busy) return;
    busy = true;
    try {
      for (const { view } of sess.sessions.list()) {
        if (seen.has(view.id)) continue;
        seen.add(view.id);
        const sessLink = new URL(view.human_url);
        const link = new URL(sessLink.pathname + sessLink.search, linkOrigin).href;
        let text = `\nNew Sess link: ${link}\n`;
        if (qr !== undefined) text += `${await qr(link)}\n`;
        process.stdout.write(text);
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), 250);
  return () => clearInterval(timer);
}

/** Run `sess-mcp local` with the arguments after `local`: it runs until interrupted. */
export function runLocalCommand(argv: readonly string[]): void {
  const { port, host } = parseArgs([...argv]);
  startLocalSess({ port, host }).then(
    (sess) => {
      process.stdout.write(
        `Local Sess runtime running.\n` +
          `SESS_API_ORIGIN=${sess.origin}\n` +
          `SESS_API_KEY=${sess.apiKey}\n` +
          `SESS_EXPECTED_WORKSPACE_ID=${sess.workspaceId}\n` +
          `SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1\n`,
      );
      let stopLinks = () => {};
      if (!LOOPBACK.test(host)) {
        const origin = new URL(sess.origin);
        const lan = WILDCARD.test(host) ? lanAddress() : undefined;
        if (lan !== undefined) origin.hostname = lan;
        void loadQr().then((qr) => {
          process.stdout.write(
            `Links of new Sessions show here, on ${origin.origin}` +
              (qr === undefined
                ? ' (npm install qrcode to see a QR code of each).\n'
                : ', each with a QR code.\n'),
          );
          stopLinks = announceLinks(sess, origin.origin, qr);
        });
      }
      const stop = () => {
        stopLinks();
        void sess.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (error: unknown) => {
      const code = (error as { code?: unknown })?.code;
      process.stderr.write(
        `sess-mcp local: could not start (${typeof code === 'string' ? code : 'error'})\n`,
      );
      process.exit(1);
    },
  );
}
