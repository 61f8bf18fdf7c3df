/**
 * The in-memory state of the local Sess runtime and every transition of the wire contract
 * (`docs/sess-api.md`): workspaces and API keys, Sessions with revisions, answers with signed
 * receipts, Asks with an exact respondent cap, link lifetimes on the controllable clock,
 * idempotent mutations, and event-driven waits.
 *
 * It speaks no HTTP (that is `http.ts`) and renders no HTML (that is `page/`). Mutations check and
 * commit synchronously after any awaited work, so concurrent requests on Node's one thread can
 * never both pass a check (the Ask cap, a publish precondition, an idempotency key).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { SessionStatus } from '../core/ports.js';
import type { Answer, Surface } from '../core/surface.js';
import { base64UrlEncode, canonicalJson, DIGEST_PREFIX } from '../sess/digest.js';
import {
  DEFAULT_EXPIRES_IN,
  EXTEND_HORIZON,
  EXTENDABLE_MAX_LIFETIME,
  FINAL_SESSION_STATUSES,
  type ReceiptClaims,
  type WireAskRespondent,
  type WireAskView,
  type WireResponseEvent,
  type WireSessionView,
} from '../sess/wire.js';
import type { LocalClock } from './clock.js';
import type { LocalKeys } from './keys.js';

/** The limits of a workspace's plan. */
export interface LocalPlan {
  /** Longest link lifetime, in seconds. @default 604800 (7 days) */
  maxExpiresIn: number;
  /** Most open (active, answered, lapsed) Sessions per workspace. @default 1000 */
  maxOpenSessions: number;
  /** Largest `respondents.max` of an Ask. @default 1000 */
  maxRespondents: number;
}

/** The default plan. */
export const DEFAULT_PLAN: LocalPlan = {
  maxExpiresIn: 604_800,
  maxOpenSessions: 1_000,
  maxRespondents: 1_000,
};

/** Counters of one workspace (`sess.stats.of(workspaceId)`). */
export interface LocalWorkspaceStats {
  /** Sessions created by `POST /v1/sessions` (not Ask respondents). */
  sessionsCreated: number;
  asksCreated: number;
  respondentsStarted: number;
  answersSubmitted: number;
  revisionsPublished: number;
  sessionsCompleted: number;
}

/** An error the API answers with. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly field?: string;
  readonly limit?: number;
  readonly length?: number;

  constructor(
    status: number,
    code: string,
    message: string,
    extra: { field?: string; limit?: number; length?: number } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    if (extra.field !== undefined) this.field = extra.field;
    if (extra.limit !== undefined) this.limit = extra.limit;
    if (extra.length !== undefined) this.length = extra.length;
  }

  /** The wire error body. */
  body(): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.field !== undefined) error.field = this.field;
    if (this.limit !== undefined) error.limit = this.limit;
    if (this.length !== undefined) error.length = this.length;
    return { error };
  }
}

