/**
 * The HTTP face wired to real parts for end-to-end tests: the local Sess runtime
 * (`startLocalSess`), the real Sess client inside the handler, the memory store, and the handler
 * mounted in a real `node:http` server on 127.0.0.1. Bearer tokens map to principals in a table the
 * test controls (a stand-in for the host's OAuth), so grants can be re-issued or refreshed.
 *
 * Besides the tool-call helpers it states one expectation the flows share: the person's approval
 * read back verified ({@link readApproved}).
 */

import { expect } from 'vitest';
import type {
  DiagnosticEvent,
  HandleStore,
  HandleStoreFactory,
  HttpBinding,
} from '../../src/core/contract/ports.js';
import type { InteractionResult } from '../../src/core/contract/result.js';
import type { Answer } from '../../src/core/model/surface.js';
import {
  createSessMcpHttpHandler,
  type SessHttpPrincipal,
  type SessMcpHttpHandler,
  type SessMcpHttpHandlerOptions,
} from '../../src/http/index.js';
import { createMemoryHandleStore } from '../../src/store/memory/memory-store.js';
import { type LocalSess, type LocalSessOptions, startLocalSess } from '../../src/testing/index.js';
import { type Outcome, outcomeOf, type ToolResultLike } from '../support/outcome.js';
import { approveSurface, followUpSurface } from '../support/surfaces.js';
import { listen, type TestServer } from './helpers.js';

/** The engine suite's Surfaces: one required text field, and a follow-up for `sess_publish`. */
export { approveSurface, followUpSurface };

/** An answer with a distinctive value the secrets audit can look for. */
export const approveAnswer: Answer = {
  action: 'approve',
  values: { message: 'lunch at 13:45 zebra crossing' },
};

/** Anything with the MCP clients' `callTool`. */
export interface ToolCaller {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/** One tool call's outcome (`test/support/outcome.ts`). */
export type { Outcome };

/** Call a tool and read `structuredContent`. */
export async function call(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<Outcome> {
  return outcomeOf((await client.callTool({ name, arguments: args })) as ToolResultLike);
}

/** Call a tool that must succeed. */
export async function ok(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
): Promise<InteractionResult> {
  const outcome = await call(client, name, args);
  if (!outcome.ok) throw new Error(`${name} failed: ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.interaction;
}

/** The handles `sess_list` (no arguments) shows `client`. */
export async function listedHandles(client: ToolCaller): Promise<string[]> {
  const result = (await client.callTool({ name: 'sess_list', arguments: {} })) as {
    structuredContent?: { items?: Array<{ handle: string }> };
  };
  const items = result.structuredContent?.items;
  if (!Array.isArray(items)) throw new Error('sess_list answered without items');
  return items.map((item) => item.handle);
}

/** `sess_response` on `handle` without waiting: `ok:<state>`, or the error code. */
export async function responseCode(client: ToolCaller, handle: string): Promise<string> {
  const outcome = await call(client, 'sess_response', { handle, revision: 1, wait_ms: 0 });
  return outcome.ok ? `ok:${outcome.interaction.state}` : outcome.error.code;
}

/**
 * `sess_response` on `handle` at revision 1 (waiting up to 5 s): it must be answered with
 * {@link approveAnswer}, verified, and match `more` as well. Returns the result.
 */
export async function readApproved(
  client: ToolCaller,
  handle: string,
  more: Record<string, unknown> = {},
): Promise<InteractionResult> {
  const answered = await ok(client, 'sess_response', { handle, revision: 1, wait_ms: 5_000 });
  expect(answered.state).toBe('answered');
  expect(answered.response).toMatchObject({
    revision: 1,
    action: 'approve',
    values: approveAnswer.values,
    verified: true,
    ...more,
  });
  return answered;
}

/** A running HTTP harness. */
export interface HttpHarness {
  sess: LocalSess;
  handler: SessMcpHttpHandler;
  server: TestServer;
  /** The memory store backend every request's view comes from. */
  stores: HandleStoreFactory;
  /** Every diagnostic event the handler emitted. */
  events: DiagnosticEvent[];
  /** Bearer token → principal; edit it to re-issue or refresh grants. */
  tokens: Map<string, SessHttpPrincipal>;
  /** How often `authenticate` and `handleStore` ran. */
  counts: { authenticate: number; handleStore: number };
  /** Bindings `handleStore` was asked for, in order. */
  bindings: HttpBinding[];
  /** Register a bearer token for a principal of the runtime's workspace. */
  principal(token: string, overrides?: Partial<SessHttpPrincipal>): SessHttpPrincipal;
  close(): Promise<void>;
}

/**
 * A principal of the runtime's workspace (`alice` of `client_1`, scope `sess`) whose credential is
 * the runtime's API key; `overrides` changes any part.
 */
export function runtimePrincipal(
  sess: LocalSess,
  overrides: Partial<SessHttpPrincipal> = {},
): SessHttpPrincipal {
  return {
    workspaceId: sess.workspaceId,
    principalId: 'alice',
    clientId: 'client_1',
    grantId: 'grant_1',
    grantGeneration: 'g1',
    scopes: ['sess'],
    credential: () => sess.apiKey,
    ...overrides,
  };
}

/** Start the runtime, the handler and the server. */
export async function startHttpHarness(
  extra: Partial<SessMcpHttpHandlerOptions> = {},
  wrapStore?: (store: HandleStore) => HandleStore,
  sessOptions?: LocalSessOptions,
): Promise<HttpHarness> {
  const sess = await startLocalSess(sessOptions);
  const stores = createMemoryHandleStore();
  const events: DiagnosticEvent[] = [];
  const tokens = new Map<string, SessHttpPrincipal>();
  const counts = { authenticate: 0, handleStore: 0 };
  const bindings: HttpBinding[] = [];
  const handler = createSessMcpHttpHandler({
    authenticate(request) {
      counts.authenticate += 1;
      const header = request.headers.get('authorization') ?? '';
      return tokens.get(header.replace(/^Bearer /, ''));
    },
    handleStore(binding) {
      counts.handleStore += 1;
      bindings.push(binding);
      const store = stores.forBinding(binding);
      return wrapStore === undefined ? store : wrapStore(store);
    },
    allowedHosts: ['127.0.0.1', 'localhost'],
    requiredScopes: ['sess'],
    sessOrigin: sess.origin,
    allowInsecureLocalhost: true,
    requestDeadlineMs: 10_000,
    diagnostics: (event) => events.push(event),
    ...extra,
  });
  const server = await listen((req, res) => handler.node(req, res));
  return {
    sess,
    handler,
    server,
    stores,
    events,
    tokens,
    counts,
    bindings,
    principal(token, overrides = {}) {
      const p = runtimePrincipal(sess, overrides);
      tokens.set(token, p);
      return p;
    },
    async close() {
      await handler.close();
      await server.close();
      await sess.close();
    },
  };
}
