/**
 * Two wire bodies read without valibot, the ones a first answer's release reads every time: the
 * Session view (every wait and every confirming read) and a receipt's header and claims. The
 * same checks as `WireSessionViewSchema`, `ReceiptHeaderSchema` and `ReceiptClaimsSchema`, written
 * out. A reader only ever accepts: what it accepts, the schema accepts, decoded to the same value
 * (members in the schema's order, answer values as null-prototype copies); anything else,
 * including what it cannot tell cheaply, gets `undefined`, and the caller decodes that body with
 * the schema, whose issue is the one reported. A test holds each reader to its schema on valid and
 * mutated bodies.
 *
 * It checks nothing the schemas do not (a view's consistency is `sessionViewProblem`'s, the
 * request's expectations `decode.ts`'s, a receipt's meaning `receipt.ts`'s) and does no I/O.
 */
import type { SessionStatus } from '../core/ports.js';
import { SESS_ID_RULE } from '../core/rules.js';
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
  type ReceiptClaims,
  type ReceiptHeader,
  SESSION_STATUSES,
  type WireResponseEvent,
  type WireSessionView,
} from './wire.js';

type Members = Record<string, unknown>;

function isObject(value: unknown): value is Members {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function isTimestampValue(value: unknown): value is string {
  return typeof value === 'string' && isTimestamp(value);
}

const answerValue = (value: unknown) => copyJson(value, 1);

function readEvent(value: unknown): WireResponseEvent | undefined {
  if (!isObject(value)) return undefined;
  const { event_id: eventId, revision, answer, submitted_at: submittedAt, receipt } = value;
  if (!SESS_ID_RULE.test(eventId) || !isPositiveInt(revision) || !isObject(answer)) return undefined;
  const { action } = answer;
  if (typeof action !== 'string' || action.length < 1 || action.length > MAX_ANSWER_ACTION_LENGTH)
    return undefined;
  const values = copyKeyedMap(answer.values, answerValue);
  if (values === NOT_JSON || !isTimestampValue(submittedAt)) return undefined;
  if (typeof receipt !== 'string' || receipt.length < 1 || receipt.length > MAX_RECEIPT_LENGTH)
    return undefined;
  return { event_id: eventId, revision, answer: { action, values }, submitted_at: submittedAt, receipt };
}

/**
 * The Session view `json` decodes to under `WireSessionViewSchema`, or `undefined` when this reader
 * does not accept it (then decode it with the schema).
 */
export function readSessionView(json: unknown): WireSessionView | undefined {
  if (!isObject(json)) return undefined;
  const {
    id,
    workspace_id: workspaceId,
    revision,
    status,
    human_url: humanUrl,
    expires_at: expiresAt,
  } = json;
  if (!SESS_ID_RULE.test(id) || !SESS_ID_RULE.test(workspaceId) || !isPositiveInt(revision)) return undefined;
  if (!(SESSION_STATUSES as readonly unknown[]).includes(status)) return undefined;
  if (typeof humanUrl !== 'string' || humanUrl.length > MAX_URL_LENGTH || !isAbsoluteUrl(humanUrl)) {
    return undefined;
  }
  if (!isTimestampValue(expiresAt)) return undefined;
  const extendable = 'extendable_until' in json;
  const extendableUntil = json.extendable_until;
  if (extendable && !isTimestampValue(extendableUntil)) return undefined;
  const wire = json.responses;
  if (!Array.isArray(wire)) return undefined;
  const responses: WireResponseEvent[] = [];
  for (const item of wire) {
    const event = readEvent(item);
    if (event === undefined) return undefined;
    responses.push(event);
  }
  const view: WireSessionView = {
    id,
    workspace_id: workspaceId,
    revision,
    status: status as SessionStatus,
    human_url: humanUrl,
    expires_at: expiresAt,
  } as WireSessionView;
  if (extendable) view.extendable_until = extendableUntil as string;
  view.responses = responses;
  return view;
}

/** A receipt's protected header as `ReceiptHeaderSchema` decodes it, or `undefined` (then use the schema). */
export function readReceiptHeader(header: Record<string, unknown>): ReceiptHeader | undefined {
  const { alg, kid, typ } = header;
  if (alg !== 'EdDSA' || typ !== 'sess-receipt+jwt') return undefined;
  if (typeof kid !== 'string' || kid.length < 1 || kid.length > RECEIPT_KID_MAX_LENGTH) return undefined;
  return { alg, kid, typ };
}

function isNonNegativeInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isDigestValue(value: unknown): value is string {
  return typeof value === 'string' && isDigest(value);
}

/**
 * A receipt's claims as `ReceiptClaimsSchema` decodes them, or `undefined` (then use the schema).
 * `payload` is read as the receipt check gives it to the schema: an `act` that is a string reads as
 * `link_holder` (whether it was is the check's to decide).
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
    if (typeof name !== 'string' || name.length < 1 || name.length > RESPONDENT_NAME_MAX_LENGTH)
      return undefined;
    claims.name = name;
  }
  return claims;
}
