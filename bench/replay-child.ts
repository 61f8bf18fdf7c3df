/**
 * The baseline's server of measure 1, in a process of its own as the runtime is: a `node:http`
 * server that answers each request with a response the local runtime sent for the same method
 * and path (status, headers and body, recorded once by bench/lib/adapter.ts), so the bare tool
 * reads exactly the bytes the Sess tool reads, without the runtime's work of producing them.
 *
 * Requests of one method and path are answered with that key's recorded responses in turn. It
 * checks nothing about a request; a request it has no recording for gets `404`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded response. */
export interface ReplayedResponse {
  method: string;
  path: string;
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** Headers Node sets itself for the bytes it sends. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

const queues = new Map<string, { responses: ReplayedResponse[]; next: number }>();

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const queue = queues.get(`${req.method} ${req.url}`);
    if (queue === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no recording');
      return;
    }
    const response = queue.responses[queue.next]!;
    queue.next = (queue.next + 1) % queue.responses.length;
    const body = Buffer.from(response.body, 'utf8');
    res.writeHead(response.status, [
      ...response.headers.filter(([name]) => !OWN_HEADERS.has(name.toLowerCase())).flat(),
      'content-length',
      String(body.length),
    ]);
    res.end(body);
  });
});

process.on('message', (message: { kind: string; responses?: ReplayedResponse[] }) => {
  if (message.kind === 'responses') {
    for (const response of message.responses!) {
      const key = `${response.method} ${response.path}`;
      const queue = queues.get(key) ?? { responses: [], next: 0 };
      queue.responses.push(response);
      queues.set(key, queue);
    }
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      process.send!({ kind: 'ready', origin: `http://127.0.0.1:${port}` });
    });
  } else if (message.kind === 'close') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
