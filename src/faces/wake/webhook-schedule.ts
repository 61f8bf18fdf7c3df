/**
 * When a failed webhook attempt is tried again: exponential backoff with full jitter (the delay
 * before attempt n+1 is drawn evenly below `min(maxDelayMs, baseDelayMs · 2ⁿ⁻¹)`, never under
 * `minDelayMs`), for `spanMs` after the first attempt (24 hours by default), then the event is
 * dead-lettered. The jitter spreads the retries of many events that failed together (a receiver's
 * outage) instead of sending them back in one burst.
 *
 * Pure: the caller passes the clock and the random source. It keeps no state and sends nothing;
 * the outbox stores the attempt count and the first attempt's time.
 *
 * Tests only: `SESS_MCP_TEST_WEBHOOK_SCALE` (a decimal from 0.000001 to 1, read once when this
 * module loads, as the file store reads `SESS_MCP_TEST_LEASE_MS`) multiplies every time of the
 * default schedule, so a whole day of retries runs in seconds.
 */
import { optionNames, readOptions } from '../../core/contract/options.js';
import type { ValueRule } from '../../core/contract/rules.js';

/** The times of a schedule, in milliseconds. */
export interface WebhookSchedule {
  /** The ceiling of the first retry's delay; it doubles with each attempt. */
  readonly baseDelayMs: number;
  /** The ceiling no delay's ceiling grows past. */
  readonly maxDelayMs: number;
  /** The shortest delay, so a random draw near 0 never retries at once. */
  readonly minDelayMs: number;
  /** How long after the first attempt the last may start; then the event is dead. */
  readonly spanMs: number;
}

/** The schedule without the test scale: 5 s, doubling to 1 h, at least 1 s apart, for 24 h. */
export const WEBHOOK_SCHEDULE_DEFAULTS: WebhookSchedule = {
  baseDelayMs: 5_000,
  maxDelayMs: 3_600_000,
  minDelayMs: 1_000,
  spanMs: 86_400_000,
};

/** The ranges of {@link WebhookScheduleOptions}' times, before the scale. */
export const WEBHOOK_SCHEDULE_RANGES = {
  baseDelayMs: { min: 100, max: 3_600_000 },
  maxDelayMs: { min: 100, max: 86_400_000 },
  minDelayMs: { min: 1, max: 3_600_000 },
  spanMs: { min: 60_000, max: 30 * 86_400_000 },
} as const;

/** The test scale variable. */
export const WEBHOOK_SCALE_VARIABLE = 'SESS_MCP_TEST_WEBHOOK_SCALE';

/** A test scale: a decimal from 0.000001 to 1 (digits, one point, no exponent). */
export const WEBHOOK_SCALE_RULE: ValueRule<string> = {
  text: 'a decimal from 0.000001 to 1, such as 0.0001',
  test: (value): value is string =>
    typeof value === 'string' &&
    /^[01](\.[0-9]{1,9})?$/.test(value) &&
    Number(value) >= 0.000_001 &&
    Number(value) <= 1,
};

/** The scale a `SESS_MCP_TEST_WEBHOOK_SCALE` text asks for; `undefined` when unset or not valid. */
export function webhookTestScale(text: string | undefined): number | undefined {
  return text !== undefined && WEBHOOK_SCALE_RULE.test(text) ? Number(text) : undefined;
}

const TEST_SCALE = webhookTestScale(
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
    WEBHOOK_SCALE_VARIABLE
  ],
);

function scaled(schedule: WebhookSchedule, scale: number): WebhookSchedule {
  const at = (ms: number) => Math.max(1, Math.round(ms * scale));
  return {
    baseDelayMs: at(schedule.baseDelayMs),
    maxDelayMs: at(schedule.maxDelayMs),
    minDelayMs: at(schedule.minDelayMs),
    spanMs: at(schedule.spanMs),
  };
}

/**
 * How long a delivery claim holds an event (`DEFAULT_CLAIM_HOLD_MS` of the delivery loop), scaled
 * like the schedule when a test sets `SESS_MCP_TEST_WEBHOOK_SCALE`, but never under 2 s: a test's
 * killed holder is taken over in seconds, and a live attempt to a local receiver still ends first.
 */
export function claimHoldMs(holdMs: number): number {
  return TEST_SCALE === undefined ? holdMs : Math.max(2_000, Math.round(holdMs * TEST_SCALE));
}

