/**
 * {@link createSessMcpWatcher}: what notices a late answer over HTTP, where a stateless handler
 * has no life between requests. `start()` runs a long-lived watcher in a Node process (or any
 * process that lives); `sweep({ budgetMs })` is one bounded pass for a cron-triggered edge
 * function (`sweep.ts`). Both poll the store's watched records through the engine's own
 * `sess_response` (`watch-run.ts`), so an answer is verified, confirmed and saved exactly as a
 * tool call would, and its event is delivered to `onEvent` and the webhook.
 *
 * The loop makes passes over `handleStores.waiting()` in handle order, starting a poll for each
 * record that is due and may be polled now; a record it has to hold (no free slot, its credential
 * out of calls) is where the next pass starts, so every record gets its turn however many there
 * are, and Sessions that take turns wait shorter in proportion (`watch-slots.ts`). Between two
 * passes it rests at least {@link WATCH_IDLE_MS}, and as long as the pass took, so a large store
 * is not read over and over. Between passes it also removes finished records older than its
 * `retention`, in the background, in small batches (`faces/wake/retention.ts`).
 *
 * It decides nothing about answers and writes nothing itself: the engine does. It uses only
 * `fetch` and WebCrypto (through the Sess client and the store), so it runs on edge runtimes.
 */

import { createWakeDelivery, onEventSink } from '../faces/wake/delivery.js';
import { RetentionSchedule } from '../faces/wake/retention.js';
import { WATCH_IDLE_MS } from '../faces/wake/watch-policy.js';
import { createWebhookSink } from '../faces/wake/webhook-sink.js';
import type { EventDelivery, EventSink, VersionedRecord, WaitGate, WaitingPage } from '../index.js';
import { type SweepOptions, type SweepResult, sweepOnce } from './sweep.js';
import { pruneFailed, storeFailed, WatchRun } from './watch-run.js';
import { resolveWatcherOptions, type SessMcpWatcherOptions } from './watcher-options.js';

/** The watcher `createSessMcpWatcher` returns. */
export interface SessMcpWatcher {
  /**
   * Start watching (a long-lived process): poll the watched records until {@link stop}, and
   * deliver events to `onEvent` and the webhook as they come. Idempotent while running.
   */
  start(): void;
  /** Stop: polls in flight end (their waits as `needs_resume`), delivery stops. Resolves when done. */
  stop(): Promise<void>;
  /**
   * One bounded pass (a cron-triggered edge function): read each due watched record once without
   * waiting, then deliver the outbox's events once, within `budgetMs`. Resolves with what it did.
   * @throws {TypeError} `sweep: option "budgetMs" …` for a budget out of range.
   */
  sweep(options: SweepOptions): Promise<SweepResult>;
  /** The wait gate the watcher's polls go through (the one given, or its own). */
  readonly waitGate: WaitGate;
}

/** How many watched records one page of the loop reads from the store. */
const LOOP_PAGE = 100;
/** How often the delivery loop looks at the outbox (a poll's event goes at once). */
const DELIVERY_INTERVAL_MS = 1_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    (timer as { unref?: () => void }).unref?.();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * The watched records of one pass: from just after `resumeAfter` to the last, then from the first
 * up to `resumeAfter`, each once.
 */
async function* onePass(
  page: (after: string | undefined) => Promise<WaitingPage>,
  resumeAfter: string | undefined,
): AsyncGenerator<VersionedRecord> {
  let after = resumeAfter;
  for (;;) {
    const current = await page(after);
    yield* current.records;
    if (current.next === undefined) break;
    after = current.next;
  }
  if (resumeAfter === undefined) return;
  after = undefined;
  for (;;) {
    const current = await page(after);
    for (const record of current.records) {
      if (record.record.handle > resumeAfter) return;
      yield record;
    }
    if (current.next === undefined) return;
    after = current.next;
  }
}

/**
 * The long-lived loop: pass after pass over the watched records, until `signal` ends it. The
 * first pass only counts (so the first polls already wait as long as their turns allow); each
 * later pass starts with the first record the pass before it had to hold.
 */
