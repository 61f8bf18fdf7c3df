/**
 * The interaction events: which state change is an event, and the event it writes into the record
 * in the same store write (`nextRecord` calls {@link withEvent}). An event says that an interaction
 * left `waiting` (answered, its Ask closed, withdrawn, expired) or needs its owner (blocked),
 * whichever path learned it: a tool call, the watcher, a withdraw.
 *
 * Pure: no I/O, no clock. Delivery (outbox claims and marks) is elsewhere and never changes the
 * record.
 */
import {
  type InteractionEventType,
  type InteractionRecord,
  type InteractionState,
  MAX_RECORD_EVENTS,
  type RecordEvent,
} from './record.js';

/** The states an interaction waits for the person in. */
const WAITING_KINDS: ReadonlySet<InteractionState['kind']> = new Set([
  'waiting',
  'withdraw_pending',
  'ask_open',
  'ask_close_pending',
]);

/** The event a change from `previous` to `next` is, or `undefined` when it is none. */
export function eventTypeOf(
  previous: InteractionState,
  next: InteractionState,
): InteractionEventType | undefined {
  if (next.kind === 'blocked') return previous.kind === 'blocked' ? undefined : 'blocked';
  if (!WAITING_KINDS.has(previous.kind)) return undefined;
  switch (next.kind) {
    case 'answered':
      return 'answered';
    case 'expired':
      return 'expired';
    case 'withdrawn':
      return 'withdrawn';
    case 'ask_closed':
      return next.withdrawal === undefined ? 'ask.closed' : 'withdrawn';
    default:
      return undefined;
  }
}

/** The revision an event of `state` names (an Ask, and a record without one, is at 1). */
function revisionOf(state: InteractionState, previous: InteractionState): number {
  if ('revision' in state && typeof state.revision === 'number') return state.revision;
  if ('revision' in previous && typeof previous.revision === 'number') return previous.revision;
  return 1;
}

/**
 * `next` (the record after the change from `previous`), with the change's event appended when it
 * is one. `occurredAt` is `next.updatedAt`, so the events a write added are those at its time.
 */
export function withEvent(previous: InteractionState, next: InteractionRecord): InteractionRecord {
  const type = eventTypeOf(previous, next.state);
  if (type === undefined) return next;
  const events = next.events ?? [];
  const event: RecordEvent = {
    type,
    revision: revisionOf(next.state, previous),
    sequence: (events.at(-1)?.sequence ?? 0) + 1,
    occurredAt: next.updatedAt,
  };
  return { ...next, events: [...events, event].slice(-MAX_RECORD_EVENTS) };
}

/** The sequence of `record`'s last event, 0 before the first. */
export function lastSequence(record: InteractionRecord): number {
  return record.events?.at(-1)?.sequence ?? 0;
}

/**
 * The events the write of `record` added: the ones at its `updatedAt`. A later write within the
 * same millisecond names an event again; the outboxes add an event id once, so it is never owed
 * twice.
 */
export function eventsAddedBy(record: InteractionRecord): RecordEvent[] {
  return (record.events ?? []).filter((event) => event.occurredAt === record.updatedAt);
}

/** The stable id of `handle`'s event number `sequence`: the same in every process and retry. */
export function eventIdOf(handle: string, sequence: number): string {
  return `evt_${handle}_${sequence}`;
}

/**
 * The ids of every event `record` ever had, kept or not (sequences run from 1 without a gap):
 * what a store removes from its outbox with the record.
 */
export function eventIdsOf(record: InteractionRecord): string[] {
  const ids: string[] = [];
  for (let sequence = 1; sequence <= lastSequence(record); sequence++)
    ids.push(eventIdOf(record.handle, sequence));
  return ids;
}
