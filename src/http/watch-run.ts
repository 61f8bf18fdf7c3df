/**
 * One HTTP watcher's decision for one watched record: whether it is polled now, and the poll. The
 * long-lived loop (`watcher.ts`) and the bounded sweep (`sweep.ts`) hand it every record they
 * page through; it applies the shared watch policy (`src/faces/wake/watch-policy.ts`) and what
 * only HTTP has: a credential per binding, asked of the host for each poll and never kept, a
 * budget of Sess calls per credential, and the wait gate it shares with the handler.
 *
 * - A record of another Sess origin, of a stdio binding, not due, or whose credential is known to
 *   be out of calls or backing off is passed over before the host is asked for a credential.
 * - A Session's long-poll takes one of the watcher's slots (`watch-slots.ts`): at most half of
 *   each cap of the gate (per binding scope, per principal, in all) and only into a slot free now,
 *   so a tool call always finds the other half; it waits shorter when Sessions take turns. A read
 *   (an Ask, or any poll of a sweep) takes none.
 * - The poll is the engine's own `sess_response` on a Sess client of that credential and a view
 *   of the record's binding: the same verification, confirming read and store writes as a tool
 *   call, and the same gate.
 *
 * It pages through nothing and keeps no time of its own: its callers do.
 */
import { type PollOutcome, pollRecord, WatchTimes } from '../faces/wake/watch-policy.js';
import {
  bindingPrincipal,
  bindingScope,
  createSessEngine,
  createWaitGate,
  type DiagnosticEvent,
  type DiagnosticsSink,
  type HttpBinding,
  isSessMcpError,
  type SessApi,
  type VersionedRecord,
  type WaitGate,
} from '../index.js';
import { createReceiptVerifier, createSessClientFactory } from '../sess/index.js';
import { CredentialBudgets, countedSess } from './watch-budget.js';
import { WatcherSlots } from './watch-slots.js';
import type { ResolvedWatcherOptions } from './watcher-options.js';

/** How long a record whose binding got no credential rests before it is asked for again. */
export const NO_CREDENTIAL_REST_MS = 60_000;

/** The diagnostic of a failed `waiting()` page: its code, never its message. */
export function storeFailed(error: unknown): DiagnosticEvent {
  return isSessMcpError(error)
    ? { event: 'watcher.store_failed', code: error.code }
    : { event: 'watcher.store_failed' };
}

/** The diagnostic of a failed retention pass (`prune()`), with its code when it has one. */
export function pruneFailed(error: unknown): DiagnosticEvent {
  return isSessMcpError(error)
    ? { event: 'watcher.prune_failed', code: error.code }
    : { event: 'watcher.prune_failed' };
}

/** What became of one record handed to {@link WatchRun.consider}. */
export type Considered =
  /** A poll started; `outcome` settles when it ends (never rejects). */
  | { kind: 'started'; outcome: Promise<PollOutcome> }
  /** `credentialFor` gave no credential (or threw): the record rests. */
  | { kind: 'skipped' }
  /** Due, but not now: no free slot, or its credential is out of calls or backing off. */
  | { kind: 'held' }
  /** Not this watcher's now: not watched, resting, being polled, or of another origin. */
  | { kind: 'not_due' };

/** The state of one watcher shared by its loop and its sweeps. */
export class WatchRun {
  readonly times = new WatchTimes();
  readonly gate: WaitGate;
  private readonly budgets: CredentialBudgets;
  private readonly slots: WatcherSlots;
  private readonly sessClient: ReturnType<typeof createSessClientFactory>;
  private readonly engineDiagnostics: DiagnosticsSink;

  /** `changed` is called after a poll that may have saved an event (for delivery). */
  constructor(
    private readonly options: ResolvedWatcherOptions,
    private readonly changed: () => void,
  ) {
    this.gate = options.waitGate ?? createWaitGate();
    this.budgets = new CredentialBudgets(options.callsPerMinute);
    this.slots = new WatcherSlots(this.gate);
    const settings = {
      origin: options.sessOrigin,
      ...(options.allowInsecureLocalhost ? { allowInsecureLocalhost: true } : {}),
      ...(options.receiptIssuer === undefined ? {} : { receiptIssuer: options.receiptIssuer }),
    };
    this.sessClient = createSessClientFactory({
      ...settings,
      receiptVerifier: createReceiptVerifier({
        origin: settings.origin,
        ...(options.allowInsecureLocalhost ? { allowInsecureLocalhost: true } : {}),
        ...(options.receiptIssuer === undefined ? {} : { issuer: options.receiptIssuer }),
      }),
      ...(options.expectedWorkspaceId === undefined
        ? {}
        : { expectedWorkspaceId: options.expectedWorkspaceId }),
    });
    // The engine's own events (an answer released, …) pass; its per-call events would read as tool calls.
    this.engineDiagnostics = (event) => {
      if (!event.event.startsWith('tool_')) options.diagnostics(event);
    };
  }