/** The default schedule, scaled by `SESS_MCP_TEST_WEBHOOK_SCALE` when a test sets it. */
export const DEFAULT_WEBHOOK_SCHEDULE: WebhookSchedule = scaled(WEBHOOK_SCHEDULE_DEFAULTS, TEST_SCALE ?? 1);

/** Options of {@link createWebhookSchedule}; every time defaults to {@link WEBHOOK_SCHEDULE_DEFAULTS}'. */
export interface WebhookScheduleOptions {
  /** @default 5_000 */
  baseDelayMs?: number;
  /** At least `baseDelayMs`. @default 3_600_000 */
  maxDelayMs?: number;
  /** At most `baseDelayMs`. @default 1_000 */
  minDelayMs?: number;
  /** @default 86_400_000 (24 hours) */
  spanMs?: number;
  /**
   * Tests only: multiplies every time (0.000001 to 1).
   * @default the `SESS_MCP_TEST_WEBHOOK_SCALE` scale, else 1
   */
  scale?: number;
}

const SCHEDULE_OPTIONS = optionNames<WebhookScheduleOptions>()(
  'baseDelayMs',
  'maxDelayMs',
  'minDelayMs',
  'spanMs',
  'scale',
);

/**
 * A schedule with other times than the default.
 *
 * @throws TypeError `createWebhookSchedule: option "<name>" …` for a time out of its range.
 */
export function createWebhookSchedule(options: WebhookScheduleOptions = {}): WebhookSchedule {
  const factory = 'createWebhookSchedule';
  const read = readOptions(factory, options, { known: SCHEDULE_OPTIONS, allowMissing: true });
  const d = WEBHOOK_SCHEDULE_DEFAULTS;
  const r = WEBHOOK_SCHEDULE_RANGES;
  const baseDelayMs = read.integer('baseDelayMs', options.baseDelayMs, r.baseDelayMs, d.baseDelayMs);
  const maxDelayMs = read.integer('maxDelayMs', options.maxDelayMs, r.maxDelayMs, d.maxDelayMs);
  const minDelayMs = read.integer('minDelayMs', options.minDelayMs, r.minDelayMs, d.minDelayMs);
  const spanMs = read.integer('spanMs', options.spanMs, r.spanMs, d.spanMs);
  if (maxDelayMs < baseDelayMs) read.fail('maxDelayMs', 'must be at least baseDelayMs');
  if (minDelayMs > baseDelayMs) read.fail('minDelayMs', 'must be at most baseDelayMs');
  const scale = options.scale ?? TEST_SCALE ?? 1;
  if (typeof scale !== 'number' || !(scale >= 0.000_001 && scale <= 1)) {
    read.fail('scale', 'must be a number from 0.000001 to 1');
  }
  return scaled({ baseDelayMs, maxDelayMs, minDelayMs, spanMs }, scale);
}

/**
 * How long to wait before the next attempt, or `'dead'` when the event should be dead-lettered.
 *
 * @param attempt The attempts made so far (1 after the first failed).
 * @param firstAttemptAt When the first attempt started (ms since the epoch).
 * @param now The current time (ms since the epoch).
 * @param random A draw in [0, 1), e.g. `Math.random`.
 * After the third failed attempt, `nextAttemptDelay(3, firstAttemptAt, Date.now(), Math.random)`
 * is a delay of 1 to 20 s, or `'dead'` once the span is over.
 */
export function nextAttemptDelay(
  attempt: number,
  firstAttemptAt: number,
  now: number,
  random: () => number,
  schedule: WebhookSchedule = DEFAULT_WEBHOOK_SCHEDULE,
): number | 'dead' {
  const left = firstAttemptAt + schedule.spanMs - now;
  if (!(left >= schedule.minDelayMs)) return 'dead';
  const doublings = Math.max(0, Math.floor(attempt) - 1);
  const ceiling = Math.min(schedule.maxDelayMs, schedule.baseDelayMs * 2 ** Math.min(doublings, 52));
  const draw = random();
  const jitter = draw >= 0 && draw < 1 ? draw : 0;
  const delay = Math.max(schedule.minDelayMs, Math.floor(jitter * ceiling));
  // The last attempt starts when the span ends, not after it.
  return Math.min(delay, left);
}
