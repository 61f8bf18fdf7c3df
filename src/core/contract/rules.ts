/**
 * Rules for values that more than one entry accepts (engine, HTTP and stdio options, the Sess
 * client, the stores): each is defined once here, with the text its messages state, and imported
 * wherever it is checked, so every entry gives the same verdict on the same value.
 *
 * This module only states rules. It reads no environment and builds no message prefix: the option
 * helper (`options.ts`) and the stdio configuration name the option or variable.
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { TOOL_NAMES, TOOLS_V5, type ToolName } from './tool-args.js';

/** A rule a value must satisfy, with the words a message uses for it ("must be <text>"). */
export interface ValueRule<T> {
  /** What a valid value is, in the words every message uses. */
  readonly text: string;
  /** True when `value` satisfies the rule. */
  test(value: unknown): value is T;
}

/**
 * The range of each cap of the wait gate, which `createWaitGate` and the HTTP handler both take
 * (the gate fills in the defaults).
 */
export const WAIT_CAP_RANGES = {
  maxConcurrentWaits: { min: 1, max: 10_000 },
  maxPrincipalWaits: { min: 1, max: 1_000_000 },
  maxTotalWaits: { min: 1, max: 1_000_000 },
  maxQueuedWaits: { min: 1, max: 1_000_000 },
} as const;

/** The name of one cap of the wait gate. */
export type WaitCap = keyof typeof WAIT_CAP_RANGES;

/**
 * The longest one `sess_response` wait may last, in milliseconds. `maxWaitMs` options (and
 * `SESS_MCP_MAX_WAIT_MS`) may only lower it; the Sess wire's `timeout_ms` has the same ceiling.
 */
export const WAIT_CEILING_MS = 45_000;

/**
 * Host names plain HTTP is allowed for under `allowInsecureLocalhost`, as `URL` normalises them:
 * the Sess origin's rule and the wake webhook's destination rule read this one list.
 */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A wait bound: a whole number of milliseconds from 0 to {@link WAIT_CEILING_MS}. `0` means
 * `sess_response` never waits, for hosts whose tool calls must return at once.
 */
export const WAIT_MS_RULE: ValueRule<number> = {
  text: `a whole number of milliseconds from 0 to ${WAIT_CEILING_MS}`,
  test: (value): value is number =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= WAIT_CEILING_MS,
};

/**
 * The longest Sess id (workspace, Session, Ask) and the longest handle or `response_event_id` a
 * tool takes (`ARGUMENT_LIMITS.maxIdLength`), in characters.
 */
export const MAX_ID_LENGTH = 128;

const ID_PATTERN = new RegExp(`^[A-Za-z0-9._:-]{1,${MAX_ID_LENGTH}}$`);

/** A Sess id (workspace, Session, Ask): 1–128 characters of `A–Z a–z 0–9 . _ : -`. */
export const SESS_ID_RULE: ValueRule<string> = {
  text: `1 to ${MAX_ID_LENGTH} characters of A-Z a-z 0-9 . _ : -`,
  test: (value): value is string => typeof value === 'string' && ID_PATTERN.test(value),
};

const ISSUER_PATTERN = /^[\x21-\x7e]{1,2048}$/;

/**
 * A receipt issuer (`iss`), when it differs from the Sess origin: the `receiptIssuer` option of the
 * HTTP handler and the Sess client, the verifier's `issuer`, `SESS_RECEIPT_ISSUER` for stdio.
 */
export const RECEIPT_ISSUER_RULE: ValueRule<string> = {
  text: 'printable ASCII without spaces, at most 2048 characters',
  test: (value): value is string => typeof value === 'string' && ISSUER_PATTERN.test(value),
};

/** The prefix of every handle the engine issues: a handle is this and one random id. */
export const HANDLE_PREFIX = 'sess_h_';

/** Bits of randomness in every id the engine generates (handles, idempotency keys). */
export const RANDOM_ID_BITS = 128;

/** The fewest base64url characters that carry {@link RANDOM_ID_BITS} (22). */
export const MIN_RANDOM_ID_LENGTH = Math.ceil(RANDOM_ID_BITS / 6);

/**
 * The longest random id: a handle ({@link HANDLE_PREFIX} and the id) must stay within
 * {@link MAX_ID_LENGTH}, or `sess_response` and the other tools would refuse it (121).
 */
