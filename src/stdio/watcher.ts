/**
 * The stdio watcher: between tool calls, it waits on Sess for the answers to the profile's
 * `waiting` interactions, so an answer that comes after the agent's last wait is verified and
 * saved at once (the record leaves `waiting`, and `sess-mcp wait` exits).
 *
 * - It starts after a tool call has read `SESS_API_KEY` (the key is read on the first call, as
 *   before), or at start when the profile already has waiting records of the current key.
 * - It watches only records of the current credential generation, through the engine's own
 *   `sess_response` (the same verification, the same store writes, the same wait gate, so a tool
 *   call's wait and the watcher's poll on one Session share one upstream long-poll).
 * - One process per profile watches (`wake.watcher`, `wake-files.ts`); the others stand by and
 *   take over when its heartbeat stops. It renews the heartbeat while it runs, also while no
 *   record waits, so `sess-mcp wait` knows a server is there.
 * - At most {@link WATCHER_CONCURRENCY} polls run at once, half the gate's per-binding cap, so
 *   the watcher never takes every slot a tool call needs. Up to that many records each have a
 *   long-poll of their own; more take turns, longest unpolled first, with shorter waits
 *   ({@link rotationWaitMs}), so the upstream calls stay bounded however many records wait.
 *   `SESS_UNAVAILABLE` (a `429`, an outage) backs every poll off, doubling up to a minute, never
 *   shorter than Sess's `Retry-After`.
 *
 * - While it holds the role it also removes the profile's finished records older than
 *   `SESS_MCP_RETENTION` (30 days by default), in the background, in small batches.
 *
 * The per-record rules (what a poll is, when a record rests, the shortened waits, the backoff)
 * are `src/faces/wake/watch-policy.ts`, which the HTTP watcher runs too. It decides nothing about
 * answers and writes nothing itself: the engine does.
 */
import { randomBytes } from 'node:crypto';
import { type Prune, RetentionSchedule } from '../faces/wake/retention.js';
import {
  Backoff,
  pollRecord,
  rotationWaitMs as sharedRotationWaitMs,
  WATCH_IDLE_MS,
  WatchTimes,
  watcherSlots,
} from '../faces/wake/watch-policy.js';
import {
  type Authority,
  bindingGeneration,
  type DiagnosticsSink,
  isSessMcpError,
  type SessEngine,
  type VersionedRecord,
} from '../index.js';
import { type ProfileWakeFiles, WATCHER_HEARTBEAT_MS } from '../store/file/index.js';

/** How many polls the watcher runs at once: half the gate's default per-binding cap of 8. */
export const WATCHER_CONCURRENCY = watcherSlots(8);

/**
 * One poll's wait when `watched` records share {@link WATCHER_CONCURRENCY} polls: the whole wait
 * while each has a poll of its own, else shorter in proportion (at least a second).
 */
export function rotationWaitMs(waitMs: number, watched: number): number {
  return sharedRotationWaitMs(waitMs, watched, WATCHER_CONCURRENCY);
}

/** Options of {@link createStdioWatcher}. */
export interface StdioWatcherOptions {
  engine: SessEngine;
  /** The stdio authority: reads the key as a tool call does, and gives the store. */
  authority: Authority;
  wakeFiles: ProfileWakeFiles;
  /** Each poll's wait, in milliseconds (the server's `SESS_MCP_MAX_WAIT_MS`). */
  waitMs: number;
  diagnostics: DiagnosticsSink;
  /**
   * Retention (`SESS_MCP_RETENTION`): the profile store's prune and how long a finished record
   * is kept. While it holds the role the watcher removes older ones, at most once a minute, in
   * small batches, in the background. Absent: it removes nothing.
   */
  retention?: { prune: Prune; ms: number };
}

