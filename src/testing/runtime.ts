/**
 * {@link startLocalSess}: start the local Sess runtime — the model, its HTTP listener on a real
 * `node:http` server, the fault queue and the receipt keys — and hand back the {@link LocalSess}
 * a test drives it with: inspection without counted requests, answering as a person would,
 * workspaces and keys, waits in progress, and close.
 *
 * Options are checked with the package's one option helper, so a bad one fails at once with
 * `startLocalSess: option "<name>" <rule>.` It logs nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type OptionReader, readOptions } from '../core/contract/options.js';
import { SESS_ID_RULE } from '../core/contract/rules.js';
import type { Answer, Surface } from '../core/model/surface.js';
import type { WireAskView, WireSessionView } from '../sess/wire-reader.js';
import { emptyCounts } from './api-routes.js';
import { createLocalClock, type LocalClock, type LocalClockOptions } from './clock.js';
import { LocalFaults } from './faults.js';
import { createRequestListener } from './http.js';
import { LocalKeys } from './keys.js';
import { LocalModel } from './model.js';
import { answerToForm } from './page/index.js';
import { DEFAULT_PLAN, type LocalPlan, type LocalWorkspaceStats } from './records.js';
import { type LocalWithdrawal, WITHDRAWAL_RULE } from './withdrawals.js';

/** Options of {@link startLocalSess}. */
export interface LocalSessOptions {
  /** Interface to listen on. Anything but a loopback address exposes the runtime. @default '127.0.0.1' */
  host?: string;
  /** Port. @default 0 (a random free port) */
  port?: number;
  /** Start time and freezing of the clock. @default real time, running */
  clock?: LocalClockOptions;
  /** Plan limits of every workspace. @default {@link DEFAULT_PLAN} */
  plan?: Partial<LocalPlan>;
  /** Receipt issuer (`iss`). @default the origin */
  issuer?: string;
  /** Send `Sess-Workspace-Id` on responses; `false` imitates a runtime that does not. @default true */
  workspaceHeader?: boolean;
  /**
   * Whether `POST /v1/sessions/{id}/withdraw` and `POST /v1/asks/{id}/close` (Sess v1.4) are
   * offered. `'not_offered'` imitates a Sess before v1.4: both answer `404 not_found`, as any
   * unknown path does; `'method_not_allowed'` one that answers them `405 method_not_allowed`
   * (with an empty `Allow`). Either way nothing is withdrawn or closed, no request is counted for
   * them, and every other endpoint, the Sessions and Asks themselves included, works as always.
   *
   * @default 'offered'
   */
  withdrawal?: LocalWithdrawal;
  /** Id of the first workspace. @default random (`ws_…`) */
  workspaceId?: string;
  /** API key of the first workspace. @default random (`sk_local_…`) */
  apiKey?: string;
}

/** A workspace with one API key. */
export interface LocalWorkspace {
  workspaceId: string;
  apiKey: string;
}

/** What the page answered to a browser-like request. */
export interface PageResponse {
  /** HTTP status: `303` for an accepted post, `200` for a page, `409`/`410`/`422`/`404` for refusals. */
  status: number;
  /** `Location` of a redirect (a path), when there was one. */
  location?: string;
  /** The HTML (empty for a redirect). */
  html: string;
  /** The cookie set by an Ask start (`name=value`), when there was one. */
  cookie?: string;
}

/** A Session as the runtime holds it: its wire view plus the Surface of every revision. */
export interface LocalSessionSnapshot {
  view: WireSessionView;
  /** Surface of each revision, index = revision − 1. */
  surfaces: Surface[];
  /** The Ask and respondent ids for an Ask respondent's Session. */
  ask?: { askId: string; respondentId: string };
}

/** Request counters (`sess.stats`). */
export interface LocalStats {
  /** Counters of one workspace (default: the first). */
  of(workspaceId?: string): LocalWorkspaceStats;
  /** API calls per endpoint, and `page` for answer-page requests, since start. */
  readonly requests: Readonly<Record<string, number>>;
}

