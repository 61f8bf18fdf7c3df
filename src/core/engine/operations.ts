/**
 * The five operations over the ports: create (Session or Ask), response (wait, verify, confirm,
 * release), publish and complete, each on one resolved {@link CallAuthority}. This is where the
 * write-ahead order, the release rule and the refusal rules live; every state change goes
 * through {@link transition}.
 *
 * Deliberately transport-free and argument-free: inputs arrive validated and camelCase (the
 * contract's validators ran first), results leave as {@link EngineResult}, and failures are
 * thrown as `SessMcpError` for the caller to turn into a tool error.
 */
import { isSessMcpError, SessMcpError } from '../errors.js';
import type {
  AskView,
  CallAuthority,
  Clock,
  CompleteInput,
  DiagnosticEvent,
  PublishInput,
  ResponseEvent,
  SessionStatus,
  SessionView,
  VerifiedReceipt,
} from '../ports.js';
import { bindingGeneration, bindingScope } from '../ports.js';
import {
  type CreateRequest,
  type InteractionRecord,
  type InteractionState,
  RECORD_FORMAT,
  type VerifiedResponse,
} from '../record.js';
import type { AskAnswerResult, AskResult, ResponseResult } from '../result.js';
import type { Surface } from '../surface.js';
import { HANDLE_PREFIX, jsonDigest, sameJson } from './identity.js';
import {
  classifyCreateFailure,
  classifyMutationFailure,
  classifyReadFailure,
  createOutcomeUnknown,
  type ReadFailure,
} from './sess-errors.js';
import { type InteractionEvent, transition } from './transitions.js';
import type {
  CompleteOperation,
  CreateOperation,
  DurableStep,
  EngineHooks,
  EngineResult,
  PublishOperation,
  ResponseOperation,
  ToolCallContext,
} from './types.js';

/** How many times one wait may re-arm after a lapsed/active status change (guards a spinning server). */
const MAX_WAIT_ROUNDS = 4;

/** What the operations run with, fixed for an engine. */
export interface OperationSettings {
  clock: Clock;
  maxWaitMs: number;
  progressIntervalMs: number;
  randomId: () => string;
  hooks: EngineHooks | undefined;
  emit: (event: DiagnosticEvent) => void;
}

type State<K extends InteractionState['kind']> = Extract<InteractionState, { kind: K }>;

/** A loaded record narrowed to one state. */
interface Loaded<S extends InteractionState = InteractionState> {
  version: number;
  record: Omit<InteractionRecord, 'state'> & { state: S };
}

/** Thrown inside a wait to end it as `needs_resume`. */
class WaitAborted {}

/** The operations of one tool call. */
export class Operations {
  constructor(
    private readonly settings: OperationSettings,
    private readonly auth: CallAuthority,
    private readonly ctx: ToolCallContext,
  ) {}

  // -------------------------------------------------------------------------------------------
  // shared plumbing

  private async step(name: DurableStep): Promise<void> {
    const onStep = this.settings.hooks?.onStep;
    if (onStep !== undefined) await onStep(name);
  }

  private nowIso(): string {
    return new Date(this.settings.clock.now()).toISOString();
  }

