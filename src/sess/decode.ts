/**
 * Decoding Sess's Session and Ask views for the client: the readers of `wire-reader.ts`, the
 * consistency rules of `wire.ts`, what the request itself implies (the object asked for, the
 * workspace this client talks to, the `ETag`), and the mapping of a consistent view onto the
 * core's `SessionView` / `AskView`. Anything else is a `protocol` error that fails closed.
 *
 * Person-provided maps (answer values) arrive as null-prototype objects that keep every key
 * (`wire-reader.ts`), so an answer to a field named `__proto__` or `constructor` stays whole and
 * its receipt digest still matches. Nothing here sends a request or puts a value Sess sent (an
 * answer, a record key) into a message: a refusal names wire members and indices only.
 */
import type {
  AskRespondentView,
  AskView,
  ResponseEvent,
  SessionStatus,
  SessionView,
} from '../core/contract/ports.js';
import type { Answer } from '../core/model/surface.js';
import { protocol } from './errors.js';
import { askViewProblem, sessionViewProblem } from './view-checks.js';
import { FINAL_SESSION_STATUSES, HEADERS } from './wire.js';
import {
  readAskView,
  readSessionView,
  type WireAskView,
  WireRefusal,
  type WireResponseEvent,
  type WireSessionView,
} from './wire-reader.js';

/** A successful call's parts that decoding looks at. */
export interface DecodeInput {
  json: unknown;
  headers: Pick<Headers, 'get'>;
  /** The workspace the response's `Sess-Workspace-Id` named. */
  workspaceId?: string;
}

/** The body's workspace must be the header's and the expected one. */
function checkWorkspace(
  bodyWorkspace: string,
  result: DecodeInput,
  expectedWorkspaceId: string | undefined,
  what: string,
): void {
  if (result.workspaceId !== undefined && bodyWorkspace !== result.workspaceId) {
    throw protocol(
      what,
      'the body names another workspace than the Sess-Workspace-Id header',
      'workspace_body_header',
    );
  }
  if (expectedWorkspaceId !== undefined && bodyWorkspace !== expectedWorkspaceId) {
    throw protocol(what, 'the body names another workspace than the expected one', 'workspace_body_foreign');
  }
}

/** What the request implies about a view: the object asked for (if one was) and the workspace. */
export interface ViewExpectation {
  id?: string;
  workspaceId: string | undefined;
}

/**
 * Read a view with its reader (`wire-reader.ts`), check it against itself (`problem`), the object
 * asked for and the workspace; what `noun` names (`Session`, `Ask`) goes into the messages.
 */
function decodeView<View extends WireSessionView | WireAskView>(
  read: (json: unknown) => View | WireRefusal,
  problemOf: (view: View) => string | undefined,
  noun: string,
  result: DecodeInput,
  what: string,
  expect: ViewExpectation,
): View {
  const view = read(result.json);
  if (view instanceof WireRefusal) {
    throw protocol(
      what,
      `malformed ${noun} at ${view.path === '' ? 'the body' : view.path}`,
      'view_malformed',
    );
  }
  const problem = problemOf(view);
  if (problem !== undefined) throw protocol(what, problem, 'view_inconsistent');
  if (expect.id !== undefined && view.id !== expect.id)
    throw protocol(what, `a view of another ${noun}`, 'view_other_object');
  checkWorkspace(view.workspace_id, result, expect.workspaceId, what);
  return view;
}

/** Decode a Session view and check it against itself, the headers and the workspace. */
export function decodeSession(result: DecodeInput, what: string, expect: ViewExpectation): WireSessionView {
  const wire = decodeView(readSessionView, sessionViewProblem, 'Session', result, what, expect);
  const etag = result.headers.get(HEADERS.etag);
  if (etag !== null && etag !== `"${wire.revision}"` && etag !== `W/"${wire.revision}"`) {
    throw protocol(what, 'the ETag disagrees with the revision', 'etag_revision');
  }
  return wire;
}

/** Decode an Ask view and check it against itself and the workspace. */
export function decodeAsk(result: DecodeInput, what: string, expect: ViewExpectation): AskView {
  return toAskView(decodeView(readAskView, askViewProblem, 'Ask', result, what, expect));
}

/**
 * Why a wait result is older than what the caller already knew, or `undefined`. A Session never
 * goes back a revision; at one revision an answer is never taken back and a final status stays.
 */
export function regression(
  known: { revision: number; status: SessionStatus },
  revision: number,
  status: SessionStatus,
): string | undefined {
  if (revision < known.revision) return 'the Session went back to an earlier revision';
  if (revision > known.revision) return undefined;
  const hadAnswer = known.status === 'answered' || known.status === 'completed';
  const hasAnswer = status === 'answered' || status === 'completed';
  if (hadAnswer && !hasAnswer) return 'the answer at the known revision disappeared';
  if (FINAL_SESSION_STATUSES.has(known.status) && status !== known.status) {
    return 'a final status changed';
  }
  return undefined;
}

/** A wire response event as the core's `ResponseEvent`. */
function toResponseEvent(wire: WireResponseEvent): ResponseEvent {
  return {
    eventId: wire.event_id,
    revision: wire.revision,
    answer: wire.answer as Answer,
    submittedAt: wire.submitted_at,
    receipt: wire.receipt,
  };
}

/** A (consistent) wire Session view as the core's `SessionView`. */
export function toSessionView(wire: WireSessionView): SessionView {
  const view: SessionView = {
    sessionId: wire.id,
    workspaceId: wire.workspace_id,
    revision: wire.revision,
    status: wire.status,
    humanUrl: wire.human_url,
    expiresAt: wire.expires_at,
    responses: wire.responses.map(toResponseEvent),
  };
  if (wire.extendable_until !== undefined) view.extendableUntil = wire.extendable_until;
  return view;
}

/** A (consistent) wire Ask view as the core's `AskView`. */
export function toAskView(wire: WireAskView): AskView {
  return {
    askId: wire.id,
    workspaceId: wire.workspace_id,
    status: wire.status,
    humanUrl: wire.human_url,
    expiresAt: wire.expires_at,
    max: wire.max,
    started: wire.started,
    answered: wire.answered,
    respondents: wire.respondents.map((r) => {
      const out: AskRespondentView = { respondentId: r.id, sessionId: r.session_id, status: r.status };
      if (r.name !== undefined) out.name = r.name;
      if (r.response !== undefined) out.response = toResponseEvent(r.response);
      return out;
    }),
  };
}
