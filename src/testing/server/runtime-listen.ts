/**
 * The local Sess runtime's `node:http` server: listening (a deep accept backlog, no Node timer
 * that would cut a long-poll, kept-alive sockets that clients retire first) and closing (every
 * wait ended, every connection dropped).
 *
 * It knows no route: the request listener it serves is `http.ts`'s.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalModel } from '../model/model.js';

/** How long the runtime keeps an idle kept-alive connection open. */
const KEEP_ALIVE_MS = 65_000;
/** The idle time it advertises (`Keep-Alive: timeout=…`), a minute less: clients close first. */
const KEEP_ALIVE_HINT = 'timeout=5';

/** Serve `listener` on `host`:`port`; resolves with the server and its origin once it listens. */
export async function listen(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  host: string,
  port: number,
): Promise<{ server: Server; origin: string }> {
  // Every response advertises a shorter idle time than the server keeps (`KEEP_ALIVE_HINT`): a
  // client retires an idle socket on the advertised figure, so one whose event loop lags by
  // seconds never sends its next request onto a socket the server has just closed.
  const server: Server = createServer((req, res) => {
    res.setHeader('keep-alive', KEEP_ALIVE_HINT);
    listener(req, res);
  });
  // Long-polls hold a request open for up to 45 s; never let Node's own timers cut them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept backlog: thousands of agents may open their long-polls at the same moment
    // (Node's default of 511 drops connections there, which the client reports as unavailable).
    server.listen({ port, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, origin: `http://${shown}:${address.port}` };
}

/** `LocalSess.close`: end every wait, stop the server and drop every connection; once. */
export function closer(model: LocalModel, server: Server): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= new Promise<void>((resolve) => {
      model.waits.endAll();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
}
