/**
 * The `sess-mcp local` command as a real child process: it starts, prints origin, key and workspace, serves
 * a whole request → answer → complete round, logs nothing else (no link, receipt or answer), and
 * stops on SIGTERM. The bin is bundled from source with esbuild so the test never runs stale `dist`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerToForm } from '../../src/testing/page/index.js';
import { bundleForNode } from '../support/bundle.js';
import { ANSWER, sampleSurface } from './helpers.js';

let dir: string;
let bin: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sess-local-cli-'));
  bin = await bundleForNode('src/stdio/bin.ts', join(dir, 'sess-mcp.mjs'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, [bin, 'local', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

/** Resolves when stdout has `text` (event-driven); rejects if the process exits first. */
function printed(p: ReturnType<typeof run>, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!p.out().includes(text)) return;
      p.child.stdout!.off('data', check);
      resolve();
    };
    p.child.stdout!.on('data', check);
    void p.exit.then(() => reject(new Error('the process exited')));
    check();
  });
}

describe('sess-mcp local', () => {
  it('starts, prints what a client needs, serves a round, logs nothing secret, stops on SIGTERM', async () => {
    const p = run(['--port', '0']);
    await printed(p, 'SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1\n');
    const env = Object.fromEntries(
      p
        .out()
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => l.split('=', 2) as [string, string]),
    );
    expect(env.SESS_API_ORIGIN).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(env.SESS_API_KEY).toMatch(/^sk_local_/);
    expect(env.SESS_EXPECTED_WORKSPACE_ID).toMatch(/^ws_/);
    const banner = p.out();

    const headers = { authorization: `Bearer ${env.SESS_API_KEY}`, 'content-type': 'application/json' };
    const created = await fetch(`${env.SESS_API_ORIGIN}/v1/sessions`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'cli-1' },
      body: JSON.stringify({ interaction: sampleSurface() }),
    });
    expect(created.status).toBe(201);
    const s = await created.json();
    const posted = await fetch(s.human_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: answerToForm(sampleSurface(), ANSWER, 1).toString(),
      redirect: 'manual',
    });
    expect(posted.status).toBe(303);
    const view = await (await fetch(`${env.SESS_API_ORIGIN}/v1/sessions/${s.id}`, { headers })).json();
    const done = await fetch(`${env.SESS_API_ORIGIN}/v1/sessions/${s.id}/complete`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'cli-2', 'if-match': '"1"' },
      body: JSON.stringify({ response_event_id: view.responses[0].event_id }),
    });
    expect(done.status).toBe(200);

    p.child.kill('SIGTERM');
    expect(await p.exit).toBe(0);
    // Nothing was written after the start banner, and nothing to stderr.
    expect(p.out()).toBe(banner);
    expect(p.err()).toBe('');
    for (const secret of [s.human_url, view.responses[0].receipt, ANSWER.values.message]) {
      expect(p.out()).not.toContain(secret);
    }
  });

  it('refuses bad arguments with a usage message and exit code 2', async () => {
    for (const args of [['--port', '70000'], ['--port'], ['--bogus']]) {
      const p = run(args);
      expect(await p.exit).toBe(2);
      expect(p.err()).toMatch(/Usage: sess-mcp local/);
    }
  });
});
