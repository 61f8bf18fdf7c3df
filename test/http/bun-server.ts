/**
 * Run by Bun (not by vitest): serves `examples/fetch-edge.ts` with `Bun.serve`, so the whole flow
 * runs through `handler.fetch` on a non-Node runtime. Prints `LISTENING <port>` once ready.
 * Configuration comes from the environment (`SESS_API_KEY`, `SESS_WORKSPACE_ID`, `MCP_BEARER_TOKEN`,
 * `SESS_API_ORIGIN`).
 */
import edge, { type EdgeEnv } from '../../examples/fetch-edge.js';

interface BunLike {
  serve(options: { port: number; hostname: string; fetch(request: Request): Promise<Response> }): {
    port: number;
  };
  version: string;
}

const bun = (globalThis as unknown as { Bun?: BunLike }).Bun;
if (bun === undefined) throw new Error('run this file with Bun');
const env: EdgeEnv = {
  SESS_API_KEY: process.env.SESS_API_KEY ?? '',
  SESS_WORKSPACE_ID: process.env.SESS_WORKSPACE_ID ?? '',
  MCP_BEARER_TOKEN: process.env.MCP_BEARER_TOKEN ?? '',
  MCP_ALLOWED_HOST: '127.0.0.1',
  ...(process.env.SESS_API_ORIGIN === undefined ? {} : { SESS_API_ORIGIN: process.env.SESS_API_ORIGIN }),
  SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
};
const server = bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => edge.fetch(request, env) });
process.stdout.write(`LISTENING ${server.port} bun ${bun.version}\n`);
