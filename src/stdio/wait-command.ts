/**
 * `sess-mcp wait HANDLE`: block until the interaction leaves `waiting`, then print one line, the
 * handle, its new state and the exact tool call to make next, and exit. An agent that can run a
 * command in the background starts it (a result's `wake.command`) and ends its turn; the exit
 * wakes it.
 *
 * It needs no API key and makes no Sess call: it reads the profile through the file store's read
 * path (its directory and link checks), while the server's watcher (`watcher.ts`) waits on Sess
 * and saves the answer. stdout carries the one line, stderr fixed words only: never a value, a
 * link or a key (a record's answer is never read out of it here).
 */
import { isStoreHandle, isUnfinished, listStateOf } from '../index.js';
import { openProfileRecords, ProfileWakeFiles } from '../store/file/index.js';

/** The exit codes of `sess-mcp wait`, documented in docs/wake.md. */
export const WAIT_EXIT = {
  /** The interaction left `waiting` (whatever its state now): make the printed call. */
  left: 0,
  /** Something failed (the store could not be read): stderr names it in fixed words. */
  failed: 1,
  /** The arguments are wrong. */
  usage: 2,
  /** Still waiting when the time ran out (`--timeout`, or the link's expiry plus a minute). */
  timeout: 3,
  /** No sess-mcp server is watching this profile: call `sess_response` now instead. */
  noWatcher: 4,
  /** Another `sess-mcp wait` for this handle is running. */
  alreadyWaiting: 5,
  /** This profile has no record of the handle. */
  unknownHandle: 6,
} as const;

/** The line `wait` prints when no server watches the profile. */
export const NO_WATCHER_LINE = 'no sess-mcp server is watching this profile; call sess_response now';

/** How often the record and the watcher's heartbeat are looked at. */
const POLL_MS = 250;
/** How long past the link's expiry `wait` keeps waiting by default. */
const EXPIRY_GRACE_MS = 60_000;
/** The longest `--timeout`, and the default when a record has no expiry. */
const MAX_TIMEOUT_S = 7 * 24 * 3600;

export const WAIT_USAGE = `Usage:
  sess-mcp wait [--state-dir DIR] [--profile NAME] [--timeout SECONDS] HANDLE

Blocks until the interaction HANDLE leaves "waiting", prints one line with its state and the tool
call to make next, and exits 0. Without --timeout it stops at the link's expiry plus a minute.
Exit codes: 0 left waiting, 1 failed, 2 usage, 3 timed out, 4 no server is watching this profile,
5 another wait for this handle is running, 6 no such handle in this profile.
DIR and NAME default to SESS_MCP_STATE_DIR and SESS_MCP_PROFILE, as for the server.
`;

/** Where the wait reads, and its streams. */
export interface WaitCommandIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** The state directory and profile when the flags do not name them. */
  defaults: () => { stateDir: string; profile: string };
  /** Ends the wait early (a signal): the wait file is released. */
  signal?: AbortSignal;
}

interface WaitArgs {
  stateDir?: string;
  profile?: string;
  timeoutS?: number;
  handle: string;
}

function parseArgs(args: readonly string[]): WaitArgs | undefined {
  const out: Partial<WaitArgs> = {};
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    const value = args[i + 1];
    if (word === '--state-dir' || word === '--profile' || word === '--timeout') {
      if (value === undefined) return undefined;
      i += 1;
      if (word === '--state-dir') out.stateDir = value;
      else if (word === '--profile') out.profile = value;
      else {
        if (!/^\d{1,7}$/.test(value) || Number(value) < 1 || Number(value) > MAX_TIMEOUT_S) return undefined;
        out.timeoutS = Number(value);
      }
    } else if (out.handle === undefined && !word.startsWith('-')) {
      out.handle = word;
    } else {
      return undefined;
    }
  }
  return out.handle === undefined ? undefined : (out as WaitArgs);
}

