/**
 * The shapes the local Sess runtime keeps in memory — a workspace's plan and counters, a Session,
 * an Ask — and the small pure helpers every part of the runtime uses to make them: random ids and
 * tokens, the synchronous digest, the wire's timestamp form.
 *
 * It holds no state and changes nothing (`model.ts` does).
 */
import { createHash, randomBytes } from 'node:crypto';
import { base64UrlEncode } from '../../core/codec/base64url.js';
import { canonicalJson } from '../../core/codec/canonical-json.js';
import type { Surface } from '../../core/model/surface.js';
import { DIGEST_PREFIX } from '../../sess/digest.js';
import type { WireResponseEvent } from '../../sess/wire-reader.js';

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
  /** Sessions withdrawn by `POST /v1/sessions/{id}/withdraw` (not respondents of a closed Ask). */
  sessionsWithdrawn: number;
  /** Asks closed by `POST /v1/asks/{id}/close`. */
  asksClosed: number;
}

/** Counters of a new workspace: all zero. */
export function emptyWorkspaceStats(): LocalWorkspaceStats {
  return {
    sessionsCreated: 0,
    asksCreated: 0,
    respondentsStarted: 0,
    answersSubmitted: 0,
    revisionsPublished: 0,
    sessionsCompleted: 0,
    sessionsWithdrawn: 0,
    asksClosed: 0,
  };
}

/** What every link-bearing object (a Session, an Ask) is born with. */
export interface LinkIdentity {
  id: string;
  workspaceId: string;
  /** The secret part of its link. */
  token: string;
  createdAt: number;
}

/** @internal A Session as the runtime holds it. */
export interface SessionRecord extends LinkIdentity {
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
  /** Set when the question was withdrawn (directly, or by closing its Ask): final. */
  withdrawn?: { reason?: string };
  ask?: { askId: string; respondentId: string };
}

/** @internal An Ask as the runtime holds it. */
export interface AskRecord extends LinkIdentity {
  surface: Surface;
  sdg: string;
  max: number;
  requireName: boolean;
  expiresAt: number;
  respondentLifetime: number;
  respondents: { id: string; sessionId: string; name?: string }[];
  /** Set when the Ask was closed by `POST /v1/asks/{id}/close`. */
  closed?: { reason?: string };
}

/** Random url-safe text of `bytes` random bytes. */
export function randomToken(bytes: number): string {
  return base64UrlEncode(new Uint8Array(randomBytes(bytes)));
}

/** A fresh id (`<prefix>_…`) and link token for an object of `workspaceId` made at `now`. */
export function newLinkIdentity(prefix: 'ses' | 'ask', workspaceId: string, now: number): LinkIdentity {
  return { id: `${prefix}_${randomToken(15)}`, workspaceId, token: randomToken(32), createdAt: now };
}

/**
 * `digestJson` of `src/sess/digest.ts`, synchronously with node:crypto (the same string), so the
 * runtime never yields between a check and its commit.
 */
export function digestSync(value: unknown): string {
  return DIGEST_PREFIX + createHash('sha256').update(canonicalJson(value), 'utf8').digest('base64url');
}

/** A clock time as the wire writes it (`YYYY-MM-DDTHH:MM:SS.sssZ`). */
export function iso(ms: number): string {
  let text = isoTexts.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    if (isoTexts.size >= 256) isoTexts.clear();
    isoTexts.set(ms, text);
  }
  return text;
}

/** The ISO texts of times written lately: a view writes the same few at every read. */
const isoTexts = new Map<number, string>();
