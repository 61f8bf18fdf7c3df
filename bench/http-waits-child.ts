/**
 * The server process of measure 7: the Sess HTTP handler mounted on a real `node:http` server
 * through `handler.node` (memory store), the local runtime in another process. Driven over IPC by
 * bench/lib/http-waits.ts; run with `--expose-gc` so resident memory is read after a collection.
 *
 * Steps: create `n` interactions through the fetch face (one principal each, so no binding's cap
 * is reached), start listening, report the port, the handles and the resident memory; on
 * `measure`, report the memory with the client's requests held. It counts nothing about the
 * requests themselves; the client does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInteractions, memoryAfterGc, sessHandler } from './lib/mcp.js';

const [origin, workspaceId, apiKey, count] = process.argv.slice(2) as [string, string, string, string];
const n = Number(count);
const send = (message: unknown) => process.send!(message);
const rig = sessHandler(origin, workspaceId, apiKey);
const memory = memoryAfterGc;

const { handles } = await createInteractions(rig, n);

const server = http.createServer(rig.handler.node);
// Thousands of connects arrive in bursts; Node's default backlog (511) would drop some.
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 4096, resolve));
// Let the creates' sockets and buffers settle before the reading the requests are compared with.
await new Promise((resolve) => setTimeout(resolve, 500));
send({ kind: 'created', handles, port: (server.address() as AddressInfo).port, before: memory() });

process.on('message', async (message: { kind: string }) => {
  if (message.kind === 'measure') {
    await new Promise((resolve) => setTimeout(resolve, 200));
    send({ kind: 'held', during: memory(), connections: await connections() });
  } else if (message.kind === 'close') {
    await rig.handler.close();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});

function connections(): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, c) => resolve(error ? -1 : c)));
}
