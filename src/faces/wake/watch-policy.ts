/**
 * What a watcher does with one watched record, whichever watcher it is (the stdio server's, or
 * the HTTP watcher and sweep of `createSessMcpWatcher`): the one set of polling rules both faces
 * run.
 *
 * - A record is watched while it is `waiting` or `ask_open` (`WATCHED_STATE_KINDS`). A poll is
 *   the engine's own `sess_response` ({@link pollRecord}): a Session waits up to the watcher's
 *   wait, an Ask is read (it has no long-poll on the wire). The engine verifies, confirms and
 *   saves; a watcher never decides anything about an answer.
 * - After a poll: an Ask rests {@link ASK_INTERVAL_MS}; a record whose poll failed for good (it
 *   is blocked, retired, its key refused) rests {@link FAILED_REST_MS}; a Session still waiting
 *   is due again at once ({@link WatchTimes}).
 * - Up to as many records as the watcher has slots each keep a long-poll; more take turns with
 *   waits shortened in proportion ({@link rotationWaitMs}), so the upstream calls stay bounded
 *   however many records wait.
 * - `SESS_UNAVAILABLE` (a `429`, an outage) backs off, doubling from {@link BACKOFF_MIN_MS} to
 *   {@link BACKOFF_MAX_MS}, never shorter than the `Retry-After` Sess sent ({@link Backoff}).
 * - A watcher holds at most half of each cap of the wait gate ({@link watcherSlots}), so the
 *   other half stays free for tool calls.
 *
 * It knows no store, transport, credential or role: the watchers do. It imports only the root
 * entry, so it runs wherever the HTTP face does (edge runtimes included).
 */
import {
  type ErrorCode,
  type InteractionResultState,
  isSessMcpError,
  isWatched,
  type ResponseArgs,
  type SessEngine,
  type VersionedRecord,
} from '../../index.js';

/** How long a watcher rests before it looks at the records again when none is due. */
export const WATCH_IDLE_MS = 1_000;
/** How long an open Ask (no long-poll on the wire) rests between two reads. */
export const ASK_INTERVAL_MS = 15_000;
/** Backoff after `SESS_UNAVAILABLE`: the first. */
export const BACKOFF_MIN_MS = 1_000;
/** Backoff after `SESS_UNAVAILABLE`: the most (a longer `Retry-After` is still honoured). */
export const BACKOFF_MAX_MS = 60_000;
/** How long a record whose poll failed for good (it is blocked, retired…) rests. */
export const FAILED_REST_MS = 60_000;

/** The shortest wait of one poll when many records take turns. */
const MIN_ROTATION_WAIT_MS = 1_000;

/**
 * The slots of a wait gate's cap a watcher's polls may hold: half of it, rounded down, so a tool
 * call always finds the other half free (with a cap of 1, none: the watcher then only reads).
 */
export function watcherSlots(cap: number): number {
  return Math.floor(cap / 2);
}

/**
 * One poll's wait when `watched` records share `slots` polls: the whole wait while each has a
 * poll of its own, else shorter in proportion (at least a second), so every record has its turn
 * about once per `waitMs`: about one upstream call per record per `waitMs`, `slots` at a time, and
 * never more than `slots` a second, however many records wait.
 */
export function rotationWaitMs(waitMs: number, watched: number, slots: number): number {
  if (watched <= slots) return waitMs;
  return Math.max(Math.min(MIN_ROTATION_WAIT_MS, waitMs), Math.floor((waitMs * slots) / watched));
}

/** What one poll came to. */
export type PollOutcome =
  /** The engine answered: `changed` when the record left the state it was polled in. */
  | { kind: 'read'; state: InteractionResultState; changed: boolean }
  /** A failure that may pass (`SESS_UNAVAILABLE`, a retryable store error): back off. */
  | { kind: 'unavailable'; code: ErrorCode; retryAfterMs?: number }
  /** A failure that will not pass by itself: the record rests. */
  | { kind: 'failed'; code?: ErrorCode };

