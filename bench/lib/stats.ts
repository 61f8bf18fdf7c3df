/**
 * Small statistics for the benchmarks: medians, percentiles and interleaved trials.
 *
 * Deliberately no confidence intervals or outlier rejection: every figure the table shows is a
 * median (or a percentile) of trials run in the same process, subject and baseline interleaved.
 */

/** The `p`-th percentile (0–100) of `values`, nearest rank; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of `values`. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Milliseconds since an arbitrary origin, sub-millisecond. */
export function now(): number {
  return performance.now();
}

/**
 * Run `trials` rounds of `subject` and `baseline`, alternating which goes first, and return the
 * figure each returned per round. Interleaving cancels slow drift (other load, CPU frequency).
 */
export async function interleave(
  trials: number,
  subject: () => Promise<number>,
  baseline: () => Promise<number>,
): Promise<{ subject: number[]; baseline: number[] }> {
  const s: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < trials; i += 1) {
    if (i % 2 === 0) {
      s.push(await subject());
      b.push(await baseline());
    } else {
      b.push(await baseline());
      s.push(await subject());
    }
  }
  return { subject: s, baseline: b };
}

/** Time `n` sequential runs of `fn`; milliseconds per run. */
export async function perCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  const start = now();
  for (let i = 0; i < n; i += 1) await fn();
  return (now() - start) / n;
}
