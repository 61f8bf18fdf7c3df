/**
 * `@sess.si/mcp/store/postgres`: the PostgreSQL store (`store.ts`) and the structural types of
 * the `pg` pool it accepts (`pool.ts`). It holds only names: no code, and no `pg` import.
 */
export type { PgClientLike, PgQueryableLike, PgResultLike, PoolLike } from './pool.js';
export type { PostgresHandleStore, PostgresHandleStoreOptions } from './store.js';
export { createPostgresHandleStore } from './store.js';
