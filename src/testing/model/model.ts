/**
 * The in-memory state of the local Sess runtime and every transition of the wire contract
 * (`docs/sess-api.md`): workspaces and API keys, Sessions with revisions, answers with signed
 * receipts, Asks with an exact respondent cap, and link lifetimes on the controllable clock
 * (idempotent replays are `idempotency.ts`'s; withdrawing and closing are `withdrawals.ts`'s).
 * Every committed change wakes the Session's waits (`waits.ts`).
 *
 * It speaks no HTTP (the routes do) and renders no HTML (that is `page/`). Mutations check and
 * commit synchronously after any awaited work, so concurrent requests on Node's one thread can
 * never both pass a check (the Ask cap, a publish precondition, an idempotency key).
 */
import type { SessionStatus } from '../../core/contract/ports.js';
import type { Answer, Surface } from '../../core/model/surface.js';
import {
  DEFAULT_EXPIRES_IN,
  EXTEND_HORIZON,
  EXTENDABLE_MAX_LIFETIME,
  OPEN_SESSION_STATUSES,
} from '../../sess/wire.js';
import type {
  ReceiptClaims,
  WireAskRespondent,
  WireAskView,
  WireSessionView,
} from '../../sess/wire-reader.js';
import { ApiFailure } from '../server/api-failure.js';
import { IdempotentReplies } from '../server/idempotency.js';
import { SessionWaits } from '../server/waits.js';
import type { LocalClock } from './clock.js';
import type { LocalKeys } from './keys.js';
import {
  type AskRecord,
  digestSync,
  emptyWorkspaceStats,
  iso,
  type LocalPlan,
  type LocalWorkspaceStats,
  newLinkIdentity,
  randomToken,
  type SessionRecord,
} from './records.js';
import { atRevision, closeAsk, withdrawSession } from './withdrawals.js';

/** `found` when it belongs to `workspaceId`; else `404` (never `403`, so existence does not leak). */
function owned<T extends { workspaceId: string }>(
  found: T | undefined,
  workspaceId: string,
  message: string,
): T {
  if (found === undefined || found.workspaceId !== workspaceId)
    throw new ApiFailure(404, 'not_found', message);
  return found;
}

/** @internal The runtime's state. */
export class LocalModel {
  readonly clock: LocalClock;
  readonly keys: LocalKeys;
  readonly plan: LocalPlan;
  readonly issuer: string;
  origin = '';

  readonly workspaces = new Map<string, LocalWorkspaceStats>();
  readonly apiKeys = new Map<string, string>();
  readonly sessions = new Map<string, SessionRecord>();
  readonly asks = new Map<string, AskRecord>();
  readonly sessionTokens = new Map<string, SessionRecord>();
  readonly askTokens = new Map<string, AskRecord>();
  /** Stored replies of idempotent mutations. */
  readonly replies = new IdempotentReplies();
  /** Waits in progress; every commit below notifies them. */
  readonly waits: SessionWaits;
  /** Called right after an answer is committed and its Session's waits are notified. */
  readonly answerListeners = new Set<(sessionId: string, revision: number) => void>();
  readonly #openCandidates = new Map<string, Set<SessionRecord>>();
  #issuerOverride: string | undefined;

  constructor(options: { clock: LocalClock; keys: LocalKeys; plan: LocalPlan; issuer?: string }) {
    this.clock = options.clock;
    this.keys = options.keys;
    this.plan = options.plan;
    this.#issuerOverride = options.issuer;
    this.issuer = options.issuer ?? '';
    this.waits = new SessionWaits({
      clock: this.clock,
      status: (s) => this.status(s),
      session: (id) => this.sessions.get(id),
    });
  }

  /** The receipt issuer: the configured one, or the origin. */
  get receiptIssuer(): string {
    return this.#issuerOverride ?? this.origin;
  }

  // -- workspaces ------------------------------------------------------------------------------

  async createWorkspace(workspaceId = `ws_${randomToken(12)}`, apiKey = `sk_local_${randomToken(24)}`) {
    if (this.workspaces.has(workspaceId)) throw new TypeError('createWorkspace: the workspace exists');
    this.workspaces.set(workspaceId, emptyWorkspaceStats());
    this.apiKeys.set(apiKey, workspaceId);
    await this.keys.rotate(workspaceId);
    return { workspaceId, apiKey };
  }

