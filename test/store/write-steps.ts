/**
 * The steps of a file store record write, in order (`src/store/file/io.ts`): the temp file's
 * open, write, fsync and close, the rename, the directory's fsync. A worker (`worker.ts`) stops
 * itself at one of them; the fencing test names them.
 */
export const WRITE_STEPS = [
  'open-temp',
  'write-temp',
  'fsync-temp',
  'close-temp',
  'rename',
  'fsync-dir',
] as const;
export type WriteStep = (typeof WRITE_STEPS)[number];
