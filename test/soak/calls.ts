/**
 * The load generator's MCP side: one real client (`@modelcontextprotocol/client`, the 2026-07-28
 * negotiation, as `connectModern` makes it) per lane, through the balancer, with a `fetch` that
 * notes which instance served the call (its `x-soak-pid` header). Every attempt is logged (tool,
 * times, outcome, pid). An agent repeats a refused or failed call with the same arguments
 * ({@link persist}), so the identical-call rules are exercised as a real agent would.
 *
 * The log keeps error codes and timings only: never a handle, link, token or answer value.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Outcome, outcomeOf, type ToolResultLike } from '../support/outcome.js';

/** One attempt of a tool call through the balancer. */
export interface CallRecord {
  tool: string;
  /** A `sess_response` on an interaction whose answer the agent already read. */
  repeat: boolean;
  startedAt: number;
  endedAt: number;
  ok: boolean;
  /** `transport` (no tool result: refused, reset, a 5xx of the balancer) or the tool's error code. */
  failure?: string;
  /** The instance process that answered, when one did. */
  pid?: number;
}

/** Codes an agent repeats the identical call on (besides every error flagged `retryable`). */
const REPEATED_CODES = new Set(['OUTCOME_UNKNOWN', 'SESS_UNAVAILABLE', 'STATE_STORE_ERROR']);

/** A tool result, or a failure below MCP. */
export type Attempt = { kind: 'result'; outcome: Outcome } | { kind: 'transport' };

/** One agent lane: a client of one principal, calling one tool at a time. */
export class Lane {
  #client: Client | undefined;
  #pid: number | undefined;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly log: CallRecord[],
  ) {}

  async #connected(): Promise<Client> {
    if (this.#client !== undefined) return this.#client;
    const client = new Client(
      { name: 'sess-soak-agent', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    const fetchNoting = async (input: string | URL, init?: RequestInit) => {
      const response = await fetch(input, init);
      const pid = Number(response.headers.get('x-soak-pid'));
      if (pid > 0) this.#pid = pid;
      return response;
    };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(this.url), {
        requestInit: { headers: { authorization: `Bearer ${this.token}` } },
        fetch: fetchNoting,
      }),
    );
    this.#client = client;
    return client;
  }

  /** One attempt, logged. */
  async attempt(tool: string, args: Record<string, unknown>, repeat = false): Promise<Attempt> {
    const startedAt = Date.now();
    this.#pid = undefined;
    let attempt: Attempt;
    try {
      const client = await this.#connected();
      const result = await client.callTool({ name: tool, arguments: args });
      attempt = { kind: 'result', outcome: outcomeOf(result as ToolResultLike) };
    } catch {
      // The next attempt connects again: the old client may be half-way through a dead exchange.
      const client = this.#client;
      this.#client = undefined;
      void client?.close().catch(() => {});
      attempt = { kind: 'transport' };
    }
    const record: CallRecord = { tool, repeat, startedAt, endedAt: Date.now(), ok: false };
    if (attempt.kind === 'transport') record.failure = 'transport';
    else if (attempt.outcome.ok) record.ok = true;
    else record.failure = attempt.outcome.error.code;
    if (this.#pid !== undefined) record.pid = this.#pid;
    this.log.push(record);
    return attempt;
  }

  async close(): Promise<void> {
    await this.#client?.close().catch(() => {});
    this.#client = undefined;
  }
}

/** What {@link persist} ends with: the tool's outcome, or giving up after `patienceMs`. */
export type Persisted = Outcome | { ok: false; gaveUp: true };

/**
 * Call until the tool answers with something an agent would not repeat: a transport failure and
 * the codes an agent repeats are tried again, the same arguments, after a backoff (100 ms doubling
 * to 2 s), for at most `patienceMs`. `onFailed` is called for each attempt tried again.
 */
export async function persist(
  lane: Lane,
  tool: string,
  args: Record<string, unknown>,
  options: { repeat?: boolean; patienceMs?: number; onFailed?: () => void } = {},
): Promise<Persisted> {
  const giveUpAt = Date.now() + (options.patienceMs ?? 120_000);
  for (let n = 0; ; n++) {
    const attempt = await lane.attempt(tool, args, options.repeat ?? false);
    if (attempt.kind === 'result') {
      const { outcome } = attempt;
      if (outcome.ok || !(outcome.error.retryable || REPEATED_CODES.has(outcome.error.code))) return outcome;
    }
    options.onFailed?.();
    if (Date.now() > giveUpAt) return { ok: false, gaveUp: true };
    await sleep(Math.min(2_000, 100 * 2 ** n));
  }
}