  stats(workspaceId: string): LocalWorkspaceStats {
    const stats = this.workspaces.get(workspaceId);
    if (stats === undefined) throw new TypeError('stats: no such workspace');
    return stats;
  }

  // -- status and views ------------------------------------------------------------------------

  status(s: SessionRecord): SessionStatus {
    if (s.completed) return 'completed';
    if (s.responses.at(-1)?.revision === s.revision) return 'answered';
    if (s.withdrawn) return 'withdrawn';
    if (s.expiredForGood) return 'expired';
    const now = this.clock.now();
    if (now < s.expiresAt) return 'active';
    if (s.extendableUntil !== undefined && now < s.extendableUntil) return 'lapsed';
    // Closed for good: moving the clock back later does not reopen it.
    s.expiredForGood = true;
    return 'expired';
  }

  humanUrl(s: SessionRecord): string {
    return `${this.origin}/s/${s.token}`;
  }

  /**
   * The wire view of `s`. Its answers are copies unless `copy` is false (for a view written out
   * as JSON at once, which copies them anyway).
   */
  sessionView(s: SessionRecord, copy = true): WireSessionView {
    const view: WireSessionView = {
      id: s.id,
      workspace_id: s.workspaceId,
      revision: s.revision,
      status: this.status(s),
      human_url: this.humanUrl(s),
      expires_at: iso(s.expiresAt),
      responses: copy ? s.responses.map((r) => ({ ...r, answer: structuredClone(r.answer) })) : s.responses,
    };
    if (s.extendableUntil !== undefined) view.extendable_until = iso(s.extendableUntil);
    return view;
  }

  askClosed(a: AskRecord): boolean {
    if (a.closed || this.clock.now() >= a.expiresAt) return true;
    if (a.respondents.length < a.max) return false;
    return a.respondents.every((r) => this.respondentStatus(r.sessionId) !== 'started');
  }

  respondentStatus(sessionId: string): WireAskRespondent['status'] {
    const s = this.sessions.get(sessionId)!;
    const status = this.status(s);
    if (status === 'completed') return 'answered';
    return status === 'expired' || status === 'withdrawn' ? status : 'started';
  }

  askView(a: AskRecord): WireAskView {
    const respondents = a.respondents.map((r) => {
      const s = this.sessions.get(r.sessionId)!;
      const out: WireAskRespondent = {
        id: r.id,
        session_id: r.sessionId,
        status: this.respondentStatus(r.sessionId),
      };
      if (r.name !== undefined) out.name = r.name;
      if (out.status === 'answered' && s.responses[0]) out.response = { ...s.responses[0] };
      return out;
    });
    return {
      id: a.id,
      workspace_id: a.workspaceId,
      status: this.askClosed(a) ? 'closed' : 'open',
      human_url: `${this.origin}/a/${a.token}`,
      expires_at: iso(a.expiresAt),
      max: a.max,
      started: respondents.length,
      answered: respondents.filter((r) => r.status === 'answered').length,
      respondents,
    };
  }

  // -- Sessions ---------------------------------------------------------------------------------

  /**
   * Open (active, answered, lapsed) Sessions of a workspace created by `POST /v1/sessions`. Final
   * Sessions are pruned from the candidates as they are found, so a create costs O(1) until the
   * workspace nears its cap.
   */
  openSessions(workspaceId: string): number {
    const candidates = this.#openCandidates.get(workspaceId);
    if (candidates === undefined) return 0;
    for (const s of candidates) if (!OPEN_SESSION_STATUSES.has(this.status(s))) candidates.delete(s);
    return candidates.size;
  }

