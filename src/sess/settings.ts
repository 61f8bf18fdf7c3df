/**
 * The options the Sess client and the receipt verifier share (origin, `fetch`, clock, deadline and
 * the key-set cache's cooldown and maximum age), read once here through the one option helper, so
 * both factories refuse the same value with the same words and fill the same defaults.
 *
 * It names no factory (the caller's `OptionReader` does) and knows nothing of requests or receipts.
 */
import { MAX_TIMER_MS, type OptionReader } from '../core/contract/options.js';
import { type Clock, systemClock } from '../core/contract/ports.js';
import { validateSessOrigin } from './origin.js';

/** The client's own deadline for one Sess call (a wait gets its `timeoutMs` on top), in milliseconds. */
export const DEFAULT_SESS_CALL_TIMEOUT_MS = 30_000;

/** At most one key-set fetch per this many milliseconds, by default. */
export const DEFAULT_KEY_REFRESH_COOLDOWN_MS = 10_000;

/** How long a fetched key set is trusted before it is fetched again, by default (10 minutes). */
export const DEFAULT_KEY_SET_MAX_AGE_MS = 600_000;

/** The options both factories accept, as callers pass them. */
export interface ConnectionOptions {
  origin: string;
  allowInsecureLocalhost?: boolean;
  fetch?: typeof fetch;
  clock?: Clock;
  keyRefreshCooldownMs?: number;
  keySetMaxAgeMs?: number;
  requestTimeoutMs?: number;
}

/** {@link ConnectionOptions} checked, with defaults filled. */
export interface ConnectionSettings {
  /** The normalised origin. */
  origin: string;
  allowInsecureLocalhost: boolean;
  /** Calls the caller's `fetch` unbound: some runtimes refuse `fetch` with another `this`. */
  fetch: typeof fetch;
  clock: Clock;
  keyRefreshCooldownMs: number;
  keySetMaxAgeMs: number;
  requestTimeoutMs: number;
}

const DURATION = { min: 0, max: MAX_TIMER_MS };

/** Check the shared options of one factory; every failure is that factory's `TypeError`. */
export function readConnectionOptions(read: OptionReader, options: ConnectionOptions): ConnectionSettings {
  const allowInsecureLocalhost = read.boolean(
    'allowInsecureLocalhost',
    options.allowInsecureLocalhost,
    false,
  );
  let origin: string;
  try {
    origin = validateSessOrigin(options.origin, { allowInsecureLocalhost });
  } catch (error) {
    read.fail('origin', `is invalid: ${(error as Error).message.replace(/\.$/, '')}`);
  }
  const fetchImpl = read.func<typeof fetch>('fetch', options.fetch ?? globalThis.fetch);
  const clock = options.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    read.fail('clock', 'must have a now() method');
  }
  const keyRefreshCooldownMs = read.integer(
    'keyRefreshCooldownMs',
    options.keyRefreshCooldownMs,
    DURATION,
    DEFAULT_KEY_REFRESH_COOLDOWN_MS,
  );
  const keySetMaxAgeMs = read.integer(
    'keySetMaxAgeMs',
    options.keySetMaxAgeMs,
    { min: keyRefreshCooldownMs, max: MAX_TIMER_MS },
    Math.max(DEFAULT_KEY_SET_MAX_AGE_MS, keyRefreshCooldownMs),
  );
  const requestTimeoutMs = read.integer(
    'requestTimeoutMs',
    options.requestTimeoutMs,
    { min: 1, max: MAX_TIMER_MS },
    DEFAULT_SESS_CALL_TIMEOUT_MS,
  );
  return {
    origin,
    allowInsecureLocalhost,
    fetch: (input, init) => fetchImpl(input, init),
    clock,
    keyRefreshCooldownMs,
    keySetMaxAgeMs,
    requestTimeoutMs,
  };
}
