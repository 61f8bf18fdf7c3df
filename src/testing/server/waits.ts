/**
 * Event-driven waits on Sessions: the long-poll of `GET /v1/sessions/{id}/wait` and the answer
 * page's own watch both park here until the Session is no longer at the (revision, status) the
 * caller saw. The model calls {@link SessionWaits.notify} after every change it commits (an
 * answer, a revision, a completion, more time) and the clock's moves re-check every wait, so any
 * state change of a Session — a future one included — wakes its waits.
 *
 * It knows no HTTP and changes no Session; timeouts are real milliseconds, link expiry follows the
 * runtime's clock.
 */
import type { SessionStatus } from '../../core/contract/ports.js';
import { FINAL_SESSION_STATUSES } from '../../sess/wire.js';
import type { LocalClock } from '../model/clock.js';
import type { SessionRecord } from '../model/records.js';

interface Waiter {
  session: SessionRecord;
  revision: number;
  status: SessionStatus;
  deadline: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  done: () => void;
}

/** What the waits need from the model: the clock and a Session's status now. */
export interface WaitsHost {
  readonly clock: LocalClock;
  status(s: SessionRecord): SessionStatus;
  session(id: string): SessionRecord | undefined;
}

/** @internal Every wait in progress, per Session. */
export class SessionWaits {
  readonly #host: WaitsHost;
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #startListeners = new Set<() => void>();

  constructor(host: WaitsHost) {
    this.#host = host;
    host.clock.onChange(() => this.#recheckAll());
  }

  /** Number of waits in progress (on one Session, or all). */
  pending(sessionId?: string): number {
    if (sessionId !== undefined) return this.#waiters.get(sessionId)?.size ?? 0;
    let n = 0;
    for (const set of this.#waiters.values()) n += set.size;
    return n;
  }

  /** Called whenever a wait starts (for `sess.whenWaiting`). */
  onStarted(listener: () => void): () => void {
    this.#startListeners.add(listener);
    return () => this.#startListeners.delete(listener);
  }

  /** True when `s` is no longer at (`revision`, `status`), or is final. */
  changed(s: SessionRecord, revision: number, status: SessionStatus): boolean {
    const now = this.#host.status(s);
    return s.revision !== revision || now !== status || FINAL_SESSION_STATUSES.has(now);
  }

  /**
   * Resolve when `s` is no longer at (`revision`, `status`), is final, or `timeoutMs` real
   * milliseconds passed; `signal` abandons the wait.
   */
  wait(
    s: SessionRecord,
    revision: number,
    status: SessionStatus,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        session: s,
        revision,
        status,
        deadline: Date.now() + timeoutMs,
        timer: undefined,
        done: () => {
          if (waiter.timer !== undefined) clearTimeout(waiter.timer);
          const set = this.#waiters.get(s.id);
          set?.delete(waiter);
          if (set?.size === 0) this.#waiters.delete(s.id);
          signal.removeEventListener('abort', waiter.done);
          resolve();
        },
      };
      if (signal.aborted || this.#changed(waiter)) return resolve();
      signal.addEventListener('abort', waiter.done, { once: true });
      const set = this.#waiters.get(s.id) ?? new Set<Waiter>();
      set.add(waiter);
      this.#waiters.set(s.id, set);
      this.#arm(waiter);
      for (const listener of [...this.#startListeners]) listener();
    });
  }

  /** Wake every wait on `s` that no longer matches. */
  notify(s: SessionRecord): void {
    const set = this.#waiters.get(s.id);
    if (set === undefined) return;
    for (const w of [...set]) {
      if (this.#changed(w)) w.done();
      else this.#arm(w);
    }
  }

  /** End every wait now (on close). */
  endAll(): void {
    for (const set of [...this.#waiters.values()]) for (const w of [...set]) w.done();
  }

  #changed(w: Waiter): boolean {
    return this.changed(w.session, w.revision, w.status);
  }

  /** Next clock time at which the Session's status changes by itself. */
  #nextTransition(s: SessionRecord): number | undefined {
    const status = this.#host.status(s);
    if (status === 'active') return s.expiresAt;
    if (status === 'lapsed') return s.extendableUntil;
    return undefined;
  }

  #arm(w: Waiter): void {
    if (w.timer !== undefined) clearTimeout(w.timer);
    let delay = Math.max(0, w.deadline - Date.now());
    const clock = this.#host.clock;
    if (!clock.frozen) {
      const next = this.#nextTransition(w.session);
      if (next !== undefined) delay = Math.min(delay, Math.max(0, next - clock.now()));
    }
    w.timer = setTimeout(() => {
      w.timer = undefined;
      if (this.#changed(w) || Date.now() >= w.deadline) w.done();
      else this.#arm(w);
    }, delay);
  }

  #recheckAll(): void {
    for (const id of [...this.#waiters.keys()]) {
      const s = this.#host.session(id);
      if (s) this.notify(s);
    }
  }
}
