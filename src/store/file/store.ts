/**
 * The store views of the file store: {@link createFileHandleStore} opens one profile and hands
 * out one {@link HandleStore} per binding, each seeing only its own scope's records.
 *
 * It deliberately holds only the scope and cap rules; files, lease and caches are the profile's
 * (`profile.ts`).
 */

import { isSessMcpError } from '../../core/contract/errors.js';
import type { EventOutbox } from '../../core/contract/outbox.js';
import {
  type Binding,
  bindingScope,
  type HandleStoreFactory,
  MAX_UNFINISHED,
  type PruneQuery,
  type PruneResult,
  type StoreReadiness,
  type VersionedRecord,
  type WaitingPage,
  type WaitingQuery,
} from '../../core/contract/ports.js';
import {
  checkListPageQuery,
  checkRecordForScope,
  compareOldestFirst,
  handleExistsError,
  isStoreHandle,
  type ListingHandleStore,
  principalQuotaError,
  principalQuotaOf,
  staleVersionError,
  storeFullError,
} from '../../core/store-kit/kit.js';
import { outboxEventsOf } from '../../core/store-kit/outbox-rules.js';
import { createReadiness } from '../../core/store-kit/readiness.js';
import { checkPruneQuery } from '../../core/store-kit/retention.js';
import { checkWaitingQuery } from '../../core/store-kit/waiting-index.js';
import { encodeEnvelope, encodeRecordWithCopy } from '../record-codec.js';
import { summaryOf } from './cap.js';
import { profileBusyError } from './lock.js';
import { addOutboxEvents, FileOutbox } from './outbox-file.js';
import { type FileHandleStoreOptions, openProfileFiles } from './profile.js';

/** A file store backend of one profile. */
export interface FileHandleStore extends HandleStoreFactory {
  /** The directory the record files live in. */
  readonly directory: string;
  /**
   * The watched records of the profile, a page at a time (`HandleStoreFactory.waiting`): chosen
   * from the summary the cap keeps, only the files on the page read.
   */
  waiting(query: WaitingQuery): Promise<WaitingPage>;
  /** The event outbox of the profile (`outbox.json`; `HandleStoreFactory.outbox`). */
  outbox(): EventOutbox;
  /**
   * Whether the profile can serve (`HandleStoreFactory.ready`): every directory of it that
   * exists is safe (`unsafe_path` otherwise) and the records directory can be listed
   * (`io_permanent`, `io_transient`), within 1 s (`timeout`). Missing directories are fine: the
   * first write makes them.
   */
  ready(): Promise<StoreReadiness>;
  /**
   * Remove the profile's finished records that finished before `olderThan`
   * (`HandleStoreFactory.prune`): chosen from the summary's index by finish time, removed as one
   * change under the profile's lease (one directory sync per call), their events dropped from
   * the outbox.
   */
  prune(query: PruneQuery): Promise<PruneResult>;
}

/**
 * Open the file store of one profile. Nothing is touched until the first operation; directories
 * are created (0700) on the first write. Bad options throw a `TypeError` naming the option.
 *
 * A corrupt or unsupported-version file is reported (non-retryable `STATE_STORE_ERROR`) when its
 * handle is read, and is left out of `listUnfinished`/`countUnfinished`, `listPage` and the cap so
 * one bad file does not stop the profile; the owner finds it with {@link openProfileRecords}.
 * Records 0.1.0 wrote (format 1) are read as they are and written as format 2 at their next
 * change. `listPage` chooses its page from the summary the cap keeps (sorted per generation and
 * state kind), and reads only the files on it. Cursors are signed with the profile's key file
 * (`list-cursor.key`, 0600, made once), so they page across processes and restarts.
 *
 * On POSIX every operation refuses (non-retryable `STATE_STORE_ERROR`, reason `unsafe_path`,
 * naming the path relative to `SESS_MCP_STATE_DIR`) a state directory, or a directory below it,
 * that is not owned by the user the process runs as (root included: as root it must be owned by
 * root) or that group or others may write, a link below the state directory, and a link in place
 * of any file the store writes. A link among the state directory's ancestors is fine. On Windows
 * the owner and mode checks are skipped; links are still refused.
 *
 * @example
 * ```ts source="examples/snippets/stores.examples.ts#createFileHandleStore"
 * const stores = createFileHandleStore({ stateDir: '/home/me/.local/state/sess-mcp', profile: 'default' });
 * const store = stores.forBinding({ kind: 'stdio', profile: 'default', apiOrigin, credentialGeneration });
 * const { version } = await store.create(record);
 * ```
 */