/** A response the API layer sends (status, JSON body text, extra headers). */
export interface ApiResult {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** @internal A Session as the runtime holds it. */
export interface SessionRecord {
  id: string;
  workspaceId: string;
  token: string;
  /** Lifetime of each revision, in seconds. */
  lifetime: number;
  extendable: boolean;
  revision: number;
  /** Surface of each revision (index = revision − 1). */
  surfaces: Surface[];
  sdgs: string[];
  expiresAt: number;
  extendableUntil?: number;
  responses: WireResponseEvent[];
  completed: boolean;
  expiredForGood: boolean;
  createdAt: number;
  ask?: { askId: string; respondentId: string };
}

/** @internal An Ask as the runtime holds it. */
export interface AskRecord {
  id: string;
  workspaceId: string;
  token: string;
  surface: Surface;
  sdg: string;
  max: number;
  requireName: boolean;
  expiresAt: number;
  respondentLifetime: number;
  respondents: { id: string; sessionId: string; name?: string }[];
  createdAt: number;
}

interface Waiter {
  session: SessionRecord;
  revision: number;
  status: SessionStatus;
  deadline: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  done: () => void;
}

interface StoredReply {
  fingerprint: string;
  result: ApiResult;
}

/** Random url-safe text of `bytes` random bytes. */
export function randomToken(bytes: number): string {
  return base64UrlEncode(new Uint8Array(randomBytes(bytes)));
}

/**
 * `digestJson` of `src/sess/digest.ts`, synchronously with node:crypto (the same string), so the
 * runtime never yields between a check and its commit.
 */
export function digestSync(value: unknown): string {
  return DIGEST_PREFIX + createHash('sha256').update(canonicalJson(value), 'utf8').digest('base64url');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
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
  readonly #replies = new Map<string, StoredReply>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #waitListeners = new Set<() => void>();
  readonly #openCandidates = new Map<string, Set<SessionRecord>>();
  #issuerOverride: string | undefined;

  constructor(options: { clock: LocalClock; keys: LocalKeys; plan: LocalPlan; issuer?: string }) {
    this.clock = options.clock;
    this.keys = options.keys;
    this.plan = options.plan;
    this.#issuerOverride = options.issuer;
    this.issuer = options.issuer ?? '';
    this.clock.onChange(() => this.#recheckAll());
  }

  /** The receipt issuer: the configured one, or the origin. */
  get receiptIssuer(): string {
    return this.#issuerOverride ?? this.origin;
  }

  // -- workspaces ------------------------------------------------------------------------------

  async createWorkspace(workspaceId = `ws_${randomToken(12)}`, apiKey = `sk_local_${randomToken(24)}`) {
    if (this.workspaces.has(workspaceId)) throw new TypeError('createWorkspace: the workspace exists');
    this.workspaces.set(workspaceId, {
      sessionsCreated: 0,
      asksCreated: 0,
      respondentsStarted: 0,
      answersSubmitted: 0,
      revisionsPublished: 0,
      sessionsCompleted: 0,
    });
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

  sessionView(s: SessionRecord): WireSessionView {
    const view: WireSessionView = {
      id: s.id,
      workspace_id: s.workspaceId,
      revision: s.revision,
      status: this.status(s),
      human_url: this.humanUrl(s),
      expires_at: iso(s.expiresAt),
      responses: s.responses.map((r) => ({ ...r, answer: structuredClone(r.answer) })),
    };
    if (s.extendableUntil !== undefined) view.extendable_until = iso(s.extendableUntil);
    return view;
  }

  askClosed(a: AskRecord): boolean {
    if (this.clock.now() >= a.expiresAt) return true;
    if (a.respondents.length < a.max) return false;
    return a.respondents.every((r) => this.respondentStatus(r.sessionId) !== 'started');
  }

  respondentStatus(sessionId: string): WireAskRespondent['status'] {
    const s = this.sessions.get(sessionId)!;
    const status = this.status(s);
    return status === 'completed' ? 'answered' : status === 'expired' ? 'expired' : 'started';
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

  // -- idempotency ------------------------------------------------------------------------------

  /**
   * Run an idempotent mutation: replay a stored 2xx reply for the same key and fingerprint, refuse
   * a different fingerprint, else `prepare` (async checks and digests) then `commit` (synchronous).
   */
  async idempotent(
    scope: string,
    fingerprint: string,
    prepare: () => Promise<() => ApiResult>,
  ): Promise<ApiResult> {
    const replay = () => {
      const stored = this.#replies.get(scope);
      if (stored === undefined) return undefined;
      if (stored.fingerprint !== fingerprint) {
        throw new ApiFailure(
          422,
          'idempotency_mismatch',
          'This Idempotency-Key was used with a different request. Use a new key for a new request.',
        );
      }
      return { ...stored.result, headers: { ...stored.result.headers, 'idempotent-replayed': 'true' } };
    };
    const early = replay();
    if (early) return early;
    const commit = await prepare();
    // A concurrent identical request may have committed while we awaited.
    const late = replay();
    if (late) return late;
    const result = commit();
    if (result.status >= 200 && result.status < 300) this.#replies.set(scope, { fingerprint, result });
    return result;
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
    for (const s of candidates) if (FINAL_SESSION_STATUSES.has(this.status(s))) candidates.delete(s);
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
      id: `ses_${randomToken(15)}`,
      workspaceId,
      token: randomToken(32),
      lifetime,
      extendable,
      revision: 1,
      surfaces: [structuredClone(surface)],
      sdgs: [sdg],
      expiresAt: now + lifetime * 1000,
      responses: [],
      completed: false,
      expiredForGood: false,
      createdAt: now,
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

  getSession(workspaceId: string, id: string): SessionRecord {
    const s = this.sessions.get(id);
    if (s === undefined || s.workspaceId !== workspaceId)
      throw new ApiFailure(404, 'not_found', 'No such Session.');
    return s;
  }

  /** The checks publish and complete share; returns the Session. */
  #mutable(workspaceId: string, id: string, ifMatch: number, responseEventId: string): SessionRecord {
    const s = this.getSession(workspaceId, id);
    if (s.ask)
      throw new ApiFailure(
        403,
        'forbidden',
        'An Ask respondent’s Session is completed by Sess; it cannot be published or completed.',
      );
    const status = this.status(s);
    if (status === 'expired') throw new ApiFailure(410, 'expired', 'The Session expired without an answer.');
    if (ifMatch !== s.revision) {
      throw new ApiFailure(
        409,
        'conflict',
        `If-Match is revision ${ifMatch}, but the Session is at revision ${s.revision}.`,
      );
    }
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
  ): 'ok' | 'stale' | 'answered' | 'completed' | 'lapsed' | 'expired' {
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
    return 'ok';
  }

  /** More time on a lapsed, extendable link. */
  extend(s: SessionRecord): 'ok' | 'not_lapsed' | 'expired' {
    const status = this.status(s);
    if (status === 'expired') return 'expired';
    if (status !== 'lapsed' || s.extendableUntil === undefined) return 'not_lapsed';
    s.expiresAt = Math.min(this.clock.now() + s.lifetime * 1000, s.extendableUntil);
    this.notify(s);
    return 'ok';
  }

  // -- Asks -------------------------------------------------------------------------------------

  createAsk(
    workspaceId: string,
    surface: Surface,
    sdg: string,
    lifetime: number,
    max: number,
    requireName: boolean,
    respondentLifetime: number,
  ): AskRecord {
    const now = this.clock.now();
    const a: AskRecord = {
      id: `ask_${randomToken(15)}`,
      workspaceId,
      token: randomToken(32),
      surface: structuredClone(surface),
      sdg,
      max,
      requireName,
      expiresAt: now + lifetime * 1000,
      respondentLifetime,
      respondents: [],
      createdAt: now,
    };
    this.asks.set(a.id, a);
    this.askTokens.set(a.token, a);
    this.stats(workspaceId).asksCreated++;
    return a;
  }

  getAsk(workspaceId: string, id: string): AskRecord {
    const a = this.asks.get(id);
    if (a === undefined || a.workspaceId !== workspaceId)
      throw new ApiFailure(404, 'not_found', 'No such Ask.');
    return a;
  }

  /** Start one respondent, atomically against the cap. */
  startRespondent(a: AskRecord, name?: string): SessionRecord | 'full' | 'closed' {
    const now = this.clock.now();
    if (now >= a.expiresAt) return 'closed';
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

  // -- waits ------------------------------------------------------------------------------------

  /** Number of waits in progress (on one Session, or all). */
  pendingWaits(sessionId?: string): number {
    if (sessionId !== undefined) return this.#waiters.get(sessionId)?.size ?? 0;
    let n = 0;
    for (const set of this.#waiters.values()) n += set.size;
    return n;
  }

  /** Called whenever a wait starts (for `sess.whenWaiting`). */
  onWaitStarted(listener: () => void): () => void {
    this.#waitListeners.add(listener);
    return () => this.#waitListeners.delete(listener);
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
      for (const listener of [...this.#waitListeners]) listener();
    });
  }

  #changed(w: Waiter): boolean {
    const status = this.status(w.session);
    return w.session.revision !== w.revision || status !== w.status || FINAL_SESSION_STATUSES.has(status);
  }

  /** Next clock time at which the Session's status changes by itself. */
  #nextTransition(s: SessionRecord): number | undefined {
    const status = this.status(s);
    if (status === 'active') return s.expiresAt;
    if (status === 'lapsed') return s.extendableUntil;
    return undefined;
  }

  #arm(w: Waiter): void {
    if (w.timer !== undefined) clearTimeout(w.timer);
    let delay = Math.max(0, w.deadline - Date.now());
    if (!this.clock.frozen) {
      const next = this.#nextTransition(w.session);
      if (next !== undefined) delay = Math.min(delay, Math.max(0, next - this.clock.now()));
    }
    w.timer = setTimeout(() => {
      w.timer = undefined;
      if (this.#changed(w) || Date.now() >= w.deadline) w.done();
      else this.#arm(w);
    }, delay);
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

  #recheckAll(): void {
    for (const id of [...this.#waiters.keys()]) {
      const s = this.sessions.get(id);
      if (s) this.notify(s);
    }
  }

  /** End every wait now (on close). */
  endAllWaits(): void {
    for (const set of [...this.#waiters.values()]) for (const w of [...set]) w.done();
  }

  /** The fingerprint of a mutation for idempotency. */
  static fingerprint(body: unknown, ifMatch: number | null): string {
    return canonicalJson({ body, if_match: ifMatch });
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
