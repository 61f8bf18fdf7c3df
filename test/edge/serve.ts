/**
 * Run by Bun or Deno (not by vitest): serves `examples/fetch-edge.ts` with `Bun.serve` or
 * `Deno.serve`, so the whole flow runs through `handler.fetch` on a non-Node runtime; with
 * `SESS_MCP_TEST_TELEMETRY=1`, `telemetry-worker.ts` instead (the same handler with the real
 * OpenTelemetry SDK). Prints `LISTENING <port>` once ready. Configuration comes from the
 * environment (`SESS_API_KEY`, `SESS_WORKSPACE_ID`, `MCP_BEARER_TOKEN`, `SESS_API_ORIGIN`).
 */
import type { EdgeEnv } from '../../examples/fetch-edge.js';

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
// Only the module asked for is loaded: the plain run has no OpenTelemetry SDK anywhere.
const edge = (
  process.env.SESS_MCP_TEST_TELEMETRY === '1'
    ? await import('./telemetry-worker.js')
    : await import('../../examples/fetch-edge.js')
).default;
const serve: Serve = (request) => edge.fetch(request, env);
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