/** The `sess_response` arguments of one poll of `record`: an Ask is read, a Session waits `waitMs`. */
export function pollArgsOf(record: VersionedRecord['record'], waitMs: number): ResponseArgs {
  const { state } = record;
  return state.kind === 'waiting'
    ? { handle: record.handle, revision: state.revision, wait_ms: waitMs }
    : { handle: record.handle, revision: 1 };
}

/** The `Retry-After` a `SESS_UNAVAILABLE` carries through its cause (the Sess failure), if any. */
export function retryAfterOf(error: unknown): number | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause as { retryAfterMs?: unknown } | undefined;
  const ms = cause?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/**
 * One poll of a watched record through `engine.response`, its failure classified. Never throws
 * for a failure of the poll itself.
 */
export async function pollRecord(
  engine: Pick<SessEngine, 'response'>,
  current: VersionedRecord,
  waitMs: number,
  signal?: AbortSignal,
): Promise<PollOutcome> {
  try {
    const result = await engine.response(
      pollArgsOf(current.record, waitMs),
      signal === undefined ? {} : { signal },
    );
    const changed = result.state !== 'waiting' && result.state !== 'needs_resume';
    return { kind: 'read', state: result.state, changed };
  } catch (error) {
    if (!isSessMcpError(error)) return { kind: 'failed' };
    if (!error.retryable) return { kind: 'failed', code: error.code };
    const retryAfterMs = retryAfterOf(error);
    return retryAfterMs === undefined
      ? { kind: 'unavailable', code: error.code }
      : { kind: 'unavailable', code: error.code, retryAfterMs };
  }
}

/**
 * When each record may be polled next, and which are being polled now. Only records that rest
 * are remembered, until their rest is over.
 */
export class WatchTimes {
  private readonly notBefore = new Map<string, number>();
  private readonly polling = new Set<string>();

  /** Whether `record` is watched, not being polled and not resting at `now`. */
  isDue(record: VersionedRecord['record'], now: number): boolean {
    if (!isWatched(record) || this.polling.has(record.handle)) return false;
    const until = this.notBefore.get(record.handle);
    if (until === undefined) return true;
    if (until > now) return false;
    this.notBefore.delete(record.handle);
    return true;
  }

  /** How many polls are running. */
  get running(): number {
    return this.polling.size;
  }

  /** A poll of `handle` starts. */
  begin(handle: string): void {
    this.polling.add(handle);
  }

  /** The poll of `record` ended with `outcome` at `now`: when it may be polled again. */
  end(record: VersionedRecord['record'], outcome: PollOutcome, now: number): void {
    this.polling.delete(record.handle);
    if (outcome.kind === 'failed') this.rest(record.handle, now + FAILED_REST_MS);
    else if (outcome.kind === 'read' && record.state.kind === 'ask_open')
      this.rest(record.handle, now + ASK_INTERVAL_MS);
  }

  /** `handle` is not polled before `until` (a poll that could not start: no credential, say). */
  rest(handle: string, until: number): void {
    this.notBefore.set(handle, until);
  }
}

/**
 * The backoff after `SESS_UNAVAILABLE`: a failure pauses for the current delay (or the
 * `Retry-After`, when longer) and doubles it up to {@link BACKOFF_MAX_MS}; the failures of polls
 * that were in flight together (one outage) pause once, a `Retry-After` among them still
 * honoured; a success resets the delay.
 */
export class Backoff {
  private until = 0;
  private delay = BACKOFF_MIN_MS;

  /** How much longer the pause lasts at `now` (0: not paused). */
  pausedFor(now: number): number {
    return Math.max(0, this.until - now);
  }

  /** A poll failed at `now`: pause (the pause in ms is returned). */
  failed(now: number, retryAfterMs?: number): number {
    if (now < this.until) {
      // Already paused for this outage: only a longer Retry-After moves the end.
      this.until = Math.max(this.until, now + (retryAfterMs ?? 0));
      return this.until - now;
    }
    const pause = Math.max(this.delay, retryAfterMs ?? 0);
    this.until = Math.max(this.until, now + pause);
    this.delay = Math.min(this.delay * 2, BACKOFF_MAX_MS);
    return pause;
  }

  /** A poll succeeded: the next failure pauses for the shortest delay again. */
  succeeded(): void {
    this.delay = BACKOFF_MIN_MS;
  }
}
