/**
 * Several runs of the same measures as one table: for every row, each figure's median over the
 * runs, then a row with their spread (min–max), and a goal counted as met only when every run
 * met it.
 *
 * It reads the figures back out of the rows' text (as table.ts formats them), so a measure needs
 * no change to be repeated. It measures nothing, and judges nothing beyond the runs' own `met`.
 */
import type { Row } from './table.js';

/** A number as the rows print it: `2.73`, `-0.4`, `1000`, or grouped by spaces, `10 000`. */
const NUMBER = /-?\d{1,3}(?: \d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?/g;
/** Stands for a number in a cell's template (a character no row prints). */
const SLOT = '\u0000';

/** A figure as printed, and its value. */
interface Figure {
  text: string;
  value: number;
}

function figuresOf(cell: string): Figure[] {
  return [...cell.matchAll(NUMBER)].map((m) => ({ text: m[0], value: Number(m[0].replace(/ /g, '')) }));
}

function templateOf(cell: string): string {
  return cell.replace(NUMBER, SLOT);
}

function decimals(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

/** The median of one figure over the runs, printed as the runs print it. */
function medianText(figures: readonly Figure[]): string {
  const sorted = [...figures].sort((a, b) => a.value - b.value);
  const mid = sorted.length >> 1;
  if (sorted.length % 2 === 1) return sorted[mid]!.text;
  const [low, high] = [sorted[mid - 1]!, sorted[mid]!];
  const text = ((low.value + high.value) / 2).toFixed(Math.max(decimals(low.text), decimals(high.text)));
  const grouped = low.text.includes(' ') || high.text.includes(' ');
  return grouped ? text.replace(/^(-?\d+)/, (whole) => whole.replace(/\B(?=(\d{3})+$)/g, ' ')) : text;
}

/** The spread of one figure over the runs: `1.04–1.19`, or the one value they all had. */
function spreadText(figures: readonly Figure[]): string {
  const sorted = [...figures].sort((a, b) => a.value - b.value);
  const [min, max] = [sorted[0]!, sorted[sorted.length - 1]!];
  return min.value === max.value ? min.text : `${min.text}–${max.text}`;
}

function fill(template: string, texts: readonly string[]): string {
  let i = 0;
  return template.replace(new RegExp(SLOT, 'g'), () => texts[i++]!);
}

/** One cell over the runs: its median text and its spread text. */
function cellOver(cells: readonly string[]): [median: string, spread: string] {
  const first = cells[0]!;
  if (cells.every((cell) => cell === first)) return [first, first];
  const template = templateOf(first);
  // Cells that differ in more than their numbers (a `n/a`, a `skipped`) are listed as they are.
  if (!cells.every((cell) => templateOf(cell) === template)) return [cells.join('; '), '—'];
  const perCell = cells.map(figuresOf);
  const slots = perCell[0]!.map((_, slot) => perCell.map((figures) => figures[slot]!));
  return [fill(template, slots.map(medianText)), fill(template, slots.map(spreadText))];
}

/** `yes` when every one of `total` runs had the row and met its goal; `—` for a row without one. */
function metOver(mets: readonly string[], total: number): [met: string, count: string] {
  if (mets.every((met) => met === '—')) return ['—', '—'];
  const yes = mets.filter((met) => met === 'yes').length;
  return [yes === total ? 'yes' : 'no', `met in ${yes} of ${total}`];
}

/** Each run's rows by their measure text, in the order they first appeared. */
function rowsByMeasure(runs: readonly (readonly Row[])[]): Map<string, Row[]> {
  const byMeasure = new Map<string, Row[]>();
  for (const rows of runs) {
    const seen = new Map<string, number>();
    for (const row of rows) {
      // A measure text a run prints twice is told apart by its place, not merged.
      const nth = (seen.get(row.measure) ?? 0) + 1;
      seen.set(row.measure, nth);
      const key = nth === 1 ? row.measure : `${row.measure} (${nth})`;
      byMeasure.set(key, [...(byMeasure.get(key) ?? []), { ...row, measure: key }]);
    }
  }
  return byMeasure;
}

/**
 * The rows of `runs` (each one run's rows) as one table: per row of the runs, a row of medians
 * and below it a row `↳ min–max of n runs` with the spread of each figure and how many runs met
 * the goal. A goal is `yes` only if every run met it; a row missing from a run (a measure that
 * failed there) counts as missed and says in how many runs it was.
 */
export function summarizeRuns(runs: readonly (readonly Row[])[]): Row[] {
  const out: Row[] = [];
  for (const [measure, rows] of rowsByMeasure(runs)) {
    const column = (key: keyof Row) => cellOver(rows.map((row) => row[key]));
    const [subject, subjectSpread] = column('subject');
    const [baseline, baselineSpread] = column('baseline');
    const [ratio, ratioSpread] = column('ratio');
    const [met, count] = metOver(
      rows.map((row) => row.met),
      runs.length,
    );
    const partial = rows.length < runs.length ? ` (in ${rows.length} of ${runs.length} runs)` : '';
    out.push(
      { measure: `${measure}${partial}`, subject, baseline, ratio, goal: column('goal')[0], met },
      {
        measure: `↳ min–max of ${rows.length} run${rows.length === 1 ? '' : 's'}`,
        subject: subjectSpread,
        baseline: baselineSpread,
        ratio: ratioSpread,
        goal: '',
        met: count,
      },
    );
  }
  return out;
}
