/**
 * The caches of the file store: decoded record files, and the cap index (a summary of every
 * record file: its scope, whether it is unfinished, its state kind and creation time), so counting
 * unfinished records and choosing a listing page do not read every file of the profile on every
 * call (completed records stay until the owner retires them).
 *
 * A summary is only as good as the key it was taken under: the token in `handles.gen`, renewed
 * before the first change of every holding of the lease (a summary is kept only when taken
 * under the lease, so any later holder's change renews it first), plus the handles directory's
 * inode and mtime (which catch what bypasses the lock, such as the owner deleting a file by
 * hand). It is reused while the key is unchanged and
 * for at most {@link SNAPSHOT_MAX_AGE_MS}. A decoded file is reused while its inode, mtime and size
 * are unchanged: the store never rewrites a file in place.
 *
 * The summary of each file is kept under the file's key too (and on disk between processes,
 * `summary-file.ts`), so a new summary of the profile decodes only the files changed since.
 *
 * A listing page is chosen from a {@link ListingIndex} per scope, built from the summary when a
 * scope is first listed and kept current with it, so a page costs the page, not the profile; a
 * page of the watched records of every scope from a {@link WaitingIndex}, kept the same way.
 *
 * It deliberately does no I/O and trusts nothing by itself: the caller computes the keys.
 */
import type { SessMcpError } from '../../core/contract/errors.js';
import { bindingGeneration, bindingScope, type VersionedRecord } from '../../core/contract/ports.js';
import {
  finishedAtOf,
  type InteractionRecord,
  type InteractionStateKind,
  isUnfinished,
  listGroupOf,
  WATCHED_STATE_KINDS,
} from '../../core/model/record.js';
import { principalOfScope } from '../../core/store-kit/kit.js';
import { ListingIndex } from '../../core/store-kit/listing-index.js';
import { FinishedIndex } from '../../core/store-kit/retention.js';
import { WaitingIndex } from '../../core/store-kit/waiting-index.js';

/** Whether a record of `kind` is one a watcher polls. */
function isWatchedKind(kind: InteractionStateKind): boolean {
  return (WATCHED_STATE_KINDS as readonly InteractionStateKind[]).includes(kind);
}

/**
 * A summary of the profile's files is taken again after this long even when nothing announced a
 * change: directory mtimes are coarse, so a file removed by hand within the same clock tick as
 * the last change is noticed at the latest then (until then it only keeps its place in the cap).
 */
const SNAPSHOT_MAX_AGE_MS = 60_000;

/** What the cap and a listing need to know of one record file. */
export interface FileSummary {
  scope: string;
  unfinished: boolean;
  /** The record's state kind, generation and `createdAt`: with the handle, its place in a listing. */
  kind: InteractionStateKind;
  generation: string;
  createdAt: string;
  /** When the record finished (`finishedAtOf`), for retention; absent while unfinished. */
  finishedAt?: number;
}

/** The summary of a readable record. */
export function summaryOf(record: InteractionRecord): FileSummary {
  const summary: FileSummary = {
    scope: bindingScope(record.binding),
    unfinished: isUnfinished(record),
    kind: record.state.kind,
    generation: bindingGeneration(record.binding),
    createdAt: record.createdAt,
  };
  const finishedAt = finishedAtOf(record);
  if (finishedAt !== undefined) summary.finishedAt = finishedAt;
  return summary;
}

/** True when `record` is still what `summary` says of it. */
export function matchesSummary(record: InteractionRecord, summary: FileSummary): boolean {
  return (
    record.state.kind === summary.kind &&
    record.createdAt === summary.createdAt &&
    finishedAtOf(record) === summary.finishedAt &&
    bindingScope(record.binding) === summary.scope &&
    bindingGeneration(record.binding) === summary.generation
  );
}

function enlist(listing: ListingIndex, handle: string, summary: FileSummary): void {
  const key = { group: listGroupOf(summary.kind), createdAt: summary.createdAt, handle };
  listing.add(summary.generation, summary.kind, key);
}

function unlist(listing: ListingIndex, handle: string, summary: FileSummary): void {
  const key = { group: listGroupOf(summary.kind), createdAt: summary.createdAt, handle };
  listing.remove(summary.generation, summary.kind, key);
}

/** The summary of every readable file of a profile, and the listing index of each scope listed. */
export class Summaries {
  private readonly listings = new Map<string, ListingIndex>();
  private watched: WaitingIndex | undefined;
  private finishedIndex: FinishedIndex | undefined;

  constructor(readonly files: Map<string, FileSummary>) {}

  /** The listing index of `scope` (built from the files on first use, then kept current). */
  listingOf(scope: string): ListingIndex {
    let listing = this.listings.get(scope);
    if (listing === undefined) {
      listing = new ListingIndex();
      for (const [handle, summary] of this.files)
        if (summary.scope === scope) enlist(listing, handle, summary);
      this.listings.set(scope, listing);
    }
    return listing;
  }

