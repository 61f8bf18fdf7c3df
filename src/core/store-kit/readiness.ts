/**
 * What every store's {@link HandleStoreFactory.ready} shares: one check of the medium in flight at
 * a time (probes that arrive meanwhile wait on it rather than ask again), its answer bounded by
 * {@link STORE_READY_TIMEOUT_MS}, and a failure turned into its one reason word.
 *
 * It knows no medium: each store hands it the check that proves its own medium answers (the file
 * store's directory checks, the PostgreSQL store's one statement). It reads no record.
 */
import { isSessMcpError } from '../contract/errors.js';
import {
  type HandleStoreFactory,
  STORE_READY_TIMEOUT_MS,
  type StoreNotReadyReason,
  type StoreReadiness,
} from '../contract/ports.js';
import { isStoreErrorReason } from './kit.js';

const READY: StoreReadiness = Object.freeze({ kind: 'ready' });

/**
 * The reason word of a failed check: the `reason` of a `STATE_STORE_ERROR`, `store_failure` for
 * anything else (its message is never looked at: it may name a host or a path).
 */
export function notReadyReasonOf(error: unknown): StoreNotReadyReason {
  return isSessMcpError(error) && error.code === 'STATE_STORE_ERROR' && isStoreErrorReason(error.reason)
    ? error.reason
    : 'store_failure';
}

/** `{ kind: 'not_ready', reason: 'timeout' }` once `ms` have passed, and the timer to clear. */
function timeoutAfter(ms: number): { promise: Promise<StoreReadiness>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<StoreReadiness>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'not_ready', reason: 'timeout' }), ms);
    // A probe must never keep a process alive.
    (timer as { unref?: () => void }).unref?.();
  });
  return { promise, clear: () => clearTimeout(timer) };
}

/**
 * A store's `ready()` over `check`, which resolves when the medium answered and the layout is
 * current, and throws the store's `STATE_STORE_ERROR` otherwise. One `check` runs at a time: a
 * probe that comes while one is in flight (a hung database) waits on that one, within its own
 * bound of `timeoutMs`.
 */
export function createReadiness(
  check: () => Promise<void>,
  timeoutMs: number = STORE_READY_TIMEOUT_MS,
): NonNullable<HandleStoreFactory['ready']> {
  let inflight: Promise<StoreReadiness> | undefined;
  const run = (): Promise<StoreReadiness> => {
    if (inflight === undefined) {
      const started = (async () => {
        try {
          await check();
          return READY;
        } catch (error) {
          return { kind: 'not_ready', reason: notReadyReasonOf(error) } as const;
        }
      })();
      inflight = started;
      void started.finally(() => {
        if (inflight === started) inflight = undefined;
      });
    }
    return inflight;
  };
  return async () => {
    const bound = timeoutAfter(timeoutMs);
    try {
      return await Promise.race([run(), bound.promise]);
    } finally {
      bound.clear();
    }
  };
}
