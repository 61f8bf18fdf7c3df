/**
 * The bodies Sess answers with that the client reads member by member, defined once here as
 * types and their exact readers: the Session view (every create, read, wait and confirming
 * read), the Ask view, and a receipt's protected header and claims. The local runtime builds its
 * responses to these same types.
 *
 * A reader accepts exactly the body `docs/sess-api.md` describes (unknown members are ignored)
 * and decodes it to a fresh value: members in a fixed order, person-keyed answer values as
 * null-prototype copies that keep every key (`json-copy.ts`). A view it refuses comes back as a
 * {@link WireRefusal} naming the first wrong member as a path of wire member names and indices,
 * never a key or a value Sess sent; a receipt part it refuses comes back `undefined` (the receipt
 * check reports every such refusal as `malformed`).
 *
 * It checks nothing beyond shape: a view's consistency is `sessionViewProblem`'s and
 * `askViewProblem`'s (`view-checks.ts`), the request's expectations `decode.ts`'s, a receipt's meaning
 * `receipt.ts`'s. It does no I/O and uses no schema library, since the release of a first answer
 * runs it on every wait.
 */
import type { SessionStatus } from '../core/contract/ports.js';
import { SESS_ID_RULE } from '../core/contract/rules.js';
import type { JsonValue } from '../core/model/surface.js';
import { isDigest } from './digest.js';
import { copyJson, copyKeyedMap, NOT_JSON } from './json-copy.js';
import {
  isAbsoluteUrl,
  isTimestamp,
  MAX_ANSWER_ACTION_LENGTH,
  MAX_RECEIPT_LENGTH,
  MAX_URL_LENGTH,
  RECEIPT_KID_MAX_LENGTH,
  RESPONDENT_NAME_MAX_LENGTH,
  SESSION_STATUSES,
} from './wire.js';

// ---------------------------------------------------------------------------------------------
// Types

/** An answer on the wire: the action pressed and a value per field `name` (null prototype, every key). */
export interface WireAnswer {
  /** 1–64 characters. */
  action: string;
  values: Record<string, JsonValue>;
}

/** One answer in a Session view (or an Ask respondent's). */
export interface WireResponseEvent {
  event_id: string;
  /** The revision the answer was given at, 1 or more. */
  revision: number;
  answer: WireAnswer;
  /** A UTC timestamp (`isTimestamp`). */
  submitted_at: string;
  /** A compact JWS of 1–8192 characters; its claims are {@link ReceiptClaims}. */
  receipt: string;
}

/** A Session as Sess sends it (`201`/`200` of every Session endpoint). */
export interface WireSessionView {
  id: string;
  workspace_id: string;
  /** 1 or more. */
  revision: number;
  status: SessionStatus;
  /** An absolute `http:` or `https:` URL of at most 2048 characters. */
  human_url: string;
  expires_at: string;
  extendable_until?: string;
  responses: WireResponseEvent[];
}

/** One respondent of an Ask. */
export interface WireAskRespondent {
  id: string;
  session_id: string;
  /** 1–200 characters, when the respondent gave one. */
  name?: string;
  status: 'started' | 'answered' | 'expired' | 'withdrawn';
  response?: WireResponseEvent;
}

/** An Ask as Sess sends it. */
export interface WireAskView {
  id: string;
  workspace_id: string;
  status: 'open' | 'closed';
  human_url: string;
  expires_at: string;
  /** 1 or more. */
  max: number;
  started: number;
  answered: number;
  respondents: WireAskRespondent[];
}

/** The protected header of a receipt. */
export interface ReceiptHeader {
  alg: 'EdDSA';
  /** 1–128 characters. */
  kid: string;
  typ: 'sess-receipt+jwt';
}

/** The claims of a receipt (its JWS payload). */
export interface ReceiptClaims {
  /** The issuer: the API origin unless configured otherwise. */
  iss: string;
  /** Workspace id. */
  ws: string;
  /** Session id. */
  sid: string;
  /** Revision the answer was given at. */
  rev: number;
  /** Response event id. */
  evt: string;
  /** Digest of the Surface of that revision (`digestJson(interaction)`). */
  sdg: string;
  /** Digest of the answer (`digestJson({ action, values })`). */
  adg: string;
  /** Actor assurance: whoever held the link. */
  act: 'link_holder';
  /** Issued at, whole seconds since the epoch. */
  iat: number;
  /** Ask respondent receipts only, optional (v1.2): the Ask id. */
  ask?: string;
  /** Ask respondent receipts only, optional (v1.2): the name the respondent gave (1–200 characters). */
  name?: string;
}

