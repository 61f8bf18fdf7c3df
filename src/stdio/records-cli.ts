/**
 * `sess-mcp records …`: the owner's view of one profile's local records, for the owner procedure
 * (`docs/owner-procedure.md`). `list` shows records by state, `show` one record with the Sess link,
 * answer values, pre-filled Surface values and receipts redacted unless `--reveal`, `retire`
 * removes one record file after confirmation, `events` shows the outbox, `prune` removes the
 * finished records older than a duration.
 *
 * It never repairs or resumes a record and never contacts Sess: deciding what happens to a
 * Session is the owner's job, in Sess. It reads and removes files only through
 * {@link RecordsAccess}, which the file store provides.
 */

import { DEFAULT_RETENTION_MS, DURATION_TEXT, durationMs } from '../core/contract/rules.js';
import { visible } from '../faces/visible.js';
import {
  type ErrorCode,
  type EventOutbox,
  INTERACTION_STATE_KINDS,
  type InteractionRecord,
  type InteractionStateKind,
  isSessMcpError,
  listStateOf,
  MAX_PRUNE_LIMIT,
  type PruneQuery,
  type PruneResult,
  type VersionedRecord,
} from '../index.js';
import type { ProfileRecordSummary, ProfileRecords } from '../store/file/index.js';

/**
 * What the CLI needs from a store: a structural subset of the file store's `ProfileRecords`
 * (`openProfileRecords` in `@sess.si/mcp/store/file`).
 */
export type RecordsAccess = Pick<ProfileRecords, 'list' | 'read' | 'remove' | 'pathOf'> & {
  /** The profile's event outbox (`records events`); without it that command is refused. */
  outbox?: Pick<EventOutbox, 'entries' | 'resend'>;
  /** The store's retention (`records prune`); without it that command is refused. */
  prune?: (query: PruneQuery) => Promise<PruneResult>;
};

/**
 * The sinks a stdio profile delivers to: `webhook` (`SESS_MCP_WEBHOOK_URL`), `onEvent`, and
 * `claudeChannel` (`SESS_MCP_CLAUDE_CHANNEL=1`).
 */
export const EVENT_SINKS = ['webhook', 'onEvent', 'claudeChannel'] as const;
/** How many events `records events` shows at most. */
const EVENTS_SHOWN = 200;

/** Where the CLI writes and reads. */
export interface RecordsCliIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** Ask a question on the terminal; undefined when there is no terminal. */
  prompt?: (question: string) => Promise<string>;
}

/** Exit codes: 0 done, 1 refused or not found, 2 usage error. */
export type CliExitCode = 0 | 1 | 2;

/** Every state a record can be in, for `--state`. */
export const RECORD_STATES: readonly InteractionStateKind[] = INTERACTION_STATE_KINDS;

/**
 * The groups `--state` also takes: `unfinished` (counts against the cap), `pending` (a saved
 * publish, complete, withdraw or Ask close may be in flight) and `finished`.
 */
export const STATE_GROUPS = ['unfinished', 'pending', 'finished'] as const;

/** Whether a listed record in state `kind` (unfinished or not) is in `--state` `filter`. */
function inState(filter: string, kind: InteractionStateKind, unfinished: boolean): boolean {
  if (filter === 'unfinished') return unfinished;
  if (filter === 'finished') return !unfinished;
  if (filter === 'pending') return listStateOf(kind) === 'pending';
  return kind === filter;
}