async function watchLoop(
  run: WatchRun,
  page: (after: string | undefined) => Promise<WaitingPage>,
  maxWaitMs: number,
  signal: AbortSignal,
  onStoreFailed: (error: unknown) => void,
  retention: RetentionSchedule | undefined,
): Promise<void> {
  const inFlight = new Set<Promise<unknown>>();
  let resumeAfter: string | undefined;
  let counting = true;
  while (!signal.aborted) {
    const passStarted = Date.now();
    let previous = resumeAfter;
    let held: { after: string | undefined } | undefined;
    try {
      for await (const record of onePass(page, resumeAfter)) {
        if (signal.aborted) break;
        if (counting) {
          run.tally(record, maxWaitMs);
          continue;
        }
        const considered = await run.consider(record, maxWaitMs, signal);
        if (considered.kind === 'held') held ??= { after: previous };
        else if (considered.kind === 'started') {
          const tracked: Promise<unknown> = considered.outcome.finally(() => inFlight.delete(tracked));
          inFlight.add(tracked);
        }
        previous = record.record.handle;
      }
      run.passEnded();
      resumeAfter = held?.after;
      if (counting) {
        counting = false;
        continue;
      }
    } catch (error) {
      onStoreFailed(error);
      resumeAfter = undefined;
    }
    run.prune(Date.now());
    // Between passes, in the background: removing old records never holds up a poll.
    retention?.kick(Date.now());
    await sleep(Math.max(WATCH_IDLE_MS, Date.now() - passStarted), signal);
  }
  await Promise.allSettled(inFlight);
  await retention?.settled();
}

/**
 * Create the watcher of an HTTP deployment's records: `start()` in a long-lived process, or
 * `sweep({ budgetMs })` from a cron-triggered edge function.
 *
 * Give it the store backend the handler's `handleStore` views come from, the host's
 * `credentialFor(binding)` (the key of a binding's principal now, `undefined` to skip it: it
 * decides which grant generation is current), and the handler's wait gate
 * (`createWaitGate()` passed to both), so a tool call's wait and the watcher's poll on one
 * Session share one upstream long-poll and the watcher keeps to half of each cap.
 *
 * @throws {TypeError} naming the option when an option is invalid.
 * @example
 * ```ts source="examples/snippets/http.examples.ts#createSessMcpWatcher"
 * // createSessMcpWatcher and createSessMcpHttpHandler come from '@sess.si/mcp/http'.
 * const waitGate = createWaitGate();
 * const handler = createSessMcpHttpHandler({
 *   authenticate: (request) => myOAuth.verify(request.headers.get('authorization')),
 *   handleStore: (binding) => stores.forBinding(binding),
 *   allowedHosts: ['mcp.example.com'],
 *   waitGate,
 * });
 * const watcher = createSessMcpWatcher({
 *   handleStores: stores,
 *   // The principal's Sess key now; undefined for a revoked grant or an older grant generation.
 *   credentialFor: (binding) => myGrants.sessKeyFor(binding),
 *   waitGate,
 *   onEvent: (event) => myQueue.push(event), // a reference only: call sess_response to read it
 * });
 * watcher.start();
 * ```
 */
export function createSessMcpWatcher(options: SessMcpWatcherOptions): SessMcpWatcher {
  const resolved = resolveWatcherOptions(options);
  const { handleStores, diagnostics } = resolved;
  const sinks: EventSink[] = [];
  if (resolved.webhook !== undefined) {
    sinks.push(createWebhookSink(resolved.webhook.sender, resolved.webhook.endpointFor));
  }
  if (resolved.onEvent !== undefined) sinks.push(onEventSink(resolved.onEvent));
  const delivery: EventDelivery | undefined =
    sinks.length === 0 || handleStores.outbox === undefined
      ? undefined
      : createWakeDelivery({
          outbox: handleStores.outbox(),
          sinks,
          diagnostics,
          ...(resolved.telemetry === undefined ? {} : { telemetry: resolved.telemetry }),
        });
  const run = new WatchRun(resolved, () => delivery?.kick());
  const page = (after: string | undefined) =>
    handleStores.waiting(after === undefined ? { limit: LOOP_PAGE } : { after, limit: LOOP_PAGE });
  let running: { stop: AbortController; done: Promise<void> } | undefined;

  return {
    waitGate: run.gate,
    start() {
      if (running !== undefined) return;
      const stop = new AbortController();
      diagnostics({ event: 'watcher.started' });
      delivery?.start(DELIVERY_INTERVAL_MS);
      const retention =
        resolved.retention === undefined
          ? undefined
          : new RetentionSchedule(resolved.retention.prune, resolved.retention.ms, (error) =>
              diagnostics(pruneFailed(error)),
            );
      const done = watchLoop(
        run,
        page,
        resolved.maxWaitMs,
        stop.signal,
        (error) => diagnostics(storeFailed(error)),
        retention,
      );
      running = { stop, done };
    },
    async stop() {
      const current = running;
      if (current === undefined) return;
      current.stop.abort();
      await current.done;
      await delivery?.stop();
      if (running === current) running = undefined;
      diagnostics({ event: 'watcher.stopped' });
    },
    sweep: (given) => sweepOnce(run, resolved, delivery, given),
  };
}
