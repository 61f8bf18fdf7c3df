/**
 * MCP cancellation across stateless requests. A 2025-era client cancels a call with a
 * `notifications/cancelled` POST, which the stateless fallback hands to a fresh server that never
 * saw the call. This registry remembers the in-flight requests of each caller by JSON-RPC id, so
 * such a notification still ends the wait it names (as `needs_resume`). A 2026-07-28 client
 * cancels by dropping the request's connection, which the faces already turn into an abort.
 *
 * Only the caller who made a request can cancel it: requests are keyed by the full principal
 * binding. Two concurrent sessions of one caller that reuse an id could end each other's wait,
 * which only ends a wait early (`needs_resume`, resumed by the next call). It never cancels a
 * create, publish or complete: the engine gives them no signal. Best effort, per process.
 */
import type { SessHttpPrincipal } from './options.js';
import { isJsonRpcId } from './responses.js';

/** The key of a caller: every part of the binding but the Sess origin (one per handler). */
export function callerKey(principal: SessHttpPrincipal): string {
  return JSON.stringify([
    principal.workspaceId,
    principal.principalId,
    principal.clientId,
    principal.grantId,
    principal.grantGeneration,
  ]);
}

/** The request id a single `notifications/cancelled` names, if `body` is one. */
export function cancelledIdOf(body: unknown): string | number | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: unknown };
  if (method !== 'notifications/cancelled' || id !== undefined) return undefined;
  if (params === null || typeof params !== 'object') return undefined;
  const requestId = (params as { requestId?: unknown }).requestId;
  return isJsonRpcId(requestId) ? requestId : undefined;
}

/** In-flight requests by caller and id. */
export class CancellationRegistry {
  readonly #entries = new Map<string, Set<() => void>>();

  /**
   * Register a request; `onCancel` runs when the caller cancels it (it must be safe to run more
   * than once). Call `release` when done. A callback rather than a signal of its own: the request
   * already has a controller to abort.
   */
  register(caller: string, id: string | number, onCancel: () => void): { release(): void } {
    const key = `${caller}\u0000${typeof id}:${String(id)}`;
    let set = this.#entries.get(key);
    if (set === undefined) {
      set = new Set();
      this.#entries.set(key, set);
    }
    set.add(onCancel);
    return {
      release: () => {
        const current = this.#entries.get(key);
        if (current === undefined) return;
        current.delete(onCancel);
        if (current.size === 0) this.#entries.delete(key);
      },
    };
  }

  /** Cancel the caller's in-flight requests with this id; returns how many there were. */
  cancel(caller: string, id: string | number): number {
    const set = this.#entries.get(`${caller}\u0000${typeof id}:${String(id)}`);
    if (set === undefined) return 0;
    for (const cancel of [...set]) cancel();
    return set.size;
  }

  /** How many requests are registered (for tests). */
  get size(): number {
    let n = 0;
    for (const set of this.#entries.values()) n += set.size;
    return n;
  }
}
