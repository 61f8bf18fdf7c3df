/**
 * The soak's invariants as a list of what broke, shared by `npm run soak` and the CI test: an
 * empty list is a run that kept every promise. Never a time threshold: the figures are reported,
 * not judged.
 */
import type { SoakReport } from './run.js';

/** What broke in `report`; empty when nothing did. */
export function verdictOf(report: SoakReport): string[] {
  const { ledger: l } = report;
  const problems: string[] = [];
  const zero = (count: number, what: string) => {
    if (count !== 0) problems.push(`${count} ${what}`);
  };
  zero(l.answersLost, 'answers lost');
  zero(l.duplicateSessions, 'duplicate Sessions for one idempotency key');
  zero(l.unaccountedSessions, 'Sessions no outcome accounts for');
  zero(l.eventsLost, 'events lost');
  zero(l.unexpectedEvents, 'events received that the outbox does not hold');
  zero(l.unverifiedDeliveries, 'deliveries that did not verify');
  zero(l.deadEvents, 'events dead-lettered');
  if (l.answered === 0) problems.push('no answer was given: the load did not run');
  // A cap the load ran into means the load stopped being the load: the run proves less.
  for (const [end, count] of Object.entries(l.ends)) {
    if (/^refused:(STATE_STORE_FULL|PRINCIPAL_QUOTA_REACHED|PLAN_LIMIT_REACHED)$/.test(end)) {
      problems.push(`${count} stories ${end}: the load ran into a cap`);
    }
  }
  for (const fault of report.faults) {
    if (!fault.happened)
      problems.push(`the ${fault.kind} fault did not happen: ${JSON.stringify(fault.evidence)}`);
  }
  return problems;
}
