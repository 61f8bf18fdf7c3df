/**
 * Example: a Worker (workerd) that keeps its handles in PostgreSQL with `pg`, the durable store a
 * Worker needs because its isolates come and go. `pg` loads through workerd's Node compatibility
 * (`nodejs_compat`, on by default from compatibility date 2026-08-04; with wrangler, add it to
 * `compatibility_flags` for an older date).
 *
 * workerd does not let one request use a socket that another request opened: an isolate-wide
 * `pg.Pool` serves the first request and then hangs. So this `PoolLike` opens one connection per
 * store operation and closes it after; in production, put a connection pooler (such as
 * Cloudflare Hyperdrive) between the Worker and the database so that stays cheap.
 *
 * A Worker has no life between requests, so a person who answers after the agent stopped
 * waiting is noticed by a Cron Trigger: `scheduled` runs one bounded `sweep` of the watcher,
 * which reads each waiting interaction once, saves the verified answers, and hands each event to
 * `resumeAgent`, and to a signed webhook when `SESS_WEBHOOK_URL` is set (add
 * `"triggers": { "crons": ["* * * * *"] }` to the wrangler config).
 *
 * The handle table must exist: run the store's `migrate()` once from your deploy step. The
 * bearer-token check stands in for a real OAuth resource server, as in `fetch-edge.ts`. It
 * imports the package by its name, as an application does.
 */

import type { HttpBinding, WakeEvent } from '@sess.si/mcp';
import {
  createSessMcpHttpHandler,
  createSessMcpWatcher,
  type SessMcpHttpHandler,
  type SessMcpWatcher,
  type SessMcpWatcherOptions,
} from '@sess.si/mcp/http';
import {
  createPostgresHandleStore,
  type PoolLike,
  type PostgresHandleStore,
} from '@sess.si/mcp/store/postgres';
import pg from 'pg';

/** The bindings this Worker reads. */
export interface PgWorkerEnv {
  /** `postgres://…` of the database (a Hyperdrive binding's `connectionString` fits). */
  DATABASE_URL: string;
  SESS_API_KEY: string;
  /** The Sess workspace `SESS_API_KEY` belongs to (its id; the handler checks the key against it). */
  SESS_WORKSPACE_ID: string;
  MCP_BEARER_TOKEN: string;
  /** @default 'https://api.sess.si' */
  SESS_API_ORIGIN?: string;
  /** The handle table. @default 'sess_mcp_handles' */
  HANDLE_TABLE?: string;
  /** Testing only: `'1'` allows a local `http://127.0.0.1` Sess runtime. */
  SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST?: string;
  /** The public host name of this endpoint. */
  MCP_ALLOWED_HOST: string;
  /** Where each event is also sent as a signed webhook (`https://…`); unset: none. */
  SESS_WEBHOOK_URL?: string;
  /** The webhook's `whsec_…` secrets, space-separated (two during a rotation). */
  SESS_WEBHOOK_SECRET?: string;
}

/** A `PoolLike` that opens a connection for each query or transaction and closes it after. */
export function connectionPerCall(connectionString: string): PoolLike {
  const open = async () => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    return client;
  };
  return {
    async query(text, values) {
      const client = await open();
      try {
        return await client.query(text, values);
      } finally {
        await client.end();
      }
    },
    async connect() {
      const client = await open();
      return {
        query: (text, values) => client.query(text, values),
        release: () => {
          void client.end();
        },
      };
    },
    end: () => Promise.resolve(),
  };
}

