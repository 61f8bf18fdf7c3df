/**
 * The soak's verdict, from the records of the parts themselves rather than from what the agents
 * saw: the local runtime's Sessions (`sess.sessions`), the handle records and the event outbox in
 * PostgreSQL, and the webhook receiver's verified deliveries. Each runtime Session is matched to
 * exactly one store record (each holds the one idempotency key its create was sent with: a
 * Session of a record that still holds its create intent is one whose create the agent never
 * learned the outcome of), and each record to one story of the load generator.
 *
 * - **answers lost**: a Session the person answered whose record is not `answered` or
 *   `completed`, or whose story did not get the person's values back, verified.
 * - **duplicate Sessions**: a record (an idempotency key) that more than one Session matches.
 * - **unaccounted Sessions**: a Session no record matches, or one whose story had no failed create
 *   to account for it.
 * - **events lost**: an event the outbox holds, or an answer or withdrawal at the runtime
 *   implies, that never reached the receiver verified; events delivered more than once are
 *   counted (at least once is the promise), and deduplicated by id they must be exactly the
 *   expected set.
 *
 * It reads and counts; it names Sessions and handles by number only, never a link or a value.
 */
import type pg from 'pg';
import { eventIdOf } from '../../src/core/model/events.js';
import type { InteractionRecord } from '../../src/core/model/record.js';
import type { LocalSess, LocalSessionSnapshot } from '../../src/testing/index.js';
import type { ReceiverTally } from './receiver.js';
import type { Story } from './stories.js';

/** The counts the soak asserts, and what they were made of. */
export interface Ledger {
  sessions: number;
  records: number;
  stories: number;
  /** Sessions with a committed answer. */
  answered: number;
  answersLost: number;
  duplicateSessions: number;
  unaccountedSessions: number;
  /** Sessions whose create the agent never learned the outcome of (each matched to a failed create). */
  orphanSessions: number;
  expectedEvents: number;
  eventsLost: number;
  /** Verified deliveries beyond the first of an event. */
  redeliveries: number;
  /** Received ids the outbox does not hold. */
  unexpectedEvents: number;
  unverifiedDeliveries: number;
  /** Outbox deliveries dead-lettered. */
  deadEvents: number;
  /** Stories by how they ended. */
  ends: Record<string, number>;
  /** What each lost event was: its type, its record's state, its delivery row (no ids). */
  lostDetails: string[];
}

/** The outbox as the ledger reads it. */
export interface OutboxRead {
  eventIds: string[];
  dead: number;
  /** Event id → `state/attempts` of its delivery row. */
  deliveries: Map<string, string>;
}

/** The Session id a record names, if its state names one. */
function sessionIdOf(record: InteractionRecord): string | undefined {
  const state = record.state as { session?: { sessionId: string }; sessionId?: string };
  return state.session?.sessionId ?? state.sessionId;
}

/** The title of the create a record still holds (an intent whose outcome is unknown). */
function intentTitleOf(record: InteractionRecord): string | undefined {
  const { state } = record;
  return state.kind === 'create_intent' || state.kind === 'create_unknown'
    ? state.request.surface.title
    : undefined;
}

/** Every handle record of the table, decoded. */
export async function readRecords(pool: pg.Pool): Promise<InteractionRecord[]> {
  const { rows } = await pool.query<{ record: unknown; record_text: string | null }>(
    'SELECT record, record_text FROM public.sess_mcp_handles',
  );
  return rows.map((row) => (row.record_text ? JSON.parse(row.record_text) : row.record) as InteractionRecord);
}

/** Every event id of the outbox, its delivery rows, and how many are dead. */
export async function readOutbox(pool: pg.Pool): Promise<OutboxRead> {
  const events = await pool.query<{ event_id: string }>(
    'SELECT event_id FROM public.sess_mcp_handles_events',
  );
  const rows = await pool.query<{ event_id: string; state: string; attempts: number; sink: string }>(
    'SELECT sink, event_id, state, attempts FROM public.sess_mcp_handles_deliveries',
  );
  const deliveries = new Map(rows.rows.map((r) => [r.event_id, `${r.sink}:${r.state}/${r.attempts}`]));
  const dead = rows.rows.filter((r) => r.state === 'dead').length;
  return { eventIds: events.rows.map((r) => r.event_id), dead, deliveries };
}

