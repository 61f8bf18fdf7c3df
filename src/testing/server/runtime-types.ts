/**
 * The public types of the local Sess runtime: its options ({@link LocalSessOptions}) and the
 * {@link LocalSess} handle a test drives it with, with what it reports (snapshots, statistics, a
 * page's response). The runtime modules (`runtime.ts` and its parts) and the package entry import
 * them from here.
 *
 * Types only: nothing here starts, listens or checks anything.
 */
import type { Answer, Surface } from '../../core/model/surface.js';
import type { WireAskView, WireSessionView } from '../../sess/wire-reader.js';
import type { LocalClock, LocalClockOptions } from '../model/clock.js';
import type { LocalFaults } from '../model/faults.js';
import type { LocalKeys } from '../model/keys.js';
import type { LocalPlan, LocalWorkspaceStats } from '../model/records.js';
import type { LocalWithdrawal } from '../model/withdrawals.js';

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
   *
   * Rejects with an `AnswerRefusedError` (its `status` and the page's own messages) when the
   * answer is not accepted: an answer that does not fit the Surface (a wrong action, a value
   * that does not fit its field's schema) is refused with the page's messages before anything is
   * posted. With `expectStatus`, the answer is posted as it is and the call resolves only on that
   * status: for tests of what the page refuses.
   */
  submitAnswer(
    humanUrl: string,
    answer: Answer,
    options?: { revision?: number; expectStatus?: number },
  ): Promise<PageResponse>;
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