/** Compare two strings in time that depends only on their length. */
function sameSecret(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

/** The one principal of this example: its grant as `authenticate` gives it. */
const OWNER = { principalId: 'owner', clientId: 'edge-example', grantId: 'edge-grant', grantGeneration: '1' };

let store: PostgresHandleStore | undefined;
let handler: SessMcpHttpHandler | undefined;
let watcher: SessMcpWatcher | undefined;

/** The store of this isolate, shared by the handler and the watcher. */
function storeOf(env: PgWorkerEnv): PostgresHandleStore {
  store ??= createPostgresHandleStore({
    pool: connectionPerCall(env.DATABASE_URL),
    ...(env.HANDLE_TABLE === undefined ? {} : { table: env.HANDLE_TABLE }),
  });
  return store;
}

function build(env: PgWorkerEnv): SessMcpHttpHandler {
  const store = storeOf(env);
  return createSessMcpHttpHandler({
    authenticate(request) {
      const header = request.headers.get('authorization') ?? '';
      const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
      if (env.MCP_BEARER_TOKEN.length < 16 || !sameSecret(token, env.MCP_BEARER_TOKEN)) return undefined;
      return {
        workspaceId: env.SESS_WORKSPACE_ID,
        ...OWNER,
        scopes: ['sess'],
        credential: () => env.SESS_API_KEY,
      };
    },
    handleStore: (binding) => store.forBinding(binding),
    allowedHosts: [env.MCP_ALLOWED_HOST],
    requiredScopes: ['sess'],
    ...(env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: env.SESS_API_ORIGIN }),
    ...(env.SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST === '1' ? { allowInsecureLocalhost: true } : {}),
  });
}

/**
 * Hand an interaction event to whatever resumes the agent (a queue, a workflow). The event is a
 * reference only: the agent reads the answer with `sess_response`. A throw is retried later.
 */
async function resumeAgent(event: WakeEvent): Promise<void> {
  console.log(`sess-mcp: ${event.type} at revision ${event.revision}`);
}

/** The Sess key of a binding now: this example's one grant, else none (revoked, unknown). */
function credentialFor(env: PgWorkerEnv, binding: HttpBinding): string | undefined {
  const current =
    binding.workspaceId === env.SESS_WORKSPACE_ID &&
    binding.principalId === OWNER.principalId &&
    binding.clientId === OWNER.clientId &&
    binding.grantId === OWNER.grantId &&
    binding.grantGeneration === OWNER.grantGeneration;
  return current ? env.SESS_API_KEY : undefined;
}

/**
 * The webhook of this Worker, if one is set. workerd's `fetch` cannot show the address it
 * connects to, so the sender needs the receiver's host name as its allowlist.
 */
function webhookOf(env: PgWorkerEnv): SessMcpWatcherOptions['webhook'] {
  if (env.SESS_WEBHOOK_URL === undefined) return undefined;
  return {
    url: env.SESS_WEBHOOK_URL,
    secrets: (env.SESS_WEBHOOK_SECRET ?? '').split(' ').filter((secret) => secret !== ''),
    allowedHosts: URL.canParse(env.SESS_WEBHOOK_URL) ? [new URL(env.SESS_WEBHOOK_URL).hostname] : [],
  };
}

function buildWatcher(env: PgWorkerEnv): SessMcpWatcher {
  const webhook = webhookOf(env);
  return createSessMcpWatcher({
    handleStores: storeOf(env),
    credentialFor: (binding) => credentialFor(env, binding),
    onEvent: resumeAgent,
    ...(webhook === undefined ? {} : { webhook }),
    ...(env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: env.SESS_API_ORIGIN }),
    ...(env.SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST === '1' ? { allowInsecureLocalhost: true } : {}),
  });
}

/** How long one sweep may take: well inside a Cron Trigger's time. */
const SWEEP_BUDGET_MS = 25_000;

/** The part of a Worker's `ExecutionContext` this module uses. */
interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

export default {
  /** workerd calls this for every request; `/mcp` is the MCP endpoint. */
  fetch(request: Request, env: PgWorkerEnv): Promise<Response> {
    if (new URL(request.url).pathname !== '/mcp')
      return Promise.resolve(new Response('Not Found', { status: 404 }));
    handler ??= build(env);
    return handler.fetch(request);
  },
  /** A Cron Trigger: one bounded sweep of the waiting interactions. */
  scheduled(_controller: unknown, env: PgWorkerEnv, ctx: WaitUntil): void {
    watcher ??= buildWatcher(env);
    ctx.waitUntil(
      watcher.sweep({ budgetMs: SWEEP_BUDGET_MS }).then((result) => {
        console.log(`sess-mcp sweep ${JSON.stringify(result)}`);
      }),
    );
  },
};