  /** Runs a store call; anything but a `SessMcpError` becomes a non-retryable `STATE_STORE_ERROR`. */
  private async store<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isSessMcpError(error)) {
        if (error.code === 'INVALID_STATE' && error.reason === 'stale_version') {
          throw new SessMcpError(
            'INVALID_STATE',
            'Another call changed this interaction first; nothing was sent or released here. Call sess_response to see where it is now.',
            { reason: 'stale_version' },
          );
        }
        throw error;
      }
      throw new SessMcpError(
        'STATE_STORE_ERROR',
        'The state store failed unexpectedly; nothing was changed.',
        {
          retryable: false,
          reason: 'store_failure',
          cause: error,
        },
      );
    }
  }

  /** Load a record and re-check it against the caller's binding, whatever the store returned. */
  private async load(handle: string): Promise<Loaded> {
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
    if (bindingGeneration(binding) !== bindingGeneration(this.auth.binding)) {
      throw new SessMcpError(
        'BINDING_MISMATCH',
        'This handle belongs to another credential generation (the API key or grant changed). It cannot be used with the current one.',
      );
    }
    return found as Loaded;
  }

  /** Save `state` over `loaded` with compare-and-set. */
  private async save(loaded: Loaded, state: InteractionState): Promise<Loaded> {
    const record: InteractionRecord = { ...loaded.record, updatedAt: this.nowIso(), state };
    const saved = await this.store(() => this.auth.store.update(record, loaded.version));
    return saved as Loaded;
  }

  private async apply(loaded: Loaded, event: InteractionEvent): Promise<Loaded> {
    return this.save(loaded, transition(loaded.record.state, event));
  }

  /** Move to `blocked`, then throw the blocked error. A lost compare-and-set is reported instead. */
  private async block(
    loaded: Loaded,
    code: 'MUTATION_REJECTED' | 'VERIFICATION_FAILED' | 'RECOVERY_BLOCKED',
    reason: string,
  ): Promise<never> {
    const saved = await this.apply(loaded, { type: 'blocked', code, reason });
    this.settings.emit({ event: 'interaction_blocked', code, state: saved.record.state.kind });
    throw blockedError(saved.record.state as State<'blocked'>);
  }

  /** Act on a failed read: throw, end the wait, or block. */
  private async readFailed(loaded: Loaded, failure: ReadFailure): Promise<never> {
    if (failure.kind === 'aborted') throw new WaitAborted();
    if (failure.kind === 'fail') throw failure.error;
    return this.block(loaded, failure.code, failure.reason);
  }

  /**
   * Before anything is saved for a new create, publish or complete: a call already cancelled
   * (client cancellation, disconnect, deadline) starts nothing its caller would never learn of.
   * Once saved, a mutation is never abandoned.
   */
  private checkNotCancelled(): void {
    if (this.ctx.signal?.aborted === true) {
      throw new SessMcpError(
        'SESS_UNAVAILABLE',
        'The call was cancelled before anything was saved or sent; nothing changed. Call again if still needed.',
        { reason: 'cancelled' },
      );
    }
  }

  private signalOptions(): { signal?: AbortSignal } {
    return this.ctx.signal === undefined ? {} : { signal: this.ctx.signal };
  }

  // -------------------------------------------------------------------------------------------
  // create

  /** `sess_request` / `sess_ask`: save the intent, create, save the Session (or Ask). */
  async create(op: CreateOperation): Promise<EngineResult> {
    const { sess } = this.auth;
    const handle = `${HANDLE_PREFIX}${this.settings.randomId()}`;
    const request: CreateRequest = { idempotencyKey: this.settings.randomId(), surface: op.surface };
    if (op.expiresIn !== undefined) request.expiresIn = op.expiresIn;
    if (op.respondents !== undefined) request.respondents = op.respondents;
    const now = this.nowIso();
    const intent: InteractionRecord = {
      format: RECORD_FORMAT,
      handle,
      binding: this.auth.binding,
      createdAt: now,
      updatedAt: now,
      state: { kind: 'create_intent', request },
    };

    this.checkNotCancelled();
    await this.step('create.before_intent_saved');
    const saved = (await this.store(() => this.auth.store.create(intent))) as Loaded<State<'create_intent'>>;
    await this.step('create.after_intent_saved');

    // Mutations never take the caller's signal: a create already sent is not abandoned mid-flight.
    const base = { surface: request.surface, idempotencyKey: request.idempotencyKey };
    const expires = request.expiresIn === undefined ? {} : { expiresIn: request.expiresIn };
    const pending: Promise<SessionView | AskView> =
      request.respondents === undefined
        ? sess.createSession({ ...base, ...expires })
        : sess.createAsk({ ...base, ...expires, respondents: request.respondents });
    pending.catch(() => {});
    await this.step('create.after_request_sent');

    let view: SessionView | AskView;
    try {
      view = await pending;
    } catch (error) {
      const failure = classifyCreateFailure(error);
      if (failure.kind === 'not_created') {
        // Nothing exists at Sess: the intent goes. If that fails too, the intent stays for the
        // owner (every call on it answers CREATE_OUTCOME_UNKNOWN) and the caller still learns why.
        try {
          await this.auth.store.delete(handle, saved.version);
        } catch {
          this.settings.emit({ event: 'create_intent_not_removed', code: 'STATE_STORE_ERROR' });
        }
        throw failure.error;
      }
      try {
        await this.apply(saved, { type: 'create_lost', reason: failure.reason });
      } catch {
        // The intent itself already answers CREATE_OUTCOME_UNKNOWN on every later call.
        this.settings.emit({ event: 'create_unknown_not_saved', code: 'STATE_STORE_ERROR' });
      }
      this.settings.emit({ event: 'create_outcome_unknown', code: 'CREATE_OUTCOME_UNKNOWN' });
      throw createOutcomeUnknown('create_unknown');
    }
    await this.step('create.after_response');

    const event: InteractionEvent =
      'askId' in view ? { type: 'ask_created', view } : { type: 'created', view: view as SessionView };
    let next: InteractionState;
    try {
      next = transition(saved.record.state, event);
    } catch {
      throw new SessMcpError(
        'SESS_PROTOCOL_ERROR',
        'Sess answered the create request with something else than was asked for. Do not repeat the request; ask the owner to check Sess.',
      );
    }
    await this.step('create.before_record_saved');
    try {
      await this.auth.store.update({ ...saved.record, updatedAt: this.nowIso(), state: next }, saved.version);
    } catch (error) {
      // The link exists but this server cannot follow it. The intent stays (the owner finds it by
      // its creation time); repeating the call would create a second link, so it is not retried.
      this.settings.emit({ event: 'created_not_saved', code: 'CREATED_NOT_SAVED' });
      throw new SessMcpError(
        'CREATED_NOT_SAVED',
        'Sess created the link, but this server could not save it, so it cannot follow the answer. Do not repeat the request: a link already exists. Ask the owner (owner procedure).',
        { cause: error },
      );
    }
    await this.step('create.after_record_saved');

    if (next.kind === 'ask_open') {
      const askView = view as AskView;
      return {
        handle,
        revision: 1,
        state: 'waiting',
        humanUrl: next.humanUrl,
        expiresAt: next.expiresAt,
        ask: {
          id: askView.askId,
          open: askView.status === 'open',
          max: askView.max,
          started: askView.started,
          answered: askView.answered,
          answers: [],
        },
      };
    }
    const waiting = next as State<'waiting'>;
    return {
      handle,
      revision: waiting.revision,
      state: 'waiting',
      humanUrl: waiting.session.humanUrl,
      expiresAt: waiting.session.expiresAt,
    };
  }

  // -------------------------------------------------------------------------------------------
  // response

  /** `sess_response`: one bounded wait, then release only a verified, still-current answer. */
  async response(op: ResponseOperation): Promise<EngineResult> {
    const loaded = await this.load(op.handle);
    const { state } = loaded.record;
    try {
      switch (state.kind) {
        case 'create_intent':
        case 'create_unknown':
          throw createOutcomeUnknown(state.kind);
        case 'blocked':
          throw blockedError(state);
        case 'publish_pending':
        case 'complete_pending':
          throw pendingError(state);
        case 'completed':
          checkRevision(op.revision, state.revision, state.kind);
          return { handle: op.handle, revision: state.revision, state: 'completed' };
        case 'expired':
          checkRevision(op.revision, state.revision, state.kind);
          return { handle: op.handle, revision: state.revision, state: 'expired' };
        case 'ask_open':
        case 'ask_closed':
          checkRevision(op.revision, 1, state.kind);
          return await this.readAsk(loaded as Loaded<State<'ask_open' | 'ask_closed'>>);
        case 'waiting':
          checkRevision(op.revision, state.revision, state.kind);
          return await this.wait(loaded as Loaded<State<'waiting'>>, op);
        case 'answered':
          checkRevision(op.revision, state.revision, state.kind);
          return await this.reconfirm(loaded as Loaded<State<'answered'>>);
      }
    } catch (error) {
      if (error instanceof WaitAborted) {
        const revision = 'revision' in state && typeof state.revision === 'number' ? state.revision : 1;
        return { handle: op.handle, revision, state: 'needs_resume' };
      }
      throw error;
    }
  }

  private async wait(loaded: Loaded<State<'waiting'>>, op: ResponseOperation): Promise<EngineResult> {
    const { state } = loaded.record;
    const { sessionId } = state.session;
    const timeoutMs = Math.min(op.waitMs ?? this.settings.maxWaitMs, this.settings.maxWaitMs);
    const { clock } = this.settings;
    const started = clock.now();
    const stopProgress = this.startProgress(timeoutMs);
    try {
      let known: SessionStatus = 'active';
      for (let round = 0; ; round++) {
        const remaining = Math.max(0, timeoutMs - (clock.now() - started));
        let view: SessionView;
        try {
          view = await this.auth.sess.waitSession(
            sessionId,
            { revision: state.revision, status: known, timeoutMs: remaining },
            this.signalOptions(),
          );
        } catch (error) {
          return await this.readFailed(loaded, classifyReadFailure(error, 'waiting for the answer'));
        }
        checkSameSession(view, sessionId);
        if (view.revision < state.revision) throw protocolMismatch();
        if (view.revision > state.revision)
          return await this.block(loaded, 'RECOVERY_BLOCKED', 'session_moved_on');
        const event = view.responses.find((r) => r.revision === state.revision);
        if (event !== undefined) return await this.release(loaded, event);
        switch (view.status) {
          case 'expired': {
            await this.apply(loaded, { type: 'expired' });
            return { handle: op.handle, revision: state.revision, state: 'expired' };
          }
          case 'completed':
            return await this.block(loaded, 'RECOVERY_BLOCKED', 'session_moved_on');
          case 'answered':
            // An answered Session must list its answer; a client that let this through is wrong.
            throw protocolMismatch();
          case 'active':
          case 'lapsed': {
            // A lapsed link may still be extended: keep waiting on the new status while time remains.
            const more = clock.now() - started < timeoutMs;
            if (view.status !== known && more && round < MAX_WAIT_ROUNDS) {
              known = view.status;
              continue;
            }
            return { handle: op.handle, revision: state.revision, state: 'waiting' };
          }
        }
      }
    } finally {
      stopProgress();
    }
  }

  /** Verify the answer at the current revision, confirm it is still current, save and return it. */
  private async release(loaded: Loaded<State<'waiting'>>, event: ResponseEvent): Promise<EngineResult> {
    const { state } = loaded.record;
    const receipt = await this.verify(
      loaded,
      state.session.sessionId,
      state.session.workspaceId,
      state.surface,
      event,
    );
    await this.confirmCurrent(loaded, state.session.sessionId, state.revision, event);
    const response: VerifiedResponse = {
      eventId: event.eventId,
      revision: event.revision,
      answer: event.answer,
      submittedAt: event.submittedAt,
      receipt: event.receipt,
      keyId: receipt.keyId,
      verifiedAt: this.nowIso(),
    };
    await this.apply(loaded, { type: 'released', response });
    this.settings.emit({ event: 'answer_released', state: 'answered' });
    return {
      handle: loaded.record.handle,
      revision: state.revision,
      state: 'answered',
      response: resultResponse(response),
    };
  }

  /** A saved `answered`: verify and confirm again; release nothing that moved on. */
  private async reconfirm(loaded: Loaded<State<'answered'>>): Promise<EngineResult> {
    const { state } = loaded.record;
    const event: ResponseEvent = {
      eventId: state.response.eventId,
      revision: state.response.revision,
      answer: state.response.answer,
      submittedAt: state.response.submittedAt,
      receipt: state.response.receipt,
    };
    await this.verify(loaded, state.session.sessionId, state.session.workspaceId, state.surface, event);
    await this.confirmCurrent(loaded, state.session.sessionId, state.revision, event);
    return {
      handle: loaded.record.handle,
      revision: state.revision,
      state: 'answered',
      response: resultResponse(state.response),
    };
  }

  /** Receipt verification for that exact Session, revision, event, Surface and answer. */
  private async verify(
    loaded: Loaded,
    sessionId: string,
    workspaceId: string,
    surface: Surface,
    event: ResponseEvent,
  ): Promise<VerifiedReceipt> {
    let receipt: VerifiedReceipt;
    try {
      receipt = await this.auth.sess.verifyResponse(
        {
          sessionId,
          revision: event.revision,
          eventId: event.eventId,
          surface,
          answer: event.answer,
          receipt: event.receipt,
        },
        this.signalOptions(),
      );
    } catch (error) {
      return this.readFailed(loaded, classifyReadFailure(error, 'verifying the answer'));
    }
    if (
      receipt.sessionId !== sessionId ||
      receipt.revision !== event.revision ||
      receipt.eventId !== event.eventId ||
      receipt.workspaceId !== workspaceId ||
      receipt.actorAssurance !== 'link_holder'
    ) {
      return this.block(loaded, 'VERIFICATION_FAILED', 'claims_mismatch');
    }
    return receipt;
  }

  /** One more authenticated read: the Session must still be at `revision` with that answer. */
  private async confirmCurrent(loaded: Loaded, sessionId: string, revision: number, event: ResponseEvent) {
    let view: SessionView;
    try {
      view = await this.auth.sess.getSession(sessionId, this.signalOptions());
    } catch (error) {
      return this.readFailed(loaded, classifyReadFailure(error, 'confirming the answer'));
    }
    checkSameSession(view, sessionId);
    const listed = view.responses.find((r) => r.revision === revision);
    const current =
      view.revision === revision &&
      listed !== undefined &&
      listed.eventId === event.eventId &&
      sameJson(listed.answer, event.answer);
    if (!current) return this.block(loaded, 'RECOVERY_BLOCKED', 'session_moved_on');
  }

  private async readAsk(loaded: Loaded<State<'ask_open' | 'ask_closed'>>): Promise<EngineResult> {
    const { state } = loaded.record;
    let view: AskView;
    try {
      view = await this.auth.sess.getAsk(state.askId, this.signalOptions());
    } catch (error) {
      return this.readFailed(loaded, classifyReadFailure(error, 'reading the Ask'));
    }
    if (view.askId !== state.askId) throw protocolMismatch();
    const { surface } = state;
    const workspaceId = state.workspaceId ?? view.workspaceId;
    const answers: AskAnswerResult[] = [];
    // A closed Ask from a store that dropped its Surface cannot have its answers verified: none is released.
    if (surface !== undefined) {
      for (const respondent of view.respondents) {
        const event = respondent.response;
        if (event === undefined) continue;
        await this.verify(loaded, respondent.sessionId, workspaceId, surface, event);
        const answer: AskAnswerResult = {
          respondentId: respondent.respondentId,
          action: event.answer.action,
          values: event.answer.values,
          submittedAt: event.submittedAt,
          verified: true,
          actorAssurance: 'link_holder',
        };
        if (respondent.name !== undefined) answer.name = respondent.name;
        answers.push(answer);
      }
    }
    const open = view.status === 'open';
    if (!open && state.kind === 'ask_open') await this.apply(loaded, { type: 'ask_closed' });
    const ask: AskResult = {
      id: view.askId,
      open,
      max: view.max,
      started: view.started,
      answered: view.answered,
      answers,
    };
    return { handle: loaded.record.handle, revision: 1, state: open ? 'waiting' : 'closed', ask };
  }

  private startProgress(totalMs: number): () => void {
    const report = this.ctx.progress;
    const every = this.settings.progressIntervalMs;
    if (report === undefined || totalMs <= 0) return () => {};
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
      const progress = Math.min(ticks * every, totalMs);
      try {
        Promise.resolve(
          report({
            progress,
            total: totalMs,
            message: 'Waiting for the person to answer on their Sess link.',
          }),
        ).catch(() => {});
      } catch {
        // A failing progress sink never ends the wait.
      }
    }, every);
    return () => clearInterval(timer);
  }

  // -------------------------------------------------------------------------------------------
  // publish and complete

  /** `sess_publish`: the next revision after the verified answer. */
  async publish(op: PublishOperation): Promise<EngineResult> {
    const loaded = await this.load(op.handle);
    const { state } = loaded.record;
    const surfaceDigest = await jsonDigest(op.surface);
    switch (state.kind) {
      case 'waiting':
        if (
          state.lastMutation?.kind === 'publish' &&
          state.lastMutation.expectedRevision === op.expectedRevision &&
          state.lastMutation.responseEventId === op.responseEventId &&
          state.lastMutation.surfaceDigest === surfaceDigest &&
          state.revision === op.expectedRevision + 1
        ) {
          return { handle: op.handle, revision: state.revision, state: 'waiting' };
        }
        checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
        throw noAnswerYet(state.revision);
      case 'answered': {
        checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
        checkResponse(op.responseEventId, state.response.eventId);
        const request: PublishInput = {
          expectedRevision: op.expectedRevision,
          responseEventId: op.responseEventId,
          surface: op.surface,
          idempotencyKey: this.settings.randomId(),
        };
        this.checkNotCancelled();
        await this.step('publish.before_intent_saved');
        const pending = await this.apply(loaded, { type: 'publish_saved', request });
        await this.step('publish.after_intent_saved');
        return this.dispatchPublish(pending as Loaded<State<'publish_pending'>>);
      }
      case 'publish_pending':
        if (
          state.request.expectedRevision !== op.expectedRevision ||
          state.request.responseEventId !== op.responseEventId ||
          !sameJson(state.request.surface, op.surface)
        ) {
          throw new SessMcpError(
            'PENDING_MUTATION_DIFFERS',
            `A different sess_publish after revision ${state.request.expectedRevision} is saved and its outcome is not confirmed. Repeat that identical call first; nothing was sent.`,
            { state: state.kind },
          );
        }
        return this.dispatchPublish(loaded as Loaded<State<'publish_pending'>>);
      case 'complete_pending':
        throw pendingError(state);
      default:
        return this.refuse(state, 'sess_publish', op);
    }
  }

  /** `sess_complete`: close the Session after the verified answer. */
  async complete(op: CompleteOperation): Promise<EngineResult> {
    const loaded = await this.load(op.handle);
    const { state } = loaded.record;
    switch (state.kind) {
      case 'completed': {
        const last = state.lastMutation;
        if (last.kind === 'complete' && last.expectedRevision === op.expectedRevision) {
          checkResponse(op.responseEventId, last.responseEventId);
          return { handle: op.handle, revision: state.revision, state: 'completed' };
        }
        checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
        throw completedAlready();
      }
      case 'waiting':
        checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
        throw noAnswerYet(state.revision);
      case 'answered': {
        checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
        checkResponse(op.responseEventId, state.response.eventId);
        const request: CompleteInput = {
          expectedRevision: op.expectedRevision,
          responseEventId: op.responseEventId,
          idempotencyKey: this.settings.randomId(),
        };
        this.checkNotCancelled();
        await this.step('complete.before_intent_saved');
        const pending = await this.apply(loaded, { type: 'complete_saved', request });
        await this.step('complete.after_intent_saved');
        return this.dispatchComplete(pending as Loaded<State<'complete_pending'>>);
      }
      case 'complete_pending':
        if (
          state.request.expectedRevision !== op.expectedRevision ||
          state.request.responseEventId !== op.responseEventId
        ) {
          throw new SessMcpError(
            'PENDING_MUTATION_DIFFERS',
            `A sess_complete after revision ${state.request.expectedRevision} with another response_event_id is saved and its outcome is not confirmed. Repeat that identical call first; nothing was sent.`,
            { state: state.kind },
          );
        }
        return this.dispatchComplete(loaded as Loaded<State<'complete_pending'>>);
      case 'publish_pending':
        throw pendingError(state);
      default:
        return this.refuse(state, 'sess_complete', op);
    }
  }

  /** The refusals publish and complete share, for states neither can act on. */
  private refuse(
    state: InteractionState,
    tool: 'sess_publish' | 'sess_complete',
    op: { expectedRevision: number },
  ): never {
    switch (state.kind) {
      case 'ask_open':
      case 'ask_closed':
        throw new SessMcpError(
          'INVALID_STATE',
          `This handle is an Ask (many respondents): ${tool} does not apply to it. Read its answers with sess_response.`,
          { reason: 'ask_handle', state: state.kind },
        );
      case 'create_intent':
      case 'create_unknown':
        throw createOutcomeUnknown(state.kind);
      case 'blocked':
        throw blockedError(state);
      case 'expired':
        checkRevision(op.expectedRevision, state.revision, state.kind, 'expected_revision');
        throw new SessMcpError(
          'INVALID_STATE',
          'The link expired with no answer; there is nothing to continue. Start a new interaction if needed.',
          { reason: 'expired', state: state.kind },
        );
      case 'completed':
        throw completedAlready();
      default:
        throw new SessMcpError('INVALID_STATE', `${tool} cannot run in state ${state.kind}.`, {
          state: state.kind,
        });
    }
  }

  private async dispatchPublish(loaded: Loaded<State<'publish_pending'>>): Promise<EngineResult> {
    const { state } = loaded.record;
    const { request } = state;
    const sent = this.auth.sess.publish(state.session.sessionId, request);
    sent.catch(() => {});
    await this.step('publish.after_request_sent');
    let view: SessionView;
    try {
      view = await sent;
    } catch (error) {
      return this.mutationFailed(loaded, error, 'sess_publish');
    }
    await this.step('publish.after_response');
    if (view.sessionId !== state.session.sessionId || view.revision !== request.expectedRevision + 1) {
      throw protocolMismatch(
        'the request stays saved; repeat the identical call after the owner checked Sess',
      );
    }
    const next = transition(state, {
      type: 'published',
      view,
      surfaceDigest: await jsonDigest(request.surface),
    });
    await this.step('publish.before_record_saved');
    await this.save(loaded, next);
    await this.step('publish.after_record_saved');
    return { handle: loaded.record.handle, revision: view.revision, state: 'waiting' };
  }

  private async dispatchComplete(loaded: Loaded<State<'complete_pending'>>): Promise<EngineResult> {
    const { state } = loaded.record;
    const { request } = state;
    const sent = this.auth.sess.complete(state.session.sessionId, request);
    sent.catch(() => {});
    await this.step('complete.after_request_sent');
    let view: SessionView;
    try {
      view = await sent;
    } catch (error) {
      return this.mutationFailed(loaded, error, 'sess_complete');
    }
    await this.step('complete.after_response');
    if (
      view.sessionId !== state.session.sessionId ||
      view.status !== 'completed' ||
      view.revision !== request.expectedRevision
    ) {
      throw protocolMismatch(
        'the request stays saved; repeat the identical call after the owner checked Sess',
      );
    }
    const next = transition(state, { type: 'completed', view });
    await this.step('complete.before_record_saved');
    await this.save(loaded, next);
    await this.step('complete.after_record_saved');
    return { handle: loaded.record.handle, revision: request.expectedRevision, state: 'completed' };
  }

  private async mutationFailed(
    loaded: Loaded,
    error: unknown,
    tool: 'sess_publish' | 'sess_complete',
  ): Promise<never> {
    const failure = classifyMutationFailure(error, tool);
    if (failure.kind === 'block') return this.block(loaded, 'MUTATION_REJECTED', failure.reason);
    this.settings.emit({ event: 'mutation_not_confirmed', code: failure.error.code, tool });
    throw failure.error;
  }
}

