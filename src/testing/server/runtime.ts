import { createLocalClock } from '../model/clock.js';
import type { TamperKeys } from '../model/fault-application.js';
import { LocalFaults } from '../model/faults.js';
import { LocalKeys } from '../model/keys.js';
import { LocalModel } from '../model/model.js';
import { emptyCounts } from './api-routes.js';
import { createRequestListener } from './http.js';
import { inspection, statsOf, watches } from './runtime-inspect.js';
import { closer, listen } from './runtime-listen.js';
import { checkOptions } from './runtime-options.js';
import { personActions } from './runtime-person.js';
import type { LocalSess, LocalSessOptions } from './runtime-types.js';

/**
 * Start a local Sess runtime.
 *
 * @example
 * ```ts source="examples/snippets/testing.examples.ts#startLocalSess"
 * const sess = await startLocalSess();
 * const res = await fetch(`${sess.origin}/v1/sessions`, {
 *   method: 'POST',
 *   headers: {
 *     authorization: `Bearer ${sess.apiKey}`,
 *     'content-type': 'application/json',
 *     'idempotency-key': 'k1',
 *   },
 *   body: JSON.stringify({ interaction: surface }),
 * });
 * const session = (await res.json()) as { human_url: string };
 * await sess.submitAnswer(session.human_url, { action: 'approve', values: {} });
 * await sess.close();
 * ```
 */
export async function startLocalSess(options?: LocalSessOptions): Promise<LocalSess> {
  const checked = checkOptions(options);
  const clock = createLocalClock(checked.clock);
  let firstWorkspace = '';
  const keys = new LocalKeys(() => firstWorkspace);
  const model = new LocalModel({
    clock,
    keys,
    plan: checked.plan,
    ...(checked.issuer === undefined ? {} : { issuer: checked.issuer }),
  });
  const first = await model.createWorkspace(checked.workspaceId, checked.apiKey);
  firstWorkspace = first.workspaceId;
  const faults = new LocalFaults();
  const counts = emptyCounts();
  const listener = createRequestListener({
    model,
    faults,
    counts,
    workspaceHeader: checked.workspaceHeader,
    withdrawal: checked.withdrawal,
    tamperKeys: tamperKeys(model, keys, firstWorkspace),
  });
  const { server, origin } = await listen(listener, checked.host, checked.port);
  model.origin = origin;
  return {
    origin,
    apiKey: first.apiKey,
    workspaceId: first.workspaceId,
    clock,
    faults,
    keys,
    stats: statsOf(model, counts, firstWorkspace),
    ...inspection(model, origin),
    ...workspaceAdmin(model, firstWorkspace),
    ...personActions(model, origin),
    ...watches(model),
    close: closer(model, server),
  };
}

/**
 * The keys a receipt tamper fault signs with: one unpublished key per workspace, made on first
 * use, and the active key of another workspace (made when there is none).
 */
function tamperKeys(model: LocalModel, keys: LocalKeys, firstWorkspace: string): TamperKeys {
  const unknownKids = new Map<string, string>();
  let foreign: string | undefined;
  return {
    async unknownKid(ws) {
      let kid = unknownKids.get(ws);
      if (kid === undefined) {
        kid = await keys.createUnpublished(ws || firstWorkspace);
        unknownKids.set(ws, kid);
      }
      return kid;
    },
    async foreignKid(ws) {
      if (foreign === undefined || foreign === ws) {
        const other = [...model.workspaces.keys()].find((id) => id !== ws);
        foreign = other ?? (await model.createWorkspace()).workspaceId;
      }
      return keys.activeKid(foreign);
    },
  };
}

/** `LocalSess.createWorkspace`, `createApiKey` and `revokeApiKey`. */
function workspaceAdmin(
  model: LocalModel,
  firstWorkspace: string,
): Pick<LocalSess, 'createWorkspace' | 'createApiKey' | 'revokeApiKey'> {
  return {
    createWorkspace: (opts = {}) => model.createWorkspace(opts.workspaceId, opts.apiKey),
    createApiKey(workspaceId = firstWorkspace) {
      if (!model.workspaces.has(workspaceId)) throw new TypeError('createApiKey: no such workspace');
      const key = `sk_local_${crypto.randomUUID().replace(/-/g, '')}`;
      model.apiKeys.set(key, workspaceId);
      return key;
    },
    revokeApiKey(apiKey) {
      model.apiKeys.delete(apiKey);
    },
  };
}
