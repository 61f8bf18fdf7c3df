/**
 * Example: add the MCP endpoint to an existing `node:http` server, next to its other routes — a
 * health check and the RFC 9728 Protected Resource Metadata document the `401` challenge points
 * to.
 *
 * The token check stands in for a real OAuth resource server (see `node-http.ts`). It imports
 * the package by its name, as an application does.
 */
import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryHandleStore } from '@sess.si/mcp';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '@sess.si/mcp/http';

/** What the example needs to run. */
export interface ExistingServerOptions {
  /** Bearer token → the principal it stands for (a stand-in for OAuth token introspection). */
  tokens: ReadonlyMap<string, SessHttpPrincipal>;
  /** @default 'https://api.sess.si' */
  sessOrigin?: string;
  /** Testing only: a local `http://127.0.0.1` Sess runtime. */
  allowInsecureLocalhost?: boolean;
  /** Lower the request deadline (default 60 s). */
  requestDeadlineMs?: number;
}

/** The running server. */
export interface RunningServer {
  /** The server's base URL, e.g. `http://127.0.0.1:8080`. */
  origin: string;
  close(): Promise<void>;
}

function lookup(
  tokens: ReadonlyMap<string, SessHttpPrincipal>,
  given: string,
): SessHttpPrincipal | undefined {
  const a = Buffer.from(given);
  for (const [token, principal] of tokens) {
    const b = Buffer.from(token);
    if (a.length === b.length && timingSafeEqual(a, b)) return principal;
  }
  return undefined;
}

/** Start an application server with `/healthz`, the resource metadata, and `/mcp`. */
export async function startExistingServer(options: ExistingServerOptions): Promise<RunningServer> {
  const stores = createMemoryHandleStore();
  let origin = '';
  const handler = createSessMcpHttpHandler({
    authenticate(request) {
      const header = request.headers.get('authorization') ?? '';
      return header.startsWith('Bearer ')
        ? lookup(options.tokens, header.slice('Bearer '.length))
        : undefined;
    },
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: ['127.0.0.1', 'localhost'],
    requiredScopes: ['sess'],
    // The port is known only after listen(); the URL is fixed for the example's lifetime.
    resourceMetadataUrl: 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp',
    ...(options.sessOrigin === undefined ? {} : { sessOrigin: options.sessOrigin }),
    ...(options.allowInsecureLocalhost === true ? { allowInsecureLocalhost: true } : {}),
    ...(options.requestDeadlineMs === undefined ? {} : { requestDeadlineMs: options.requestDeadlineMs }),
  });

  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    switch (path) {
      case '/healthz':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      case '/.well-known/oauth-protected-resource/mcp':
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            resource: `${origin}/mcp`,
            authorization_servers: ['https://auth.example.com'],
            scopes_supported: ['sess'],
            bearer_methods_supported: ['header'],
          }),
        );
        return;
      case '/mcp':
        handler.node(req, res);
        return;
      default:
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
