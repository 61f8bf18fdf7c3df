/**
 * Measure 5 (cold start): spawn `sess-mcp` (bundled from source) until its answer to
 * `tools/list`, against a bare `serveStdio` server with seven trivial tools bundled the same way.
 *
 * Each trial is a fresh `node` process; the two kinds alternate.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOOL_NAMES } from '../../src/index.js';
import { atMostTimes, COLD_START_MAX } from './goals.js';
import { interleave, median, now } from './stats.js';
import { ms, type Row, times, yesNo } from './table.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
};

/** Milliseconds from spawn to the `tools/list` answer naming `expectTools` tools. */
function coldStart(script: string, env: NodeJS.ProcessEnv, expectTools: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(process.execPath, [script], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let buffer = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        const nl = buffer.indexOf('\n');
        if (nl < 0) break;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const message = JSON.parse(line) as { id?: number; result?: { tools?: unknown[] }; error?: unknown };
        if (message.id === 1) {
          child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
          child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
        } else if (message.id === 2) {
          const elapsed = now() - started;
          const count = message.result?.tools?.length;
          child.kill();
          if (count !== expectTools)
            reject(new Error(`tools/list: ${JSON.stringify(message).slice(0, 300)}`));
          else resolve(elapsed);
        }
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== null && code !== 0) reject(new Error(`exited ${code}`));
    });
    child.stdin.write(`${JSON.stringify(INIT)}\n`);
  });
}

/** Measure 5. */
export async function coldStartBench(): Promise<Row[]> {
  const dir = process.env.SESS_BENCH_DIR!;
  const state = mkdtempSync(join(tmpdir(), 'sess-bench-cold-'));
  const env = { PATH: process.env.PATH, HOME: state };
  const sessEnv = { ...env, SESS_API_KEY: 'sk_bench_not_used', SESS_MCP_STATE_DIR: state };
  try {
    const subject = () => coldStart(join(dir, 'sess-mcp.mjs'), sessEnv, TOOL_NAMES.length);
    const baseline = () => coldStart(join(dir, 'bare-stdio.mjs'), env, TOOL_NAMES.length);
    await subject();
    await baseline();
    const r = await interleave(10, subject, baseline);
    const s = median(r.subject);
    const b = median(r.baseline);
    return [
      {
        measure: '5 cold start (spawn → tools/list)',
        subject: ms(s),
        baseline: ms(b),
        ratio: times(s / b),
        goal: atMostTimes(COLD_START_MAX),
        met: yesNo(s / b <= COLD_START_MAX),
      },
    ];
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}