/** A running local Sess runtime. */
export interface LocalSess {
  /** `http://127.0.0.1:<port>`: the API origin and the origin of every link. */
  readonly origin: string;
  /** API key of the first workspace. */
  readonly apiKey: string;
  /** The first workspace. */
  readonly workspaceId: string;
  /** The clock links expire by. */
  readonly clock: LocalClock;
  /** Fault injection per endpoint. */
  readonly faults: LocalFaults;
  /** Receipt signing keys: rotate, remove, sign. */
  readonly keys: LocalKeys;
  /** Counters. */
  readonly stats: LocalStats;
  /** Inspect Sessions (never through the API, so no request is counted). */
  readonly sessions: {
    get(sessionId: string): LocalSessionSnapshot | undefined;
    /** The Session a link (`human_url`) opens. */
    byUrl(humanUrl: string): LocalSessionSnapshot | undefined;
    list(workspaceId?: string): LocalSessionSnapshot[];
  };
  /** Inspect Asks. */
  readonly asks: {
    get(askId: string): WireAskView | undefined;
    list(workspaceId?: string): WireAskView[];
  };
  /** Create another workspace with its own API key and signing key. */
  createWorkspace(options?: { workspaceId?: string; apiKey?: string }): Promise<LocalWorkspace>;
  /** Add an API key to a workspace (default: the first). */
  createApiKey(workspaceId?: string): string;
  /** Revoke an API key: it gets `401` from then on. */
  revokeApiKey(apiKey: string): void;
  /**
   * Answer as a person would: post exactly what a browser posts for `answer` (through the page's
   * form encoding) to the link, at the Session's current revision unless `revision` is given.
   * For an Ask respondent pass the respondent's own link.
   */
  submitAnswer(humanUrl: string, answer: Answer, options?: { revision?: number }): Promise<PageResponse>;
  /** Press "ask for more time" on a lapsed link. */
  extend(humanUrl: string): Promise<PageResponse>;
  /** `GET` a page (a Session link, an Ask link, any path) as a browser with `cookie` would. */
  openPage(url: string, options?: { cookie?: string }): Promise<PageResponse>;
  /**
   * Start one respondent on an Ask link as a new browser would (posting `name` when the Ask
   * wants one). Returns the respondent's own link on success.
   */
  startRespondent(askUrl: string, options?: { name?: string }): Promise<PageResponse & { humanUrl?: string }>;
  /** Waits in progress (on one Session, or all): API long-polls, and the watch of every open waiting page. */
  pendingWaits(sessionId?: string): number;
  /** Resolves once at least `count` waits are in progress on `sessionId` (or on all Sessions). */
  whenWaiting(sessionId?: string, count?: number): Promise<void>;
  /**
   * Call `listener` each time an answer is accepted, synchronously, right after it is committed
   * (its receipt signed) and the waits on its Session are woken, before the answer page's post
   * is answered: for timing what happens after an answer exists. Returns a function that removes
   * the listener. What a listener throws is ignored.
   */
  onAnswer(listener: (sessionId: string, revision: number) => void): () => void;
  /** Stop the server, end every wait and drop every connection. */
  close(): Promise<void>;
}

/** The options of {@link startLocalSess}, checked, with their defaults filled in. */
interface CheckedOptions {
  host: string;
  port: number;
  clock: LocalClockOptions;
  plan: LocalPlan;
  issuer: string | undefined;
  workspaceHeader: boolean;
  withdrawal: LocalWithdrawal;
  workspaceId: string | undefined;
  apiKey: string | undefined;
}

/** How long the runtime keeps an idle kept-alive connection open. */
const KEEP_ALIVE_MS = 65_000;
/** The idle time it advertises (`Keep-Alive: timeout=…`), a minute less: clients close first. */
const KEEP_ALIVE_HINT = 'timeout=5';

const PLAN_MINIMUM: Record<keyof LocalPlan, number> = {
  maxExpiresIn: 30,
  maxOpenSessions: 1,
  maxRespondents: 1,
};

/** An object option (or `undefined`), as a plain record. */
function objectOption(read: OptionReader, name: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    read.fail(name, 'must be an object');
  return value as Record<string, unknown>;
}

function checkPlan(read: OptionReader, value: unknown): LocalPlan {
  const plan = { ...DEFAULT_PLAN };
  for (const [name, limit] of Object.entries(objectOption(read, 'plan', value))) {
    if (!Object.hasOwn(PLAN_MINIMUM, name)) {
      read.fail(`plan.${name}`, `is not a plan limit (${Object.keys(PLAN_MINIMUM).join(', ')})`);
    }
    const min = PLAN_MINIMUM[name as keyof LocalPlan];
    if (limit === undefined) continue;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < min) {
      read.fail(`plan.${name}`, `must be a whole number of at least ${min}`);
    }
    plan[name as keyof LocalPlan] = limit as number;
  }
  return plan;
}

function checkClock(read: OptionReader, value: unknown): LocalClockOptions {
  const clock = objectOption(read, 'clock', value);
  const start = clock.start;
  if (start !== undefined) {
    const ms =
      start instanceof Date
        ? start.getTime()
        : typeof start === 'number'
          ? start
          : typeof start === 'string'
            ? Date.parse(start)
            : Number.NaN;
    if (!Number.isFinite(ms))
      read.fail('clock.start', 'must be a valid time (a Date, epoch milliseconds or a date string)');
  }
  const frozen = read.boolean('clock.frozen', clock.frozen, false);
  return start === undefined ? { frozen } : { start: start as Date | number | string, frozen };
}