  #newSession(
    workspaceId: string,
    surface: Surface,
    sdg: string,
    lifetime: number,
    extendable: boolean,
  ): SessionRecord {
    const now = this.clock.now();
    const s: SessionRecord = {
      ...newLinkIdentity('ses', workspaceId, now),
      lifetime,
      extendable,
      revision: 1,
      surfaces: [structuredClone(surface)],
      sdgs: [sdg],
      expiresAt: now + lifetime * 1000,
      responses: [],
      completed: false,
      expiredForGood: false,
    };
    if (extendable) s.extendableUntil = now + EXTEND_HORIZON * 1000;
    this.sessions.set(s.id, s);
    this.sessionTokens.set(s.token, s);
    return s;
  }

  /** Commit a create (after the request was validated). */
  createSession(workspaceId: string, surface: Surface, sdg: string, expiresIn: number): SessionRecord {
    const candidates = this.#openCandidates.get(workspaceId) ?? new Set<SessionRecord>();
    this.#openCandidates.set(workspaceId, candidates);
    const open =
      candidates.size < this.plan.maxOpenSessions ? candidates.size : this.openSessions(workspaceId);
    if (open >= this.plan.maxOpenSessions) {
      throw new ApiFailure(
        403,
        'plan_limit',
        `The workspace has ${open} open Sessions; its plan allows ${this.plan.maxOpenSessions}.`,
        {
          limit: this.plan.maxOpenSessions,
        },
      );
    }
    const s = this.#newSession(workspaceId, surface, sdg, expiresIn, expiresIn <= EXTENDABLE_MAX_LIFETIME);
    candidates.add(s);
    this.stats(workspaceId).sessionsCreated++;
    return s;
  }

  /** The Session `id` of `workspaceId`; another workspace's is `404` too, so it does not leak. */
  getSession(workspaceId: string, id: string): SessionRecord {
    return owned(this.sessions.get(id), workspaceId, 'No such Session.');
  }

  /** The checks publish and complete share; returns the Session. */
  #mutable(workspaceId: string, id: string, ifMatch: number, responseEventId: string): SessionRecord {
    const { s, status } = atRevision(
      this,
      workspaceId,
      id,
      ifMatch,
      'An Ask respondent’s Session is completed by Sess; it cannot be published or completed.',
    );
    if (status === 'completed') throw new ApiFailure(409, 'conflict', 'The Session is already completed.');
    if (status !== 'answered')
      throw new ApiFailure(
        409,
        'conflict',
        `The Session is ${status}: there is no answer at revision ${s.revision} yet.`,
      );
    const answer = s.responses.at(-1)!;
    if (answer.event_id !== responseEventId) {
      throw new ApiFailure(409, 'conflict', 'response_event_id is not the answer at the current revision.');
    }
    return s;
  }

  publish(
    workspaceId: string,
    id: string,
    ifMatch: number,
    responseEventId: string,
    surface: Surface,
    sdg: string,
  ): SessionRecord {
    const s = this.#mutable(workspaceId, id, ifMatch, responseEventId);
    const now = this.clock.now();
    s.revision += 1;
    s.surfaces.push(structuredClone(surface));
    s.sdgs.push(sdg);
    s.expiresAt = now + s.lifetime * 1000;
    if (s.extendable) s.extendableUntil = now + EXTEND_HORIZON * 1000;
    this.stats(workspaceId).revisionsPublished++;
    this.notify(s);
    return s;
  }

  complete(workspaceId: string, id: string, ifMatch: number, responseEventId: string): SessionRecord {
    const s = this.#mutable(workspaceId, id, ifMatch, responseEventId);
    s.completed = true;
    this.stats(workspaceId).sessionsCompleted++;
    this.notify(s);
    return s;
  }

  /** Withdraw a Session without an answer (`withdrawals.ts`). */
  withdraw(workspaceId: string, id: string, ifMatch: number, reason: string | undefined): SessionRecord {
    return withdrawSession(this, workspaceId, id, ifMatch, reason);
  }

  // -- the person's side ------------------------------------------------------------------------

  /**
   * Accept an answer at `revision`: check, sign the receipt and commit in one synchronous step, so
   * two concurrent submits can never both be accepted. Returns the problem when the Session
   * cannot take it.
   */
  acceptAnswer(
    s: SessionRecord,
    revision: number,
    answer: Answer,
  ): 'ok' | 'stale' | 'answered' | 'completed' | 'lapsed' | 'expired' | 'withdrawn' {
    const check = () => {
      const status = this.status(s);
      if (status !== 'active') return status === 'answered' ? 'answered' : status;
      if (revision !== s.revision) return 'stale';
      return undefined;
    };
    const early = check();
    if (early) return early;
    const eventId = `evt_${randomToken(15)}`;
    const now = this.clock.now();
    const claims: ReceiptClaims = {
      iss: this.receiptIssuer,
      ws: s.workspaceId,
      sid: s.id,
      rev: revision,
      evt: eventId,
      sdg: s.sdgs[revision - 1]!,
      adg: digestSync(answer),
      act: 'link_holder',
      iat: Math.floor(now / 1000),
    };
    if (s.ask) {
      // An Ask respondent's receipt also names its Ask and, when given, the respondent's name.
      claims.ask = s.ask.askId;
      const name = this.asks.get(s.ask.askId)?.respondents.find((r) => r.sessionId === s.id)?.name;
      if (name !== undefined) claims.name = name;
    }
    const receipt = this.keys.signSync({ ...claims }, { kid: this.keys.activeKid(s.workspaceId) });
    s.responses.push({ event_id: eventId, revision, answer, submitted_at: iso(now), receipt });
    if (s.ask) s.completed = true;
    this.stats(s.workspaceId).answersSubmitted++;
    this.notify(s);
    for (const listener of [...this.answerListeners]) listener(s.id, revision);
    return 'ok';
  }

  /** More time on a lapsed, extendable link. */
  extend(s: SessionRecord): 'ok' | 'not_lapsed' | 'expired' | 'withdrawn' {
    const status = this.status(s);
    if (status === 'expired' || status === 'withdrawn') return status;
    if (status !== 'lapsed' || s.extendableUntil === undefined) return 'not_lapsed';
    s.expiresAt = Math.min(this.clock.now() + s.lifetime * 1000, s.extendableUntil);
    this.notify(s);
    return 'ok';
  }

  // -- Asks -------------------------------------------------------------------------------------

  /** Commit an Ask (after the request was validated): `lifetime` and `respondentLifetime` in seconds. */
  createAsk(
    workspaceId: string,
    ask: {
      surface: Surface;
      sdg: string;
      lifetime: number;
      max: number;
      requireName: boolean;
      respondentLifetime: number;
    },
  ): AskRecord {
    const { surface, sdg, lifetime, max, requireName, respondentLifetime } = ask;
    const now = this.clock.now();
    const a: AskRecord = {
      ...newLinkIdentity('ask', workspaceId, now),
      surface: structuredClone(surface),
      sdg,
      max,
      requireName,
      expiresAt: now + lifetime * 1000,
      respondentLifetime,
      respondents: [],
    };
    this.asks.set(a.id, a);
    this.askTokens.set(a.token, a);
    this.stats(workspaceId).asksCreated++;
    return a;
  }

  /** The Ask `id` of `workspaceId` (`404` otherwise). */
  getAsk(workspaceId: string, id: string): AskRecord {
    return owned(this.asks.get(id), workspaceId, 'No such Ask.');
  }

  /** Close an Ask and withdraw its open respondent pages (`withdrawals.ts`). */
  closeAsk(workspaceId: string, id: string, ifMatch: number, reason: string | undefined): AskRecord {
    return closeAsk(this, workspaceId, id, ifMatch, reason);
  }

  /** Start one respondent, atomically against the cap. */
  startRespondent(a: AskRecord, name?: string): SessionRecord | 'full' | 'closed' {
    const now = this.clock.now();
    if (a.closed || now >= a.expiresAt) return 'closed';
    if (a.respondents.length >= a.max) return 'full';
    const lifetime = Math.max(1, Math.min(a.respondentLifetime, Math.floor((a.expiresAt - now) / 1000)));
    const s = this.#newSession(a.workspaceId, a.surface, a.sdg, lifetime, false);
    // The respondent's page never outlives the Ask.
    s.expiresAt = Math.min(now + a.respondentLifetime * 1000, a.expiresAt);
    const respondentId = `rsp_${randomToken(12)}`;
    s.ask = { askId: a.id, respondentId };
    a.respondents.push(
      name === undefined
        ? { id: respondentId, sessionId: s.id }
        : { id: respondentId, sessionId: s.id, name },
    );
    this.stats(a.workspaceId).respondentsStarted++;
    return s;
  }

  /** Wake every wait on `s` that no longer matches (after every committed change). */
  notify(s: SessionRecord): void {
    this.waits.notify(s);
  }

  /** The lifetime a create asks for, checked against the plan. */
  lifetime(expiresIn: number | undefined, field: string): number {
    const value = expiresIn ?? DEFAULT_EXPIRES_IN;
    if (value > this.plan.maxExpiresIn) {
      throw new ApiFailure(
        422,
        'invalid_request',
        `${field} is ${value} seconds; the plan allows at most ${this.plan.maxExpiresIn}.`,
        { field, limit: this.plan.maxExpiresIn, length: value },
      );
    }
    return value;
  }
}
