/**
 * The Sess client's receipt verification: which workspace a receipt must belong to (the one the
 * options named, the one this client's responses named, or the caller's, learned from a read of
 * the Session when the client knows none), and the Ask of a respondent Session, handed to the
 * receipt verifier with the answer.
 *
 * It verifies no signature itself (`receipt.ts` does) and sends nothing but that one read.
 */
import {
  SessApiError,
  type SessCallOptions,
  type VerifiedReceipt,
  type VerifyResponseInput,
} from '../core/contract/ports.js';
import { SESS_ID_RULE } from '../core/contract/rules.js';
import type { ClientContext } from './client-context.js';
import { protocol, refuseToSend } from './errors.js';
import { getSession } from './session-calls.js';

/**
 * The workspace receipts must belong to: the expected one, or the one this client's responses
 * named, or the one the caller learned from an authenticated response for this Session (a
 * saved record's). A caller's workspace that disagrees with what this client knows is a
 * `protocol` error. A client that knows none learns it from an authenticated read of the
 * Session whose receipt it verifies; that read's failure is the verification's failure (`api`,
 * `transport`, `protocol`, …).
 */
async function trustedWorkspace(
  ctx: ClientContext,
  sessionId: string,
  given: string | undefined,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const what = 'verify an answer';
  if (given !== undefined && !SESS_ID_RULE.test(given)) {
    throw refuseToSend(what, "the caller's workspace is not a workspace id");
  }
  const known = ctx.expectedWorkspaceId ?? ctx.caller.seenWorkspaceId();
  if (known !== undefined) {
    if (given !== undefined && given !== known) {
      throw protocol(what, "the caller's workspace is not the one this client talks to", 'caller_workspace');
    }
    return known;
  }
  if (given !== undefined) return given;
  if (SESS_ID_RULE.test(sessionId)) await getSession(ctx, sessionId, signal === undefined ? {} : { signal });
  return ctx.caller.seenWorkspaceId();
}

/** `SessApi.verifyResponse`. */
export async function verifyResponse(
  ctx: ClientContext,
  input: VerifyResponseInput,
  callOptions?: SessCallOptions,
): Promise<VerifiedReceipt> {
  const signal = callOptions?.signal;
  if (signal?.aborted)
    throw new SessApiError('aborted', 'The receipt verification was aborted by the caller.');
  return ctx.receipts.verify(
    {
      workspaceId: await trustedWorkspace(ctx, input.sessionId, input.workspaceId, signal),
      sessionId: input.sessionId,
      revision: input.revision,
      eventId: input.eventId,
      surface: input.surface,
      answer: input.answer,
      receipt: input.receipt,
      ask: ctx.respondents.get(input.sessionId),
    },
    signal,
  );
}