/** The one line: the handle, its state and the call to make (handles are store keys: plain). */
function line(handle: string, state: string, revision: number): string {
  const call = `sess_response ${JSON.stringify({ handle, revision })}`;
  return `sess-mcp: ${handle} is ${state}; call ${call}\n`;
}

/**
 * Sleep `ms`, or until `signal` aborts. Each sleep takes its abort listener off again: a wait
 * polls for hours, and listeners left on the one signal pile up (Node warns on stderr at eleven).
 */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** Run `sess-mcp wait <args>` (the words after `wait`); resolves the exit code. */
export async function runWaitCommand(args: readonly string[], io: WaitCommandIo): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(WAIT_USAGE);
    return 0;
  }
  const parsed = parseArgs(args);
  // An argument is never echoed: it could be a pasted key.
  if (parsed === undefined || !isStoreHandle(parsed.handle)) {
    io.stderr.write(`sess-mcp wait: usage\n\n${WAIT_USAGE}`);
    return WAIT_EXIT.usage;
  }
  let where: { stateDir: string; profile: string };
  let records: ReturnType<typeof openProfileRecords>;
  let wake: ProfileWakeFiles;
  try {
    const defaults =
      parsed.stateDir === undefined || parsed.profile === undefined ? io.defaults() : undefined;
    where = {
      stateDir: parsed.stateDir ?? (defaults as { stateDir: string }).stateDir,
      profile: parsed.profile ?? (defaults as { profile: string }).profile,
    };
    records = openProfileRecords(where);
    wake = ProfileWakeFiles.open(where.stateDir, where.profile);
  } catch {
    io.stderr.write('sess-mcp wait: the state directory or profile is not valid\n');
    return WAIT_EXIT.usage;
  }
  const { handle } = parsed;
  let release: (() => void) | undefined;
  try {
    const first = await records.read(handle);
    if (first === undefined) {
      io.stderr.write('sess-mcp wait: no such handle in this profile\n');
      return WAIT_EXIT.unknownHandle;
    }
    release = await wake.lockWait(handle);
    if (release === undefined) {
      io.stderr.write('sess-mcp wait: another wait for this handle is running\n');
      return WAIT_EXIT.alreadyWaiting;
    }
    const expiresAt = Date.parse(first.record.expiresAt ?? '');
    const deadline =
      parsed.timeoutS !== undefined
        ? Date.now() + parsed.timeoutS * 1000
        : Number.isFinite(expiresAt)
          ? expiresAt + EXPIRY_GRACE_MS
          : Date.now() + MAX_TIMEOUT_S * 1000;
    for (;;) {
      const current = await records.read(handle);
      if (current === undefined) {
        io.stderr.write('sess-mcp wait: no such handle in this profile\n');
        return WAIT_EXIT.unknownHandle;
      }
      const { state } = current.record;
      const revision = 'revision' in state && state.revision !== undefined ? state.revision : 1;
      const waiting = state.kind === 'waiting' || state.kind === 'ask_open';
      if (!waiting || !isUnfinished(current.record)) {
        io.stdout.write(line(handle, listStateOf(state.kind), revision));
        return WAIT_EXIT.left;
      }
      if (!(await wake.watcherFresh())) {
        io.stdout.write(`sess-mcp: ${NO_WATCHER_LINE}\n`);
        return WAIT_EXIT.noWatcher;
      }
      if (Date.now() >= deadline) {
        io.stdout.write(line(handle, 'still waiting', revision));
        return WAIT_EXIT.timeout;
      }
      if (io.signal?.aborted) return WAIT_EXIT.failed;
      await sleep(POLL_MS, io.signal);
    }
  } catch (error) {
    // Store errors carry no record data; only the code is printed.
    const code = (error as { code?: unknown } | null)?.code;
    io.stderr.write(
      `sess-mcp wait: failed${typeof code === 'string' && /^[A-Z_]+$/.test(code) ? ` (${code})` : ''}\n`,
    );
    return WAIT_EXIT.failed;
  } finally {
    release?.();
  }
}