// ---------------------------------------------------------------------------------------------
// errors and small checks

function handleNotFound(): SessMcpError {
  return new SessMcpError(
    'HANDLE_NOT_FOUND',
    'No interaction with this handle exists for this profile, origin and key. Check the handle; it cannot be used here.',
  );
}

function checkRevision(given: number, current: number, state: string, name = 'revision'): void {
  if (given !== current) {
    throw new SessMcpError(
      'REVISION_MISMATCH',
      `${name} ${given} is not the current revision of this interaction: it is ${current}. Nothing was sent.`,
      { state },
    );
  }
}

function checkResponse(given: string, current: string): void {
  if (given !== current) {
    throw new SessMcpError(
      'RESPONSE_MISMATCH',
      'response_event_id is not the answer this interaction holds at that revision. Use response.eventId from the answered sess_response; nothing was sent.',
    );
  }
}

function noAnswerYet(revision: number): SessMcpError {
  return new SessMcpError(
    'INVALID_STATE',
    `There is no answer at revision ${revision} yet. Call sess_response until it returns answered; nothing was sent.`,
    { reason: 'no_answer_yet', state: 'waiting' },
  );
}

function completedAlready(): SessMcpError {
  return new SessMcpError('INVALID_STATE', 'This interaction is already completed; nothing was sent.', {
    reason: 'completed',
    state: 'completed',
  });
}

