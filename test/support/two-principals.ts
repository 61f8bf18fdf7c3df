/**
 * The HTTP face over one memory store backend with two principals of the local runtime's
 * workspace, `mallory` and `alice` (bearer tokens of the same names), for the `sess_list` proofs
 * and bounds: one principal lists while the other is served. It records the binding the handler
 * gives each request, so a test can write records under a principal's binding, and lets a test
 * wrap each request's store view (a counting double).
 *
 * It only wires the real parts together; what is sent and asserted is the test's.
 */
import type { Binding, HandleStore, HandleStoreFactory } from '../../src/core/contract/ports.js';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '../../src/http/index.js';
import { startLocalSess } from '../../src/testing/index.js';
import { listen } from '../http/helpers.js';

/** A running handler of two principals. */
export interface TwoPrincipals {
  /** The binding of every request, in order. */
  bindings: Binding[];
  /** POST one JSON-RPC message as `token`; its time, status and parsed JSON-RPC response. */
  post(
    token: 'mallory' | 'alice',
    body: unknown,
  ): Promise<{ ms: number; status: number; message: { result?: { structuredContent?: unknown } } }>;
  /** `sess_list` as mallory: its structuredContent. */
  list(args: Record<string, unknown>): Promise<Record<string, unknown> & { next_cursor?: string }>;
  close(): Promise<void>;
}

/** Start the runtime and a handler over `stores`; `wrap` is given each request's store view. */
export async function startTwoPrincipals(
  stores: HandleStoreFactory,
  wrap: (view: HandleStore) => HandleStore = (view) => view,
): Promise<TwoPrincipals> {
  const sess = await startLocalSess();
  const principal = (id: string): SessHttpPrincipal => ({
    workspaceId: sess.workspaceId,
    principalId: id,
    clientId: 'client_1',
    grantId: `grant_${id}`,
    grantGeneration: 'g1',
    scopes: ['sess'],
    credential: () => sess.apiKey,
  });
  const principals = new Map([
    ['mallory', principal('mallory')],
    ['alice', principal('alice')],
  ]);
  const bindings: Binding[] = [];
  const handler = createSessMcpHttpHandler({
    authenticate: (request) => principals.get((request.headers.get('authorization') ?? '').slice(7)),
    handleStore: (binding) => {
      bindings.push(binding);
      return wrap(stores.forBinding(binding));
    },
    allowedHosts: ['127.0.0.1'],
    requiredScopes: ['sess'],
    sessOrigin: sess.origin,
    allowInsecureLocalhost: true,
  });
  const server = await listen((req, res) => handler.node(req, res));
  // The calls come with long pauses between them (records are written meanwhile): a server that
  // closes an idle connection after Node's default 5 s can do so just as `fetch` reuses it, which
  // fails that call with ECONNRESET. The test's server keeps idle connections longer than any pause.
  server.server.keepAliveTimeout = 120_000;
  const post: TwoPrincipals['post'] = async (token, body) => {
    const started = performance.now();
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
    return { ms: performance.now() - started, status: response.status, message: JSON.parse(data) };
  };
  return {
    bindings,
    post,
    async list(args) {
      const { message } = await post('mallory', {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'sess_list', arguments: args },
      });
      return message.result?.structuredContent as Record<string, unknown>;
    },
    async close() {
      await handler.close();
      await server.close();
      await sess.close();
    },
  };
}
