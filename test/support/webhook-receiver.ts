/**
 * A real webhook receiver for the wake webhook tests: a `node:http` (or, with a certificate,
 * `node:https`) server on 127.0.0.1 that records every request it is sent (headers, body, when),
 * counts connections and the requests in flight, and answers as the test says. Deliveries are
 * verified with the `standardwebhooks` package, the reference verifier, never with this
 * package's own code.
 *
 * It decides nothing about what a test expects; it only receives and reports.
 *
 * @example
 * ```ts
 * const receiver = await startWebhookReceiver((exchange) => exchange.res.writeHead(204).end());
 * open.push(receiver);
 * await sender.send(event, { url: receiver.url, secrets: [secret] });
 * verifyDelivery(receiver.received[0]!, secret);
 * ```
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver got it. */
export interface ReceivedWebhook {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** `Date.now()` when the body was complete. */
  readonly at: number;
}

/** What a reply is handed: the request, its recorded form, its 0-based index. */
export interface ReceiverExchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly received: ReceivedWebhook;
  readonly index: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** `http(s)://127.0.0.1:<port>/hook`. */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly received: ReceivedWebhook[];
  /** Connections accepted so far. */
  connections(): number;
  /** The most requests that were in flight at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

/** A key and a self-signed certificate for 127.0.0.1 and localhost. */
export interface TestCertificate {
  readonly key: string;
  readonly cert: string;
}

/** Answers 204 with no body. */
export const NO_CONTENT = ({ res }: ReceiverExchange): void => {
  res.writeHead(204).end();
};

/**
 * Start a receiver on 127.0.0.1 that answers each request with `reply` (204 by default); with
 * `tls`, over HTTPS.
 */
export async function startWebhookReceiver(
  reply: (exchange: ReceiverExchange) => unknown = NO_CONTENT,
  tls?: TestCertificate,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let connections = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => {
      inFlight -= 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      const entry = { headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      void reply({ req, res, received: entry, index: received.length - 1 });
    });
  };
  const server = tls === undefined ? createHttpServer(handler) : createHttpsServer(tls, handler);
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/hook`,
    port,
    received,
    connections: () => connections,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A raw TCP server on 127.0.0.1, for receivers that misbehave below HTTP (tarpits). */
export interface RawReceiver {
  /** `http://127.0.0.1:<port>/hook`. */
  readonly url: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Start a raw TCP server on 127.0.0.1 that hands each connection to `onSocket` (to hold it, or
 * write bytes slowly); every socket is destroyed on close.
 */
export async function startRawReceiver(onSocket: (socket: Socket) => void): Promise<RawReceiver> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let accepted = 0;
  server.on('connection', () => {
    accepted += 1;
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Verify a received request with the reference library under its default tolerance; returns the payload. */
export function verifyDelivery(received: ReceivedWebhook, secret: string): unknown {
  return new Webhook(secret).verify(received.body, { ...received.headers });
}

/** A fresh `whsec_` secret of `bytes` random bytes. */
export function newSecret(bytes = 32): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64')}`;
}

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made now with `openssl` in `dir` (no key
 * is kept in the repository).
 */
export function selfSignedCertificate(dir: string): TestCertificate {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
}
