/**
 * An interactive terminal host in a detached tmux session, for the suites that need a host's
 * interactive UI (a turn that starts with no keystroke only happens there): start the program in
 * its own tmux server (a private socket, no user configuration), read the pane, type into it, and
 * keep a log of every keystroke sent, so a suite can show that nothing was typed after its prompt.
 *
 * It does not know any host: what to wait for on the pane is the suite's.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { pollUntil } from './matrix.js';

const run = promisify(execFile);

/**
 * Whether tmux is installed. Under `CI=true` a missing tmux fails the suite (`.ci/run` installs
 * it); elsewhere the suite is skipped with the install command as the reason.
 */
export function requireTmux(): boolean {
  if (spawnSync('tmux', ['-V']).status === 0) return true;
  const message = 'tmux is not installed; install it with: apt-get install -y tmux';
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`skipping: ${message}`);
  return false;
}

/** One `send-keys` this helper made. */
export interface Keystroke {
  /** When it was sent (`Date.now()`). */
  at: number;
  /** What was sent: the literal text, or a key name such as `Enter`. */
  keys: string;
}

/** How to start a program in tmux. */
export interface TmuxOptions {
  /** The tmux server's socket path (a fresh one per run: the server is this session's alone). */
  socket: string;
  /** The program and its arguments. */
  command: readonly string[];
  cwd: string;
  /** The whole environment of the tmux server and so of the program (nothing else is inherited). */
  env: NodeJS.ProcessEnv;
  /** @default 200 */
  width?: number;
  /** @default 50 */
  height?: number;
}

/** A program running in a detached tmux session. */
export interface TmuxSession {
  /** The pane's visible text now. */
  capture(): Promise<string>;
  /**
   * Poll the pane until `match` returns a value; rejects naming `what` after `timeoutMs`, or at
   * once when `refuse` finds something on the pane (returned as the reason).
   */
  waitForPane<T>(
    match: (pane: string) => T | undefined,
    options: { timeoutMs: number; what: string; refuse?: (pane: string) => string | undefined },
  ): Promise<T>;
  /**
   * Type `text` literally, wait until the pane shows it, then press Enter in a separate
   * `send-keys`, as a person would (keys sent in one go can read as a paste). `text` must fit on
   * one line of the pane.
   */
  typeLine(text: string): Promise<void>;
  /** Every keystroke sent so far, in order. */
  readonly keystrokes: readonly Keystroke[];
  /** Kill the tmux server (the program gets SIGHUP) and wait for the program to be gone. */
  close(): Promise<void>;
}

const SESSION = 'host';

/** Whether a process is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Start `options.command` in a detached tmux session of its own tmux server. */
export async function startTmux(options: TmuxOptions): Promise<TmuxSession> {
  const tmux = (...args: string[]) =>
    run('tmux', ['-f', '/dev/null', '-S', options.socket, ...args], { env: options.env, cwd: options.cwd });
  await tmux(
    'new-session',
    '-d',
    '-s',
    SESSION,
    '-x',
    String(options.width ?? 200),
    '-y',
    String(options.height ?? 50),
    '-c',
    options.cwd,
    ...options.command,
  );
  const pid = Number((await tmux('display-message', '-p', '-t', SESSION, '#{pane_pid}')).stdout.trim());
  const keystrokes: Keystroke[] = [];
  const send = async (keys: string, literal: boolean) => {
    keystrokes.push({ at: Date.now(), keys });
    await tmux('send-keys', '-t', SESSION, ...(literal ? ['-l'] : []), keys);
  };
  const capture = async () => (await tmux('capture-pane', '-p', '-t', SESSION)).stdout;
  let closed = false;
  return {
    capture,
    keystrokes,
    waitForPane(match, { timeoutMs, what, refuse }) {
      return pollUntil(
        async () => {
          const pane = await capture();
          const refused = refuse?.(pane);
          if (refused !== undefined)
            throw new Error(`${refused} while waiting for ${what}; the pane:\n${pane}`);
          return match(pane);
        },
        timeoutMs,
        what,
      );
    },
    async typeLine(text) {
      await send(text, true);
      await pollUntil(
        async () => ((await capture()).includes(text) ? true : undefined),
        10_000,
        'the typed line',
      );
      await send('Enter', false);
    },
    async close() {
      if (closed) return;
      closed = true;
      await tmux('kill-server').catch(() => undefined);
      if (Number.isInteger(pid) && pid > 0) {
        await pollUntil(() => (alive(pid) ? undefined : true), 10_000, 'the host to exit').catch(() => {
          process.kill(pid, 'SIGKILL');
        });
      }
    },
  };
}
