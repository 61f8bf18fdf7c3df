/**
 * The retry schedule: full jitter under a doubling ceiling, a floor, the last attempt at the end
 * of the span, then dead; its options; and the test scale, read from the environment by a real
 * child process.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createWebhookSchedule,
  DEFAULT_WEBHOOK_SCHEDULE,
  nextAttemptDelay,
  WEBHOOK_SCHEDULE_DEFAULTS,
  webhookTestScale,
} from '../../src/faces/wake/webhook-schedule.js';
import { bundleForNode } from '../support/bundle.js';
import { useTempDirs } from '../support/temp-dirs.js';

const HOUR = 3_600_000;
const T0 = 1_700_000_000_000;

describe('nextAttemptDelay', () => {
  it('draws below a ceiling that doubles from 5 s up to 1 h, never under 1 s', () => {
    const cases: [attempt: number, ceiling: number][] = [
      [1, 5_000],
      [2, 10_000],
      [3, 20_000],
      [10, 2_560_000],
      [11, HOUR],
      [40, HOUR],
      [5_000, HOUR],
    ];
    for (const [attempt, ceiling] of cases) {
      expect(nextAttemptDelay(attempt, T0, T0, () => 0.999_999)).toBe(Math.floor(0.999_999 * ceiling));
      expect(nextAttemptDelay(attempt, T0, T0, () => 0.5)).toBe(Math.max(1_000, Math.floor(ceiling / 2)));
      expect(nextAttemptDelay(attempt, T0, T0, () => 0)).toBe(1_000);
    }
  });

  it('treats a draw outside [0, 1) as 0', () => {
    for (const draw of [1, -0.5, Number.NaN, 7]) expect(nextAttemptDelay(5, T0, T0, () => draw)).toBe(1_000);
  });

  it('starts the last attempt when the 24 h span ends, then is dead', () => {
    const nearEnd = T0 + 24 * HOUR - 10_000;
    expect(nextAttemptDelay(30, T0, nearEnd, () => 0.9)).toBe(10_000);
    expect(nextAttemptDelay(31, T0, T0 + 24 * HOUR, () => 0.9)).toBe('dead');
    expect(nextAttemptDelay(31, T0, T0 + 24 * HOUR - 999, () => 0.9)).toBe('dead');
    expect(nextAttemptDelay(31, T0, T0 + 25 * HOUR, () => 0.9)).toBe('dead');
  });

  it('spans at least 24 hours of attempts with any random source', () => {
    for (const random of [() => 0, () => 0.999, Math.random]) {
      let now = T0;
      let attempts = 1;
      for (;;) {
        const delay = nextAttemptDelay(attempts, T0, now, random);
        if (delay === 'dead') break;
        expect(delay).toBeGreaterThanOrEqual(1_000);
        now += delay;
        attempts += 1;
      }
      expect(now - T0).toBeGreaterThanOrEqual(24 * HOUR - 1_000);
      expect(now - T0).toBeLessThanOrEqual(24 * HOUR);
    }
  });
});

describe('createWebhookSchedule', () => {
  it('takes other times and a scale', () => {
    expect(createWebhookSchedule({ spanMs: 72 * HOUR })).toEqual({
      ...WEBHOOK_SCHEDULE_DEFAULTS,
      spanMs: 72 * HOUR,
    });
    expect(createWebhookSchedule({ scale: 0.001 })).toEqual({
      baseDelayMs: 5,
      maxDelayMs: 3_600,
      minDelayMs: 1,
      spanMs: 86_400,
    });
  });

  it.each([
    [{ spanMs: 1_000 }, /option "spanMs" must be a whole number from 60000/],
    [{ baseDelayMs: 10_000, maxDelayMs: 5_000 }, /option "maxDelayMs" must be at least baseDelayMs/],
    [{ minDelayMs: 6_000 }, /option "minDelayMs" must be at most baseDelayMs/],
    [{ scale: 0 }, /option "scale" must be a number from 0.000001 to 1/],
    [{ scale: 2 }, /option "scale"/],
    [{ spanMS: 1 }, /option "spanMS" is not an option of createWebhookSchedule \(did you mean "spanMs"\?\)/],
  ])('refuses %o', (options, message) => {
    expect(() => createWebhookSchedule(options as never)).toThrow(TypeError);
    expect(() => createWebhookSchedule(options as never)).toThrow(message);
  });
});

describe('the test scale', () => {
  it.each([
    ['0.0001', 0.0001],
    ['1', 1],
    ['0.000001', 0.000_001],
    ['0.5', 0.5],
    [undefined, undefined],
    ['', undefined],
    ['0', undefined],
    ['0.0000001', undefined],
    ['1.5', undefined],
    ['1e-4', undefined],
    ['.001', undefined],
    [' 0.1', undefined],
    ['-0.1', undefined],
  ])('%s reads as %s', (text, scale) => {
    expect(webhookTestScale(text)).toBe(scale);
  });

  it('is unset in this test run', () => {
    expect(DEFAULT_WEBHOOK_SCHEDULE).toEqual(WEBHOOK_SCHEDULE_DEFAULTS);
  });

  const tempDir = useTempDirs('sess-mcp-wake-scale-');
  it('scales the default schedule of a process started with SESS_MCP_TEST_WEBHOOK_SCALE', async () => {
    const dir = await tempDir();
    const script = await bundleForNode('src/faces/wake/webhook-schedule.ts', join(dir, 'schedule.mjs'), {
      footer: { js: 'console.log(JSON.stringify(DEFAULT_WEBHOOK_SCHEDULE));' },
    });
    const run = (scale: string) =>
      JSON.parse(
        execFileSync(process.execPath, [script], {
          env: { ...process.env, SESS_MCP_TEST_WEBHOOK_SCALE: scale },
          encoding: 'utf8',
        }),
      );
    expect(run('0.0001')).toEqual({ baseDelayMs: 1, maxDelayMs: 360, minDelayMs: 1, spanMs: 8_640 });
    expect(run('1e-4')).toEqual(WEBHOOK_SCHEDULE_DEFAULTS);
  });
});
