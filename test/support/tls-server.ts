/**
 * A real HTTPS server on 127.0.0.1 whose certificate a client cannot accept: self-signed, and
 * issued for another host name (`sess.example`), as an origin pointing at the wrong host or a
 * proxy with its own certificate gives. A client that trusts no such certificate fails the
 * handshake with `DEPTH_ZERO_SELF_SIGNED_CERT`; one started with `NODE_EXTRA_CA_CERTS` naming
 * {@link MisnamedTlsServer.certFile} trusts it and fails on the name, `ERR_TLS_CERT_ALTNAME_INVALID`.
 *
 * The key and certificate are made for each server by `openssl` (a day's validity), in a
 * temporary directory removed on close. Whatever reaches the server is answered `500`: no test
 * should get that far.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The host name the certificate is for: never the 127.0.0.1 a client connects to. */
export const CERTIFICATE_HOST = 'sess.example';

/** A running server with a certificate for {@link CERTIFICATE_HOST}. */
export interface MisnamedTlsServer {
  /** `https://127.0.0.1:<port>`. */
  origin: string;
  /** The certificate (PEM), for a child's `NODE_EXTRA_CA_CERTS`. */
  certFile: string;
  /** How many requests got past the handshake (none should). */
  requests(): number;
  close(): Promise<void>;
}

/** Start a server on 127.0.0.1 with a fresh self-signed certificate for {@link CERTIFICATE_HOST}. */
export async function startMisnamedTlsServer(): Promise<MisnamedTlsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'sess-mcp-tls-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  // An EC key: made in milliseconds, where RSA takes a noticeable part of a second.
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${CERTIFICATE_HOST}`,
    '-addext',
    `subjectAltName=DNS:${CERTIFICATE_HOST}`,
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]).catch((error: unknown) => {
    throw new Error(`openssl could not make a test certificate (is it installed?): ${String(error)}`);
  });
  let requests = 0;
  const server = createServer(
    { key: await readFile(keyFile), cert: await readFile(certFile) },
    (_req, res) => {
      requests += 1;
      res.writeHead(500).end();
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    certFile,
    requests: () => requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
