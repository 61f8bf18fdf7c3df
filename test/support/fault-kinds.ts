/**
 * The fault matrices' shared tables: every fault kind the local runtime can inject, the wire
 * calls `sess_withdraw` makes (by the runtime endpoint a fault targets), and the faults those two
 * calls are tried under, with whether the change lands at Sess despite each.
 *
 * It says nothing of what a caller sees under a fault: the client's matrix and the tool's matrix
 * each state that per row, by the row's name.
 */
import type { LocalEndpoint, LocalFault } from '../../src/testing/index.js';

/** The wire calls of `sess_withdraw`: a Session's withdraw and an Ask's close. */
export const WITHDRAW_WIRE_CALLS = ['withdraw', 'closeAsk'] as const satisfies readonly LocalEndpoint[];

/** One of {@link WITHDRAW_WIRE_CALLS}. */
export type WithdrawWireCall = (typeof WITHDRAW_WIRE_CALLS)[number];

/**
 * Every fault kind the runtime can inject: a kind added to `LocalFault` fails the type check here
 * until it is listed, and each matrix then fails until it has a row for it.
 */
export const FAULT_KINDS: Record<LocalFault['kind'], true> = {
  status: true,
  transport: true,
  delay: true,
  commit_then_drop: true,
  commit_then_status: true,
  malformed: true,
  contradictory: true,
  tamper_receipt: true,
  hold: true,
};

/** The faulted call's own deadline in the timeout row of {@link WITHDRAW_FAULTS} (a fresh client). */
export const WITHDRAW_FAULT_TIMEOUT_MS = 500;

/** One fault a withdraw or an Ask close is tried under. */
export interface WithdrawFault {
  /** The row's name, which names its cells. */
  name: string;
  fault: LocalFault;
  /** The faulted call's own deadline (a fresh client), when it is not the default. */
  requestTimeoutMs?: number;
  /** Whether the withdraw or close takes effect at Sess despite the fault. */
  committed: boolean;
}

/** A hold released at once: it only orders the call against another change, so it changes nothing. */
const released = (at: 'arrival' | 'commit'): LocalFault => ({
  kind: 'hold',
  at,
  reached: () => {},
  released: Promise.resolve(),
});

/**
 * The faults of the withdraw and Ask close matrices, one row each, in the order their cells run.
 * A row added here fails each matrix's type check until it says what its callers see under it.
 */
export const WITHDRAW_FAULTS = [
  { name: '500', fault: { kind: 'status', status: 500 }, committed: false },
  { name: '503 unavailable', fault: { kind: 'status', status: 503 }, committed: false },
  { name: '429 rate limited', fault: { kind: 'status', status: 429 }, committed: false },
  { name: 'transport error', fault: { kind: 'transport' }, committed: false },
  { name: 'delay within the deadline', fault: { kind: 'delay', ms: 200 }, committed: true },
  // The runtime drops a call whose client left during the delay, so Sess did not apply it.
  {
    name: 'timeout (delay past the deadline)',
    fault: { kind: 'delay', ms: 5_000 },
    requestTimeoutMs: WITHDRAW_FAULT_TIMEOUT_MS,
    committed: false,
  },
  { name: 'commit-then-drop', fault: { kind: 'commit_then_drop' }, committed: true },
  { name: 'commit-then-500', fault: { kind: 'commit_then_status', status: 500 }, committed: true },
  { name: 'malformed body', fault: { kind: 'malformed' }, committed: true },
  { name: 'contradictory body', fault: { kind: 'contradictory' }, committed: true },
  {
    name: 'tampered receipts',
    fault: { kind: 'tamper_receipt', tamper: { mode: 'signature' } },
    committed: true,
  },
  { name: 'held on arrival, released', fault: released('arrival'), committed: true },
  { name: 'held after the commit, released', fault: released('commit'), committed: true },
] as const satisfies readonly WithdrawFault[];

/** The name of one of {@link WITHDRAW_FAULTS}. */
export type WithdrawFaultName = (typeof WITHDRAW_FAULTS)[number]['name'];
