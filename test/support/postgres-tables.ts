/**
 * PostgreSQL for a suite, in the style of `useCleanup()`: the database `DATABASE_URL` names
 * (`scripts/ci-postgres.sh` starts one), what a suite does without it (skipped with its reason, or
 * failed under CI), and stores on tables of their own, each migrated when opened and, after the
 * suite, closed with its records table and the tables `migrate()` makes beside it dropped.
 *
 * It only opens and drops: what a test writes into the tables is its own.
 *
 * @example
 * ```ts
 * const pg = usePostgresTables('race');
 * if (pg === undefined) reportPostgresSkipped('the delivery race over PostgreSQL');
 * it('…', async () => {
 *   const stores = await pg!.open();
 * });
 * ```
 */
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { createPostgresHandleStore, type PostgresHandleStore } from '../../src/store/postgres/index.js';

/** The test database, or `undefined` when `DATABASE_URL` is unset or empty. */
export const DATABASE_URL = process.env.DATABASE_URL || undefined;

/** Why a PostgreSQL suite is skipped, and how to run it. */
export const PG_SKIP_REASON = 'DATABASE_URL is unset; run: eval "$(bash scripts/ci-postgres.sh)"';

/**
 * Say on stderr that `suite` is skipped, and register it as skipped with its reason; under CI
 * (`CI` set) register a test that fails instead.
 */
export function reportPostgresSkipped(suite: string): void {
  if (process.env.CI) {
    describe(suite, () => {
      it('has a database in CI', () => {
        throw new Error(`CI must not skip ${suite}: ${PG_SKIP_REASON}`);
      });
    });
  } else {
    process.stderr.write(`${suite} skipped: ${PG_SKIP_REASON}\n`);
    describe.skip(`${suite} (skipped: ${PG_SKIP_REASON})`, () => {
      it('needs DATABASE_URL', () => {});
    });
  }
}

/** Stores on fresh tables of one database, dropped after the suite. */
export interface PostgresTables {
  readonly url: string;
  /** A fresh table name (`<prefix>_<pid>_<random>`), dropped after the suite with its companions. */
  table(): string;
  /** A store on `table` (a fresh one by default), migrated; closed after the suite. */
  open(table?: string): Promise<PostgresHandleStore>;
}

/** Tables of a suite, or `undefined` without a database. */
export function usePostgresTables(prefix: string): PostgresTables | undefined {
  const url = DATABASE_URL;
  if (url === undefined) return undefined;
  const tables: string[] = [];
  const stores: PostgresHandleStore[] = [];
  afterAll(async () => {
    for (const store of stores.splice(0)) await store.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (const t of tables.splice(0)) {
        const names = [t, `${t}_keys`, `${t}_events`, `${t}_deliveries`].map((n) => `"public"."${n}"`);
        await admin.query(`DROP TABLE IF EXISTS ${names.join(', ')}`);
      }
    } finally {
      await admin.end();
    }
  });
  const tablesOf: PostgresTables = {
    url,
    table() {
      const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      tables.push(name);
      return name;
    },
    async open(table = tablesOf.table()) {
      const store = createPostgresHandleStore({ connectionString: url, table });
      stores.push(store);
      await store.migrate();
      return store;
    },
  };
  return tablesOf;
}
