/**
 * The goals of the benchmark table, in one place: each measure's module imports its numbers and
 * judges its `met?` column with them, and the `goal` column prints the same numbers.
 *
 * Numbers only, and the two small checks that compare a figure with them; nothing here measures.
 */

/** 1. Adapter overhead: `sess_response` on an answered record at most this many times a bare tool. */
export const ADAPTER_OVERHEAD_MAX = 1.15;

/** 2. Answer latency: p50 at most one loopback round trip plus this many milliseconds (p99 is reported). */
export const ANSWER_LATENCY_OVER_RTT_MS = 1.5;

/** 3. Concurrent waits (10 000 and the smaller sizes): resident memory per held wait below this, KiB. */
export const WAIT_RSS_MAX_KIB = 64;

/** 3. Concurrent waits: the last wait returns at most this many milliseconds after the last answer. */
export const WAIT_LAST_RETURN_MAX_MS = 1_000;

/** 4. Durable commit: a file-store compare-and-set at most this many times bare write+fsync+rename+dir-fsync. */
export const DURABLE_COMMIT_MAX = 1.3;

/** 5. Cold start: `sess-mcp` to its `tools/list` answer at most this many times a bare stdio server. */
export const COLD_START_MAX = 1.2;

/** 6. PostgreSQL store: compare-and-set updates per second at least this share of bare `UPDATE`s (1 and 2 processes). */
export const POSTGRES_CAS_MIN = 0.9;

/** 8. `sess_list`: the first page and an inspect, each with a median below this many milliseconds (file store and PostgreSQL). */
export const LIST_MEDIAN_MAX_MS = 20;

/** The `goal` text of an upper bound on a ratio: `≤ 1.15×`. */
export function atMostTimes(max: number): string {
  return `≤ ${max}×`;
}

/** The `goal` text of a lower bound on a ratio: `≥ 0.9×`. */
export function atLeastTimes(min: number): string {
  return `≥ ${min}×`;
}
