/**
 * The plumbing every operation of one tool call shares: the resolved {@link CallAuthority}, the
 * caller's {@link ToolCallContext}, store access with the engine's error mapping, loading a
 * record re-checked against the caller's binding, and saving a state change with compare-and-set.
 *
 * Deliberately holds no operation: `create.ts`, `response.ts`, `mutate.ts` and `list.ts` decide
 * what to do; this module only gives them one way to read, write, block and observe.
 */

import { isSessMcpError } from '../contract/errors.js';
import type { CallAuthority, Clock, CreateLimits, DiagnosticEvent } from '../contract/ports.js';
import { bindingScope, sameGeneration } from '../contract/ports.js';
import { lastSequence, withEvent } from '../model/events.js';
import { type InteractionRecord, type InteractionState, RECORD_FORMAT } from '../model/record.js';
import { type InteractionEvent, transition } from '../model/transitions.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import {
  bindingMismatch,
  blockedError,
  cancelledBeforeSaved,
  handleNotFound,
  type State,
  staleVersion,
  storeFailure,
} from './refusals.js';
import type { ReadFailure } from './sess-errors.js';
import type { DurableStep, EngineHooks, ToolCallContext } from './types.js';
import type { WaitGate } from './wait-gate.js';

/** What the operations run with, fixed for an engine. */
export interface OperationSettings {
  clock: Clock;
  maxWaitMs: number;
  progressIntervalMs: number;
  randomId: () => string;
  hooks: EngineHooks | undefined;
  emit: (event: DiagnosticEvent) => void;
  waitGate: WaitGate;
  /** The limits every create passes to the store (the per-principal quota). */
  createLimits: CreateLimits;
  /** Spans and metrics (`telemetry/telemetry.ts`). */
  telemetry: Telemetry;
}

/** A loaded record narrowed to one state. */
export interface Loaded<S extends InteractionState = InteractionState> {
  version: number;
  record: Omit<InteractionRecord, 'state'> & { state: S };
}

/**
 * The expiry Sess last confirmed that `state` holds: the Session's link or the open Ask's. Finished
 * states hold none (the record-level `expiresAt` keeps the last one).
 */
export function confirmedExpiry(state: InteractionState): string | undefined {
  if ('session' in state) return state.session.expiresAt;
  if (state.kind === 'ask_open' || state.kind === 'ask_close_pending') return state.expiresAt;
  return undefined;
}

/**
 * `record` with its next `state`, written by this version: format {@link RECORD_FORMAT} (a
 * format 1 record is upgraded on its next save), the title it was created with, and the expiry
 * Sess last confirmed (kept through every later state). The one place a changed record is made.
 */
export function nextRecord(
  record: InteractionRecord,
  state: InteractionState,
  now: string,
): InteractionRecord {
  const next: InteractionRecord = { ...record, format: RECORD_FORMAT, updatedAt: now, state };
  const expiresAt = confirmedExpiry(state) ?? record.expiresAt;
  if (expiresAt !== undefined) next.expiresAt = expiresAt;
  // The event of this change, if it is one, is part of the same write.
  return withEvent(record.state, next);
}

/** Thrown inside a wait to end it as `needs_resume`. */
export class WaitAborted {}

function isStale(error: unknown): boolean {
  return isSessMcpError(error) && error.code === 'INVALID_STATE' && error.reason === 'stale_version';
}

/** One tool call: its authority, context and the engine's settings. */
export class Call {
  constructor(
    readonly settings: OperationSettings,
    readonly auth: CallAuthority,
    readonly ctx: ToolCallContext,
  ) {}

  emit(event: DiagnosticEvent): void {
    this.settings.emit(event);
  }

  async step(name: DurableStep): Promise<void> {
    const onStep = this.settings.hooks?.onStep;
    if (onStep !== undefined) await onStep(name);
  }

  nowIso(): string {
    return new Date(this.settings.clock.now()).toISOString();
  }

