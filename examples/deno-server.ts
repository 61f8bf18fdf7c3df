/**
 * Example: the MCP endpoint on Deno, with `Deno.serve`.
 *
 * Run it where `@sess.si/mcp` is installed (a `package.json` that depends on it, and its
 * `node_modules`): `deno run --sloppy-imports --allow-net --allow-env examples/deno-server.ts`
 * (`--sloppy-imports` lets Deno take `./fetch-edge.js` for `fetch-edge.ts`) with `SESS_API_KEY`,
 * `SESS_WORKSPACE_ID` (the workspace of that key), `MCP_BEARER_TOKEN` and `MCP_ALLOWED_HOST` set
 * (`PORT` defaults to 8787). It serves the same
 * edge module as the Worker example, built once for the process from the environment; the memory
 * store lives as long as the process does. The package is imported by its name, as an
 * application does.
 */
import edge, { type EdgeEnv } from './fetch-edge.js';

/** The part of the `Deno` global this module uses. */
interface DenoLike {
  env: { get(name: string): string | undefined };
  serve(
    options: { port: number; hostname: string; onListen(address: { port: number; hostname: string }): void },
    handler: (request: Request) => Promise<Response>,
  ): { finished: Promise<void> };
  version: { deno: string };
}

const deno = (globalThis as unknown as { Deno?: DenoLike }).Deno;
if (deno === undefined) throw new Error('run this file with Deno');

const origin = deno.env.get('SESS_API_ORIGIN');
const env: EdgeEnv = {
  SESS_API_KEY: deno.env.get('SESS_API_KEY') ?? '',
  SESS_WORKSPACE_ID: deno.env.get('SESS_WORKSPACE_ID') ?? '',
  MCP_BEARER_TOKEN: deno.env.get('MCP_BEARER_TOKEN') ?? '',
  MCP_ALLOWED_HOST: deno.env.get('MCP_ALLOWED_HOST') ?? '127.0.0.1',
  ...(origin === undefined ? {} : { SESS_API_ORIGIN: origin }),
  ...(deno.env.get('SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST') === '1'
    ? { SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1' }
    : {}),
};

deno.serve(
  {
    port: Number(deno.env.get('PORT') ?? '8787'),
    hostname: deno.env.get('HOST') ?? '127.0.0.1',
    onListen: ({ port }) => console.log(`LISTENING ${port} deno ${deno.version.deno}`),
  },
  (request) => edge.fetch(request, env),
);
