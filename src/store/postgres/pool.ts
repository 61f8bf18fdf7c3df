/**
 * The PostgreSQL store's connection: the pool (the host's, or its own made from `pg` on first
 * use), sending a statement by name or as text (falling back to text for good once a pooler lost
 * a named statement), one transaction on one client, and ending the pool the store made.
 *
 * It knows no table and no record: the SQL is `statements.ts`'s and what a result means
 * `view.ts`'s. Every failure it reports is a `STATE_STORE_ERROR` (`errors.ts`).
 * `pg` is loaded only here, and only when the store makes its own pool.
 */
import { storeError } from '../../core/store-kit/kit.js';
import { pgStoreError } from './errors.js';
import type { Statement } from './statements.js';

/** The result of a query, as far as the store reads it. */
export interface PgResultLike {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** Something that runs a parameterised query (a `pg` `Pool` or `PoolClient`). */
export interface PgQueryableLike {
  query(text: string, values?: unknown[]): Promise<PgResultLike>;
}

/** A client checked out of a pool (`pg` `PoolClient` fits). */
export interface PgClientLike extends PgQueryableLike {
  release(error?: Error | boolean): void;
}

/** A connection pool (`pg` `Pool` fits). */
export interface PoolLike extends PgQueryableLike {
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

/** A pool or client whose `query` also takes a named statement (`pg`'s does). */
interface NamedQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<PgResultLike>;
}

/**
 * The SQLSTATEs of a named statement a server connection does not have (26000) or has already
 * (42P05): what a pooler that hands a client's statements to other server connections causes.
 * Both fail before the statement runs.
 */
const LOST_STATEMENT: ReadonlySet<string> = new Set(['26000', '42P05']);

/** The store's way to the database. */
export interface PgConnection {
  /** Run `sent` with `values`; a failure is a `STATE_STORE_ERROR`. */
  query(sent: string | Statement, values: unknown[]): Promise<PgResultLike>;
  /** Run `work` in one transaction on one client; a failure rolls back and is a `STATE_STORE_ERROR`. */
  transaction<T>(work: (client: PgClientLike) => Promise<T>): Promise<T>;
  /**
   * Run `work` on one client outside a transaction (what `CREATE INDEX CONCURRENTLY` needs); a
   * failure is a `STATE_STORE_ERROR`, and the client is then discarded, not returned to the pool
   * (it may still hold a session lock).
   */
  session<T>(work: (client: PgClientLike) => Promise<T>): Promise<T>;
  /** Refuse every later call, and end the pool the store made (a host's own is left open). */
  close(): Promise<void>;
}

async function makePool(connectionString: string): Promise<PoolLike> {
  let pg: { Pool: new (config: Record<string, unknown>) => PoolLike };
  try {
    const loaded = (await import('pg')) as unknown as { default?: typeof pg } & typeof pg;
    pg = loaded.default ?? loaded;
  } catch (cause) {
    throw storeError(
      'The PostgreSQL store needs the `pg` package: npm install pg.',
      false,
      'pg_missing',
      cause,
    );
  }
  // Bounded waits: a tool call must not hang on an unreachable or stuck database.
  const pool = new pg.Pool({
    connectionString,
    connectionTimeoutMillis: 10_000,
    query_timeout: 20_000,
    max: 10,
  });
  // An idle client's connection dropping must not crash the host; the next query reports it.
  (pool as unknown as { on?: (event: string, listener: () => void) => void }).on?.('error', () => {});
  return pool;
}

function failed(error: unknown): never {
  throw pgStoreError(error);
}

/**
 * The connection over `source.pool`, or over a pool made from `source.connectionString` on first
 * use. `prepared`: send statements by name (until a connection loses one).
 */
export function openConnection(
  source: { pool?: PoolLike | undefined; connectionString?: string | undefined },
  prepared: boolean,
): PgConnection {
  let poolPromise: Promise<PoolLike> | undefined =
    source.pool !== undefined ? Promise.resolve(source.pool) : undefined;
  /** The pool once there is one, so a query need not wait on {@link poolPromise}. */
  let ready: PoolLike | undefined = source.pool;
  let closed = false;

  const pool = (): Promise<PoolLike> => {
    if (closed) return Promise.reject(storeError('The PostgreSQL store is closed.', false, 'closed'));
    poolPromise ??= makePool(source.connectionString!).then((made) => {
      ready = made;
      return made;
    });
    return poolPromise;
  };

  /**
   * Run `sent` on `on`: by name when statements are prepared and it has one. A named statement
   * the server connection does not have (26000) or already has under another client (42P05)
   * failed before it ran: it is sent again unnamed, and so is every statement after it.
   */
  const run = (on: PoolLike, sent: string | Statement, values: unknown[]): Promise<PgResultLike> => {
    if (typeof sent === 'string') return on.query(sent, values);
    if (!prepared) return on.query(sent.text, values);
    return (on as unknown as NamedQueryable)
      .query({ name: sent.name, text: sent.text, values })
      .then(undefined, (error: unknown) => {
        if (!LOST_STATEMENT.has(String((error as { code?: unknown } | null)?.code))) throw error;
        prepared = false;
        return on.query(sent.text, values);
      });
  };

  return {
    query(sent, values) {
      if (ready === undefined || closed)
        return pool()
          .then((made) => run(made, sent, values))
          .then(undefined, failed);
      try {
        return Promise.resolve(run(ready, sent, values)).then(undefined, failed);
      } catch (error) {
        return Promise.reject(pgStoreError(error));
      }
    },
    transaction: (work) => inTransaction(pool, work),
    session: (work) => inSession(pool, work),
    async close() {
      if (closed) return;
      closed = true;
      if (source.pool === undefined && poolPromise !== undefined) {
        const owned = await poolPromise.catch(() => undefined);
        await owned?.end();
      }
    },
  };
}

/** One client of `pool()`; a failure to connect is the store's error. */
async function connectClient(pool: () => Promise<PoolLike>): Promise<PgClientLike> {
  try {
    return await (await pool()).connect();
  } catch (error) {
    throw pgStoreError(error);
  }
}

/** Run `work` in one transaction on one client of `pool()`. */
async function inTransaction<T>(
  pool: () => Promise<PoolLike>,
  work: (client: PgClientLike) => Promise<T>,
): Promise<T> {
  const client = await connectClient(pool);
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error('rollback failed');
    }
    throw pgStoreError(error);
  } finally {
    client.release(broken);
  }
}

/** Run `work` on one client of `pool()`, outside a transaction. */
async function inSession<T>(
  pool: () => Promise<PoolLike>,
  work: (client: PgClientLike) => Promise<T>,
): Promise<T> {
  const client = await connectClient(pool);
  try {
    const result = await work(client);
    client.release();
    return result;
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw pgStoreError(error);
  }
}