  /** Count `current` as a pass would (a Session due for a long-poll), without polling it. */
  tally(current: VersionedRecord, maxWaitMs: number): void {
    const { binding } = current.record;
    if (binding.kind !== 'http' || binding.origin !== this.options.sessOrigin) return;
    if (
      maxWaitMs > 0 &&
      current.record.state.kind === 'waiting' &&
      this.times.isDue(current.record, Date.now())
    ) {
      this.slots.tally(bindingScope(binding), bindingPrincipal(binding));
    }
  }

  /** A pass over the watched records is over (the waits of the next follow its counts). */
  passEnded(): void {
    this.slots.passEnded();
  }

  /** Prune what the watcher no longer needs to remember (idle credentials' budgets). */
  prune(now: number): void {
    this.budgets.prune(now);
  }

  /**
   * Poll `current` now if it is due and may be polled: a Session waits up to `maxWaitMs` (less
   * when Sessions take turns; 0: a read), ended by `signal`. See the module header for what
   * passes a record over.
   */
  async consider(current: VersionedRecord, maxWaitMs: number, signal: AbortSignal): Promise<Considered> {
    const { record } = current;
    const binding = record.binding;
    if (binding.kind !== 'http' || binding.origin !== this.options.sessOrigin) return { kind: 'not_due' };
    if (!this.times.isDue(record, Date.now())) return { kind: 'not_due' };
    const scope = bindingScope(binding);
    const principal = bindingPrincipal(binding);
    const session = maxWaitMs > 0 && record.state.kind === 'waiting';
    if (session) this.slots.tally(scope, principal);
    const waitMs = session ? this.slots.waitFor(scope, principal, maxWaitMs) : 0;
    const waits = waitMs > 0;
    if ((waits && !this.slots.free(scope, principal)) || this.budgets.held(scope, Date.now())) {
      return { kind: 'held' };
    }
    const credential = await this.credentialOf(binding);
    if (credential === undefined) {
      this.times.rest(record.handle, Date.now() + NO_CREDENTIAL_REST_MS);
      return { kind: 'skipped' };
    }
    const key = await this.budgets.keyOf(credential);
    this.budgets.remember(scope, key);
    const now = Date.now();
    // Things may have moved while the host answered: check again before starting.
    if (!this.times.isDue(record, now)) return { kind: 'not_due' };
    if ((waits && !this.slots.free(scope, principal)) || !this.budgets.mayStart(key, now)) {
      return { kind: 'held' };
    }
    this.times.begin(record.handle);
    if (waits) this.slots.take(scope, principal);
    const sess = countedSess(
      this.sessClient(() => credential, { credentialWorkspaceId: binding.workspaceId }),
      () => this.budgets.spend(key, Date.now()),
    );
    const outcome = this.poll(current, binding, sess, waitMs, signal)
      .catch((): PollOutcome => ({ kind: 'failed' }))
      .then((ended) => {
        this.times.end(record, ended, Date.now());
        if (waits) this.slots.release(scope, principal);
        this.settle(key, ended);
        return ended;
      });
    return { kind: 'started', outcome };
  }

  /** The host's credential for `binding` now, or `undefined` (none, or `credentialFor` threw). */
  private async credentialOf(binding: HttpBinding): Promise<string | undefined> {
    try {
      const credential = await this.options.credentialFor({ ...binding });
      return typeof credential === 'string' && credential !== '' ? credential : undefined;
    } catch {
      // Its message is not kept: a host may have put a key in it.
      this.options.diagnostics({ event: 'watcher.credential_failed' });
      return undefined;
    }
  }

  /** One poll through the engine's `sess_response`, on a view of the record's own binding. */
  private async poll(
    current: VersionedRecord,
    binding: HttpBinding,
    sess: SessApi,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<PollOutcome> {
    const store = this.options.handleStores.forBinding({ ...binding });
    const engine = createSessEngine({
      authority: { resolve: async () => ({ binding, sess, store }) },
      waitGate: this.gate,
      maxWaitMs: this.options.maxWaitMs,
      diagnostics: this.engineDiagnostics,
      ...(this.options.telemetry === undefined ? {} : { telemetry: this.options.telemetry }),
    });
    return pollRecord(engine, current, waitMs, signal);
  }

  /** What a poll's outcome means for its credential, and for the events to deliver. */
  private settle(key: string, outcome: PollOutcome): void {
    const { diagnostics } = this.options;
    if (outcome.kind === 'read') {
      this.budgets.succeeded(key);
      if (outcome.changed) this.changed();
      return;
    }
    diagnostics({
      event: 'watcher.poll_failed',
      ...(outcome.code === undefined ? {} : { code: outcome.code }),
    });
    if (outcome.kind === 'unavailable') {
      const ms = this.budgets.unavailable(key, Date.now(), outcome.retryAfterMs);
      diagnostics({ event: 'watcher.backoff', code: outcome.code, ms });
    } else {
      // A record blocked by its poll has an event to deliver.
      this.changed();
    }
  }
}
