/**
 * The soak, its 60-second CI schedule: three instances of the HTTP handler on one throwaway
 * PostgreSQL behind a real HAProxy, agents of many principals through it, and every fault of the
 * schedule (`faults.ts`): two instances SIGKILLed and restarted, a PostgreSQL restart,
 * `pg_terminate_backend` on the pools' connections, the webhook receiver down for 25 s.
 *
 * It asserts the invariants only, counted from the parts' own records (`ledger.ts`): no answer
 * lost, no duplicate Session for one idempotency key, every Session accounted for, no event lost
 * (each verified with `standardwebhooks`), every fault proven to have happened. The figures
 * (latency, error rate, recovery times) are printed, never judged: this is not a timed test.
 *
 * It needs Debian's `haproxy`: without it the file fails, saying how to install it (`.ci/run`
 * installs it). Its cluster, ports and processes are its own, on 127.0.0.1, so files running
 * beside it are not disturbed; everything it started is stopped in `afterAll`.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAPROXY_BIN, HAPROXY_INSTALL } from './haproxy.js';
import { runSoak, type SoakReport, SoakStack } from './run.js';
import { summarize } from './summary.js';
import { verdictOf } from './verdict.js';

const SUITE = 'three instances behind HAProxy on one PostgreSQL, through faults (the 60 s schedule)';

describe(SUITE, () => {
  it('finds haproxy', () => {
    expect(existsSync(HAPROXY_BIN), `haproxy is missing: ${HAPROXY_INSTALL}`).toBe(true);
  });
  if (!existsSync(HAPROXY_BIN)) return;

  const stack = new SoakStack();
  let report: SoakReport;
  beforeAll(async () => {
    report = await runSoak({ durationS: 60 }, stack);
    console.log(summarize(report));
  }, 180_000);
  afterAll(() => stack.close(), 60_000);

  it('loses no answer: every answered Session ends answered or completed, its values returned verified', () => {
    expect(report.ledger.answered).toBeGreaterThan(0);
    expect(report.ledger.answersLost).toBe(0);
  });

  it('makes no duplicate Session for one idempotency key, and every Session matches one outcome', () => {
    expect(report.ledger.sessions).toBeGreaterThan(0);
    expect([report.ledger.duplicateSessions, report.ledger.unaccountedSessions]).toEqual([0, 0]);
  });

  it('loses no event: every event reached the receiver, verified, and is one event once deduplicated', () => {
    const { ledger } = report;
    expect(ledger.expectedEvents).toBeGreaterThan(0);
    expect(ledger.lostDetails).toEqual([]);
    expect([
      ledger.eventsLost,
      ledger.unexpectedEvents,
      ledger.unverifiedDeliveries,
      ledger.deadEvents,
    ]).toEqual([0, 0, 0, 0]);
  });

  it('every fault of the schedule happened: pids gone and replaced, the postmaster restarted, backends ended, the receiver refused', () => {
    expect(report.faults.map((fault) => fault.kind).sort()).toEqual(
      ['kill', 'kill', 'pg_restart', 'pg_terminate', 'receiver_down'].sort(),
    );
    expect(report.faults.filter((fault) => !fault.happened)).toEqual([]);
    expect(verdictOf(report)).toEqual([]);
  });

  it('reports no secret: no key, token, webhook secret, link or answer value', () => {
    const text = JSON.stringify(report) + summarize(report);
    for (const pattern of [/sk_local/, /whsec_/, /soak (message|note)/, /[0-9a-f]{48}/, /https?:\/\//]) {
      expect(text).not.toMatch(pattern);
    }
  });
});