export const MAX_RANDOM_ID_LENGTH = MAX_ID_LENGTH - HANDLE_PREFIX.length;

const RANDOM_ID_PATTERN = new RegExp(`^[A-Za-z0-9_-]{${MIN_RANDOM_ID_LENGTH},${MAX_RANDOM_ID_LENGTH}}$`);

/**
 * An id the engine's `randomId` returns: base64url, long enough for {@link RANDOM_ID_BITS} and
 * short enough that its handle is one the tools take.
 */
export const RANDOM_ID_RULE: ValueRule<string> = {
  text: `${MIN_RANDOM_ID_LENGTH} to ${MAX_RANDOM_ID_LENGTH} base64url characters (at least ${RANDOM_ID_BITS} bits; with "${HANDLE_PREFIX}" a handle of at most ${MAX_ID_LENGTH})`,
  test: (value): value is string => typeof value === 'string' && RANDOM_ID_PATTERN.test(value),
};

/** The profile of the file store when none is named (`SESS_MCP_PROFILE` unset). */
export const DEFAULT_PROFILE = 'default';

const PROFILE_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

/**
 * A profile name of the file store (`SESS_MCP_PROFILE`): 1–64 of `A–Z a–z 0–9 . _ -`, not
 * starting with `.` or `-` (a leading `_` is allowed: state directories that use one stay usable).
 */
export const PROFILE_NAME_RULE: ValueRule<string> = {
  text: "1 to 64 letters, digits, '.', '_' or '-', not starting with '.' or '-'",
  test: (value): value is string => typeof value === 'string' && PROFILE_PATTERN.test(value),
};

/**
 * The directory of one profile inside a state directory: `<stateDir>/profiles/<profile>`. `join`
 * is the platform's path join (the core imports no `node:` module).
 */
export function profileDirectory(
  join: (...parts: string[]) => string,
  stateDir: string,
  profile: string,
): string {
  return join(stateDir, 'profiles', profile);
}

/**
 * Which tools a server lists (the `tools` option of `registerSessTools` and of the HTTP handler,
 * `SESS_MCP_TOOLS` for stdio): `sess-mcp-tools/6`, every tool (the default), or
 * `sess-mcp-tools/5`, only the five tools of that contract.
 */
export type ToolSet = 'sess-mcp-tools/5' | 'sess-mcp-tools/6';

/** The tools of each tool set, in `tools/list` order. */
const TOOL_SETS: Readonly<Record<ToolSet, readonly ToolName[]>> = {
  'sess-mcp-tools/5': TOOLS_V5,
  'sess-mcp-tools/6': TOOL_NAMES,
};

/** A tool set, as every entry that takes one checks it. */
export const TOOL_SET_RULE: ValueRule<ToolSet> = {
  text: '"sess-mcp-tools/5" or "sess-mcp-tools/6"',
  test: (value): value is ToolSet => typeof value === 'string' && Object.hasOwn(TOOL_SETS, value),
};

/** The tools of a tool set, in `tools/list` order; every tool when `set` is undefined. */
export function toolsOf(set: ToolSet | undefined): readonly ToolName[] {
  return set === undefined ? TOOL_NAMES : TOOL_SETS[set];
}

/**
 * How a server publishes each tool's `inputSchema` (the `inputSchemas` option of
 * `registerSessTools` and of the HTTP handler, `SESS_MCP_INPUT_SCHEMAS` for stdio): `exact`, the
 * schemas as generated (the default), or `flat`, the same schemas without `anyOf`/`oneOf`, for a
 * host that rewrites unions before it validates (`flattenUnions` in `flat-schema.ts`). The server
 * validates every call the same way with either.
 */
export type InputSchemas = 'exact' | 'flat';

/**
 * Which server instructions a server sends (the `instructions` option of the HTTP handler,
 * `SESS_MCP_INSTRUCTIONS` for stdio, the second argument of `serverInstructions`): `full` (the
 * default), or `short`, at most 512 UTF-16 code units, for a host that cuts them there (Mastra).
 */
export type InstructionsForm = 'full' | 'short';

/** An instructions form, as every entry that takes one checks it. */
export const INSTRUCTIONS_FORM_RULE: ValueRule<InstructionsForm> = {
  text: '"full" or "short"',
  test: (value): value is InstructionsForm => value === 'full' || value === 'short',
};

