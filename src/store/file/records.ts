/**
 * The owner's access to the records of one profile, whatever their binding: list them by state,
 * read one, retire one (`sess-mcp records list|show|retire` is built on
 * {@link openProfileRecords}).
 *
 * It deliberately shows no link or answer in a listing, and repairs nothing: an unreadable file
 * is listed with its problem for the owner to review or retire.
 */
import { SessMcpError } from '../../core/contract/errors.js';
import type { Binding, VersionedRecord } from '../../core/contract/ports.js';
import { type InteractionStateKind, isUnfinished, type RecordFormat } from '../../core/model/record.js';
import { compareOldestFirst, isStoreHandle } from '../../core/store-kit/kit.js';
import { type FileHandleStoreOptions, openProfileFiles } from './profile.js';

/** One record file of a profile as the owner sees it in a listing. Holds no link or answer. */
export interface ProfileRecordSummary {
  handle: string;
  /** The file's path, for the owner procedure. */
  path: string;
  /** Set when the file cannot be read: the owner must review or retire it. */
  problem?: 'corrupt' | 'unsupported_version';
  version?: number;
  /** The record's format: 1 for a record written by 0.1.0 (rewritten as 2 at its next change). */
  format?: RecordFormat;
  state?: InteractionStateKind;
  /** For `blocked`: the code the tools report and the fixed-word reason. */
  blockedCode?: string;
  reason?: string;
  unfinished?: boolean;
  sessionId?: string;
  askId?: string;
  createdAt?: string;
  updatedAt?: string;
  /** What the record is bound to: `stdio` or `http`, and its origin. */
  bindingKind?: Binding['kind'];
  origin?: string;
}

/** The owner's access to the records of one profile (the `sess-mcp records` CLI). */
export interface ProfileRecords {
  /** The directory the record files live in. */
  readonly directory: string;
  /** Every record file of the profile, oldest first, unreadable ones last (by handle). */
  list(): Promise<ProfileRecordSummary[]>;
  /**
   * One record, whatever its binding, or `undefined`. It can hold the Sess link and answer
   * data: redact before showing. Unreadable files throw a non-retryable `STATE_STORE_ERROR`.
   */
  read(handle: string): Promise<VersionedRecord | undefined>;
  /** The path of a handle's file, or `undefined` when `handle` cannot be a store key. */
  pathOf(handle: string): string | undefined;
  /**
   * Retire a record: remove its file (readable or not). With `expectedVersion`, only a readable
   * record at that version is removed. False when there was nothing (or another version).
   */
  remove(handle: string, options?: { expectedVersion?: number }): Promise<boolean>;
}

function summarize(handle: string, path: string, current: VersionedRecord): ProfileRecordSummary {
  const { record } = current;
  const state = record.state;
  const out: ProfileRecordSummary = {
    handle,
    path,
    version: current.version,
    format: record.format,
    state: state.kind,
    unfinished: isUnfinished(record),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    bindingKind: record.binding.kind,
    origin: record.binding.kind === 'stdio' ? record.binding.apiOrigin : record.binding.origin,
  };
  if ('session' in state) out.sessionId = state.session.sessionId;
  else if ('sessionId' in state && state.sessionId !== undefined) out.sessionId = state.sessionId;
  if ('askId' in state) out.askId = state.askId;
  if (state.kind === 'blocked') {
    out.blockedCode = state.code;
    out.reason = state.reason;
  } else if (state.kind === 'create_unknown') {
    out.reason = state.reason;
  }
  return out;
}

/**
 * Open the records of one profile for its owner: list them by state, read one, retire one. It
 * takes the same lock as the store, so retiring is safe while a server runs on the profile.
 * Bad options throw a `TypeError` naming the option.
 *
 * @example
 * ```ts source="examples/snippets/stores.examples.ts#openProfileRecords"
 * const records = openProfileRecords({ stateDir, profile: 'default' });
 * for (const r of await records.list()) {
 *   if (r.state === 'blocked' || r.problem) console.log(r.handle, r.state ?? r.problem);
 * }
 * await records.remove(handle);
 * ```
 */
export function openProfileRecords(options: FileHandleStoreOptions): ProfileRecords {
  const files = openProfileFiles('openProfileRecords', options);
  return {
    directory: files.handlesDir,
    pathOf: (handle) => (isStoreHandle(handle) ? files.pathOf(handle) : undefined),
    async list() {
      const readable: [VersionedRecord, ProfileRecordSummary][] = [];
      const unreadable: ProfileRecordSummary[] = [];
      for (const handle of await files.handles()) {
        const path = files.pathOf(handle);
        try {
          const current = await files.read(handle);
          if (current !== undefined) readable.push([current, summarize(handle, path, current)]);
        } catch (error) {
          if (!(error instanceof SessMcpError) || error.retryable) throw error;
          unreadable.push({
            handle,
            path,
            problem: error.reason === 'unsupported_version' ? 'unsupported_version' : 'corrupt',
          });
        }
      }
      readable.sort(([a], [b]) => compareOldestFirst(a, b));
      unreadable.sort((a, b) => (a.handle < b.handle ? -1 : 1));
      return [...readable.map(([, summary]) => summary), ...unreadable];
    },
    read: async (handle) => (isStoreHandle(handle) ? files.read(handle) : undefined),
    async remove(handle, removeOptions = {}) {
      if (!isStoreHandle(handle)) return false;
      return files.exclusive(async () => {
        if (removeOptions.expectedVersion !== undefined) {
          const current = await files.read(handle);
          if (current?.version !== removeOptions.expectedVersion) return false;
        }
        return files.remove(handle);
      });
    },
  };
}
