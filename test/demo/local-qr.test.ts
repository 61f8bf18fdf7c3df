/**
 * `sess-mcp local --host 0.0.0.0` reaches a phone: it prints the link of each Session created by hand
 * on the machine's network address, with a QR code that decodes back to that link, and the page
 * opens there. With the optional `qrcode` package missing it prints the link alone and says how
 * to get the code. The bin is bundled from source with esbuild (once with `qrcode`, once without
 * it resolvable) as real child processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sampleSurface } from '../testing/helpers.js';
import { decodeTerminalQr } from './terminal-qr.js';

const LAN = Object.values(networkInterfaces())
  .flat()
  .find((info) => info?.family === 'IPv4' && !info.internal)?.address;

let dir = '';
const bins = { withQr: '', withoutQr: '' };
beforeAll(async () => {
  // Outside the repository, so a `qrcode` left external cannot be found in node_modules.
  dir = mkdtempSync(join(tmpdir(), 'sess-local-qr-'));
  bins.withQr = join(dir, 'with-qr.mjs');
  bins.withoutQr = join(dir, 'without-qr.mjs');
  const common: BuildOptions = {
    entryPoints: ['src/stdio/bin.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    // qrcode is CommonJS; give the ESM bundle a `require` for its own dependencies.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  };
  await build({ ...common, outfile: bins.withQr });
  await build({ ...common, outfile: bins.withoutQr, external: ['qrcode'] });
});
afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
});

function run(bin: string, args: string[]) {
  const child = spawn(process.execPath, [bin, 'local', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: dir,
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const printed = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = out.match(pattern);
        if (match === null) return;
        child.stdout!.off('data', check);
        resolve(match);
      };
      child.stdout!.on('data', check);
      child.once('exit', () => reject(new Error(`exited before ${pattern}:\n${out}${err}`)));
      check();
    });
  return { out: () => out, err: () => err, printed };
}

/** Create a Session by hand, as someone trying the runtime with curl would. */
async function createSession(out: string): Promise<void> {
  const env = Object.fromEntries(
    out
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const origin = env.SESS_API_ORIGIN!.replace('0.0.0.0', '127.0.0.1');
  const created = await fetch(`${origin}/v1/sessions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${env.SESS_API_KEY}`,
      'content-type': 'application/json',
      'idempotency-key': 'qr-1',
    },
    body: JSON.stringify({ interaction: sampleSurface() }),
  });
  expect(created.status).toBe(201);
  await created.arrayBuffer();
}

/** The QR lines printed right after the `New Sess link:` line. */
function qrAfterLink(out: string): string[] {
  const after = out.slice(out.indexOf('New Sess link:')).split('\n').slice(1);
  return after.slice(
    0,
    after.findIndex((line) => !line.includes('\x1b[')),
  );
}

describe('sess-mcp local on the network', { timeout: 30_000 }, () => {
  it('--host 0.0.0.0 prints each new link on the network address with a QR code that decodes to it', async () => {
    const p = run(bins.withQr, ['--host', '0.0.0.0']);
    await p.printed(/each with a QR code\.\n/);
    await createSession(p.out());
    const [, link] = await p.printed(/New Sess link: (http:\/\/\S+)\n(?:.*\x1b\[.*\n)+/);
    const url = new URL(link!);
    expect(url.hostname).toBe(LAN ?? '0.0.0.0');
    expect(decodeTerminalQr(qrAfterLink(p.out()))).toBe(link);
    if (LAN !== undefined) {
      const page = await fetch(url);
      expect(page.status).toBe(200);
      await page.arrayBuffer();
    }
    expect(p.err()).toBe('');
  });

  it('without the qrcode package it prints the link alone and says how to get the code', async () => {
    const p = run(bins.withoutQr, ['--host', '0.0.0.0']);
    await p.printed(/npm install qrcode to see a QR code of each/);
    await createSession(p.out());
    await p.printed(/New Sess link: http:\/\/\S+\n/);
    expect(p.out()).not.toContain('\x1b[');
    expect(p.err()).toBe('');
  });

  it('on loopback it prints no link at all', async () => {
    const p = run(bins.withQr, ['--host', '127.0.0.1']);
    await p.printed(/SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1\n/);
    const banner = p.out();
    await createSession(banner);
    // Longer than the 250 ms the network mode looks every.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(p.out()).toBe(banner);
  });
});
