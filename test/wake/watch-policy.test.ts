/**
 * The polling rules both watchers run (`src/faces/wake/watch-policy.ts`), as tables: the share of
 * a gate cap a watcher takes, the arguments of a poll, the waits of records that take turns, how a
 * poll's failure is classified, when a record rests, and the backoff with Sess's `Retry-After`. The
 * watchers themselves are tested end to end (`test/stdio/wake.test.ts`, `test/http/watcher*.test.ts`).
 */
import { describe, expect, it } from 'vitest';
import { SessMcpError } from '../../src/core/contract/errors.js';
import { SessApiError, type VersionedRecord } from '../../src/core/contract/ports.js';
import {
  ASK_INTERVAL_MS,
  BACKOFF_MAX_MS,
  BACKOFF_MIN_MS,
  Backoff,
  FAILED_REST_MS,
  pollArgsOf,
  pollRecord,
  retryAfterOf,
  rotationWaitMs,
  WatchTimes,
  watcherSlots,
} from '../../src/faces/wake/watch-policy.js';
import { httpA, makeRecord } from '../store/fixtures.js';

const versioned = (kind: 'waiting' | 'ask_open' | 'answered', handle: string): VersionedRecord => ({
  version: 1,
  record: makeRecord(httpA, kind, { handle }),
});

describe('watch policy', () => {
  it.each([
    [1, 0],
    [2, 1],
    [8, 4],
    [9, 4],
    [256, 128],
  ])('a gate cap of %i leaves the watcher %i slots', (cap, slots) => {
    expect(watcherSlots(cap)).toBe(slots);
  });

  it('waits on a Session and reads an Ask', () => {
    expect(pollArgsOf(versioned('waiting', 'h1').record, 30_000)).toEqual({
      handle: 'h1',
      revision: 1,
      wait_ms: 30_000,
    });
    expect(pollArgsOf(versioned('ask_open', 'h2').record, 30_000)).toEqual({ handle: 'h2', revision: 1 });
  });

  it('classifies what a poll came to', async () => {
    const withCause = new SessMcpError('SESS_UNAVAILABLE', 'busy', {
      cause: new SessApiError('api', 'rate limited', { status: 429, retryAfterMs: 7_000 }),
    });
    const cases: [() => Promise<unknown>, unknown][] = [
      [async () => ({ state: 'waiting' }), { kind: 'read', state: 'waiting', changed: false }],
      [async () => ({ state: 'needs_resume' }), { kind: 'read', state: 'needs_resume', changed: false }],
      [async () => ({ state: 'answered' }), { kind: 'read', state: 'answered', changed: true }],
      [
        async () => Promise.reject(withCause),
        { kind: 'unavailable', code: 'SESS_UNAVAILABLE', retryAfterMs: 7_000 },
      ],
      [
        async () => Promise.reject(new SessMcpError('SESS_UNAVAILABLE', 'down')),
        { kind: 'unavailable', code: 'SESS_UNAVAILABLE' },
      ],
      [
        async () => Promise.reject(new SessMcpError('VERIFICATION_FAILED', 'forged')),
        { kind: 'failed', code: 'VERIFICATION_FAILED' },
      ],
      [async () => Promise.reject(new Error('not ours')), { kind: 'failed' }],
    ];
    for (const [response, outcome] of cases) {
      const engine = { response } as unknown as Parameters<typeof pollRecord>[0];
      expect(await pollRecord(engine, versioned('waiting', 'h'), 1_000)).toEqual(outcome);
    }
    expect(retryAfterOf(withCause)).toBe(7_000);
    expect(retryAfterOf(new Error('x', { cause: { retryAfterMs: -1 } }))).toBeUndefined();
  });

  it('rests an Ask after a read and a record after a failure for good; a waiting Session is due again at once', () => {
    const times = new WatchTimes();
    const now = 1_000_000;
    const session = versioned('waiting', 'a');
    const ask = versioned('ask_open', 'b');
    const failing = versioned('waiting', 'c');
    for (const { record } of [session, ask, failing]) {
      expect(times.isDue(record, now)).toBe(true);
      times.begin(record.handle);
      expect(times.isDue(record, now), 'being polled').toBe(false);
    }
    expect(times.running).toBe(3);
    times.end(session.record, { kind: 'read', state: 'waiting', changed: false }, now);
    times.end(ask.record, { kind: 'read', state: 'waiting', changed: false }, now);
    times.end(failing.record, { kind: 'failed', code: 'RECOVERY_BLOCKED' }, now);
    expect(times.running).toBe(0);
    expect(times.isDue(session.record, now)).toBe(true);
    expect(times.isDue(ask.record, now + ASK_INTERVAL_MS - 1)).toBe(false);
    expect(times.isDue(ask.record, now + ASK_INTERVAL_MS)).toBe(true);
    expect(times.isDue(failing.record, now + FAILED_REST_MS - 1)).toBe(false);
    expect(times.isDue(failing.record, now + FAILED_REST_MS)).toBe(true);
    expect(times.isDue(versioned('answered', 'd').record, now), 'not watched').toBe(false);
  });

  it.each([
    [45_000, 100, 128, 45_000],
    [45_000, 1_000, 128, 5_760],
    [45_000, 8, 4, 22_500],
    [45_000, 100_000, 128, 1_000],
    [300, 100, 4, 300],
  ])('a ceiling of %i ms over %i records and %i slots: %i ms a poll', (ceiling, watched, slots, expected) => {
    expect(rotationWaitMs(ceiling, watched, slots)).toBe(expected);
  });

  it('backs off doubling to a minute, never shorter than Retry-After, and starts over after a success', () => {
    const backoff = new Backoff();
    let now = 0;
    const pauses: number[] = [];
    for (let i = 0; i < 8; i++) {
      pauses.push(backoff.failed(now));
      now += backoff.pausedFor(now);
    }
    expect(pauses).toEqual([1, 2, 4, 8, 16, 32, 60, 60].map((s) => s * 1_000));
    expect(backoff.pausedFor(now)).toBe(0);
    backoff.succeeded();
    expect(backoff.failed(now)).toBe(BACKOFF_MIN_MS);
    // Polls in flight together failing during the pause: one outage, paused once.
    expect(backoff.failed(now + 10)).toBe(BACKOFF_MIN_MS - 10);
    expect(backoff.failed(now + 20, 90_000)).toBe(90_000);
    expect(backoff.pausedFor(now + 20)).toBe(90_000);
    now += 20 + 90_000;
    expect(backoff.failed(now), 'the delay doubled once').toBe(2 * BACKOFF_MIN_MS);
    expect(BACKOFF_MAX_MS).toBe(60_000);
  });
});