  /** The handles of the watched records of every scope (built on first use, then kept current). */
  waiting(): WaitingIndex {
    if (this.watched === undefined) {
      const index = new WaitingIndex();
      for (const [handle, summary] of this.files) if (isWatchedKind(summary.kind)) index.add(handle);
      this.watched = index;
    }
    return this.watched;
  }

  /** The finished records of every scope by finish time (built on first use, then kept current). */
  finished(): FinishedIndex {
    if (this.finishedIndex === undefined) {
      const index = new FinishedIndex();
      for (const [handle, summary] of this.files)
        if (summary.finishedAt !== undefined) index.add(handle, summary.finishedAt);
      this.finishedIndex = index;
    }
    return this.finishedIndex;
  }

  /** Set `handle`'s summary (`undefined`: its file was removed), keeping the listings current. */
  set(handle: string, summary: FileSummary | undefined): void {
    const before = this.files.get(handle);
    if (before !== undefined) {
      const listing = this.listings.get(before.scope);
      if (listing !== undefined) unlist(listing, handle, before);
      if (isWatchedKind(before.kind)) this.watched?.remove(handle);
      if (before.finishedAt !== undefined) this.finishedIndex?.remove(handle, before.finishedAt);
    }
    if (summary === undefined) {
      this.files.delete(handle);
      return;
    }
    this.files.set(handle, summary);
    const listing = this.listings.get(summary.scope);
    if (listing !== undefined) enlist(listing, handle, summary);
    if (isWatchedKind(summary.kind)) this.watched?.add(handle);
    if (summary.finishedAt !== undefined) this.finishedIndex?.add(handle, summary.finishedAt);
  }
}

/** What reading one record file gave: the record, or the non-retryable error it decodes to. */
export type DecodedFile = VersionedRecord | SessMcpError;

/**
 * Values by handle, each under the key (inode, mtime, size) of the file it was read from: the
 * decoded record files read, and the summary of every file the cap index was taken from (a
 * summary is kept on its own, so the profile's records are not all held decoded).
 */
export class FileCache<T> {
  private readonly entries_ = new Map<string, { key: string; value: T }>();

  get(handle: string, key: string): T | undefined {
    const entry = this.entries_.get(handle);
    return entry?.key === key ? entry.value : undefined;
  }

  set(handle: string, key: string, value: T): void {
    this.entries_.set(handle, { key, value });
  }

  delete(handle: string): void {
    this.entries_.delete(handle);
  }

  /** Every entry: handle, key and value. */
  *entries(): IterableIterator<{ handle: string; key: string; value: T }> {
    for (const [handle, { key, value }] of this.entries_) yield { handle, key, value };
  }

  /** Forget the handles that no longer have a file. */
  keepOnly(present: readonly string[]): void {
    if (this.entries_.size <= present.length) return;
    const keep = new Set(present);
    for (const handle of this.entries_.keys()) if (!keep.has(handle)) this.entries_.delete(handle);
  }
}

/** The cap index: one summary of the profile's files, valid under one change key. */
export class CapIndex {
  private snapshot: { key: string; files: Summaries; takenAt: number } | undefined;

  /** The summaries taken under `key`, while they are still fresh. */
  current(key: string): Summaries | undefined {
    const snapshot = this.snapshot;
    return snapshot?.key === key && Date.now() - snapshot.takenAt < SNAPSHOT_MAX_AGE_MS
      ? snapshot.files
      : undefined;
  }

  /** Keep summaries taken (under the lock) at `takenAt` under `key`. */
  keep(key: string, files: Summaries, takenAt: number): void {
    this.snapshot = { key, files, takenAt };
  }

  drop(): void {
    this.snapshot = undefined;
  }

  /**
   * After a change under the lock: when the index was current at `heldKey`, move it to `nextKey`
   * with each changed handle's new summary (`undefined`: removed) and return true; otherwise drop it.
   */
  follow(
    heldKey: string | undefined,
    nextKey: string,
    changed: readonly (readonly [handle: string, summary: FileSummary | undefined])[],
  ): boolean {
    const snapshot = this.snapshot;
    this.snapshot = undefined;
    if (snapshot === undefined || snapshot.key !== heldKey) return false;
    for (const [handle, summary] of changed) snapshot.files.set(handle, summary);
    snapshot.key = nextKey;
    this.snapshot = snapshot;
    return true;
  }
}

/** The handles of the unfinished records of `scope` in `files`. */
export function unfinishedIn(files: ReadonlyMap<string, FileSummary>, scope: string): string[] {
  const out: string[] = [];
  for (const [handle, summary] of files) if (summary.unfinished && summary.scope === scope) out.push(handle);
  return out;
}

/**
 * How many records of `principal`, over all its scopes, are unfinished. The principal is derived
 * from each unfinished record's scope (a summary read back from `handles.summary` keeps no more).
 */
export function openOfPrincipal(files: ReadonlyMap<string, FileSummary>, principal: string): number {
  let open = 0;
  for (const summary of files.values()) {
    if (summary.unfinished && principalOfScope(summary.scope) === principal) open += 1;
  }
  return open;
}

/** Run `work` on `items`, at most `width` at a time, results in order. */
export async function inBatches<T, R>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width)
    out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}
