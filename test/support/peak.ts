/**
 * The largest value a counter takes while a test runs (upstream waits held at the runtime, waits
 * held at a gate), sampled every millisecond or two.
 *
 * It only samples: what the counter is and what bound it must keep is the test's own.
 *
 * @example
 * ```ts
 * const peak = watchPeak(() => sess.pendingWaits());
 * await runTheLoad();
 * expect(peak()).toBeLessThanOrEqual(8);
 * ```
 */

/** Start sampling `sample`; the returned function stops and gives the largest value seen. */
export function watchPeak(sample: () => number, everyMs = 1): () => number {
  let peak = sample();
  const timer = setInterval(() => {
    peak = Math.max(peak, sample());
  }, everyMs);
  return () => {
    clearInterval(timer);
    return Math.max(peak, sample());
  };
}
