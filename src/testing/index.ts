/**
 * `@sess.si/mcp/testing`: a local Sess runtime for tests and for trying things by hand.
 *
 * {@link startLocalSess} starts a real `node:http` server on 127.0.0.1 (a random port) that
 * implements the whole Sess wire contract of `docs/sess-api.md` with in-memory state — API keys
 * and workspaces, Sessions with revisions, Asks with an exact cap, link expiry on a controllable
 * clock, Ed25519 receipts with key rotation, the JWKS — plus the answer page a person opens from
 * the link, and fault injection.
 *
 * It is not a production server: state lives in memory, nothing is persisted, and it logs
 * nothing (no key, link, receipt or answer value ever reaches stdout or stderr). This file only
 * re-exports.
 *
 * The folder: `server/` (starting the runtime, its `node:http` listener, routes, endpoints,
 * request checks and held waits), `model/` (its state and every wire transition, keys, clock and
 * faults) and `page/` (the answer page). `sess-mcp local` (`src/stdio/local-command.ts`) starts
 * it by hand. The wire both sides share is `src/sess/wire.ts` and `src/sess/wire-reader.ts`, not
 * written again here.
 */
export { createLocalClock, type LocalClock, type LocalClockOptions } from './model/clock.js';
export {
  type ContradictionVariant,
  type FaultTimes,
  type HoldPoint,
  LOCAL_ENDPOINTS,
  type LocalEndpoint,
  type LocalFault,
  LocalFaults,
  type LocalHold,
  type ReceiptTamper,
} from './model/faults.js';
export { type LocalKeyInfo, LocalKeys } from './model/keys.js';
export { DEFAULT_PLAN, type LocalPlan, type LocalWorkspaceStats } from './model/records.js';
export { checkSurfaceRules, SESS_SURFACE_LIMITS, type SurfaceViolation } from './model/surface-rules.js';
export type { LocalWithdrawal } from './model/withdrawals.js';
export { startLocalSess } from './server/runtime.js';
export { AnswerRefusedError } from './server/runtime-person.js';
export type {
  LocalSess,
  LocalSessionSnapshot,
  LocalSessOptions,
  LocalStats,
  LocalWorkspace,
  PageResponse,
} from './server/runtime-types.js';
