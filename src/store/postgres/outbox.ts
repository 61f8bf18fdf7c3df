/**
 * The PostgreSQL store's event outbox: two tables beside the records, `<table>_events` (each
 * event a record write added, in the same statement as that write) and `<table>_deliveries` (one
 * row per event and sink once it is claimed: its claim, attempts and state). A claim or a mark
 * never touches the records table, so it never changes a record's version.
 *
 * The rules are the store kit's (`outbox-rules.ts`), stated here in SQL: an event is due for a sink
 * with no row yet (if it occurred since `since`), or with an `owed` row that no live claim holds
 * and whose next attempt is due; a claim is an upsert that wins only over such a row; a settlement
 * updates only the row its claim token still holds. The contract suite holds it to the memory and
 * file stores' verdicts. Event texts are stored as JSON text (as records are: `jsonb` refuses some
 * strings a binding may hold).
 */
import type {
  DueQuery,
  EventOutbox,
  OutboxClaim,
  OutboxDeliveryState,
  OutboxEntry,
  OutboxEvent,
  OutboxSettlement,
  OwedEvent,
} from '../../core/contract/outbox.js';
import type { PgConnection } from './pool.js';

/** The names of the outbox tables of the records table `table` in `schema` (quoted). */
export function outboxTablesOf(schema: string, table: string): { events: string; deliveries: string } {
  return { events: `"${schema}"."${table}_events"`, deliveries: `"${schema}"."${table}_deliveries"` };
}

/** The statements `migrate()` runs for the outbox tables (each safe to run again). */
export function outboxMigrationStatements(schema: string, table: string): string[] {
  const { events, deliveries } = outboxTablesOf(schema, table);
  return [
    `CREATE TABLE IF NOT EXISTS ${events} (
      seq bigserial PRIMARY KEY,
      event_id text NOT NULL UNIQUE,
      event_text text NOT NULL,
      occurred_ms bigint NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS ${deliveries} (
      sink text NOT NULL,
      event_id text NOT NULL,
      state text NOT NULL CHECK (state IN ('owed', 'delivered', 'dead')),
      attempts integer NOT NULL DEFAULT 0,
      first_attempt_at bigint,
      next_attempt_at bigint,
      reason text,
      claim_token text,
      claim_until bigint,
      PRIMARY KEY (sink, event_id)
    )`,
  ];
}

const num = (value: unknown): number | undefined =>
  value === null || value === undefined ? undefined : Number(value);

/** The outbox of one PostgreSQL store. */
export class PostgresOutbox implements EventOutbox {
  private readonly events: string;
  private readonly deliveries: string;

  constructor(
    private readonly connection: PgConnection,
    schema: string,
    table: string,
  ) {
    ({ events: this.events, deliveries: this.deliveries } = outboxTablesOf(schema, table));
  }

  async due(sink: string, query: DueQuery): Promise<OwedEvent[]> {
    const { rows } = await this.connection.query(
      `SELECT e.event_text, d.attempts, d.first_attempt_at
         FROM ${this.events} e
         LEFT JOIN ${this.deliveries} d ON d.sink = $1 AND d.event_id = e.event_id
        WHERE (d.event_id IS NULL AND e.occurred_ms >= $3)
           OR (d.state = 'owed' AND (d.claim_until IS NULL OR d.claim_until <= $2)
               AND COALESCE(d.next_attempt_at, 0) <= $2)
        ORDER BY e.seq
        LIMIT $4`,
      [sink, query.now, query.since, query.limit],
    );
    return rows.map((row) => {
      const first = num(row.first_attempt_at);
      return {
        event: JSON.parse(String(row.event_text)) as OutboxEvent,
        attempts: num(row.attempts) ?? 0,
        ...(first === undefined ? {} : { firstAttemptAt: first }),
      };
    });
  }

  async claim(sink: string, eventId: string, now: number, holdMs: number): Promise<OutboxClaim | undefined> {
    const token = globalThis.crypto.randomUUID();
    const { rowCount } = await this.connection.query(
      `INSERT INTO ${this.deliveries} AS d (sink, event_id, state, attempts, claim_token, claim_until)
         SELECT $1, $2, 'owed', 0, $3, $5 WHERE EXISTS (SELECT 1 FROM ${this.events} WHERE event_id = $2)
       ON CONFLICT (sink, event_id) DO UPDATE SET claim_token = EXCLUDED.claim_token, claim_until = EXCLUDED.claim_until
         WHERE d.state = 'owed' AND (d.claim_until IS NULL OR d.claim_until <= $4)`,
      [sink, eventId, token, now, now + holdMs],
    );
    return rowCount === 1 ? { sink, eventId, token } : undefined;
  }

  async settle(claim: OutboxClaim, settlement: OutboxSettlement, now: number): Promise<boolean> {
    const set =
      settlement.kind === 'delivered'
        ? `state = 'delivered', reason = NULL`
        : settlement.kind === 'retry'
          ? `state = 'owed', attempts = attempts + 1, next_attempt_at = $5, reason = $6`
          : `state = 'dead', attempts = attempts + 1, reason = $6, next_attempt_at = $5::bigint`;
    const values: unknown[] = [claim.sink, claim.eventId, claim.token, now];
    if (settlement.kind === 'retry') values.push(settlement.at, settlement.reason);
    if (settlement.kind === 'dead') values.push(null, settlement.reason);
    const { rowCount } = await this.connection.query(
      `UPDATE ${this.deliveries}
          SET ${set}, claim_token = NULL, claim_until = NULL, first_attempt_at = COALESCE(first_attempt_at, $4)
        WHERE sink = $1 AND event_id = $2 AND claim_token = $3`,
      values,
    );
    return rowCount === 1;
  }

  async entries(sink: string, limit: number): Promise<OutboxEntry[]> {
    const { rows } = await this.connection.query(
      `SELECT e.event_text, d.state, d.attempts, d.reason, d.next_attempt_at
         FROM ${this.events} e
         LEFT JOIN ${this.deliveries} d ON d.sink = $1 AND d.event_id = e.event_id
        ORDER BY e.seq DESC
        LIMIT $2`,
      [sink, limit],
    );
    return rows.map((row) => {
      const state = (row.state ?? 'owed') as OutboxDeliveryState;
      const entry: OutboxEntry = {
        event: JSON.parse(String(row.event_text)) as OutboxEvent,
        sink,
        state,
        attempts: num(row.attempts) ?? 0,
      };
      if (row.reason !== null && row.reason !== undefined) entry.reason = String(row.reason);
      const next = num(row.next_attempt_at);
      if (state === 'owed' && next !== undefined) entry.nextAttemptAt = next;
      return entry;
    });
  }

  async resend(sink: string, eventId: string, now: number): Promise<boolean> {
    const { rowCount } = await this.connection.query(
      `INSERT INTO ${this.deliveries} AS d (sink, event_id, state, attempts, next_attempt_at)
         SELECT $1, $2, 'owed', 0, $3 WHERE EXISTS (SELECT 1 FROM ${this.events} WHERE event_id = $2)
       ON CONFLICT (sink, event_id) DO UPDATE SET state = 'owed', attempts = 0, next_attempt_at = $3,
         reason = NULL, claim_token = NULL, claim_until = NULL, first_attempt_at = NULL`,
      [sink, eventId, now],
    );
    return rowCount === 1;
  }
}
