/**
 * The HTTP watcher tests' stack: the handler on a real socket over the local Sess runtime and the
 * memory store, its wait gate shared with the watchers a test makes, MCP clients of principals,
 * and their secrets and diagnostics audited. `useWatcherStack()` registers the file's clean-up and
 * audit hooks and returns the helpers.
 */
import type { DiagnosticEvent } from '../../src/core/contract/ports.js';
import { createWaitGate, type WaitGate } from '../../src/core/engine/wait-gate.js';
import {
  createSessMcpWatcher,
  type SessMcpHttpHandlerOptions,
  type SessMcpWatcherOptions,
} from '../../src/http/index.js';
import type { LocalSess } from '../../src/testing/index.js';
import { useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import { approveSurface, type HttpHarness, ok, startHttpHarness } from './harness.js';
import { connectModern } from './helpers.js';

/** Resolve once `check` holds, polling every 25 ms; fail after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = 'the condition',
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} did not hold within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The runtime's count of API calls to `endpoint` so far. */
export const requests = (sess: LocalSess, endpoint: string) => sess.stats.requests[endpoint] ?? 0;

/** The harness and the wait gate its handler shares with the watchers of a test. */
export type Stack = HttpHarness & { waitGate: WaitGate };

/** The state of `handle` in the store, read through the binding the handler recorded for it. */
export async function stateOf(h: HttpHarness, handle: string): Promise<string | undefined> {
  for (const binding of h.bindings) {
    const found = await h.stores.forBinding(binding).get(handle);
    if (found !== undefined) return found.record.state.kind;
  }
  return undefined;
}

/** The helpers of a test file, with its audit and clean-up hooks registered. */
export function useWatcherStack() {
  const audits = useSecretsAudit();
  const cleanup = useCleanup();
  /** A handler with a shared wait gate over the local runtime, its diagnostics and secrets audited. */
  async function startStack(extra: Partial<SessMcpHttpHandlerOptions> = {}): Promise<Stack> {
    const waitGate = createWaitGate();
    const h = await startHttpHarness({ waitGate, ...extra });
    cleanup.push(() => h.close());
    audits.current.secret(h.sess.apiKey, 'sess api key');
    audits.current.watch(h.events, 'handler diagnostics');
    return Object.assign(h, { waitGate });
  }

  /** A client of a principal of the stack (`overrides` of the runtime principal), by its token. */
  async function clientOf(
    h: HttpHarness,
    token: string,
    overrides: Parameters<HttpHarness['principal']>[1] = {},
  ) {
    h.principal(token, overrides);
    audits.current.secret(token, `${token} bearer`);
    const client = await connectModern(h.server.url, { authorization: `Bearer ${token}` });
    cleanup.push(() => client.close());
    return client;
  }

  /** A waiting interaction of `client`: its handle, link and Session id. */
  async function waitingOf(h: HttpHarness, client: Awaited<ReturnType<typeof clientOf>>) {
    const created = await ok(client, 'sess_request', { interaction: approveSurface });
    audits.current.url(created.humanUrl!, 'sess link');
    const sessionId = h.sess.sessions.byUrl(created.humanUrl!)!.view.id;
    return { handle: created.handle, humanUrl: created.humanUrl!, sessionId };
  }

  /** A watcher over the stack's store and gate; stopped after the test. */
  function watcherOf(
    h: Stack,
    options: Partial<SessMcpWatcherOptions> & Pick<SessMcpWatcherOptions, 'credentialFor'>,
  ) {
    const diagnostics: DiagnosticEvent[] = [];
    audits.current.watch(diagnostics, 'watcher diagnostics');
    const watcher = createSessMcpWatcher({
      handleStores: h.stores,
      sessOrigin: h.sess.origin,
      allowInsecureLocalhost: true,
      waitGate: h.waitGate,
      diagnostics: (event) => diagnostics.push(event),
      ...options,
    });
    cleanup.push(() => watcher.stop());
    return { watcher, diagnostics };
  }

  /**
   * Alice of the runtime's first workspace and bob of a second one, each a client with the key of
   * their own workspace; `keys` gives each workspace's key.
   */
  async function twoWorkspaces(h: Stack) {
    const other = await h.sess.createWorkspace();
    audits.current.secret(other.apiKey, 'second api key');
    const alice = await clientOf(h, 'alice-token-0123456789');
    const bob = await clientOf(h, 'bob-token-0123456789', {
      workspaceId: other.workspaceId,
      principalId: 'bob',
      grantId: 'grant_bob',
      credential: () => other.apiKey,
    });
    const keys = new Map([
      [h.sess.workspaceId, h.sess.apiKey],
      [other.workspaceId, other.apiKey],
    ]);
    return { other, alice, bob, keys };
  }

  return { audits, cleanup, startStack, clientOf, waitingOf, watcherOf, twoWorkspaces };
}
