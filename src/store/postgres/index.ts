/**
 * `@sess.si/mcp/store/postgres`: the PostgreSQL store (`store.ts`) and the structural types of
 * the `pg` pool it accepts (`pool.ts`). It holds only names: no code, and no `pg` import.
 *
 * The folder, by job: the options and the store put together (`store.ts`), the connection
 * (`pool.ts`, the only module that loads `pg`), the SQL (`statements.ts`), one binding's view
 * (`view.ts`), the cache of row versions (`versions.ts`), the row layout (`encoding.ts`), SQLSTATE
 * to store error (`errors.ts`) and the table with `migrate()` (`schema.ts`). Not here: the strict
 * record codec it shares with the file store (`../record-codec.ts`) and the checks and errors
 * every store shares (`src/core/store-kit/kit.ts`).
 */
export type { PgClientLike, PgQueryableLike, PgResultLike, PoolLike } from './pool.js';
export type { PostgresHandleStore, PostgresHandleStoreOptions } from './store.js';
export { createPostgresHandleStore } from './store.js';