/** The usage text of `sess-mcp`. */
export const USAGE = `Usage:
  sess-mcp                                 serve the Sess tools over stdio
  sess-mcp records list [--state STATE]    list this profile's records (by state)
  sess-mcp records show HANDLE [--reveal]  show one record (link and answer redacted)
  sess-mcp records retire HANDLE [--yes]   remove one record file after confirmation
  sess-mcp records events [--sink S] [--resend ID]
                                           this profile's events and their delivery (S: webhook, onEvent, claudeChannel)
  sess-mcp records prune [--older-than D]  remove finished records that finished more than D ago (default 30d)
  sess-mcp wait HANDLE [--timeout S]       block until HANDLE leaves "waiting" (a result's wake.command)
  sess-mcp local [--port N] [--host H]     run a local Sess for trying the tools by hand
  sess-mcp --help | --version

The profile and state directory come from SESS_MCP_PROFILE and SESS_MCP_STATE_DIR, as for the
server. The records commands never contact Sess and never read SESS_API_KEY.
STATE is one of: ${RECORD_STATES.join(', ')}; or a group: ${STATE_GROUPS.join(', ')}.
D is ${DURATION_TEXT}. prune removes only completed, expired and withdrawn records and closed
Asks, never one whose event is still owed to a sink; a removed handle answers HANDLE_NOT_FOUND.
See docs/owner-procedure.md for resolving blocked and unconfirmed records.
`;

const REDACTED = '[redacted: --reveal shows it]';

class UsageError extends Error {}

/**
 * Run `sess-mcp records <args>` (the words after `records`): `['list', '--state', 'blocked']`
 * lists the blocked records of the profile that `access` opens.
 */
