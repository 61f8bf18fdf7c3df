/**
 * At most N attempts in flight per endpoint: a receiver that slows down is not met with every
 * waiting event at once. Extra attempts queue in arrival order and start as running ones end.
 *
 * In memory, per sender. It bounds running attempts only; how many events wait is the outbox's
 * business (it claims them in bounded batches). It knows nothing of HTTP.
 */

/** The default bound of attempts in flight to one endpoint. */
export const DEFAULT_WEBHOOK_CONCURRENCY = 4;

/** The range `maxConcurrentPerEndpoint` takes. */
export const WEBHOOK_CONCURRENCY_RANGE = { min: 1, max: 64 } as const;

/** Runs tasks with at most `max` of them running per key. */
export interface EndpointLimiter {
  /** Run `task` when fewer than the bound run for `key`; its result or rejection is returned. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** The tasks running for `key` now (for tests and diagnostics). */
  running(key: string): number;
}

interface Lane {
  running: number;
  queue: (() => void)[];
}

/** A limiter of `max` running tasks per key. */
export function createEndpointLimiter(max: number): EndpointLimiter {
  const lanes = new Map<string, Lane>();
  const release = (key: string, lane: Lane): void => {
    const next = lane.queue.shift();
    if (next !== undefined) {
      next();
      return;
    }
    lane.running -= 1;
    if (lane.running === 0) lanes.delete(key);
  };
  return {
    async run(key, task) {
      let lane = lanes.get(key);
      if (lane === undefined) {
        lane = { running: 0, queue: [] };
        lanes.set(key, lane);
      }
      if (lane.running < max) {
        lane.running += 1;
      } else {
        // The slot is handed over by `release`: `running` stays as it is.
        const queued = lane;
        await new Promise<void>((start) => queued.queue.push(start));
      }
      const held = lane;
      try {
        return await task();
      } finally {
        release(key, held);
      }
    },
    running(key) {
      return lanes.get(key)?.running ?? 0;
    },
  };
}
