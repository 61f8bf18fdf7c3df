/**
 * Run by Bun or Deno (not by vitest): serves `telemetry-worker.ts` (the edge example's handler
 * with the real OpenTelemetry SDK) with `Bun.serve` or `Deno.serve`. Prints `LISTENING <port>`
 * once ready. Configuration comes from the environment (`SESS_API_KEY`, `SESS_WORKSPACE_ID`,
 * `MCP_BEARER_TOKEN`, `SESS_API_ORIGIN`).
 */
import type { EdgeEnv } from '../../examples/fetch-edge.js';
import worker from './telemetry-worker.js';

type Serve = (request: Request) => Promise<Response>;
interface BunLike {
  serve(options: { port: number; hostname: string; fetch: Serve }): { port: number };
}
interface DenoLike {
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number }): void },
    handler: Serve,
  ): unknown;
}

const env: EdgeEnv = {
  SESS_API_KEY: process.env.SESS_API_KEY ?? '',
  SESS_WORKSPACE_ID: process.env.SESS_WORKSPACE_ID ?? '',
  MCP_BEARER_TOKEN: process.env.MCP_BEARER_TOKEN ?? '',
  MCP_ALLOWED_HOST: '127.0.0.1',
  ...(process.env.SESS_API_ORIGIN === undefined ? {} : { SESS_API_ORIGIN: process.env.SESS_API_ORIGIN }),
  SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
};
const serve: Serve = (request) => worker.fetch(request, env);
const { Bun: bun, Deno: deno } = globalThis as unknown as { Bun?: BunLike; Deno?: DenoLike };
if (bun !== undefined) {
  process.stdout.write(`LISTENING ${bun.serve({ port: 0, hostname: '127.0.0.1', fetch: serve }).port}\n`);
} else if (deno !== undefined) {
  deno.serve(
    { port: 0, hostname: '127.0.0.1', onListen: ({ port }) => console.log(`LISTENING ${port}`) },
    serve,
  );
} else {
  throw new Error('run this file with Bun or Deno');
}
