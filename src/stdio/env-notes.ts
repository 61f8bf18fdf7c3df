/**
 * What the `sess-mcp` command says in words on stderr before it serves: that `SESS_API_KEY` is not
 * set (every tool call then answers `NOT_CONFIGURED` until the server is started with it), and
 * each `SESS_*` variable it does not read, with the one it probably meant. A host that starts the
 * server shows its stderr in a log; these lines are what its owner reads there.
 *
 * Names only: it never prints a value. It decides nothing: the configuration is `config.ts`'s,
 * and an unknown variable is only a warning (another tool may read it).
 */
import { WEBHOOK_ENV } from '../faces/wake/webhook-config.js';
import { type EnvLike, isUnexpandedPlaceholder, PLACEHOLDER_KEY_MESSAGE, STDIO_ENV } from './config.js';

/** Every `SESS_*` variable this package reads. */
const KNOWN: ReadonlySet<string> = new Set([
  ...Object.values(STDIO_ENV),
  ...Object.values(WEBHOOK_ENV),
  // Tests only: the file store's lease (`src/store/file/lock.ts`) and the watcher's heartbeat
  // (`src/store/file/wake-files.ts`).
  'SESS_MCP_TEST_LEASE_MS',
  'SESS_MCP_TEST_WAKE_STALE_MS',
]);

/** Words people use for an origin. */
const ORIGIN_WORDS = /_(?:URL|BASE_URL|ENDPOINT|HOST|SERVER|ADDRESS)$/;

/** The edit distance of `a` and `b` (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}

/** The known variable `name` probably meant, or `undefined` when none is close. */
export function suggestVariable(name: string): string | undefined {
  const asOrigin = name.replace(ORIGIN_WORDS, '_ORIGIN');
  if (asOrigin !== name && KNOWN.has(asOrigin)) return asOrigin;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const known of KNOWN) {
    const d = distance(name, known);
    if (d < bestDistance) {
      best = known;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? best : undefined;
}

/** The lines to print before serving, each ending in a newline; none when all is well. */
export function startupNotes(env: EnvLike): string[] {
  const notes: string[] = [];
  const key = env[STDIO_ENV.apiKey];
  if (key === undefined || key === '') {
    notes.push(
      `sess-mcp: ${STDIO_ENV.apiKey} is not set: every tool call will answer NOT_CONFIGURED until the server is started with it in its environment.\n`,
    );
  } else if (isUnexpandedPlaceholder(key)) {
    notes.push(`sess-mcp: ${PLACEHOLDER_KEY_MESSAGE}\n`);
  }
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith('SESS_') && !KNOWN.has(name))
    .sort();
  for (const name of unknown) {
    const meant = suggestVariable(name);
    notes.push(
      `sess-mcp: ${name} is not a variable sess-mcp reads; it is ignored.${meant === undefined ? '' : ` Did you mean ${meant}?`}\n`,
    );
  }
  return notes;
}
