/**
 * The wake event: what is delivered when an interaction a paused agent runtime waits on changes
 * (answered late, closed, withdrawn, expired, blocked), so the runtime resumes and asks the
 * server itself. An event is a reference only: which handle, at which revision, in which order.
 * It carries no answer value, no link, no receipt, no key and no free text; a receiver that wants
 * the answer calls `sess_response` with the handle.
 *
 * This module defines the event, its checks and its one body (the JSON a webhook carries). It
 * does not store, claim or order events (the outbox does) and does not send them.
 */
import {
  INTERACTION_EVENT_TYPES,
  type InteractionEventType,
  type WakeEvent,
  wakeEventReference,
} from '../../index.js';

/** Why an interaction's waiter is woken: the core's event types (`src/core/model/record.ts`). */
export type WakeEventType = InteractionEventType;

/** One wake event, as the outbox hands it to a sink and a webhook delivers it (the core's type). */
export type { WakeEvent };

/** Every {@link WakeEventType}, in the order the docs list them. */
export const WAKE_EVENT_TYPES: readonly WakeEventType[] = INTERACTION_EVENT_TYPES;

/** The longest `eventId`, `handle` or `scope` an event carries, in characters. */
export const MAX_WAKE_REFERENCE_LENGTH = 256;

/** Visible ASCII only: the event id is sent as the `webhook-id` header and signed as it is. */
const EVENT_ID_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${MAX_WAKE_REFERENCE_LENGTH}}$`);
/** A UTC instant as `Date.prototype.toISOString` writes it (milliseconds optional). */
const OCCURRED_AT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

function isReference(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_WAKE_REFERENCE_LENGTH &&
    // No control character: a reference is never text for a person or a terminal.
    !/[\u0000-\u001f\u007f-\u009f]/.test(value)
  );
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * What is wrong with `event`, in words that name the field and never repeat its value, or
 * `undefined` for a valid event. Fields other than {@link WakeEvent}'s are ignored (they are never
 * sent).
 */
export function wakeEventProblem(event: unknown): string | undefined {
  if (event === null || typeof event !== 'object') return 'the event must be an object';
  const e = event as Partial<Record<keyof WakeEvent, unknown>>;
  if (typeof e.eventId !== 'string' || !EVENT_ID_PATTERN.test(e.eventId)) {
    return `eventId must be 1 to ${MAX_WAKE_REFERENCE_LENGTH} visible ASCII characters`;
  }
  if (!WAKE_EVENT_TYPES.includes(e.type as WakeEventType)) {
    return `type must be one of ${WAKE_EVENT_TYPES.join(', ')}`;
  }
  if (!isReference(e.handle)) return `handle must be 1 to ${MAX_WAKE_REFERENCE_LENGTH} characters`;
  if (!isCount(e.revision)) return 'revision must be a whole number from 0';
  if (!isCount(e.sequence)) return 'sequence must be a whole number from 0';
  if (
    typeof e.occurredAt !== 'string' ||
    !OCCURRED_AT_PATTERN.test(e.occurredAt) ||
    !Number.isFinite(Date.parse(e.occurredAt))
  ) {
    return 'occurredAt must be an ISO 8601 UTC instant such as 2025-01-31T12:00:00.000Z';
  }
  if (e.scope !== undefined && !isReference(e.scope)) {
    return `scope must be 1 to ${MAX_WAKE_REFERENCE_LENGTH} characters when present`;
  }
  return undefined;
}

/**
 * The body a webhook carries for `event`: the JSON of its {@link WakeEvent} fields, in the order
 * the interface declares them, and nothing else (a field the caller's object has beyond them is
 * never sent). The caller checks the event first ({@link wakeEventProblem}).
 */
export function wakeEventBody(event: WakeEvent): string {
  return JSON.stringify(wakeEventReference(event, event.scope));
}
