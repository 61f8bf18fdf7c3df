/**
 * Small statistics for the benchmarks: medians, percentiles, interleaved trials, and the CPU time
 * a trial cost this process and the helper processes doing its work.
 *
 * Deliberately no confidence intervals or outlier rejection: every figure the table shows is a
 * median (or a percentile) of trials run in the same process, subject and baseline interleaved.
 */
import { readFileSync } from 'node:fs';

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
export async function interleave<T = number>(
  trials: number,
  subject: () => Promise<T>,
  baseline: () => Promise<T>,
): Promise<{ subject: T[]; baseline: T[] }> {
  const s: T[] = [];
  const b: T[] = [];
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

/** CPU time (user + system, all threads) this process has used since it started, in ms. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Ticks per second of `/proc/<pid>/stat` times; 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/**
 * CPU time (utime + stime) another process of this machine has used since it started, in ms,
 * from `/proc/<pid>/stat` (Linux; 10 ms resolution, so read it around long stretches only).
 */
export function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its `)` are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** What one trial of `n` calls cost, per call, in ms. */
export interface Cost {
  /** Wall time. */
  wall: number;
  /** CPU time of this (the measuring) process. */
  cpu: number;
  /** CPU time of the helper processes `others` reads (NaN without them). */
  others: number;
}

/**
 * Run `fn` `n` times in a row; wall and CPU time per run. `others`, when given, reads the
 * cumulative CPU time (ms) of the helper processes doing the work; it is read outside the timed
 * stretch, so its own cost (an IPC round trip) stays out of this process's figures.
 */
export async function costPerCall(
  n: number,
  fn: () => Promise<unknown>,
  others?: () => Promise<number>,
): Promise<Cost> {
  const othersBefore = others === undefined ? Number.NaN : await others();
  const cpuBefore = cpuMs();
  const start = now();
  for (let i = 0; i < n; i += 1) await fn();
  const wall = now() - start;
  const cpu = cpuMs() - cpuBefore;
  const othersAfter = others === undefined ? Number.NaN : await others();
  return { wall: wall / n, cpu: cpu / n, others: (othersAfter - othersBefore) / n };
}

/** The median of one figure of some costs. */
export function medianOf(costs: readonly Cost[], key: keyof Cost): number {
  return median(costs.map((c) => c[key]));
}