  /** Runs a store call; anything but a `SessMcpError` becomes a non-retryable `STATE_STORE_ERROR`. */
  async store<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isStale(error)) throw staleVersion();
      if (isSessMcpError(error)) throw error;
      throw storeFailure(error);
    }
  }

  /** Load a record and re-check it against the caller's binding, whatever the store returned. */
  async load(handle: string): Promise<Loaded> {
    const found = await this.store(() => this.auth.store.get(handle));
    if (found === undefined || found.record.handle !== handle) throw handleNotFound();
    const { binding } = found.record;
    let scope: string;
    try {
      scope = bindingScope(binding);
    } catch {
      throw handleNotFound();
    }
    if (scope !== bindingScope(this.auth.binding)) throw handleNotFound();
    if (!sameGeneration(binding, this.auth.binding)) throw bindingMismatch();
    return found as Loaded;
  }

  /** Save `state` over `loaded` with compare-and-set. */
  async save(loaded: Loaded, state: InteractionState): Promise<Loaded> {
    const record = nextRecord(loaded.record, state, this.nowIso());
    const saved = await this.store(() => this.auth.store.update(record, loaded.version));
    // A new event is a new last sequence (two writes in one millisecond share an `updatedAt`).
    if (lastSequence(record) !== lastSequence(loaded.record)) await this.step('event.after_state_saved');
    return saved as Loaded;
  }

  async apply(loaded: Loaded, event: InteractionEvent): Promise<Loaded> {
    return this.save(loaded, transition(loaded.record.state, event));
  }

  /**
   * Apply `event`; when another call won the compare-and-set, re-read the record and return it if
   * `same` says that call recorded what this one would have (the same verified answer, the same
   * expiry). Only a different change is reported, as `INVALID_STATE` `stale_version`.
   * `mine` is false when another call recorded it.
   */
  async settle(
    loaded: Loaded,
    event: InteractionEvent,
    same: (state: InteractionState) => boolean,
  ): Promise<{ saved: Loaded; mine: boolean }> {
    try {
      return { saved: await this.apply(loaded, event), mine: true };
    } catch (error) {
      if (!isStale(error)) throw error;
      const fresh = await this.load(loaded.record.handle);
      if (same(fresh.record.state)) return { saved: fresh, mine: false };
      if (fresh.record.state.kind === 'blocked') throw blockedError(fresh.record.state);
      throw error;
    }
  }

  /** Move to `blocked`, then throw the blocked error (another call's block is reported the same way). */
  async block(
    loaded: Loaded,
    code: 'MUTATION_REJECTED' | 'VERIFICATION_FAILED' | 'RECOVERY_BLOCKED',
    reason: string,
  ): Promise<never> {
    const { saved, mine } = await this.settle(
      loaded,
      { type: 'blocked', code, reason },
      (s) => s.kind === 'blocked',
    );
    if (mine) this.emit({ event: 'interaction_blocked', code, state: saved.record.state.kind });
    throw blockedError(saved.record.state as State<'blocked'>);
  }

  /** Act on a failed read: throw, end the wait, or block. */
  async readFailed(loaded: Loaded, failure: ReadFailure): Promise<never> {
    if (failure.kind === 'aborted') throw new WaitAborted();
    if (failure.kind === 'fail') throw failure.error;
    return this.block(loaded, failure.code, failure.reason);
  }

  /**
   * Before anything is saved for a new create, publish or complete: a call already cancelled
   * (client cancellation, disconnect, deadline) starts nothing its caller would never learn of.
   * Once saved, a mutation is never abandoned.
   */
  checkNotCancelled(): void {
    if (this.ctx.signal?.aborted === true) throw cancelledBeforeSaved();
  }

  signalOptions(): { signal?: AbortSignal } {
    return this.ctx.signal === undefined ? {} : { signal: this.ctx.signal };
  }
}
