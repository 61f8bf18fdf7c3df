/**
 * Retention as the watchers run it: the `retention` option (how long a finished record is kept,
 * or `false`), and one bounded pass of `HandleStoreFactory.prune` in small batches, at most once a
 * minute, so removing old records never holds up the polls. The HTTP watcher (`start` and
 * `sweep`) and the stdio watcher run it; `sess-mcp records prune` calls the store itself.
 *
 * Which records may go, and when, is the stores' (the port's contract); the default and the range
 * are `core/contract/rules.ts`'s. It keeps no record and logs no handle.
 */
import type { OptionReader } from '../../core/contract/options.js';
import { DEFAULT_RETENTION_MS, RETENTION_MS_RULE } from '../../core/contract/rules.js';
import type { PruneQuery, PruneResult } from '../../index.js';
import { DEFAULT_WEBHOOK_SCHEDULE } from './webhook-schedule.js';

/** How many records one batch of a watcher's pass removes. */
export const RETENTION_BATCH = 100;
/** How many batches one pass runs at most (a pass removes at most 1000 records). */
export const RETENTION_BATCHES_PER_PASS = 10;
/** How often a long-lived watcher runs a pass. */
export const RETENTION_INTERVAL_MS = 60_000;

/** A store's prune, as the watchers call it. */
export type Prune = (query: PruneQuery) => Promise<PruneResult>;

/**
 * The `retention` option: milliseconds ({@link RETENTION_MS_RULE}), `false` to keep every record,
 * {@link DEFAULT_RETENTION_MS} when absent.
 */
export function readRetention(read: OptionReader, value: unknown): number | false {
  if (value === undefined) return DEFAULT_RETENTION_MS;
  if (value === false) return false;
  if (!RETENTION_MS_RULE.test(value)) read.fail('retention', `must be ${RETENTION_MS_RULE.text}`);
  return value;
}

/**
 * The shortest retention a watcher that delivers events (a webhook, `onEvent`, a Claude Code
 * channel) may keep: the delivery retry span. A store counts an event as owed only once a sink
 * attempted it, so a shorter retention could remove a record whose event no sink has taken yet.
 */
export const MIN_DELIVERING_RETENTION_MS = DEFAULT_WEBHOOK_SCHEDULE.spanMs;

/** The words a refused retention of a delivering watcher gets ("must be …"). */
export const DELIVERING_RETENTION_TEXT = `at least ${MIN_DELIVERING_RETENTION_MS / 3_600_000} hours while events are delivered (the delivery retry span): an event not yet delivered keeps its record that long`;

/**
 * One pass: batches of {@link RETENTION_BATCH} records that finished more than `retentionMs`
 * before `now`, until none are left, {@link RETENTION_BATCHES_PER_PASS} ran, or `until` (ms since
 * the epoch) passed. Resolves with how many records it removed; a store failure rejects.
 */
export async function prunePass(
  prune: Prune,
  retentionMs: number,
  now: number,
  until = Number.POSITIVE_INFINITY,
): Promise<number> {
  const olderThan = now - retentionMs;
  let removed = 0;
  for (let batch = 0; batch < RETENTION_BATCHES_PER_PASS && Date.now() < until; batch++) {
    const result = await prune({ olderThan, limit: RETENTION_BATCH });
    removed += result.removed;
    if (!result.more) break;
  }
  return removed;
}

/**
 * The retention of a long-lived watcher: `kick(now)` starts a pass when one is due (at most every
 * {@link RETENTION_INTERVAL_MS}) and none runs, without waiting for it; `settled()` waits for the
 * one running. A failed pass is reported to `failed` and tried again at the next interval.
 */
export class RetentionSchedule {
  private running: Promise<void> | undefined;
  private next = 0;

  constructor(
    private readonly prune: Prune,
    private readonly retentionMs: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  kick(now: number): void {
    if (this.running !== undefined || now < this.next) return;
    this.next = now + RETENTION_INTERVAL_MS;
    this.running = prunePass(this.prune, this.retentionMs, now)
      .then(
        () => undefined,
        (error: unknown) => this.failed(error),
      )
      .finally(() => {
        this.running = undefined;
      });
  }

  async settled(): Promise<void> {
    await this.running;
  }
}