/** The statuses of an Ask respondent on the wire. */
const RESPONDENT_STATUSES: readonly WireAskRespondent['status'][] = [
  'started',
  'answered',
  'expired',
  'withdrawn',
];

/** The statuses of an Ask on the wire. */
const ASK_STATUSES: readonly WireAskView['status'][] = ['open', 'closed'];

// ---------------------------------------------------------------------------------------------
// Refusals

/**
 * A view a reader refused, and where: `path` is the first wrong member as wire member names and
 * indices joined by `.` (`responses.0.answer.values`), or `''` when the body itself is not an
 * object. It never holds a key or a value Sess sent.
 */
export class WireRefusal {
  constructor(readonly path: string) {}

  /** The same refusal seen from the container it sits in, at `member`. */
  under(member: string): WireRefusal {
    return new WireRefusal(this.path === '' ? member : `${member}.${this.path}`);
  }
}

/** Refuses the body itself. */
const NOT_AN_OBJECT = new WireRefusal('');

// ---------------------------------------------------------------------------------------------
// Scalars

type Members = Record<string, unknown>;

function isObject(value: unknown): value is Members {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function isNonNegativeInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isTimestampValue(value: unknown): value is string {
  return typeof value === 'string' && isTimestamp(value);
}

function isUrl(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_URL_LENGTH && isAbsoluteUrl(value);
}

/** A string of `min` to `max` UTF-16 code units. */
function isText(value: unknown, min: number, max: number): value is string {
  return typeof value === 'string' && value.length >= min && value.length <= max;
}

function isOneOf<T>(values: readonly T[], value: unknown): value is T {
  return (values as readonly unknown[]).includes(value);
}

function isDigestValue(value: unknown): value is string {
  return typeof value === 'string' && isDigest(value);
}

// ---------------------------------------------------------------------------------------------
// Views

const answerValue = (value: unknown) => copyJson(value, 1);

function readAnswer(value: unknown): WireAnswer | WireRefusal {
  if (!isObject(value)) return NOT_AN_OBJECT;
  const { action } = value;
  if (!isText(action, 1, MAX_ANSWER_ACTION_LENGTH)) return new WireRefusal('action');
  const values = copyKeyedMap(value.values, answerValue);
  if (values === NOT_JSON) return new WireRefusal('values');
  return { action, values };
}

function readResponseEvent(value: unknown): WireResponseEvent | WireRefusal {
  if (!isObject(value)) return NOT_AN_OBJECT;
  const { event_id: eventId, revision, submitted_at: submittedAt, receipt } = value;
  if (!SESS_ID_RULE.test(eventId)) return new WireRefusal('event_id');
  if (!isPositiveInt(revision)) return new WireRefusal('revision');
  const answer = readAnswer(value.answer);
  if (answer instanceof WireRefusal) return answer.under('answer');
  if (!isTimestampValue(submittedAt)) return new WireRefusal('submitted_at');
  if (!isText(receipt, 1, MAX_RECEIPT_LENGTH)) return new WireRefusal('receipt');
  return { event_id: eventId, revision, answer, submitted_at: submittedAt, receipt };
}

/** Every item of `value` through `read`, or the first refusal, under `member` and its index. */
function readList<T>(
  value: unknown,
  member: string,
  read: (item: unknown) => T | WireRefusal,
): T[] | WireRefusal {
  if (!Array.isArray(value)) return new WireRefusal(member);
  const out: T[] = [];
  for (let i = 0; i < value.length; i++) {
    const item = read(value[i]);
    if (item instanceof WireRefusal) return item.under(`${member}.${i}`);
    out.push(item);
  }
  return out;
}

/**
 * The Session view `json` is, or the {@link WireRefusal} of its first wrong member (in the order
 * of {@link WireSessionView}'s members).
 */
export function readSessionView(json: unknown): WireSessionView | WireRefusal {
  if (!isObject(json)) return NOT_AN_OBJECT;
  const {
    id,
    workspace_id: workspaceId,
    revision,
    status,
    human_url: humanUrl,
    expires_at: expiresAt,
  } = json;
  if (!SESS_ID_RULE.test(id)) return new WireRefusal('id');
  if (!SESS_ID_RULE.test(workspaceId)) return new WireRefusal('workspace_id');
  if (!isPositiveInt(revision)) return new WireRefusal('revision');
  if (!isOneOf(SESSION_STATUSES, status)) return new WireRefusal('status');
  if (!isUrl(humanUrl)) return new WireRefusal('human_url');
  if (!isTimestampValue(expiresAt)) return new WireRefusal('expires_at');
  const extendable = 'extendable_until' in json;
  const extendableUntil = json.extendable_until;
  if (extendable && !isTimestampValue(extendableUntil)) return new WireRefusal('extendable_until');
  const responses = readList(json.responses, 'responses', readResponseEvent);
  if (responses instanceof WireRefusal) return responses;
  const view: WireSessionView = {
    id,
    workspace_id: workspaceId,
    revision,
    status,
    human_url: humanUrl,
    expires_at: expiresAt,
  } as WireSessionView;
  if (extendable) view.extendable_until = extendableUntil as string;
  view.responses = responses;
  return view;
}

function readRespondent(value: unknown): WireAskRespondent | WireRefusal {
  if (!isObject(value)) return NOT_AN_OBJECT;
  const { id, session_id: sessionId, status } = value;
  if (!SESS_ID_RULE.test(id)) return new WireRefusal('id');
  if (!SESS_ID_RULE.test(sessionId)) return new WireRefusal('session_id');
  const named = 'name' in value;
  const { name } = value;
  if (named && !isText(name, 1, RESPONDENT_NAME_MAX_LENGTH)) return new WireRefusal('name');
  if (!isOneOf(RESPONDENT_STATUSES, status)) return new WireRefusal('status');
  let response: WireResponseEvent | undefined;
  if ('response' in value) {
    const read = readResponseEvent(value.response);
    if (read instanceof WireRefusal) return read.under('response');
    response = read;
  }
  const respondent = { id, session_id: sessionId } as WireAskRespondent;
  if (named) respondent.name = name as string;
  respondent.status = status;
  if (response !== undefined) respondent.response = response;
  return respondent;
}

/**
 * The Ask view `json` is, or the {@link WireRefusal} of its first wrong member (in the order of
 * {@link WireAskView}'s members).
 */
export function readAskView(json: unknown): WireAskView | WireRefusal {
  if (!isObject(json)) return NOT_AN_OBJECT;
  const { id, workspace_id: workspaceId, status, human_url: humanUrl, expires_at: expiresAt } = json;
  if (!SESS_ID_RULE.test(id)) return new WireRefusal('id');
  if (!SESS_ID_RULE.test(workspaceId)) return new WireRefusal('workspace_id');
  if (!isOneOf(ASK_STATUSES, status)) return new WireRefusal('status');
  if (!isUrl(humanUrl)) return new WireRefusal('human_url');
  if (!isTimestampValue(expiresAt)) return new WireRefusal('expires_at');
  const { max, started, answered } = json;
  if (!isPositiveInt(max)) return new WireRefusal('max');
  if (!isNonNegativeInt(started)) return new WireRefusal('started');
  if (!isNonNegativeInt(answered)) return new WireRefusal('answered');
  const respondents = readList(json.respondents, 'respondents', readRespondent);
  if (respondents instanceof WireRefusal) return respondents;
  return {
    id,
    workspace_id: workspaceId,
    status,
    human_url: humanUrl,
    expires_at: expiresAt,
    max,
    started,
    answered,
    respondents,
  };
}

// ---------------------------------------------------------------------------------------------
// Receipts

/** A receipt's protected header, or `undefined` when it is not one. Other members are ignored here. */
export function readReceiptHeader(header: Record<string, unknown>): ReceiptHeader | undefined {
  const { alg, kid, typ } = header;
  if (alg !== 'EdDSA' || typ !== 'sess-receipt+jwt') return undefined;
  if (!isText(kid, 1, RECEIPT_KID_MAX_LENGTH)) return undefined;
  return { alg, kid, typ };
}

/**
 * A receipt's claims, or `undefined` when they are not claims. An `act` that is any string reads
 * as `link_holder`: another actor assurance is a well-formed receipt for something else, and
 * whether it was `link_holder` is the receipt check's to decide.
 */
export function readReceiptClaims(payload: Record<string, unknown>): ReceiptClaims | undefined {
  const { iss, ws, sid, rev, evt, sdg, adg, act, iat } = payload;
  if (typeof iss !== 'string' || iss.length < 1 || typeof act !== 'string') return undefined;
  if (!SESS_ID_RULE.test(ws) || !SESS_ID_RULE.test(sid) || !isPositiveInt(rev) || !SESS_ID_RULE.test(evt)) {
    return undefined;
  }
  if (!isDigestValue(sdg) || !isDigestValue(adg) || !isNonNegativeInt(iat)) return undefined;
  const claims: ReceiptClaims = { iss, ws, sid, rev, evt, sdg, adg, act: 'link_holder', iat };
  if ('ask' in payload) {
    if (!SESS_ID_RULE.test(payload.ask)) return undefined;
    claims.ask = payload.ask;
  }
  if ('name' in payload) {
    const { name } = payload;
    if (!isText(name, 1, RESPONDENT_NAME_MAX_LENGTH)) return undefined;
    claims.name = name;
  }
  return claims;
}