/**
 * What an HTTP handle is bound to (the `binding` option of the HTTP handler): `grant` (the
 * default), the client and grant it was made through; or `principal`, the person, so every client
 * and grant they sign in through reaches it (`share: 'principal'` in `model/binding.ts`).
 */
export type HttpBindingMode = 'grant' | 'principal';

/** An HTTP binding mode, as every entry that takes one checks it. */
export const HTTP_BINDING_RULE: ValueRule<HttpBindingMode> = {
  text: '"grant" or "principal"',
  test: (value): value is HttpBindingMode => value === 'grant' || value === 'principal',
};

/** An input-schema form, as every entry that takes one checks it. */
export const INPUT_SCHEMAS_RULE: ValueRule<InputSchemas> = {
  text: '"exact" or "flat"',
  test: (value): value is InputSchemas => value === 'exact' || value === 'flat',
};

/**
 * Where the package's spans and metrics go: providers of the host's OpenTelemetry SDK. Either may
 * be left out; a left-out provider is the global one of `@opentelemetry/api`, a no-op until the
 * host registers an SDK. What is emitted is listed in `docs/operate.md`.
 */
export interface SessMcpTelemetryOptions {
  /** Spans of tool calls, Sess calls, store operations and event deliveries. */
  tracerProvider?: TracerProvider;
  /** The metrics (waits, Sess call durations, receipt checks, conflicts, deliveries, quotas). */
  meterProvider?: MeterProvider;
}

/** The keys of {@link SessMcpTelemetryOptions}; any other key is refused. */
export const TELEMETRY_OPTION_KEYS = ['tracerProvider', 'meterProvider'] as const;

/** The parts of the option reader (`options.ts`) {@link readTelemetryOption} uses. */
interface TelemetryOptionReader {
  bag(option: string, value: unknown, known: readonly string[]): Record<string, unknown>;
  fail(option: string, rule: string): never;
}

/**
 * The `telemetry` option of an entry that takes one (the engine, event delivery, the HTTP handler,
 * the watcher), read by `read`: an object with only {@link TELEMETRY_OPTION_KEYS}, each a provider.
 */
export function readTelemetryOption(
  read: TelemetryOptionReader,
  value: unknown,
): SessMcpTelemetryOptions | undefined {
  if (value === undefined) return undefined;
  const bag = read.bag('telemetry', value, TELEMETRY_OPTION_KEYS);
  const { tracerProvider, meterProvider } = bag as { tracerProvider?: unknown; meterProvider?: unknown };
  if (tracerProvider !== undefined && typeof (tracerProvider as TracerProvider)?.getTracer !== 'function')
    read.fail('telemetry.tracerProvider', 'must be a TracerProvider (with getTracer())');
  if (meterProvider !== undefined && typeof (meterProvider as MeterProvider)?.getMeter !== 'function')
    read.fail('telemetry.meterProvider', 'must be a MeterProvider (with getMeter())');
  return bag as SessMcpTelemetryOptions;
}

/** One day, in milliseconds. */
const DAY_MS = 86_400_000;

/**
 * How long a finished record is kept before retention removes it, unless told otherwise: 30 days,
 * longer than any delivery retry span (at most 30 days, 24 hours by default), so every sink has
 * had each event's whole span by then. The watchers' `retention` and `sess-mcp records prune` use it.
 */
export const DEFAULT_RETENTION_MS = 30 * DAY_MS;

/** A retention: a whole number of milliseconds from one second to ten years. */
export const RETENTION_MS_RULE: ValueRule<number> = {
  text: `a whole number of milliseconds from 1000 to ${3650 * DAY_MS}, or false to keep every record`,
  test: (value): value is number =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 1_000 && value <= 3650 * DAY_MS,
};

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: DAY_MS };

/** The words for a duration a person types (`sess-mcp records prune --older-than`). */
export const DURATION_TEXT = 'a whole number and a unit, s, m, h or d (30d, 12h, 90m), from 1s to 3650d';

/**
 * The milliseconds of a duration a person types (`30d`, `12h`, `90m`, `45s`), or `undefined` when
 * it is not one or is outside {@link RETENTION_MS_RULE}.
 */
export function durationMs(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,9})([smhd])$/.exec(text);
  if (match === null) return undefined;
  const ms = Number(match[1]) * (DURATION_UNITS[match[2] as string] as number);
  return RETENTION_MS_RULE.test(ms) ? ms : undefined;
}
