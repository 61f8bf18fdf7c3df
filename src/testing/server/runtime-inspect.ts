/**
 * Looking into the local Sess runtime without going through its API (so no request is counted):
 * snapshots of Sessions and Asks, the request counters, the waits in progress and the answers
 * as they are accepted.
 *
 * It changes nothing in the model: every snapshot is a copy, and an answer listener only observes.
 */

import type { LocalModel } from '../model/model.js';
import type { RequestCounts } from './api-routes.js';
import { tokenOf } from './runtime-person.js';
import type { LocalSess, LocalSessionSnapshot } from './runtime-types.js';

/** A copy of a Session as the runtime holds it. */
function snapshot(
  model: LocalModel,
  s: ReturnType<LocalModel['sessions']['get']>,
): LocalSessionSnapshot | undefined {
  if (s === undefined) return undefined;
  const out: LocalSessionSnapshot = { view: model.sessionView(s), surfaces: structuredClone(s.surfaces) };
  if (s.ask) out.ask = { ...s.ask };
  return out;
}

/** `LocalSess.sessions` and `LocalSess.asks`. */
export function inspection(model: LocalModel, origin: string): Pick<LocalSess, 'sessions' | 'asks'> {
  return {
    sessions: {
      get: (id) => snapshot(model, model.sessions.get(id)),
      byUrl: (humanUrl) => {
        const token = tokenOf(origin, humanUrl, 's');
        return token === undefined ? undefined : snapshot(model, model.sessionTokens.get(token));
      },
      list: (workspaceId) =>
        [...model.sessions.values()]
          .filter((s) => workspaceId === undefined || s.workspaceId === workspaceId)
          .map((s) => snapshot(model, s)!),
    },
    asks: {
      get: (id) => {
        const a = model.asks.get(id);
        return a && model.askView(a);
      },
      list: (workspaceId) =>
        [...model.asks.values()]
          .filter((a) => workspaceId === undefined || a.workspaceId === workspaceId)
          .map((a) => model.askView(a)),
    },
  };
}

/** `LocalSess.stats`: a workspace's counters, and the requests per endpoint, as copies. */
export function statsOf(
  model: LocalModel,
  counts: RequestCounts,
  firstWorkspace: string,
): LocalSess['stats'] {
  return {
    of: (workspaceId = firstWorkspace) => ({ ...model.stats(workspaceId) }),
    get requests() {
      return { ...counts };
    },
  };
}

/** `LocalSess.pendingWaits`, `whenWaiting` and `onAnswer`. */
export function watches(model: LocalModel): Pick<LocalSess, 'pendingWaits' | 'whenWaiting' | 'onAnswer'> {
  return {
    pendingWaits: (sessionId) => model.waits.pending(sessionId),
    whenWaiting(sessionId, count = 1) {
      return new Promise((resolve) => {
        if (model.waits.pending(sessionId) >= count) return resolve();
        const off = model.waits.onStarted(() => {
          if (model.waits.pending(sessionId) >= count) {
            off();
            resolve();
          }
        });
      });
    },
    onAnswer(listener) {
      const own = (sessionId: string, revision: number) => {
        try {
          listener(sessionId, revision);
        } catch {
          // A listener only observes: the answer is committed whatever it does.
        }
      };
      model.answerListeners.add(own);
      return () => {
        model.answerListeners.delete(own);
      };
    },
  };
}
