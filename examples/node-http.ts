/**
 * Example: mount `handler.node` in a plain `node:http` server.
 *
 * The bearer-token check below stands in for a real OAuth resource server: a production host
 * verifies an access token, maps it to a workspace, principal, client, grant and grant generation,
 * and gives `credential()` that returns the Sess API key (or token) for that grant. The MCP bearer
 * token itself never goes to Sess. The memory store keeps handles for the life of the process
 * only; a hosted deployment supplies a durable store (for example `@sess.si/mcp/store/postgres`).
 *
 * It imports the package by its name, as an application does. Run it with a TypeScript runner
 * (Bun, or tsx):
 *
 * ```sh
 * SESS_API_KEY=… SESS_WORKSPACE_ID=… MCP_BEARER_TOKEN=$(openssl rand -hex 32) bun examples/node-http.ts
 * ```
 */
import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createMemoryHandleStore } from '@sess.si/mcp';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '@sess.si/mcp/http';

/** What the example needs to run. */
export interface NodeHttpExampleOptions {
  /** The Sess API key the example's one principal acts with. */
  sessApiKey: string;
  /** The bearer token an MCP client must present (at least 16 characters). */
  bearerToken: string;
  /** @default 'https://api.sess.si' */
  sessOrigin?: string;
  /** Testing only: a local `http://127.0.0.1` Sess runtime. */
  allowInsecureLocalhost?: boolean;
  /**
   * The Sess workspace the key belongs to (its id, as Sess names it: `sess-mcp local` prints its
   * runtime's). The handler checks the key against it.
   */
  workspaceId: string;
  /** @default 0 (any free port) */
  port?: number;
  /** @default '127.0.0.1' */
  hostname?: string;
}

/** A running example server. */
export interface RunningExample {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`. */
  url: string;
  close(): Promise<void>;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Start the example: the handler mounted at `/mcp` of a `node:http` server. */
export async function startNodeHttpExample(options: NodeHttpExampleOptions): Promise<RunningExample> {
  if (options.bearerToken.length < 16) throw new TypeError('bearerToken must be at least 16 characters');
  const hostname = options.hostname ?? '127.0.0.1';
  const stores = createMemoryHandleStore();
  const principal: SessHttpPrincipal = {
    workspaceId: options.workspaceId,
    principalId: 'owner',
    clientId: 'example-client',
    grantId: 'example-grant',
    grantGeneration: '1',
    scopes: ['sess'],
    credential: () => options.sessApiKey,
  };
  const handler = createSessMcpHttpHandler({
    authenticate(request) {
      const header = request.headers.get('authorization') ?? '';
      const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
      return sameSecret(token, options.bearerToken) ? principal : undefined;
    },
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: [hostname, 'localhost'],
    requiredScopes: ['sess'],
    ...(options.sessOrigin === undefined ? {} : { sessOrigin: options.sessOrigin }),
    ...(options.allowInsecureLocalhost === true ? { allowInsecureLocalhost: true } : {}),
  });
  const server = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === '/mcp') return handler.node(req, res);
    res.writeHead(404).end();
  });
  server.listen(options.port ?? 0, hostname);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}/mcp`,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sessApiKey = process.env.SESS_API_KEY ?? '';
  const workspaceId = process.env.SESS_WORKSPACE_ID ?? '';
  const bearerToken = process.env.MCP_BEARER_TOKEN ?? '';
  if (sessApiKey === '' || workspaceId === '' || bearerToken === '') {
    process.stderr.write(
      'Set SESS_API_KEY, SESS_WORKSPACE_ID (the workspace of that key) and MCP_BEARER_TOKEN.\n',
    );
    process.exit(1);
  }
  const running = await startNodeHttpExample({
    sessApiKey,
    workspaceId,
    bearerToken,
    port: Number(process.env.PORT ?? 8080),
    ...(process.env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: process.env.SESS_API_ORIGIN }),
  });
  process.stderr.write(`MCP endpoint: ${running.url}\n`);
  process.once('SIGINT', () => void running.close().then(() => process.exit(0)));
}
