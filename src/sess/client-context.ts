/**
 * What every operation of one Sess client shares: the {@link ClientContext} (the caller bound to
 * one credential, the connection settings, the trusted workspace, the receipt verifier and the
 * respondent Sessions read), and the two request shapes every operation sends — a create that
 * must answer 201 and a read that must answer 200.
 *
 * It builds no client (`client.ts` does) and decides nothing an answer must imply (the
 * operations in `session-calls.ts` and `ask-calls.ts` do).
 */
import type { SessCallOptions } from '../core/contract/ports.js';
import type { Caller, CallResult } from './calls.js';
import type { ReceiptAskContext, ReceiptVerifier } from './receipt.js';
import type { ConnectionSettings } from './settings.js';
import { HEADERS } from './wire.js';

/** One client's state and settings, as its operations see them. */
export interface ClientContext {
  /** Sends one authenticated call on the client's credential; remembers the workspace seen. */
  caller: Caller;
  connection: ConnectionSettings;
  /** The workspace the options named, if any. */
  expectedWorkspaceId: string | undefined;
  /** The workspace the credential must belong to, if given (`key-workspace.ts`). */
  credentialWorkspaceId: string | undefined;
  receipts: ReceiptVerifier;
  /** The Ask (and name) of each respondent Session this client read, for its receipt's claims. */
  respondents: Map<string, ReceiptAskContext>;
}

/** Create a Session or an Ask: a POST with an idempotency key that must answer 201. */
export function sendCreate(
  ctx: ClientContext,
  path: string,
  body: Record<string, unknown>,
  idempotencyKey: string,
  what: string,
  callOptions: SessCallOptions | undefined,
): Promise<CallResult> {
  return ctx.caller.send({
    method: 'POST',
    path,
    body,
    headers: { [HEADERS.idempotencyKey]: idempotencyKey },
    mutation: true,
    what,
    expectStatus: 201,
    signal: callOptions?.signal,
  });
}

/** Read a Session or an Ask; a wait passes its own `timeoutMs`. */
export function sendGet(
  ctx: ClientContext,
  path: string,
  what: string,
  callOptions: SessCallOptions | undefined,
  timeoutMs?: number,
): Promise<CallResult> {
  return ctx.caller.send({
    method: 'GET',
    path,
    mutation: false,
    what,
    expectStatus: 200,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    signal: callOptions?.signal,
  });
}
