/**
 * The soak's figures, read from the load generator's call log and the receiver's arrivals: the
 * latency of a repeat `sess_response` (an answer the agent already read, asked again), the error
 * rate of calls through the balancer, and the recovery time of each fault — from the fault to
 * the first successful call on the path it hit:
 *
 * - an instance killed: the first call the new process on its port served;
 * - PostgreSQL restarted, its connections ended: the first call that succeeded among those
 *   started once the fault was over (the database accepting connections again, the backends
 *   ended), so a call that slipped through before the shutdown does not count (every tool call
 *   reads or writes the store);
 * - the receiver down: the first event that reached it after it came back.
 *
 * Figures only: nothing here decides whether the run passed (`ledger.ts` counts, the test asserts).
 */
import type { CallRecord } from './calls.js';
import type { FaultRecord } from './faults.js';
import type { RunningHaproxy } from './haproxy.js';
import type { ReceiverTally } from './receiver.js';

/** The soak's figures. */
export interface Figures {
  calls: number;
  failedCalls: number;
  /** Failed attempts over all attempts, through the balancer. */
  errorRate: number;
  /** Failed attempts per failure (`transport` or an error code). */
  failures: Record<string, number>;
  /** Attempts per tool. */
  callsPerTool: Record<string, number>;
  repeatResponse: { count: number; failed: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** Per fault, in schedule order. */
  recoveries: Array<{
    kind: string;
    atS: number;
    /** From the fault to the first successful call on its path (see above). */
    recoveryMs: number | undefined;
    /** From the fault until it was over (an instance listening again, PostgreSQL back, the receiver up). */
    outageMs: number;
    /** A kill: from the fault until HAProxy's check found the instance's server up again. */
    balancerUpMs?: number;
    evidence: FaultRecord['evidence'];
  }>;
}

/** The `q` quantile (0–1) of `values`, nearest rank. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function recoveryOf(fault: FaultRecord, log: CallRecord[], tally: ReceiverTally): number | undefined {
  let first: number | undefined;
  if (fault.kind === 'receiver_down') {
    for (const at of tally.firstAt.values())
      if (at >= fault.over && (first === undefined || at < first)) first = at;
    return first === undefined ? undefined : first - fault.over;
  }
  const newPid = fault.kind === 'kill' ? Number(fault.evidence.newPid) : undefined;
  const from = fault.kind === 'kill' ? fault.at : fault.over;
  for (const call of log) {
    if (!call.ok || call.startedAt < from) continue;
    if (newPid !== undefined && call.pid !== newPid) continue;
    if (first === undefined || call.endedAt < first) first = call.endedAt;
  }
  return first === undefined ? undefined : first - fault.at;
}

function balancerUp(
  fault: FaultRecord,
  transitions: RunningHaproxy['transitions'],
): { balancerUpMs?: number } {
  if (fault.kind !== 'kill') return {};
  const up = transitions.find(
    (t) => t.server === fault.evidence.instance && t.state === 'UP' && t.at >= fault.at,
  );
  return up === undefined ? {} : { balancerUpMs: up.at - fault.at };
}

/** The figures of a run that started its load at `startedAt`. */
export function figuresOf(
  log: CallRecord[],
  faults: FaultRecord[],
  tally: ReceiverTally,
  startedAt: number,
  transitions: RunningHaproxy['transitions'],
): Figures {
  const failures: Record<string, number> = {};
  const callsPerTool: Record<string, number> = {};
  for (const call of log) {
    callsPerTool[call.tool] = (callsPerTool[call.tool] ?? 0) + 1;
    if (!call.ok) failures[call.failure!] = (failures[call.failure!] ?? 0) + 1;
  }
  const repeats = log.filter((call) => call.repeat);
  const repeatMs = repeats.filter((call) => call.ok).map((call) => call.endedAt - call.startedAt);
  const failedCalls = log.filter((call) => !call.ok).length;
  return {
    calls: log.length,
    failedCalls,
    errorRate: log.length === 0 ? 0 : failedCalls / log.length,
    failures,
    callsPerTool,
    repeatResponse: {
      count: repeats.length,
      failed: repeats.length - repeatMs.length,
      p50Ms: quantile(repeatMs, 0.5),
      p99Ms: quantile(repeatMs, 0.99),
      maxMs: quantile(repeatMs, 1),
    },
    recoveries: faults.map((fault) => ({
      kind: fault.kind,
      atS: Math.round((fault.at - startedAt) / 100) / 10,
      recoveryMs: recoveryOf(fault, log, tally),
      outageMs: fault.over - fault.at,
      ...balancerUp(fault, transitions),
      evidence: fault.evidence,
    })),
  };
}
