/**
 * Before a create, learning the workspace the API key belongs to, for a client given the
 * workspace its credential must belong to (`credentialWorkspaceId`; the HTTP handler gives the
 * principal's `workspaceId`). A create is the one request Sess carries out in whatever workspace
 * the key belongs to, so the key's workspace is learnt first, and a key of another workspace is
 * refused before anything is created. The read that learns it asks for a Session that does not
 * exist: Sess answers `404 not_found` with `Sess-Workspace-Id`, as every authenticated response
 * but a `401` carries it (`docs/sess-api.md`, "Workspace header").
 *
 * It checks nothing itself: `calls.ts` checks the header of this and of every other response.
 * It does nothing for a client without `credentialWorkspaceId` or one that has seen its workspace.
 */
import type { SessCallOptions } from '../core/contract/ports.js';
import { SessApiError } from '../core/contract/ports.js';
import { type ClientContext, sendGet } from './client-context.js';
import { notSentBeforeCreate } from './errors.js';
import { PATHS } from './wire.js';

/** The Session read to learn the workspace: an id Sess does not give (its answer is a `404`). */
export const WORKSPACE_PROBE_SESSION_ID = 'sess-mcp.workspace-probe';

/**
 * Learn the key's workspace before the create `what`, unless it is known or nothing is to be
 * checked. Throws the create's own error when the key is of another workspace, is refused, or
 * the read fails (then the create was not sent).
 */
export async function learnKeyWorkspace(
  ctx: ClientContext,
  what: string,
  callOptions: SessCallOptions | undefined,
): Promise<void> {
  if (ctx.credentialWorkspaceId === undefined || ctx.caller.seenWorkspaceId() !== undefined) return;
  try {
    await sendGet(
      ctx,
      PATHS.session(WORKSPACE_PROBE_SESSION_ID),
      'learn the workspace of the API key',
      callOptions,
    );
  } catch (error) {
    if (!(error instanceof SessApiError)) throw error;
    // Any answer but a refused key named the workspace, and `calls.ts` checked it on arrival.
    if (ctx.caller.seenWorkspaceId() !== undefined && error.kind === 'api' && error.status !== 401) return;
    // A Sess that names no workspace (the header is optional): nothing to check against.
    if (error.kind === 'api' && error.status === 404) return;
    throw notSentBeforeCreate(what, error);
  }
}
