/**
 * Ending a request early in the local Sess runtime (v1.4): withdrawing a Session on its own and
 * closing an Ask, which withdraws every respondent page still without an answer. Also the checks
 * every Session mutation starts with (publish and complete use them too), so all of them refuse
 * in the same documented order. Like the rest of the model, each transition checks and commits
 * synchronously.
 */
import type { SessionStatus } from '../../core/contract/ports.js';
import type { ValueRule } from '../../core/contract/rules.js';
import { ApiFailure } from '../server/api-failure.js';
import type { LocalClock } from './clock.js';
import type { AskRecord, LocalWorkspaceStats, SessionRecord } from './records.js';

/**
 * What a withdraw or an Ask close reads and changes of the model (`LocalModel` is one): its
 * records, their status, the counters and the watchers of a Session.
 */
export interface WithdrawalModel {
  readonly clock: LocalClock;
  readonly sessions: ReadonlyMap<string, SessionRecord>;
  getSession(workspaceId: string, id: string): SessionRecord;
  getAsk(workspaceId: string, id: string): AskRecord;
  status(s: SessionRecord): SessionStatus;
  stats(workspaceId: string): LocalWorkspaceStats;
  notify(s: SessionRecord): void;
}

/**
 * Whether a runtime offers withdraw and Ask close (`LocalSessOptions.withdrawal`), to imitate a
 * Sess before v1.4: `'offered'`; `'not_offered'`, both paths answer `404 not_found` as any
 * unknown path does; `'method_not_allowed'`, both answer `405 method_not_allowed` with an empty
 * `Allow`.
 */
export type LocalWithdrawal = 'offered' | 'not_offered' | 'method_not_allowed';

const WITHDRAWALS: readonly string[] = ['offered', 'not_offered', 'method_not_allowed'];

/** @internal The rule of `LocalSessOptions.withdrawal`. */
export const WITHDRAWAL_RULE: ValueRule<LocalWithdrawal> = {
  text: `one of ${WITHDRAWALS.map((w) => `"${w}"`).join(', ')}`,
  test: (value): value is LocalWithdrawal => typeof value === 'string' && WITHDRAWALS.includes(value),
};

/**
 * The first checks of every Session mutation, in the documented order: existence (`404`), Ask
 * respondent (`403` with `askRefusal`), `expired` (`410`), `If-Match` (`409`). Returns the
 * Session and its status.
 */
export function atRevision(
  model: WithdrawalModel,
  workspaceId: string,
  id: string,
  ifMatch: number,
  askRefusal: string,
): { s: SessionRecord; status: SessionStatus } {
  const s = model.getSession(workspaceId, id);
  if (s.ask) throw new ApiFailure(403, 'forbidden', askRefusal);
  const status = model.status(s);
  if (status === 'expired') throw new ApiFailure(410, 'expired', 'The Session expired without an answer.');
  if (ifMatch !== s.revision) {
    throw new ApiFailure(
      409,
      'conflict',
      `If-Match is revision ${ifMatch}, but the Session is at revision ${s.revision}.`,
    );
  }
  return { s, status };
}

/**
 * Withdraw a Session that has no answer at `ifMatch`. The checks run in the documented order:
 * existence, Ask respondent (`403`), `expired` (`410`), `If-Match` and the state (`409`).
 */
export function withdrawSession(
  model: WithdrawalModel,
  workspaceId: string,
  id: string,
  ifMatch: number,
  reason: string | undefined,
): SessionRecord {
  const { s, status } = atRevision(
    model,
    workspaceId,
    id,
    ifMatch,
    'An Ask respondent’s Session is withdrawn by closing its Ask, not on its own.',
  );
  if (status !== 'active' && status !== 'lapsed') {
    throw new ApiFailure(
      409,
      'conflict',
      status === 'answered'
        ? `The Session has an answer at revision ${s.revision}; read it instead of withdrawing.`
        : `The Session is already ${status}.`,
    );
  }
  s.withdrawn = reason === undefined ? {} : { reason };
  model.stats(workspaceId).sessionsWithdrawn++;
  model.notify(s);
  return s;
}

/**
 * Close an Ask: no new respondent starts, and every respondent page without an answer is
 * withdrawn; answers already given stay. `410` past its deadline, `409` when already closed so.
 */
export function closeAsk(
  model: WithdrawalModel,
  workspaceId: string,
  id: string,
  ifMatch: number,
  reason: string | undefined,
): AskRecord {
  const a = model.getAsk(workspaceId, id);
  if (model.clock.now() >= a.expiresAt) throw new ApiFailure(410, 'expired', 'The Ask is past its deadline.');
  if (ifMatch !== 1) {
    throw new ApiFailure(409, 'conflict', `If-Match is revision ${ifMatch}, but an Ask is at revision 1.`);
  }
  if (a.closed) throw new ApiFailure(409, 'conflict', 'The Ask is already closed.');
  a.closed = reason === undefined ? {} : { reason };
  for (const r of a.respondents) {
    const s = model.sessions.get(r.sessionId)!;
    const status = model.status(s);
    if (status !== 'active' && status !== 'lapsed') continue;
    s.withdrawn = { ...a.closed };
    model.notify(s);
  }
  model.stats(workspaceId).asksClosed++;
  return a;
}
