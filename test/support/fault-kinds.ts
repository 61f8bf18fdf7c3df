/**
 * The fault matrices' shared tables: every fault kind the local runtime can inject, and the wire
 * calls `sess_withdraw` makes (by the runtime endpoint a fault targets).
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
