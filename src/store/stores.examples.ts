/**
 * The JSDoc examples of the stores, as code the type check covers (not a build entry, never
 * imported). If an API changes, this file stops compiling and the examples get fixed with it.
 */
import { createMemoryHandleStore } from '../core/memory-store.js';
import type { Binding, StdioBinding } from '../core/ports.js';
import type { InteractionRecord } from '../core/record.js';
import { createFileHandleStore, openProfileRecords } from './file.js';
import { createPostgresHandleStore } from './postgres.js';

declare const binding: Binding;
declare const record: InteractionRecord;
declare const now: string;
declare const apiOrigin: string;
declare const credentialGeneration: string;
declare const stateDir: string;
declare const handle: string;

/** `createMemoryHandleStore`. */
export async function memoryExample(): Promise<void> {
  const stores = createMemoryHandleStore();
  const store = stores.forBinding(binding);
  const created = await store.create(record); // version 1
  await store.update({ ...record, updatedAt: now }, created.version); // version 2
}

/** `createFileHandleStore`. */
export async function fileExample(): Promise<number> {
  const stores = createFileHandleStore({ stateDir: '/home/me/.local/state/sess-mcp', profile: 'default' });
  const stdio: StdioBinding = { kind: 'stdio', profile: 'default', apiOrigin, credentialGeneration };
  const store = stores.forBinding(stdio);
  const { version } = await store.create(record);
  return version;
}

/** `openProfileRecords`. */
export async function profileRecordsExample(): Promise<void> {
  const records = openProfileRecords({ stateDir, profile: 'default' });
  for (const r of await records.list()) {
    if (r.state === 'blocked' || r.problem) console.log(r.handle, r.state ?? r.problem);
  }
  await records.remove(handle);
}

/** `createPostgresHandleStore`. */
export async function postgresExample(): Promise<void> {
  const stores = createPostgresHandleStore({ connectionString: process.env.DATABASE_URL ?? '' });
  await stores.migrate();
  const store = stores.forBinding(binding); // per request
  await store.countUnfinished();
  await stores.close();
}
