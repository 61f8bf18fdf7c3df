/**
 * The consistency rules of a Session view and an Ask view (`docs/sess-api.md`, "Consistency
 * rules"): what a view the reader accepted must also satisfy before anything trusts it. The
 * client checks every view it decodes with them; the local runtime's tests check what it serves.
 *
 * It reads no JSON (the views arrive from `wire-reader.ts`) and knows no request: what a view must
 * imply for the call that asked for it is `decode.ts`'s.
 */
import type { WireAskView, WireSessionView } from './wire-reader.js';

/**
 * Why a decoded Session view contradicts itself, or `undefined` when it is consistent. The rules
 * (`docs/sess-api.md`, "Consistency rules"):
 * 1. responses are in ascending revision order, at most one per revision, none above `revision`;
 * 2. every revision below `revision` has exactly one response (a publish needs the answer it follows);
 * 3. event ids are unique;
 * 4. `answered` and `completed` have a response at `revision`; `active`, `lapsed`, `expired` and
 *    `withdrawn` have none;
 * 5. `lapsed` carries `extendable_until`, and `extendable_until` is never before `expires_at`.
 */
export function sessionViewProblem(view: WireSessionView): string | undefined {
  const seen = new Set<string>();
  let previous = 0;
  for (const response of view.responses) {
    if (response.revision > view.revision) return 'a response is above the Session revision';
    if (response.revision <= previous) return 'responses are not one per revision in ascending order';
    if (seen.has(response.event_id)) return 'a response event id repeats';
    seen.add(response.event_id);
    previous = response.revision;
  }
  const atRevision = view.responses.some((r) => r.revision === view.revision);
  const below = view.responses.filter((r) => r.revision < view.revision).length;
  if (below !== view.revision - 1) return 'a revision below the current one has no response';
  switch (view.status) {
    case 'answered':
    case 'completed':
      if (!atRevision) return `status ${view.status} without a response at the revision`;
      break;
    case 'active':
    case 'lapsed':
    case 'expired':
    case 'withdrawn':
      if (atRevision) return `status ${view.status} with a response at the revision`;
      break;
  }
  if (view.status === 'lapsed' && view.extendable_until === undefined)
    return 'lapsed without extendable_until';
  if (
    view.extendable_until !== undefined &&
    Date.parse(view.extendable_until) < Date.parse(view.expires_at)
  ) {
    return 'extendable_until is before expires_at';
  }
  return undefined;
}

/**
 * Why a decoded Ask view contradicts itself, or `undefined`: `started` is the number of
 * respondents and at most `max`; `answered` counts the respondents with status `answered`, which
 * are exactly those with a `response` (at revision 1); respondent and Session ids are unique.
 */
export function askViewProblem(view: WireAskView): string | undefined {
  if (view.started !== view.respondents.length) return 'started is not the number of respondents';
  if (view.started > view.max) return 'more respondents than max';
  const ids = new Set<string>();
  const sessions = new Set<string>();
  let answered = 0;
  for (const r of view.respondents) {
    if (ids.has(r.id) || sessions.has(r.session_id)) return 'a respondent or its Session repeats';
    ids.add(r.id);
    sessions.add(r.session_id);
    if ((r.status === 'answered') !== (r.response !== undefined))
      return 'a respondent status disagrees with its response';
    if (r.response !== undefined) {
      if (r.response.revision !== 1) return 'a respondent answer is not at revision 1';
      answered++;
    }
  }
  if (answered !== view.answered) return 'answered is not the number of answered respondents';
  return undefined;
}