function checkOptions(options: LocalSessOptions | undefined): CheckedOptions {
  const read = readOptions('startLocalSess', options, true);
  const o: LocalSessOptions = options ?? {};
  const apiKey = read.optionalString('apiKey', o.apiKey);
  // A key with spaces or non-ASCII characters could never be sent as a bearer token.
  if (apiKey !== undefined && !/^[\x21-\x7e]{1,256}$/.test(apiKey)) {
    read.fail('apiKey', 'must be 1 to 256 printable ASCII characters without spaces');
  }
  return {
    host: read.optionalString('host', o.host) ?? '127.0.0.1',
    port: read.integer('port', o.port, { min: 0, max: 65_535 }, 0),
    clock: checkClock(read, o.clock),
    plan: checkPlan(read, o.plan),
    issuer: read.optionalString('issuer', o.issuer),
    workspaceHeader: read.boolean('workspaceHeader', o.workspaceHeader, true),
    withdrawal:
      (read.optionalRule('withdrawal', o.withdrawal, WITHDRAWAL_RULE) as LocalWithdrawal | undefined) ??
      'offered',
    workspaceId: read.optionalRule('workspaceId', o.workspaceId, SESS_ID_RULE),
    apiKey,
  };
}

/**
 * Start a local Sess runtime.
 *
 * @example
 * ```ts source="examples/snippets/testing.examples.ts#startLocalSess"
 * const sess = await startLocalSess();
 * const res = await fetch(`${sess.origin}/v1/sessions`, {
 *   method: 'POST',
 *   headers: {
 *     authorization: `Bearer ${sess.apiKey}`,
 *     'content-type': 'application/json',
 *     'idempotency-key': 'k1',
 *   },
 *   body: JSON.stringify({ interaction: surface }),
 * });
 * const session = (await res.json()) as { human_url: string };
 * await sess.submitAnswer(session.human_url, { action: 'approve', values: {} });
 * await sess.close();
 * ```
 */
