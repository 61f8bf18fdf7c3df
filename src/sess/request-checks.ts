/**
 * The checks the Sess client makes on a request before anything is sent: ids, idempotency keys,
 * revisions, lifetimes and a withdraw's or close's reason. A failed check is a `not_sent`
 * `configuration` {@link SessApiError} (`refuseToSend`) whose message never repeats the value.
 *
 * It checks requests only: what an answer must imply is the operations' (`session-calls.ts`,
 * `ask-calls.ts`), and decoding answers is `decode.ts`'s.
 */
import { codePointLength, textProblem } from '../core/contract/limits.js';
import { SESS_ID_RULE } from '../core/contract/rules.js';
import { refuseToSend } from './errors.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, MAX_WITHDRAW_REASON_LENGTH } from './wire.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]+$/;

/** A whole number from 1. */
export function isPositiveInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

/** The idempotency key, or a refusal: 1–255 printable ASCII characters without spaces. */
export function checkIdempotencyKey(key: unknown, what: string): string {
  if (typeof key !== 'string' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !IDEMPOTENCY_KEY.test(key)) {
    throw refuseToSend(what, 'the idempotency key is not 1–255 printable ASCII characters without spaces');
  }
  return key;
}

/** A Sess id (`SESS_ID_RULE`), or a refusal naming which id (`name`). */
export function checkId(id: unknown, what: string, name: string): string {
  if (!SESS_ID_RULE.test(id)) throw refuseToSend(what, `the ${name} is not an id`);
  return id;
}

/** Refuses a lifetime given that is not a whole number of seconds from 1. */
export function checkExpiresIn(value: unknown, what: string, name: string): void {
  if (value !== undefined && !isPositiveInt(value)) {
    throw refuseToSend(what, `${name} is not a whole number of seconds`);
  }
}

/** The optional `reason` of a withdraw or close, as the body carries it. */
export function reasonBody(reason: unknown, what: string): Record<string, unknown> {
  if (reason === undefined) return {};
  if (typeof reason !== 'string' || textProblem(reason) !== undefined) {
    throw refuseToSend(what, 'the reason is not text without U+0000 or unpaired surrogates');
  }
  if (codePointLength(reason) > MAX_WITHDRAW_REASON_LENGTH) {
    throw refuseToSend(what, `the reason is longer than ${MAX_WITHDRAW_REASON_LENGTH} characters`);
  }
  return { reason };
}
