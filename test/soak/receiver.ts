/**
 * The soak's webhook receiver: a `node:http` server on one port of 127.0.0.1 that can be taken
 * down (its listening socket closed, every connection dropped, so a sender's connection is
 * refused) and brought back on the same port. Every request is verified on arrival with the
 * `standardwebhooks` package, the reference verifier (`verifyDelivery`), and answered `204`; a
 * request that does not verify is answered `400` and counted.
 *
 * It keeps the event ids it got (with how many times each came), never a body or a signature.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { verifyDelivery } from '../support/webhook-receiver.js';

/** What the receiver got. */
export interface ReceiverTally {
  /** Verified deliveries per event id (more than 1: delivered again, as at-least-once allows). */
  readonly deliveries: Map<string, number>;
  /** When each event id first arrived (`Date.now()`). */
  readonly firstAt: Map<string, number>;
  /** Requests that did not verify, or whose `webhook-id` was not the payload's event id. */
  unverified: number;
}

/** A receiver that can be down for a while. */
export interface SwitchableReceiver {
  readonly url: string;
  readonly port: number;
  readonly tally: ReceiverTally;
  /** Close the port: connections are refused until {@link up}. */
  down(): Promise<void>;
  /** Listen on the same port again. */
  up(): Promise<void>;
  /** True when a TCP connection to the port is refused now. */
  refuses(): Promise<boolean>;
  close(): Promise<void>;
}

/** Start the receiver on `port` (free on 127.0.0.1), verifying with `secret`. */
export async function startSwitchableReceiver(port: number, secret: string): Promise<SwitchableReceiver> {
  const tally: ReceiverTally = { deliveries: new Map(), firstAt: new Map(), unverified: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers[name] = value;
      const body = Buffer.concat(chunks).toString('utf8');
      let eventId: string | undefined;
      try {
        const payload = verifyDelivery({ headers, body, at: Date.now() }, secret) as { eventId?: unknown };
        if (typeof payload.eventId === 'string' && payload.eventId === headers['webhook-id'])
          eventId = payload.eventId;
      } catch {
        eventId = undefined;
      }
      if (eventId === undefined) {
        tally.unverified += 1;
        res.writeHead(400).end();
        return;
      }
      tally.deliveries.set(eventId, (tally.deliveries.get(eventId) ?? 0) + 1);
      if (!tally.firstAt.has(eventId)) tally.firstAt.set(eventId, Date.now());
      res.writeHead(204).end();
    });
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await listen();
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    tally,
    down: close,
    up: listen,
    refuses: () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
      }),
    close,
  };
}