/** Match Sessions to records: the record of each Session, by its id or (for an intent) its title. */
function matchSessions(sessions: LocalSessionSnapshot[], records: InteractionRecord[]) {
  const bySession = new Map<string, InteractionRecord[]>();
  const intentsByTitle = new Map<string, InteractionRecord[]>();
  for (const record of records) {
    const id = sessionIdOf(record);
    if (id !== undefined) bySession.set(id, [...(bySession.get(id) ?? []), record]);
    const title = intentTitleOf(record);
    if (title !== undefined) intentsByTitle.set(title, [...(intentsByTitle.get(title) ?? []), record]);
  }
  const matched = new Map<string, InteractionRecord>();
  const uses = new Map<InteractionRecord, number>();
  let duplicates = 0;
  let unmatched = 0;
  let orphans = 0;
  for (const session of sessions) {
    const own = bySession.get(session.view.id) ?? [];
    let record = own[0];
    if (own.length > 1) duplicates += own.length - 1;
    if (record === undefined) {
      // A create whose answer never reached the record: the intent with this title still waits.
      record = (intentsByTitle.get(session.surfaces[0]?.title ?? '') ?? []).find((r) => !uses.has(r));
      if (record !== undefined) orphans += 1;
    }
    if (record === undefined) {
      unmatched += 1;
      continue;
    }
    uses.set(record, (uses.get(record) ?? 0) + 1);
    if (uses.get(record)! > 1) duplicates += 1;
    matched.set(session.view.id, record);
  }
  return { matched, duplicates, unmatched, orphans };
}

/** Count what the parts hold against what the stories did. */
export function reconcile(input: {
  sess: LocalSess;
  records: InteractionRecord[];
  outbox: OutboxRead;
  stories: Story[];
  tally: ReceiverTally;
}): Ledger {
  const { sess, records, outbox, stories, tally } = input;
  const sessions = sess.sessions.list();
  const { matched, duplicates, unmatched, orphans } = matchSessions(sessions, records);
  const storyOfHandle = new Map(stories.filter((s) => s.handle).map((s) => [s.handle!, s]));
  const storyOfTitle = new Map(stories.map((s) => [s.title, s]));
  const extraOfStory = new Map<Story, number>();
  let unaccounted = unmatched;
  let answered = 0;
  let answersLost = 0;
  const expected = new Set(outbox.eventIds);
  for (const session of sessions) {
    const record = matched.get(session.view.id);
    if (record === undefined) continue;
    const story = storyOfHandle.get(record.handle);
    if (story === undefined) {
      // The agent never got this handle: one of its story's failed creates must account for it.
      const owner = storyOfTitle.get(session.surfaces[0]?.title ?? '');
      const extras = (owner === undefined ? 0 : (extraOfStory.get(owner) ?? 0)) + 1;
      if (owner === undefined || extras > owner.failedCreates) unaccounted += 1;
      else extraOfStory.set(owner, extras);
    }
    const status = session.view.status;
    if (session.view.responses.length > 0) {
      answered += 1;
      const kept = record.state.kind === 'answered' || record.state.kind === 'completed';
      if (!kept || story?.returned !== true) answersLost += 1;
    }
    if (session.view.responses.length > 0 || status === 'withdrawn')
      expected.add(eventIdOf(record.handle, 1));
  }
  let eventsLost = 0;
  const lostDetails: string[] = [];
  const recordOf = new Map(records.map((r) => [r.handle, r]));
  for (const id of expected) {
    if (tally.deliveries.has(id)) continue;
    eventsLost += 1;
    const record = [...recordOf.values()].find((r) => id.startsWith(`evt_${r.handle}_`));
    const type =
      record?.events?.find((e) => eventIdOf(record.handle, e.sequence) === id)?.type ?? 'none recorded';
    lostDetails.push(
      `${type} event of a ${record?.state.kind ?? 'missing'} record, delivery ${outbox.deliveries.get(id) ?? 'none'}`,
    );
  }
  let redeliveries = 0;
  let unexpectedEvents = 0;
  for (const [id, count] of tally.deliveries) {
    redeliveries += count - 1;
    if (!expected.has(id)) unexpectedEvents += 1;
  }
  const ends: Record<string, number> = {};
  for (const story of stories) ends[story.end ?? 'unfinished'] = (ends[story.end ?? 'unfinished'] ?? 0) + 1;
  return {
    sessions: sessions.length,
    records: records.length,
    stories: stories.length,
    answered,
    answersLost,
    duplicateSessions: duplicates,
    unaccountedSessions: unaccounted,
    orphanSessions: orphans,
    expectedEvents: expected.size,
    eventsLost,
    redeliveries,
    unexpectedEvents,
    unverifiedDeliveries: tally.unverified,
    deadEvents: outbox.dead,
    ends,
    lostDetails,
  };
}
