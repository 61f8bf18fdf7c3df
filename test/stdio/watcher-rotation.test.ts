/**
 * The stdio watcher's turns: up to four waiting records keep a long-poll each; more share the four
 * polls with waits shortened in proportion (at least a second, never more than the ceiling).
 */
import { describe, expect, it } from 'vitest';
import { rotationWaitMs, WATCHER_CONCURRENCY } from '../../src/stdio/watcher.js';

describe('rotationWaitMs', () => {
  it.each([
    [45_000, 1, 45_000],
    [45_000, WATCHER_CONCURRENCY, 45_000],
    [45_000, 8, 22_500],
    [45_000, 100, 1_800],
    [45_000, 1_000, 1_000],
    [300, 100, 300],
  ])('a ceiling of %i ms over %i records: %i ms a poll', (ceiling, watched, expected) => {
    expect(rotationWaitMs(ceiling, watched)).toBe(expected);
  });

  it('keeps the upstream calls near four per ceiling, however many records wait', () => {
    for (const watched of [5, 10, 50, 100]) {
      const perCeiling = (45_000 / rotationWaitMs(45_000, watched)) * WATCHER_CONCURRENCY;
      expect(perCeiling).toBeLessThanOrEqual(WATCHER_CONCURRENCY * 45);
      // Each record gets a turn about once per ceiling (more often when the floor of 1 s holds).
      expect((perCeiling / watched) * 45).toBeGreaterThanOrEqual(Math.min(45, (4 * 45) / watched) - 1);
    }
  });
});
