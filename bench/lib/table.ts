/**
 * The benchmark table: one row per figure, printed once at the end of a run.
 *
 * It formats; it measures nothing and judges nothing beyond the `met` flag each row brings.
 */

/** One row of the table. */
export interface Row {
  /** Which measure and which of its figures, e.g. `5 cold start (spawn → tools/list)`. */
  measure: string;
  /** The subject's figure, with its unit. */
  subject: string;
  /** The baseline's figure, with its unit. */
  baseline: string;
  /** Subject against baseline (a ratio, or a difference where the goal is one). */
  ratio: string;
  /** The goal, as the issue states it. */
  goal: string;
  /** `yes`, `no`, or `—` for an informational row or a skip. */
  met: string;
}

/** Format milliseconds with a sensible number of digits. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

/** Format a ratio as `1.07×`. */
export function times(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}

/** `yes` or `no`. */
export function yesNo(ok: boolean): string {
  return ok ? 'yes' : 'no';
}

/** Render rows as a Markdown table (readable in a terminal and pasteable into the docs). */
export function renderTable(rows: readonly Row[]): string {
  const head: Row = {
    measure: 'measure',
    subject: 'subject',
    baseline: 'baseline',
    ratio: 'ratio',
    goal: 'goal',
    met: 'met?',
  };
  const keys = Object.keys(head) as Array<keyof Row>;
  const all = [head, ...rows];
  const width = keys.map((k) => Math.max(...all.map((r) => r[k].length)));
  const line = (r: Row) => `| ${keys.map((k, i) => r[k].padEnd(width[i]!)).join(' | ')} |`;
  return [line(head), `|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
