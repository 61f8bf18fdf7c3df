/**
 * The summary of a profile's record files kept on disk between processes (`handles.summary` in
 * the profile directory): for each file, the key it was read under (inode, mtime, size) and its
 * summary, or that it is unreadable. A process opening the profile takes the status of every file,
 * as always, but decodes only the files whose key is not in it, so its first listing or count does
 * not read tens of thousands of records.
 *
 * It is a cache and trusted as one: an entry counts only while its file still has the key it was
 * read under (the store never rewrites a file in place), and a summary file that is missing, cannot
 * be read or does not have exactly this layout is ignored (it is written again). It is written
 * under the lease, whole (temp file and rename), outside the records directory so writing it
 * changes no other process's summary.
 *
 * It deliberately holds no record content beyond what a listing orders by (scope, generation,
 * state kind, creation time, whether unfinished) and when a finished record finished (retention) and no file-system rules of its own (`io.ts`).
 */
import { INTERACTION_STATE_KINDS } from '../../core/model/record.js';
import type { FileSummary } from './cap.js';
import { CREATE_NEW_FLAGS, type ProfileIo } from './io.js';

/** The layout version of the file; any other is ignored. */
const SUMMARY_FORMAT = 2;

/** One file's entry: its key and summary (`null`: unreadable). */
export interface SummaryEntry {
  handle: string;
  key: string;
  summary: FileSummary | null;
}

const KINDS: ReadonlySet<string> = new Set(INTERACTION_STATE_KINDS);

/**
 * One entry as stored: `[handle, key]` and either the summary's fields (the finish time `null`
 * while unfinished) or nothing (unreadable).
 */
type StoredEntry =
  | [string, string]
  | [string, string, string, boolean, string, string, string, number | null];

function entryOf(stored: unknown): SummaryEntry | undefined {
  if (!Array.isArray(stored)) return undefined;
  const [handle, key, scope, unfinished, kind, generation, createdAt, finishedAt] = stored as unknown[];
  if (typeof handle !== 'string' || typeof key !== 'string') return undefined;
  if (stored.length === 2) return { handle, key, summary: null };
  if (
    stored.length !== 8 ||
    typeof scope !== 'string' ||
    typeof unfinished !== 'boolean' ||
    typeof kind !== 'string' ||
    !KINDS.has(kind) ||
    typeof generation !== 'string' ||
    typeof createdAt !== 'string' ||
    !(finishedAt === null || (typeof finishedAt === 'number' && Number.isFinite(finishedAt)))
  ) {
    return undefined;
  }
  const summary = { scope, unfinished, kind, generation, createdAt } as FileSummary;
  if (finishedAt !== null) summary.finishedAt = finishedAt;
  return { handle, key, summary };
}

/** The entries of the profile's summary file, or none when it is missing or not of this layout. */
export async function readSummaryFile(io: ProfileIo): Promise<SummaryEntry[]> {
  const read = await io.readSmallFile(io.summaryPath, 'read its summary').catch(() => undefined);
  if (read === undefined) return [];
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return [];
  }
  const { format, files } = (body ?? {}) as { format?: unknown; files?: unknown };
  if (format !== SUMMARY_FORMAT || !Array.isArray(files)) return [];
  const out: SummaryEntry[] = [];
  for (const stored of files) {
    const entry = entryOf(stored);
    if (entry === undefined) return [];
    out.push(entry);
  }
  return out;
}

/** Write the profile's summary file whole (under the lease); a failure leaves the old one. */
export async function writeSummaryFile(io: ProfileIo, entries: Iterable<SummaryEntry>): Promise<void> {
  const files: StoredEntry[] = [];
  for (const { handle, key, summary } of entries) {
    files.push(
      summary === null
        ? [handle, key]
        : [
            handle,
            key,
            summary.scope,
            summary.unfinished,
            summary.kind,
            summary.generation,
            summary.createdAt,
            summary.finishedAt ?? null,
          ],
    );
  }
  const temp = io.profileTempPath('handles.summary');
  try {
    const file = await io.openForWrite(temp, CREATE_NEW_FLAGS, 'write its summary');
    try {
      await file.writeFile(JSON.stringify({ format: SUMMARY_FORMAT, files }), { encoding: 'utf8' });
    } finally {
      await file.close();
    }
    await io.fs.rename(temp, io.summaryPath);
  } catch {
    // A cache: without it the next process decodes the files again.
    await io.fs.unlink(temp).catch(() => undefined);
  }
}
