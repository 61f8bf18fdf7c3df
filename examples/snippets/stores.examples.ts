/**
 * The JSDoc examples of the durable stores (`@sess.si/mcp/store/file`, `@sess.si/mcp/store/postgres`).
 * The type check covers this file and `npm run snippets` copies each region into the JSDoc that
 * names it; it is never run.
 */
import type { Binding, InteractionRecord } from '../../src/index.js';
import { createFileHandleStore, openProfileRecords } from '../../src/store/file/index.js';
import { createPostgresHandleStore } from '../../src/store/postgres/index.js';

declare const binding: Binding;
declare const record: InteractionRecord;
declare const apiOrigin: string;
declare const credentialGeneration: string;
declare const stateDir: string;
declare const handle: string;

export async function fileExample(): Promise<number> {
  //#region createFileHandleStore
  const stores = createFileHandleStore({ stateDir: '/home/me/.local/state/sess-mcp', profile: 'default' });
  const store = stores.forBinding({ kind: 'stdio', profile: 'default', apiOrigin, credentialGeneration });
  const { version } = await store.create(record);
  //#endregion
  return version;
}

export async function profileRecordsExample(): Promise<void> {
  //#region openProfileRecords
  const records = openProfileRecords({ stateDir, profile: 'default' });
  for (const r of await records.list()) {
    if (r.state === 'blocked' || r.problem) console.log(r.handle, r.state ?? r.problem);
  }
  await records.remove(handle);
  //#endregion
}

export async function postgresExample(): Promise<void> {
  //#region createPostgresHandleStore
  const stores = createPostgresHandleStore({ connectionString: process.env.DATABASE_URL ?? '' });
  await stores.migrate();
  const store = stores.forBinding(binding); // per request
  //#endregion
  await store.countUnfinished();
  await stores.close();
}
