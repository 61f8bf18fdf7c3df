/**
 * Example: the webhook end of a hosted agent that `sess-mcp` wakes, as both recipes use it
 * (`wake-langgraph.ts`, `wake-openai-agents.ts`). A `node:http` endpoint that verifies every
 * request as a Standard Webhook with the `standardwebhooks` package, checks that its body is an
 * interaction event, drops an event it has seen (by `eventId`) or one that is not newer than the
 * last it handled for that handle (by `sequence`), and hands each new event to `onEvent` once.
 *
 * It never reads an answer from a webhook: the event is a reference (`eventId`, `type`, `handle`,
 * `revision`, `sequence`, `occurredAt`) and nothing more. The recipe resumes its paused run, and
 * the run calls `sess_response`, which returns the verified answer or says what happened.
 *
 * What it has seen lives in memory here; a hosted app keeps it beside its paused runs, so a
 * restart does not resume a run twice. The types both recipes share (how they start `sess-mcp`,
 * what they log, what the person decided) live here too. It imports the package by its name, as
 * an application does.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WakeEvent } from '@sess.si/mcp';
import { Webhook } from 'standardwebhooks';

/** How a recipe starts `sess-mcp` (its key, origin and state directory go in `env`). */
export interface SessMcpCommand {
  /** e.g. `process.execPath`. */
  command: string;
  /** e.g. `['node_modules/@sess.si/mcp/dist/bin/sess-mcp.js']`. */
  args?: string[];
  /** `SESS_API_KEY`, `SESS_MCP_STATE_DIR`, …; the recipe adds the webhook variables. */
  env: Record<string, string>;
}

/** The largest body a receiver reads: an event is a few hundred bytes. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * Why a request was refused (the log never holds more: a body or header could be anything).
 * `unavailable`: `onEvent` failed, and `sess-mcp` sends the event again later.
 */
export type WakeRefusal = 'method' | 'size' | 'signature' | 'body' | 'unavailable';

/**
 * What the recipes log: fixed words, handles, event ids and thread ids. Never a link, an answer
 * value, a key, a secret or a saved run state.
 */
export type WakeRecipeLog =
  | { event: 'webhook_refused'; reason: WakeRefusal }
  | { event: 'webhook_duplicate'; eventId: string }
  | { event: 'webhook_accepted'; eventId: string; type: string; handle: string }
  | { event: 'run_waiting'; run: string; handle: string }
  | { event: 'run_resumed'; run: string; eventId: string }
  | { event: 'run_verified'; run: string; handle: string; state: string }
  | { event: 'run_finished'; run: string; decision: RecipeDecision }
  | { event: 'run_failed'; run: string; error: string };

/**
 * What the person decided, as a recipe reads it from `sess_response`'s verified `response`:
 * `approve` only for the action `approve`; any other action is `reject`; `no_answer` when the
 * question ended without one (expired, withdrawn).
 */
export type RecipeDecision = 'approve' | 'reject' | 'no_answer';

/** Options of {@link startWakeReceiver}. */
export interface WakeReceiverOptions {
  /** The `whsec_…` secret `sess-mcp` signs with (`SESS_MCP_WEBHOOK_SECRET`). */
  secret: string;
  /**
   * Called once per new event. Resolve once the event is safely in your hands (the run to resume
   * is found, or the event is kept for a run that has not paused yet); reject to have `sess-mcp`
   * send it again later. Keep it short: an attempt has 15 s.
   */
  onEvent(event: WakeEvent): Promise<void>;
  /** @default 0 (any free port) */
  port?: number;
  /** @default '127.0.0.1' */
  hostname?: string;
  /** @default nothing is logged */
  log?: (line: WakeRecipeLog) => void;
}

/** A listening receiver. */
export interface WakeReceiver {
  /** `http://<hostname>:<port>/hooks/sess`. */
  url: string;
  close(): Promise<void>;
}

const EVENT_TYPES = new Set(['answered', 'ask.closed', 'withdrawn', 'expired', 'blocked']);

/** The event in a verified payload, or undefined when it is not one. */
function wakeEventOf(payload: unknown): WakeEvent | undefined {
  if (payload === null || typeof payload !== 'object') return undefined;
  const e = payload as Record<string, unknown>;
  const ok =
    typeof e.eventId === 'string' &&
    typeof e.type === 'string' &&
    EVENT_TYPES.has(e.type) &&
    typeof e.handle === 'string' &&
    Number.isSafeInteger(e.revision) &&
    Number.isSafeInteger(e.sequence) &&
    typeof e.occurredAt === 'string';
  return ok ? (payload as WakeEvent) : undefined;
}

/** The body of `req`, or undefined when it is longer than {@link MAX_BODY_BYTES}. */
async function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The request's headers as the verifier takes them (one value each). */
function headersOf(req: http.IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/**
 * Start a receiver. Status codes: `204` for an event taken (or one already seen), `401` when the
 * signature does not verify, `400` for a body that is no event, `413` for an oversized one, `405`
 * for anything but `POST`, `500` when `onEvent` failed (`sess-mcp` tries again with backoff).
 */
export async function startWakeReceiver(options: WakeReceiverOptions): Promise<WakeReceiver> {
  const verifier = new Webhook(options.secret);
  const log = options.log ?? (() => undefined);
  const seen = new Set<string>();
  const lastSequence = new Map<string, number>();

  async function receive(req: http.IncomingMessage): Promise<number> {
    if (req.method !== 'POST') return refuse(405, 'method');
    const body = await readBody(req);
    if (body === undefined) return refuse(413, 'size');
    let payload: unknown;
    try {
      // The signature covers the id, the timestamp (within 5 minutes) and the body.
      payload = verifier.verify(body, headersOf(req));
    } catch {
      return refuse(401, 'signature');
    }
    const event = wakeEventOf(payload);
    if (event === undefined) return refuse(400, 'body');
    if (seen.has(event.eventId) || event.sequence <= (lastSequence.get(event.handle) ?? 0)) {
      log({ event: 'webhook_duplicate', eventId: event.eventId });
      return 204;
    }
    // Marked before the hand-over, so a delivery that overlaps this one is a duplicate.
    seen.add(event.eventId);
    log({ event: 'webhook_accepted', eventId: event.eventId, type: event.type, handle: event.handle });
    try {
      await options.onEvent(event);
    } catch {
      seen.delete(event.eventId);
      return refuse(500, 'unavailable');
    }
    lastSequence.set(event.handle, Math.max(event.sequence, lastSequence.get(event.handle) ?? 0));
    return 204;
  }

  function refuse(status: number, reason: WakeRefusal): number {
    log({ event: 'webhook_refused', reason });
    return status;
  }

  const hostname = options.hostname ?? '127.0.0.1';
  const server = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/hooks/sess') {
      res.writeHead(404).end();
      return;
    }
    receive(req).then(
      (status) => res.writeHead(status).end(),
      () => res.writeHead(500).end(),
    );
  });
  server.listen(options.port ?? 0, hostname);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}/hooks/sess`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