/** A running watcher. */
export interface StdioWatcher {
  /**
   * A tool call read the key (`started`), or the server started (`probe`: it watches only when
   * waiting records are there).
   */
  kick(reason: 'started' | 'probe'): void;
  /** Stop polling and give the role up. */
  close(): Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref?.();
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Build the watcher of one stdio server; it does nothing until {@link StdioWatcher.kick}. */
export function createStdioWatcher(options: StdioWatcherOptions): StdioWatcher {
  const { engine, authority, wakeFiles, diagnostics } = options;
  const token = randomBytes(12).toString('base64url');
  const stop = new AbortController();
  /** When each handle may be polled next, and the ones being polled now. */
  const times = new WatchTimes();
  const backoff = new Backoff();
  /** When each handle's last poll ended: the records take turns, longest unpolled first. */
  const lastPolled = new Map<string, number>();
  let running: Promise<void> | undefined;
  let started = false;
  const retention =
    options.retention === undefined
      ? undefined
      : new RetentionSchedule(options.retention.prune, options.retention.ms, (error) =>
          emit({ event: 'watcher_prune_failed', ...(isSessMcpError(error) ? { code: error.code } : {}) }),
        );

  const emit = (event: Parameters<DiagnosticsSink>[0]) => {
    try {
      diagnostics(event);
    } catch {
      // A failing sink never stops the watcher.
    }
  };

  /** The records to watch now: waiting ones of the current key, not being polled, due. */
  async function due(): Promise<VersionedRecord[]> {
    const { binding, store } = await authority.resolve();
    const generation = bindingGeneration(binding);
    const now = Date.now();
    const unfinished = await store.listUnfinished();
    const live = new Set(unfinished.map(({ record }) => record.handle));
    for (const handle of lastPolled.keys()) if (!live.has(handle)) lastPolled.delete(handle);
    return unfinished
      .filter(({ record }) => bindingGeneration(record.binding) === generation && times.isDue(record, now))
      .sort((a, b) => (lastPolled.get(a.record.handle) ?? 0) - (lastPolled.get(b.record.handle) ?? 0));
  }

  /** One poll of one record through `sess_response`; the engine saves what it learns. */
  async function poll(current: VersionedRecord, signal: AbortSignal, waitMs: number): Promise<void> {
    times.begin(current.record.handle);
    const outcome = await pollRecord(engine, current, waitMs, signal);
    const now = Date.now();
    times.end(current.record, outcome, now);
    lastPolled.set(current.record.handle, now);
    if (outcome.kind === 'read') backoff.succeeded();
    else {
      emit({ event: 'watcher_poll_failed', ...(outcome.code === undefined ? {} : { code: outcome.code }) });
      if (outcome.kind === 'unavailable') backoff.failed(now, outcome.retryAfterMs);
    }
  }

  /** Poll what is due, up to the concurrency, until the role is lost or the server closes. */
  async function watch(held: AbortSignal): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (!held.aborted) {
      retention?.kick(Date.now());
      const paused = backoff.pausedFor(Date.now());
      if (paused > 0) {
        await sleep(paused, held);
        continue;
      }
      const records = inFlight.size < WATCHER_CONCURRENCY ? await due() : [];
      const waitMs = rotationWaitMs(options.waitMs, records.length + inFlight.size);
      for (const record of records.slice(0, WATCHER_CONCURRENCY - inFlight.size)) {
        const run = poll(record, held, waitMs).finally(() => inFlight.delete(run));
        inFlight.add(run);
      }
      if (inFlight.size === 0) {
        if (!started) return; // a probe with nothing waiting: watch from the first tool call
        await sleep(WATCH_IDLE_MS, held);
      } else {
        await Promise.race([...inFlight, sleep(WATCH_IDLE_MS, held)]);
      }
    }
    await Promise.allSettled(inFlight);
    await retention?.settled();
  }

  /** Hold the role (or stand by for it) and watch while it is held. */
  async function run(): Promise<void> {
    // At start, only a profile that has records is looked at: the key is read then, not before.
    if (!started && !(await wakeFiles.hasRecordDirectory())) return;
    while (!stop.signal.aborted) {
      const claim = await wakeFiles.claimWatcher(token).catch(() => 'busy' as const);
      if (claim === 'busy') {
        if (!started) return;
        await sleep(WATCHER_HEARTBEAT_MS, stop.signal);
        continue;
      }
      emit({ event: 'watcher_started' });
      const held = new AbortController();
      const onStop = () => held.abort();
      stop.signal.addEventListener('abort', onStop, { once: true });
      const heartbeat = setInterval(() => {
        wakeFiles.renewWatcher(token).then(
          (still) => {
            if (!still) {
              emit({ event: 'watcher_standby' });
              held.abort();
            }
          },
          () => undefined, // a transient failure: the next beat tries again
        );
      }, WATCHER_HEARTBEAT_MS);
      heartbeat.unref?.();
      try {
        await watch(held.signal);
      } catch (error) {
        // The key is gone or unusable, or the store failed: stop until the next tool call.
        const code = isSessMcpError(error) ? error.code : undefined;
        emit({ event: 'watcher_stopped', ...(code === undefined ? {} : { code }) });
        started = false;
      } finally {
        clearInterval(heartbeat);
        stop.signal.removeEventListener('abort', onStop);
      }
      if (!started || stop.signal.aborted) {
        await wakeFiles.releaseWatcher(token).catch(() => undefined);
        return;
      }
    }
  }

  function kick(reason: 'started' | 'probe'): void {
    if (reason === 'started') started = true;
    if (running !== undefined || stop.signal.aborted) return;
    running = run()
      .catch(() => undefined)
      .finally(() => {
        running = undefined;
        // A tool call that came while a probe was ending: watch from it.
        if (started && !stop.signal.aborted) kick('started');
      });
  }

  return {
    kick,
    async close() {
      stop.abort();
      await running;
      await wakeFiles.releaseWatcher(token).catch(() => undefined);
    },
  };
}