function pendingError(state: State<'publish_pending'> | State<'complete_pending'>): SessMcpError {
  const tool = state.kind === 'publish_pending' ? 'sess_publish' : 'sess_complete';
  return new SessMcpError(
    'MUTATION_PENDING',
    `A ${tool} after revision ${state.request.expectedRevision} is saved and its outcome is not confirmed. Repeat that identical ${tool} call first; nothing was sent.`,
    { state: state.kind },
  );
}

const BLOCKED_MESSAGES = {
  MUTATION_REJECTED: 'Sess refused the saved publish or complete request, so the interaction is blocked.',
  VERIFICATION_FAILED:
    'An answer\u2019s receipt did not verify, so no answer was released and the interaction is blocked.',
  RECOVERY_BLOCKED:
    'The Session is no longer where this interaction expects it, so no answer was released and it is blocked.',
} as const;

/** The error a `blocked` record answers every call with. */
export function blockedError(state: State<'blocked'>): SessMcpError {
  return new SessMcpError(
    state.code,
    `${BLOCKED_MESSAGES[state.code]} Reason: ${state.reason}. The owner must resolve it (owner procedure); start a new interaction if needed.`,
    { reason: state.reason, state: 'blocked' },
  );
}

function protocolMismatch(extra = 'nothing was changed'): SessMcpError {
  return new SessMcpError(
    'SESS_PROTOCOL_ERROR',
    `Sess reported a Session that contradicts this interaction's record; ${extra}. Ask the owner to check the Sess origin.`,
  );
}

function checkSameSession(view: SessionView, sessionId: string): void {
  if (view.sessionId !== sessionId) throw protocolMismatch();
}

function resultResponse(response: VerifiedResponse): ResponseResult {
  return {
    eventId: response.eventId,
    revision: response.revision,
    action: response.answer.action,
    values: response.answer.values,
    submittedAt: response.submittedAt,
    verified: true,
    actorAssurance: 'link_holder',
  };
}
