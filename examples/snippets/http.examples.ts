/**
 * The JSDoc examples of `@sess.si/mcp/http`. The type check covers this file and `npm run snippets`
 * copies each region into the JSDoc that names it; it is never run.
 */
import http from 'node:http';
import {
  createSessMcpHttpHandler,
  createSessMcpWatcher,
  type SessHttpPrincipal,
  type SessMcpHttpHandler,
  type SessMcpWatcher,
} from '../../src/http/index.js';
import {
  createMemoryHandleStore,
  createWaitGate,
  type HandleStoreFactory,
  type HttpBinding,
  type WakeEvent,
} from '../../src/index.js';

declare const myOAuth: { verify(authorization: string | null): Promise<SessHttpPrincipal | undefined> };
declare const app: http.RequestListener;
declare const myGrants: { sessKeyFor(binding: HttpBinding): Promise<string | undefined> };
declare const myQueue: { push(event: WakeEvent): Promise<void> };

export function handlerExample(): http.Server {
  //#region createSessMcpHttpHandler
  // createMemoryHandleStore comes from '@sess.si/mcp', createSessMcpHttpHandler from '@sess.si/mcp/http'.
  const stores = createMemoryHandleStore();
  const handler = createSessMcpHttpHandler({
    authenticate: (request) => myOAuth.verify(request.headers.get('authorization')),
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: ['mcp.example.com'],
    requiredScopes: ['sess'],
    resourceMetadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource',
  });
  const server = http.createServer();
  handler.attach(server); // or http.createServer(handler.node)
  server.listen(8080);
  //#endregion
  return server;
}

export function checkContinueExample(server: http.Server, handler: SessMcpHttpHandler): void {
  //#region checkContinue
  server.on('checkContinue', (req, res) => {
    if (req.url?.startsWith('/mcp')) return handler.checkContinue(req, res);
    res.writeContinue();
    app(req, res); // the host's other routes
  });
  //#endregion
}

export function attachExample(handler: SessMcpHttpHandler): http.Server {
  //#region attach
  const server = http.createServer();
  handler.attach(server);
  server.listen(8080);
  //#endregion
  return server;
}

export function readyExample(handler: SessMcpHttpHandler): (request: Request) => Promise<Response> {
  //#region ready
  // A route of the host's own in front of the handler; Sess is never called by it.
  const route = (request: Request) =>
    new URL(request.url).pathname === '/ready' ? handler.ready(request) : handler.fetch(request);
  //#endregion
  return route;
}

export function watcherExample(stores: HandleStoreFactory): SessMcpWatcher {
  //#region createSessMcpWatcher
  // createSessMcpWatcher and createSessMcpHttpHandler come from '@sess.si/mcp/http'.
  const waitGate = createWaitGate();
  const handler = createSessMcpHttpHandler({
    authenticate: (request) => myOAuth.verify(request.headers.get('authorization')),
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: ['mcp.example.com'],
    waitGate,
  });
  const watcher = createSessMcpWatcher({
    handleStores: stores,
    // The principal's Sess key now; undefined for a revoked grant or an older grant generation.
    credentialFor: (binding) => myGrants.sessKeyFor(binding),
    waitGate,
    onEvent: (event) => myQueue.push(event), // a reference only: call sess_response to read it
  });
  watcher.start();
  //#endregion
  void handler;
  return watcher;
}
