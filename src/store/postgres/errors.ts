/**
 * What a failed PostgreSQL call means for a caller of the store: one table from SQLSTATE to a
 * `STATE_STORE_ERROR` with its {@link StoreErrorReason} and retry flag, so the classification
 * follows what actually failed (the connection, the server's state, the data, the table, or the
 * configuration).
 *
 * It deliberately reports the SQLSTATE only: a server message can quote the values of a record,
 * and a connection error can name the host or a password.
 */
import { isSessMcpError, type SessMcpError } from '../../core/contract/errors.js';
import type { StoreErrorReason } from '../../core/contract/ports.js';
import { storeError } from '../../core/store-kit/kit.js';

/** One row of {@link SQLSTATE_TABLE}. */
interface SqlstateRule {
  /** Matches the SQLSTATE (a class is its first two characters). */
  readonly match: RegExp;
  readonly reason: StoreErrorReason;
  readonly retryable: boolean;
  /** The message; `{code}` is replaced by the SQLSTATE. */
  readonly message: string;
}

/**
 * SQLSTATE to outcome, first match wins. Anything not listed is a non-retryable `db_permanent`.
 * - missing table, schema or column: `not_migrated` (this version's `migrate()` has not run);
 * - class 22 (data exception) and 54 (program limit, e.g. an index row too large): `db_data`:
 *   the database refused this record's data. The database is fine; the same write fails again;
 * - connection (08), rollback (40: serialization, deadlock), resources (53), a lock not had in
 *   time (55P03), a cancelled statement (57014, `statement_timeout`), shutdown or start-up (57P),
 *   system I/O (58), a read-only server during a failover (25006), an internal error (XX000):
 *   `db_transient`, retryable;
 * - login (28), a missing database (3D000), a missing privilege (42501), data corruption
 *   (XX001, XX002): `db_permanent`: the owner must fix the database or its settings;
 * - a prepared statement missing or already there (26000, 42P05): `db_permanent`, what a
 *   connection pooler in transaction mode that does not keep prepared statements causes (the
 *   store sends such a statement again unnamed first; this is what a second loss reports).
 */
export const SQLSTATE_TABLE: readonly SqlstateRule[] = [
  {
    match: /^(42P01|3F000|42703)$/,
    reason: 'not_migrated',
    retryable: false,
    message: 'The handle table is missing or older than this version ({code}): call migrate() once.',
  },
  {
    match: /^(22|54)/,
    reason: 'db_data',
    retryable: false,
    message: 'PostgreSQL refused the data of this record ({code}); nothing was written.',
  },
  {
    match: /^(08|40|53|55P03|57014|57P|58|25006|XX000)/,
    reason: 'db_transient',
    retryable: true,
    message: 'The state store (PostgreSQL) failed ({code}). Try again later.',
  },
  {
    match: /^(28|3D000|42501|XX00[12])/,
    reason: 'db_permanent',
    retryable: false,
    message:
      'The state store (PostgreSQL) refused the login, the database or the access ({code}). The owner must fix the store settings or the database.',
  },
  {
    match: /^(26000|42P05)$/,
    reason: 'db_permanent',
    retryable: false,
    message:
      "The state store's prepared statements were lost on their connection ({code}), as behind a connection pooler in transaction mode. The owner must create the store with preparedStatements: false.",
  },
];

const SQLSTATE = /^[0-9A-Z]{5}$/;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A database failure as a `STATE_STORE_ERROR`. A `SessMcpError` passes unchanged. A failure
 * without a SQLSTATE (refused or dropped connection, a pool or query timeout) failed on the way
 * to the server and is retryable.
 */
export function pgStoreError(error: unknown): SessMcpError {
  if (isSessMcpError(error)) return error;
  const code = errorCode(error);
  if (code === undefined || !SQLSTATE.test(code)) {
    // An errno word (ECONNREFUSED) is safe to name; anything else is not said.
    const word = code !== undefined && /^[A-Z][A-Z_]{1,31}$/.test(code) ? code : 'no connection';
    return storeError(
      `The state store (PostgreSQL) could not be reached (${word}). Try again later.`,
      true,
      'db_transient',
    );
  }
  const rule = SQLSTATE_TABLE.find((candidate) => candidate.match.test(code));
  if (rule === undefined) {
    return storeError(
      `The state store (PostgreSQL) failed (${code}). The owner must check the database and its table.`,
      false,
      'db_permanent',
    );
  }
  return storeError(rule.message.replace('{code}', code), rule.retryable, rule.reason);
}