export function createFileHandleStore(options: FileHandleStoreOptions): FileHandleStore {
  const files = openProfileFiles('createFileHandleStore', options);
  const profile = files.profile;

  /** This scope's record under `handle`, or undefined (absent, foreign or not a store key). */
  async function own(handle: string, scope: string): Promise<VersionedRecord | undefined> {
    if (!isStoreHandle(handle)) return undefined;
    const current = await files.read(handle);
    return current !== undefined && bindingScope(current.record.binding) === scope ? current : undefined;
  }

  /** The version of this scope's record under `handle` (no copy is made), or undefined. */
  async function ownVersion(handle: string, scope: string): Promise<number | undefined> {
    if (!isStoreHandle(handle)) return undefined;
    const current = await files.peek(handle);
    return current !== undefined && bindingScope(current.record.binding) === scope
      ? current.version
      : undefined;
  }

  const outbox = new FileOutbox(files);
  return {
    directory: files.handlesDir,
    outbox: () => outbox,
    waiting: async (query) => files.waitingPage(checkWaitingQuery(query)),
    ready: createReadiness(() => files.io.checkReady()),
    prune: async (query) => files.prune(checkPruneQuery(query)),
    forBinding(binding: Binding): ListingHandleStore {
      const scope = bindingScope(binding);
      if (binding.kind === 'stdio' && binding.profile !== profile) {
        throw new TypeError('binding.profile must be the profile this file store was opened for');
      }
      return {
        get: (handle) => own(handle, scope),
        create: async (given, limits) => {
          const record = checkRecordForScope(given, scope);
          const quota = principalQuotaOf(record, limits);
          const { json, copy } = encodeRecordWithCopy(record);
          const summary = summaryOf(record);
          return files.exclusive(async () => {
            if (await files.exists(record.handle)) throw handleExistsError();
            if (summary.unfinished && (await files.unfinishedOf(scope)).length >= MAX_UNFINISHED)
              throw storeFullError();
            if (
              summary.unfinished &&
              quota !== undefined &&
              (await files.openOfPrincipal(quota.principal)) >= quota.max
            ) {
              throw principalQuotaError(quota.max);
            }
            const kept = { version: 1, record: copy };
            await addOutboxEvents(files, outboxEventsOf(record));
            // A create the lease's fence stopped wrote nothing: the profile was busy, try again.
            await files.write(record.handle, encodeEnvelope(1, json), summary, kept).catch((error) => {
              throw isSessMcpError(error) && error.reason === 'stale_version' ? profileBusyError() : error;
            });
            // The record checked and written is the caller's (the store keeps its own copy).
            return { version: 1, record };
          });
        },
        update: async (given, expectedVersion) => {
          const record = checkRecordForScope(given, scope);
          const { json, copy } = encodeRecordWithCopy(record);
          const summary = summaryOf(record);
          return files.exclusive(async () => {
            const current = await ownVersion(record.handle, scope);
            if (current === undefined || current !== expectedVersion) throw staleVersionError();
            const version = current + 1;
            const kept = { version, record: copy };
            // Its events first (see outbox-file.ts): a crash in between never loses one.
            await addOutboxEvents(files, outboxEventsOf(record));
            await files.write(record.handle, encodeEnvelope(version, json), summary, kept);
            return { version, record };
          });
        },
        delete: async (handle, expectedVersion) => {
          if (!isStoreHandle(handle)) return false;
          return files.exclusive(async () => {
            const current = await ownVersion(handle, scope);
            if (current === undefined) return false;
            if (expectedVersion !== undefined && current !== expectedVersion) return false;
            return files.remove(handle);
          });
        },
        listUnfinished: async () => (await files.unfinishedRecords(scope)).sort(compareOldestFirst),
        countUnfinished: async () => (await files.unfinishedOf(scope)).length,
        listPage: async (query) => files.listPage(scope, checkListPageQuery(query)),
        listCursorKey: () => files.cursorKey(),
      };
    },
  };
}
