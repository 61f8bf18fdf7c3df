/**
 * The soak report in words, for a person: the invariants, the faults with their proof and
 * recovery, the figures. Counts, times and process ids only, as in the report itself.
 */
import type { SoakReport } from './run.js';

const ms = (value: number | undefined) => (value === undefined ? 'never' : `${Math.round(value)} ms`);

/** The lines of the summary. */
export function summarize(report: SoakReport): string {
  const { ledger: l, figures: f } = report;
  const lines = [
    `soak: ${report.durationS} s of load, ${report.wallS.toFixed(0)} s wall, load average ${report.loadAverage.atStart.join(' ')} at the start, ${report.loadAverage.atEnd.join(' ')} at the end`,
    `  stories ${l.stories} (${Object.entries(l.ends)
      .map(([end, n]) => `${end} ${n}`)
      .join(', ')})`,
    `  runtime Sessions ${l.sessions} (${l.orphanSessions} whose create the agent never learned), store records ${l.records}`,
    `  answers: ${l.answered} given, ${l.answersLost} lost`,
    `  duplicate Sessions for one idempotency key: ${l.duplicateSessions}; Sessions accounted for by no outcome: ${l.unaccountedSessions}`,
    `  events: ${l.expectedEvents} expected, ${l.eventsLost} lost, ${l.redeliveries} delivered again (deduplicated), ` +
      `${l.unexpectedEvents} unexpected, ${l.unverifiedDeliveries} unverified, ${l.deadEvents} dead; drained ${report.drainS.toFixed(1)} s after the load`,
    ...l.lostDetails.map((detail) => `    lost: ${detail}`),
    `  calls through HAProxy: ${f.calls}, failed ${f.failedCalls} (${(f.errorRate * 100).toFixed(2)} %): ${JSON.stringify(f.failures)}`,
    `  repeat sess_response: ${f.repeatResponse.count} (failed ${f.repeatResponse.failed}), p50 ${ms(f.repeatResponse.p50Ms)}, p99 ${ms(f.repeatResponse.p99Ms)}, max ${ms(f.repeatResponse.maxMs)}`,
    '  faults:',
    ...report.faults.map((fault, i) => {
      const r = f.recoveries[i]!;
      const proof = Object.entries(fault.evidence)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      return `    +${r.atS} s ${fault.kind}: happened=${fault.happened} (${proof}); over after ${ms(r.outageMs)}${r.balancerUpMs === undefined ? '' : `, up at the balancer after ${ms(r.balancerUpMs)}`}, recovery ${ms(r.recoveryMs)}`;
    }),
  ];
  return lines.join('\n');
}
