/**
 * The `health` option of `createSessMcpHttpHandler`: the store whose readiness gates the
 * instance, the two paths the handler answers, and the host's `authorize` for the details; and
 * its check at construction (a `TypeError` naming `health.<key>`).
 *
 * It answers no request (`health.ts` does) and reads no store.
 */
import type { OptionReader } from '../core/contract/options.js';
import { optionNames } from '../core/contract/options.js';
import type { HandleStoreFactory } from '../index.js';

/** The part of a store a readiness check uses: `HandleStoreFactory.ready`. */
type ReadyStore = Required<Pick<HandleStoreFactory, 'ready'>>;

/** The `health` option of `createSessMcpHttpHandler`. */
export interface SessMcpHealthOptions {
  /**
   * The store whose readiness gates this instance: the backend `handleStore` hands views of (the
   * memory, file and PostgreSQL stores of this package all have `ready()`). Ready means it
   * answered within 1 s and its layout is current (`migrate()` has run). A store without
   * `ready()` is refused.
   */
  store: Pick<HandleStoreFactory, 'ready'>;
  /**
   * The path `handler.fetch` and `handler.node` answer with readiness (`GET` or `HEAD`): `200`
   * `{"status":"ok"}` or `503` `{"status":"unavailable"}`. `false`: not answered (call
   * `handler.ready` from your own route).
   * @default '/healthz'
   */
  path?: string | false;
  /**
   * The path answered with liveness: always `200` `{"status":"ok"}`, touching nothing. `false`:
   * not answered (call `handler.live`).
   * @default '/livez'
   */
  livePath?: string | false;
  /**
   * Whether this readiness request may see the details (the store check's outcome and the
   * receipt key set's state). Called with the request's method, URL and headers; a throw, an
   * answer other than `true` or no answer within 1 s gives the plain `ok` or `unavailable`.
   * Without it, nobody sees the details.
   */
  authorize?(request: Request): boolean | Promise<boolean>;
}

/** The `health` option after its check. */
export interface ResolvedHealthOptions {
  store: ReadyStore | undefined;
  path: string | undefined;
  livePath: string | undefined;
  authorize: ((request: Request) => boolean | Promise<boolean>) | undefined;
}

/** The default readiness path. */
const DEFAULT_HEALTH_PATH = '/healthz';
/** The default liveness path. */
const DEFAULT_LIVE_PATH = '/livez';

const KNOWN_KEYS = optionNames<SessMcpHealthOptions>()('store', 'path', 'livePath', 'authorize');

/** An absolute path without query, fragment, space or control character, at most 256 characters. */
const PATH = /^\/[\x21-\x22\x24-\x3e\x40-\x7e]{0,255}$/;

function pathOf(read: OptionReader, option: string, value: unknown, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  if (value === false) return undefined;
  if (typeof value !== 'string' || !PATH.test(value)) {
    read.fail(option, 'must be false or a path starting with "/", without query, fragment or spaces');
  }
  return value as string;
}

/** The `health` option, checked; every part `undefined` when it is absent. */
export function readHealthOptions(read: OptionReader, value: unknown): ResolvedHealthOptions {
  if (value === undefined) {
    return { store: undefined, path: undefined, livePath: undefined, authorize: undefined };
  }
  const bag = read.bag('health', value, KNOWN_KEYS);
  const store = bag.store as Pick<HandleStoreFactory, 'ready'> | null | undefined;
  if (store === null || typeof store !== 'object' || typeof store.ready !== 'function') {
    read.fail('health.store', 'must be a store with ready() (the store handleStore hands views of)');
  }
  const path = pathOf(read, 'health.path', bag.path, DEFAULT_HEALTH_PATH);
  const livePath = pathOf(read, 'health.livePath', bag.livePath, DEFAULT_LIVE_PATH);
  if (path !== undefined && path === livePath) {
    read.fail('health.livePath', 'must differ from "health.path"');
  }
  const authorize = read.func<NonNullable<SessMcpHealthOptions['authorize']>>(
    'health.authorize',
    bag.authorize,
    true,
  );
  return { store: store as ReadyStore, path, livePath, authorize };
}
