/**
 * The preflight: the ordered list of stages a request passes before the MCP SDK sees it — Host,
 * Origin, method, authentication, scopes, body, unsafe keys, protocol era — and the runner that
 * stops at the first refusal. Each stage is a function of its own module in `preflight/`,
 * testable alone with a {@link PreflightContext}.
 *
 * It holds no check itself and no per-request bookkeeping (the deadline, the disconnect and the
 * cancellation entry are `request-life.ts`'s; what follows the preflight is `pipeline.ts`'s).
 */
import { authenticationStage, scopeStage } from './preflight/auth.js';
import { bodyStage } from './preflight/body.js';
import type { PreflightContext, PreflightStage, Refusal } from './preflight/context.js';
import { eraStage } from './preflight/era.js';
import { hostStage } from './preflight/host.js';
import { methodStage } from './preflight/method.js';
import { originStage } from './preflight/origin.js';
import { unsafeKeyStage } from './preflight/unsafe-keys.js';

/**
 * The stages, in order. Only headers are looked at until `authenticate` has accepted the request:
 * no body is read before that.
 */
export const PREFLIGHT_STAGES: readonly PreflightStage[] = Object.freeze([
  hostStage,
  originStage,
  methodStage,
  authenticationStage,
  scopeStage,
  bodyStage,
  unsafeKeyStage,
  eraStage,
]);

/**
 * Run `stages` from `from` on `ctx` until one refuses. Synchronous while the stages answer
 * synchronously, so a request that waits on nothing is not held for the microtask queue.
 */
export function runPreflight(
  ctx: PreflightContext,
  stages: readonly PreflightStage[] = PREFLIGHT_STAGES,
  from = 0,
): Refusal | undefined | Promise<Refusal | undefined> {
  for (let index = from; index < stages.length; index++) {
    const outcome = stages[index]!(ctx);
    if (outcome instanceof Promise) {
      return outcome.then((refused) => refused ?? runPreflight(ctx, stages, index + 1));
    }
    if (outcome !== undefined) return outcome;
  }
  return undefined;
}