export async function startLocalSess(options?: LocalSessOptions): Promise<LocalSess> {
  const checked = checkOptions(options);
  const clock = createLocalClock(checked.clock);
  let firstWorkspace = '';
  const keys = new LocalKeys(() => firstWorkspace);
  const model = new LocalModel({
    clock,
    keys,
    plan: checked.plan,
    ...(checked.issuer === undefined ? {} : { issuer: checked.issuer }),
  });
  const first = await model.createWorkspace(checked.workspaceId, checked.apiKey);
  firstWorkspace = first.workspaceId;
  const faults = new LocalFaults();
  const counts = emptyCounts();

  const unknownKids = new Map<string, string>();
  let foreign: string | undefined;
  const listener = createRequestListener({
    model,
    faults,
    counts,
    workspaceHeader: checked.workspaceHeader,
    withdrawal: checked.withdrawal,
    tamperKeys: {
      async unknownKid(ws) {
        let kid = unknownKids.get(ws);
        if (kid === undefined) {
          kid = await keys.createUnpublished(ws || firstWorkspace);
          unknownKids.set(ws, kid);
        }
        return kid;
      },
      async foreignKid(ws) {
        if (foreign === undefined || foreign === ws) {
          const other = [...model.workspaces.keys()].find((id) => id !== ws);
          foreign = other ?? (await model.createWorkspace()).workspaceId;
        }
        return keys.activeKid(foreign);
      },
    },
  });

  // Every response advertises a shorter idle time than the server keeps (`KEEP_ALIVE_HINT`): a
  // client retires an idle socket on the advertised figure, so one whose event loop lags by
  // seconds never sends its next request onto a socket the server has just closed.
  const server: Server = createServer((req, res) => {
    res.setHeader('keep-alive', KEEP_ALIVE_HINT);
    listener(req, res);
  });
  // Long-polls hold a request open for up to 45 s; never let Node's own timers cut them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep accept backlog: thousands of agents may open their long-polls at the same moment
    // (Node's default of 511 drops connections there, which the client reports as unavailable).
    server.listen({ port: checked.port, host: checked.host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${host}:${address.port}`;
  model.origin = origin;

  const snapshot = (s: ReturnType<typeof model.sessions.get>): LocalSessionSnapshot | undefined => {
    if (s === undefined) return undefined;
    const out: LocalSessionSnapshot = { view: model.sessionView(s), surfaces: structuredClone(s.surfaces) };
    if (s.ask) out.ask = { ...s.ask };
    return out;
  };
  const tokenOf = (humanUrl: string, kind: 's' | 'a'): string | undefined => {
    try {
      const url = new URL(humanUrl, origin);
      const m = new RegExp(`^/${kind}/([A-Za-z0-9_-]+)$`).exec(url.pathname);
      return m?.[1];
    } catch {
      return undefined;
    }
  };
  const pageRequest = async (path: string, init: RequestInit): Promise<PageResponse> => {
    const res = await fetch(new URL(path, origin), { ...init, redirect: 'manual' });
    const html = await res.text();
    const out: PageResponse = { status: res.status, html };
    const location = res.headers.get('location');
    if (location !== null) out.location = location;
    const cookie = res.headers.get('set-cookie');
    if (cookie !== null) out.cookie = cookie.split(';')[0]!;
    return out;
  };

  let closing: Promise<void> | undefined;
  const sess: LocalSess = {
    origin,
    apiKey: first.apiKey,
    workspaceId: first.workspaceId,
    clock,
    faults,
    keys,
    stats: {
      of: (workspaceId = firstWorkspace) => ({ ...model.stats(workspaceId) }),
      get requests() {
        return { ...counts };
      },
    },
    sessions: {
      get: (id) => snapshot(model.sessions.get(id)),
      byUrl: (humanUrl) => {
        const token = tokenOf(humanUrl, 's');
        return token === undefined ? undefined : snapshot(model.sessionTokens.get(token));
      },
      list: (workspaceId) =>
        [...model.sessions.values()]
          .filter((s) => workspaceId === undefined || s.workspaceId === workspaceId)
          .map((s) => snapshot(s)!),
    },
    asks: {
      get: (id) => {
        const a = model.asks.get(id);
        return a && model.askView(a);
      },
      list: (workspaceId) =>
        [...model.asks.values()]
          .filter((a) => workspaceId === undefined || a.workspaceId === workspaceId)
          .map((a) => model.askView(a)),
    },
    createWorkspace: (opts = {}) => model.createWorkspace(opts.workspaceId, opts.apiKey),
    createApiKey(workspaceId = firstWorkspace) {
      if (!model.workspaces.has(workspaceId)) throw new TypeError('createApiKey: no such workspace');
      const key = `sk_local_${crypto.randomUUID().replace(/-/g, '')}`;
      model.apiKeys.set(key, workspaceId);
      return key;
    },
    revokeApiKey(apiKey) {
      model.apiKeys.delete(apiKey);
    },
    async submitAnswer(humanUrl, answer, opts = {}) {
      const token = tokenOf(humanUrl, 's');
      const s = token === undefined ? undefined : model.sessionTokens.get(token);
      if (s === undefined) throw new TypeError('submitAnswer: not a Session link of this runtime');
      const revision = opts.revision ?? s.revision;
      const surface = s.surfaces[revision - 1] ?? s.surfaces[s.revision - 1]!;
      return pageRequest(`/s/${s.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: answerToForm(surface, answer, revision).toString(),
      });
    },
    async extend(humanUrl) {
      const token = tokenOf(humanUrl, 's');
      if (token === undefined) throw new TypeError('extend: not a Session link of this runtime');
      return pageRequest(`/s/${token}/extend`, { method: 'POST' });
    },
    openPage(url, opts = {}) {
      return pageRequest(url, opts.cookie === undefined ? {} : { headers: { cookie: opts.cookie } });
    },
    async startRespondent(askUrl, opts = {}) {
      const token = tokenOf(askUrl, 'a');
      if (token === undefined) throw new TypeError('startRespondent: not an Ask link of this runtime');
      const res =
        opts.name === undefined
          ? await pageRequest(`/a/${token}`, {})
          : await pageRequest(`/a/${token}`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ name: opts.name }).toString(),
            });
      return res.status === 303 && res.location
        ? { ...res, humanUrl: new URL(res.location, origin).href }
        : res;
    },
    pendingWaits: (sessionId) => model.waits.pending(sessionId),
    whenWaiting(sessionId, count = 1) {
      return new Promise((resolve) => {
        if (model.waits.pending(sessionId) >= count) return resolve();
        const off = model.waits.onStarted(() => {
          if (model.waits.pending(sessionId) >= count) {
            off();
            resolve();
          }
        });
      });
    },
    onAnswer(listener) {
      const own = (sessionId: string, revision: number) => {
        try {
          listener(sessionId, revision);
        } catch {
          // A listener only observes: the answer is committed whatever it does.
        }
      };
      model.answerListeners.add(own);
      return () => {
        model.answerListeners.delete(own);
      };
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        model.waits.endAll();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
  return sess;
}
