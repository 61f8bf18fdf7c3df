/**
 * `@sess.si/mcp/store/file`: the durable file {@link HandleStore} of the stdio server, and the
 * owner's access to a profile's records (`sess-mcp records list|show|retire` is built on
 * {@link openProfileRecords}).
 *
 * One file per handle at `<stateDir>/profiles/<profile>/handles/<handle>.json` (mode 0600, the
 * directories 0700), holding the envelope `{ format, version, record }`. Every change is written
 * whole or not at all (temp file, `fsync`, `rename`, `fsync` of the directory). Changes of one
 * profile are serialised in the process by a queue and across processes by a lease
 * (`handles.lock`, held for a burst of changes and a short grace after it, with a heartbeat), so
 * compare-and-set and the cap of unfinished records are exact even when two processes share a
 * profile. Beside `handles/`: `handles.lock`, `handles.lock.next` (a waiting process asks for its
 * turn), `handles.lock.takeover` (present for the instant a leftover lock is taken over) and
 * `handles.gen` (a token renewed before the first change of every holding of the lease, so a
 * process knows when its summary of the profile is current).
 *
 * The store refuses a state directory (or a directory below it) that another user owns or that
 * group or others may write, and never writes through a symbolic link; a leftover lock (a crash,
 * a restart that reused the pid) is taken over at once. The parts: `io.ts` (paths, checks,
 * atomic writes), `lock.ts` (the lease), `cap.ts` (caches), `profile.ts` (one
 * profile), `store.ts` and `records.ts` (the two factories).
 *
 * It deliberately does not trust a cache over the disk, repair or migrate records (anything
 * unreadable is the owner's to resolve), or remove link and answer data (the engine hands it
 * records without them).
 *
 * This file only re-exports. Not in this folder: the record codec it shares with the PostgreSQL
 * store (`../record-codec.ts`) and the checks and errors every store shares
 * (`src/core/store-kit/kit.ts`).
 */
export type { FileStoreFileLike, FileStoreFs, FileStoreStats } from './io.js';
export type { FileHandleStoreOptions } from './profile.js';
export type { ProfileRecordSummary, ProfileRecords } from './records.js';
export { openProfileRecords } from './records.js';
export type { FileHandleStore } from './store.js';
export { createFileHandleStore } from './store.js';
export {
  ProfileWakeFiles,
  WATCHER_HEARTBEAT_MS,
  WATCHER_STALE_MS,
  type WatcherClaim,
} from './wake-files.js';