export async function runRecordsCli(
  args: readonly string[],
  given: RecordsCliIo,
  access: RecordsAccess,
): Promise<CliExitCode> {
  // A record's text (a Surface title, a reason) reaches the owner's terminal: nothing in it may
  // act on the terminal.
  const io: RecordsCliIo = {
    ...given,
    stdout: { write: (chunk) => given.stdout.write(visible(chunk)) },
    stderr: { write: (chunk) => given.stderr.write(visible(chunk)) },
    ...(given.prompt === undefined ? {} : { prompt: (question) => given.prompt!(visible(question)) }),
  };
  try {
    const [command, ...rest] = args;
    switch (command) {
      case 'list':
        return await list(rest, io, access);
      case 'show':
        return await show(rest, io, access);
      case 'retire':
        return await retire(rest, io, access);
      case 'events':
        return await events(rest, io, access);
      case 'prune':
        return await prune(rest, io, access);
      default:
        throw new UsageError(
          command === undefined
            ? 'records needs a command: list, show, retire, events or prune.'
            : 'unknown records command: use list, show, retire, events or prune.',
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`sess-mcp: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    // Store errors are SessMcpError: their messages carry no record data.
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : 'unexpected failure';
    io.stderr.write(`sess-mcp: ${typeof code === 'string' ? `${code}: ` : ''}${message}\n`);
    return 1;
  }
}

/** Split flags from positional words; refuse unknown flags. */
function parse(
  args: readonly string[],
  flags: Record<string, 'bool' | 'value'>,
): { positional: string[]; values: Map<string, string | true> } {
  const positional: string[] = [];
  const values = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.startsWith('--')) {
      const [name, inline] = arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
      const kind = flags[name];
      // Not echoed: a mistyped option could be a pasted key.
      if (kind === undefined)
        throw new UsageError(`unknown option; this command takes ${Object.keys(flags).join(', ')}.`);
      if (kind === 'bool') {
        if (inline !== undefined) throw new UsageError(`${name} takes no value.`);
        values.set(name, true);
      } else {
        const value = inline ?? args[++i];
        if (value === undefined || value === '') throw new UsageError(`${name} needs a value.`);
        values.set(name, value);
      }
    } else {
      positional.push(arg);
    }
  }
  return { positional, values };
}

function oneHandle(positional: string[], command: string): string {
  if (positional.length !== 1) throw new UsageError(`records ${command} takes exactly one HANDLE.`);
  return positional[0]!;
}

async function list(args: readonly string[], io: RecordsCliIo, access: RecordsAccess): Promise<CliExitCode> {
  const { positional, values } = parse(args, { '--state': 'value', '--json': 'bool' });
  if (positional.length > 0) throw new UsageError('records list takes no HANDLE.');
  const state = values.get('--state');
  if (
    typeof state === 'string' &&
    !(STATE_GROUPS as readonly string[]).includes(state) &&
    !RECORD_STATES.includes(state as InteractionStateKind)
  ) {
    throw new UsageError(
      `--state must be one of ${RECORD_STATES.join(', ')}; or a group: ${STATE_GROUPS.join(', ')}.`,
    );
  }
  const all = await access.list();
  const rows = all.filter((entry) => {
    if (typeof state !== 'string') return true;
    if (entry.state === undefined) return false;
    return inState(state, entry.state, entry.unfinished === true);
  });

  if (values.get('--json') === true) {
    io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    io.stdout.write(
      typeof state === 'string' ? `No records in state ${state}.\n` : 'No records in this profile.\n',
    );
    return 0;
  }
  const table = rows.map((entry: ProfileRecordSummary) =>
    entry.problem !== undefined
      ? [entry.handle, 'UNREADABLE', 'STATE_STORE_ERROR', entry.updatedAt ?? '', entry.problem]
      : [entry.handle, entry.state ?? '', codeOf(entry) ?? '', entry.updatedAt ?? '', entry.reason ?? ''],
  );
  io.stdout.write(formatTable([['HANDLE', 'STATE', 'CODE', 'UPDATED', 'REASON'], ...table]));
  const unreadable = rows.filter((r) => r.problem !== undefined).length;
  if (unreadable > 0) {
    io.stdout.write(
      `\n${unreadable} record file(s) cannot be read: review them by hand, then retire them (see docs/owner-procedure.md).\n`,
    );
  }
  return 0;
}

/**
 * `records events [--sink SINK] [--resend EVENT_ID] [--json]`: the profile's events and where each
 * stands for one sink (owed, delivered, dead), newest first; `--resend` makes one owed again.
 */
async function events(
  args: readonly string[],
  io: RecordsCliIo,
  access: RecordsAccess,
): Promise<CliExitCode> {
  const { positional, values } = parse(args, { '--sink': 'value', '--resend': 'value', '--json': 'bool' });
  if (positional.length > 0) throw new UsageError('records events takes no HANDLE.');
  const sink = values.get('--sink') ?? 'webhook';
  if (typeof sink !== 'string' || !(EVENT_SINKS as readonly string[]).includes(sink)) {
    throw new UsageError(`--sink must be one of ${EVENT_SINKS.join(', ')}.`);
  }
  const outbox = access.outbox;
  if (outbox === undefined) throw new UsageError('this store keeps no events.');
  const resend = values.get('--resend');
  if (typeof resend === 'string') {
    // The id is not echoed when unknown: it is the caller's text.
    if (!(await outbox.resend(sink, resend, Date.now()))) {
      io.stderr.write('sess-mcp: no such event in this profile.\n');
      return 1;
    }
    io.stdout.write(`Event ${resend} is owed to ${sink} again; a running server delivers it.\n`);
    return 0;
  }
  const entries = await outbox.entries(sink, EVENTS_SHOWN);
  if (values.get('--json') === true) {
    io.stdout.write(
      `${JSON.stringify(
        entries.map(({ event, ...rest }) => ({
          ...rest,
          event: { ...event, binding: undefined },
        })),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  if (entries.length === 0) {
    io.stdout.write('No events in this profile.\n');
    return 0;
  }
  const table = entries.map(({ event, state, attempts, reason }) => [
    event.eventId,
    event.type,
    event.handle,
    String(event.revision),
    event.occurredAt,
    state,
    String(attempts),
    reason ?? '',
  ]);
  io.stdout.write(
    formatTable([
      ['EVENT', 'TYPE', 'HANDLE', 'REVISION', 'OCCURRED', 'STATE', 'ATTEMPTS', 'REASON'],
      ...table,
    ]),
  );
  return 0;
}

/**
 * `records prune [--older-than DURATION]`: remove the profile's finished records that finished
 * more than DURATION ago (30 days by default), in batches until none is left. Safe while a server
 * runs on the profile (the store takes its lock per batch).
 */
async function prune(args: readonly string[], io: RecordsCliIo, access: RecordsAccess): Promise<CliExitCode> {
  const { positional, values } = parse(args, { '--older-than': 'value' });
  if (positional.length > 0) throw new UsageError('records prune takes no HANDLE.');
  const given = values.get('--older-than');
  const ms = typeof given === 'string' ? durationMs(given) : DEFAULT_RETENTION_MS;
  if (ms === undefined) throw new UsageError(`--older-than must be ${DURATION_TEXT}.`);
  if (access.prune === undefined) throw new UsageError('this store cannot prune.');
  const olderThan = Date.now() - ms;
  let removed = 0;
  for (;;) {
    const result = await access.prune({ olderThan, limit: MAX_PRUNE_LIMIT });
    removed += result.removed;
    if (!result.more || result.removed === 0) break;
  }
  const cutoff = new Date(olderThan).toISOString();
  io.stdout.write(`Removed ${removed} finished record(s) that finished before ${cutoff}.\n`);
  return 0;
}

function codeOf(entry: ProfileRecordSummary): string | undefined {
  if (entry.state === 'blocked') return entry.blockedCode;
  if (entry.state === 'create_unknown') return 'CREATE_OUTCOME_UNKNOWN';
  return undefined;
}

async function show(args: readonly string[], io: RecordsCliIo, access: RecordsAccess): Promise<CliExitCode> {
  const { positional, values } = parse(args, { '--reveal': 'bool' });
  const handle = oneHandle(positional, 'show');
  const found = await access.read(handle);
  if (found === undefined) {
    io.stderr.write(`sess-mcp: no record with that handle in this profile.\n`);
    return 1;
  }
  const reveal = values.get('--reveal') === true;
  const s = summary(found.record);
  const lines = [
    `handle:   ${handle}`,
    `state:    ${s.state}${s.code === undefined ? '' : ` (${s.code}${s.reason === undefined ? '' : `, ${s.reason}`})`}`,
    ...(s.sessionId === undefined
      ? []
      : [`session:  ${s.sessionId}${s.revision === undefined ? '' : ` at revision ${s.revision}`}`]),
    `created:  ${s.createdAt}`,
    `updated:  ${s.updatedAt}`,
    `format:   ${found.record.format}${found.record.format === 1 ? ' (written by 0.1.0; rewritten as format 2 at its next change)' : ''}`,
    `file:     ${access.pathOf(handle) ?? ''}`,
    `next:     ${nextStep(found.record)}`,
    '',
    reveal
      ? 'Record (unredacted: it holds the Sess link and answer data; do not paste it into chats or issues):'
      : 'Record (link, answer values, pre-filled values and receipts redacted; --reveal shows them):',
    JSON.stringify(reveal ? found : redact(found), null, 2),
    '',
  ];
  io.stdout.write(lines.join('\n'));
  return 0;
}

async function retire(
  args: readonly string[],
  io: RecordsCliIo,
  access: RecordsAccess,
): Promise<CliExitCode> {
  const { positional, values } = parse(args, { '--yes': 'bool' });
  const handle = oneHandle(positional, 'retire');
  let found: VersionedRecord | undefined;
  let unreadable = false;
  try {
    found = await access.read(handle);
  } catch (error) {
    // A damaged file is exactly what the owner may need to retire.
    if (!isSessMcpError(error) || error.code !== 'STATE_STORE_ERROR' || error.retryable) throw error;
    unreadable = true;
  }
  if (found === undefined && !unreadable) {
    io.stderr.write('sess-mcp: no record with that handle in this profile.\n');
    return 1;
  }
  const what =
    found === undefined
      ? 'an unreadable record file'
      : (() => {
          const s = summary(found.record);
          return `state ${s.state}${s.sessionId === undefined ? '' : `, session ${s.sessionId}`}`;
        })();
  if (values.get('--yes') !== true) {
    if (io.prompt === undefined) {
      io.stderr.write(
        'sess-mcp: refusing to retire without confirmation: run it in a terminal, or pass --yes.\n',
      );
      return 1;
    }
    const answer = await io.prompt(
      `Retire ${handle} (${what})?\n` +
        'This removes the local record file only; the Session in Sess is not changed and the handle stops working.\n' +
        'Type "retire" to confirm: ',
    );
    if (answer.trim() !== 'retire') {
      io.stderr.write('sess-mcp: not retired.\n');
      return 1;
    }
  }
  // Only the version the owner confirmed: a record that changed meanwhile is kept.
  const removed = await access.remove(handle, found === undefined ? {} : { expectedVersion: found.version });
  if (!removed) {
    io.stderr.write(
      'sess-mcp: the record changed or was removed meanwhile; nothing was retired. Look again.\n',
    );
    return 1;
  }
  io.stdout.write(`Retired ${handle} (was ${what}).\n`);
  return 0;
}

interface RecordSummary {
  state: InteractionStateKind;
  code?: ErrorCode;
  reason?: string;
  sessionId?: string;
  revision?: number;
  createdAt: string;
  updatedAt: string;
}

/** The non-secret facts of a record. */
function summary(record: InteractionRecord): RecordSummary {
  const state = record.state;
  const out: RecordSummary = { state: state.kind, createdAt: record.createdAt, updatedAt: record.updatedAt };
  switch (state.kind) {
    case 'create_unknown':
      out.code = 'CREATE_OUTCOME_UNKNOWN';
      out.reason = state.reason;
      break;
    case 'blocked':
      out.code = state.code;
      out.reason = state.reason;
      if (state.sessionId !== undefined) out.sessionId = state.sessionId;
      if (state.revision !== undefined) out.revision = state.revision;
      break;
    case 'waiting':
    case 'answered':
    case 'publish_pending':
    case 'complete_pending':
    case 'withdraw_pending':
      out.sessionId = state.session.sessionId;
      out.revision = state.revision;
      break;
    case 'completed':
    case 'expired':
    case 'withdrawn':
      out.sessionId = state.sessionId;
      out.revision = state.revision;
      break;
    case 'ask_open':
    case 'ask_close_pending':
    case 'ask_closed':
      out.sessionId = state.askId;
      break;
    case 'create_intent':
      break;
    default:
      state satisfies never;
  }
  return out;
}

/** What the owner should do next with a record, in one line. */
function nextStep(record: InteractionRecord): string {
  switch (record.state.kind) {
    case 'create_intent':
    case 'create_unknown':
      return 'a Session may exist: look in Sess for one created at "created" before asking for a new one; then retire this record.';
    case 'blocked':
      return 'check the Session in Sess and decide there what should happen to it; then retire this record.';
    case 'publish_pending':
    case 'complete_pending':
    case 'withdraw_pending':
    case 'ask_close_pending':
      return 'the agent can repeat the identical call to reconcile; retire only if it cannot.';
    case 'completed':
    case 'expired':
    case 'withdrawn':
    case 'ask_closed':
      return 'finished: retiring only tidies up.';
    case 'waiting':
    case 'answered':
    case 'ask_open':
      return 'in progress: the agent can continue with sess_response; retiring makes the handle unusable.';
  }
}

/**
 * A deep copy with the link, answer values, receipts and every value a saved Surface pre-fills
 * replaced by a marker: a field component's `value` and a record component's `fields` values can
 * hold what the person answered earlier (a follow-up that shows it back). Names, labels and
 * record field captions stay, so the owner can still tell what the record is about.
 */
function redact(value: unknown, key?: string, parent?: Record<string, unknown>): unknown {
  if (key === 'humanUrl' || key === 'receipt') return typeof value === 'string' ? REDACTED : value;
  const component = parent?.type;
  if (key === 'value' && component === 'field') return REDACTED;
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value);
  if (isObject && (key === 'values' || (key === 'fields' && component === 'record'))) {
    return Object.fromEntries(Object.keys(value).map((name) => [name, REDACTED]));
  }
  if (Array.isArray(value)) return value.map((item) => redact(item));
  if (isObject) {
    const object = value as Record<string, unknown>;
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, redact(v, k, object)]));
  }
  return value;
}

function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}
