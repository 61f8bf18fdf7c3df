/**
 * `npm start`, the newcomer demo, run for real as a child process: `npm start -- --auto` completes
 * the whole loop through headless Chromium and exits 0; `--host 0.0.0.0` prints a link a phone
 * on the network can open, with a QR code that decodes back to it (and Ctrl+C stops it cleanly); `--help`, an unknown flag, and `--auto`
 * without a browser each answer clearly.
 *
 * The `--auto` run needs `/usr/bin/chromium` (or `SESS_TEST_CHROMIUM`); without it that test is
 * skipped, except under `CI`, where a missing browser fails. Nothing here downloads a browser.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { decodeTerminalQr } from './terminal-qr.js';

const CHROMIUM = process.env.SESS_TEST_CHROMIUM || '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const LAN = Object.values(networkInterfaces())
  .flat()
  .find((info) => info?.family === 'IPv4' && !info.internal)?.address;
const LINK = /Open this (?:on your phone|in your browser): (http:\/\/\S+)/;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * `npm start -- ...args` in the repository root, in its own process group (so Ctrl+C reaches all).
 * `silent` adds npm's `--silent`, which keeps npm's own lines about a failing script off stderr.
 */
function start(args: string[], options: { env?: Record<string, string>; silent?: boolean } = {}): Run {
  const npmArgs = options.silent === false ? ['start', '--', ...args] : ['start', '--silent', '--', ...args];
  const child = spawn('npm', npmArgs, {
    cwd: process.cwd(),
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Resolves once stdout matches `pattern`; rejects if the process ends first. */
function waitForOutput(run: Run, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = run.stdout().match(pattern);
      if (match !== null) {
        run.child.stdout?.off('data', check);
        resolve(match);
      }
    };
    run.child.stdout?.on('data', check);
    run.exited.then(() =>
      reject(new Error(`exited before printing ${pattern}:\n${run.stdout()}${run.stderr()}`)),
    );
    check();
  });
}

/** The lines of the QR code printed after "or scan it:". */
function qrBelow(text: string): string[] {
  const after = text.slice(text.indexOf('or scan it:\n') + 'or scan it:\n'.length).split('\n');
  return after.slice(
    0,
    after.findIndex((line) => !line.includes('\x1b[')),
  );
}

/** Nothing secret in what the demo prints: no Sess API key, no bearer token. */
function expectNoSecrets(text: string): void {
  expect(text).not.toMatch(/sk_local_/);
  expect(text).not.toMatch(/Bearer/i);
}

if (!HAVE_CHROMIUM && !process.env.CI) {
  console.warn(`npm start -- --auto skipped: ${CHROMIUM} is missing (run bash scripts/ci-chromium.sh)`);
}

// The four runs are independent child processes; side by side the file takes as long as the longest.
describe.concurrent('npm start (the newcomer demo)', { timeout: 120_000 }, () => {
  it.skipIf(!HAVE_CHROMIUM && !process.env.CI)(
    `--auto completes ask → answer → publish → answer → complete and exits 0${HAVE_CHROMIUM ? '' : ` (skipped: ${CHROMIUM} is missing)`}`,
    async () => {
      if (!HAVE_CHROMIUM)
        throw new Error(`${CHROMIUM} is missing; CI must install it with scripts/ci-chromium.sh`);
      const run = start(['--auto'], { silent: false });
      const code = await run.exited;
      const out = run.stdout();
      expect(run.stderr(), out).toBe('');
      expect(code, out).toBe(0);

      // The steps, in order.
      const steps = [
        /Agent connected over MCP: .*sess_ask/,
        /Agent → sess_ask: "What time works for a call tomorrow\?"/,
        /Open this in your browser: http:\/\/127\.0\.0\.1:\d+\/s\/[A-Za-z0-9_-]+\n/,
        /✓ Verified answer \(signed receipt checked, revision 1\)\n {4}action: submit\n {4}slot: 13:00\n {4}note: Bring the new onboarding mock-ups\.\n {4}urgency: 4\n/,
        /Agent → sess_publish: a follow-up/,
        /published revision 2/,
        /✓ Verified answer \(signed receipt checked, revision 2\)\n {4}action: send\n/,
        /Agent → sess_complete\n {2}completed: the invite is on its way/,
        /\[browser\] the page says "Done — the agent has your answer\."/,
        /Done in [\d.]+ s: asked, answered, published, answered, completed\./,
      ];
      let from = 0;
      for (const step of steps) {
        const at = out.slice(from).search(step);
        expect(at, `missing or out of order: ${step}\n${out}`).toBeGreaterThanOrEqual(0);
        from += at;
      }
      // A link on 127.0.0.1 is for this computer: no QR code for a phone.
      expect(out).not.toContain('or scan it');
      expectNoSecrets(out);
    },
  );

  it('--host 0.0.0.0 prints a link on the network address that serves the page; Ctrl+C stops it', async () => {
    const run = start(['--host', '0.0.0.0']);
    try {
      const [, link] = await waitForOutput(run, LINK);
      const url = new URL(link!);
      // Never the wildcard: a phone cannot open 0.0.0.0. With a network, the machine's own address.
      expect(url.hostname).not.toBe('0.0.0.0');
      if (LAN !== undefined) {
        expect(url.hostname).toBe(LAN);
        expect(run.stdout()).toContain(
          `Sess runtime: http://0.0.0.0:${url.port} (reachable at ${url.origin})`,
        );
      } else {
        expect(run.stdout()).toContain('No network address found');
      }
      // The QR code under the link reads back to the link itself.
      await waitForOutput(run, /or scan it:\n(?:.*\x1b\[.*\n)+\n/);
      expect(decodeTerminalQr(qrBelow(run.stdout()))).toBe(link);
      // The page answers on that address (the runtime listens on every interface).
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('What time works for a call tomorrow?');
      await waitForOutput(run, /Agent → sess_response \(revision 1/);
    } finally {
      if (run.child.exitCode === null) process.kill(-run.child.pid!, 'SIGINT');
    }
    await run.exited;
    expect(run.stdout()).toContain('Stopping…');
    expect(run.stderr()).toBe('');
    expectNoSecrets(run.stdout());
  });

  it('--help explains the flags and exits 0; an unknown flag or an unusable host exits 2 naming it', async () => {
    const help = start(['--help']);
    const bad = start(['--nope']);
    const badHost = start(['--host', '192.0.2.7']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toContain('--host <address>');
    expect(help.stdout()).toContain('--auto');
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toContain("Unknown option '--nope'");
    expect(bad.stderr()).toContain('npm start -- --help');
    expect(await badHost.exited).toBe(2);
    expect(badHost.stderr()).toContain('--host 192.0.2.7: use 0.0.0.0');
    expect(badHost.stdout()).toBe('');
  });

  it('--auto without Chromium says so and exits 1, downloading nothing', async () => {
    const run = start(['--auto'], { env: { SESS_TEST_CHROMIUM: '/nonexistent/chromium' } });
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('--auto needs Chromium at /nonexistent/chromium');
    expect(run.stderr()).toContain('No browser is downloaded.');
    expect(run.stdout()).not.toContain('Open this');
  });
});
