/**
 * One bounded pass of the watcher for a cron-triggered edge function (a Worker's `scheduled`, a
 * Deno cron): it reads each due watched record once, without waiting (`sess_response` with
 * `wait_ms: 0`), through the same {@link WatchRun} the long-lived watcher uses, then delivers the
 * outbox's events once, then removes finished records older than the watcher's `retention` with
 * what is left, all within `budgetMs`.
 *
 * - No new read starts once the reading time is spent (all of `budgetMs`, or three quarters of it
 *   when events are delivered: the last quarter is the delivery's), and every read still running
 *   is ended at the deadline (the engine's reads end as `needs_resume`; a store write already
 *   started finishes).
 * - At most {@link SWEEP_CONCURRENCY} reads run at once: an edge function's outbound connections
 *   are few.
 *
 * It holds no state between sweeps beyond the watcher's own (rests, budgets, backoff): a new
 * isolate starts afresh.
 */
import { MAX_TIMER_MS, optionNames, readOptions } from '../core/contract/options.js';
import { prunePass } from '../faces/wake/retention.js';
import type { EventDelivery, WaitingPage } from '../index.js';
import { pruneFailed, storeFailed, type WatchRun } from './watch-run.js';
import type { ResolvedWatcherOptions } from './watcher-options.js';

/** How many reads one sweep runs at once. */
export const SWEEP_CONCURRENCY = 4;
/** How many watched records one page of the sweep reads from the store. */
const SWEEP_PAGE = 100;

/** Options of one {@link SessMcpWatcher.sweep}. */
export interface SweepOptions {
  /**
   * The time the sweep may take, in milliseconds (1 to 3 600 000): leave the rest of the
   * function's own limit for what follows it.
   */
  budgetMs: number;
}

/** What one sweep did. */
export interface SweepResult {
  /** Records read (`sess_response` without waiting). */
  polled: number;
  /** Of those, records that left `waiting` or `ask_open` (answered, expired, closed…). */
  changed: number;
  /** Records whose binding got no credential from `credentialFor`. */
  skipped: number;
  /** Reads that failed (Sess unavailable, a record blocked…). */
  failed: number;
  /** Due records passed over: their credential out of calls or backing off. */
  deferred: number;
  /** Whether the sweep went through every watched record within the reading time. */
  complete: boolean;
  /**
   * Delivery attempts made (to `onEvent` and the webhook) by a delivery pass that ended within the
   * budget; 0 when the pass was still running at the deadline (its attempts finish on their own,
   * under their claims, and the next sweep sees their outcome).
   */
  delivered: number;
  /**
   * Finished records removed because they are older than the watcher's `retention`, with the
   * budget left after delivery (at most 1000 per sweep); 0 when retention is off.
   */
  pruned: number;
  /** How long the sweep took, in milliseconds. */
  ms: number;
}

const KNOWN_OPTIONS = optionNames<SweepOptions>()('budgetMs');

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    (timer as { unref?: () => void }).unref?.();
  });

/** The reading part of a sweep: pages of watched records, each due one read once, until `until`. */
async function readDue(
  run: WatchRun,
  options: ResolvedWatcherOptions,
  until: number,
  signal: AbortSignal,
  result: SweepResult,
): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  let after: string | undefined;
  try {
    for (;;) {
      let page: WaitingPage;
      try {
        page = await options.handleStores.waiting(
          after === undefined ? { limit: SWEEP_PAGE } : { after, limit: SWEEP_PAGE },
        );
      } catch (error) {
        options.diagnostics(storeFailed(error));
        return;
      }
      for (const current of page.records) {
        while (inFlight.size >= SWEEP_CONCURRENCY) await Promise.race(inFlight);
        if (Date.now() >= until || signal.aborted) return;
        const considered = await run.consider(current, 0, signal);
        if (considered.kind === 'skipped') result.skipped += 1;
        else if (considered.kind === 'held') result.deferred += 1;
        else if (considered.kind === 'started') {
          const tracked = considered.outcome.then((outcome) => {
            inFlight.delete(tracked);
            if (outcome.kind === 'read') {
              result.polled += 1;
              if (outcome.changed) result.changed += 1;
            } else result.failed += 1;
          });
          inFlight.add(tracked);
        }
      }
      after = page.next;
      if (after === undefined) {
        result.complete = true;
        return;
      }
    }
  } finally {
    await Promise.allSettled(inFlight);
  }
}

/**
 * The sweep's retention pass, last, with what is left of the budget: no batch starts after
 * `deadline`, and the sweep does not wait past it for one running (that one finishes on its own).
 */
async function pruneWithin(options: ResolvedWatcherOptions, deadline: number): Promise<number> {
  const left = deadline - Date.now();
  if (options.retention === undefined || left <= 0) return 0;
  const pass = prunePass(options.retention.prune, options.retention.ms, Date.now(), deadline).catch(
    (error: unknown) => {
      options.diagnostics(pruneFailed(error));
      return 0;
    },
  );
  return Promise.race([pass, sleep(left).then(() => 0)]);
}

/** Run one sweep of `run` (and one delivery pass of `delivery`, when there is one). */
export async function sweepOnce(
  run: WatchRun,
  options: ResolvedWatcherOptions,
  delivery: EventDelivery | undefined,
  given: SweepOptions,
): Promise<SweepResult> {
  const read = readOptions('sweep', given, { known: KNOWN_OPTIONS });
  const budgetMs = read.integer('budgetMs', given.budgetMs, {
    min: 1,
    max: Math.min(3_600_000, MAX_TIMER_MS),
  });
  const started = Date.now();
  const deadline = started + budgetMs;
  const readingEnds = delivery === undefined ? deadline : started + Math.floor((budgetMs * 3) / 4);
  const result: SweepResult = {
    polled: 0,
    changed: 0,
    skipped: 0,
    failed: 0,
    deferred: 0,
    complete: false,
    delivered: 0,
    pruned: 0,
    ms: 0,
  };
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), readingEnds - started);
  try {
    await readDue(run, options, readingEnds, stop.signal, result);
  } finally {
    clearTimeout(timer);
  }
  run.prune(Date.now());
  const left = deadline - Date.now();
  if (delivery !== undefined && left > 0) {
    result.delivered = await Promise.race([delivery.deliverDue().catch(() => 0), sleep(left).then(() => 0)]);
  }
  result.pruned = await pruneWithin(options, deadline);
  result.ms = Date.now() - started;
  options.diagnostics({ event: 'watcher.sweep_done', ms: result.ms });
  return result;
}
