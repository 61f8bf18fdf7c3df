/**
 * The `tool` job of the store worker (`worker.ts`): one tool call through a real engine, on the
 * worker's file store and the local Sess runtime of the test process (its origin and key come in
 * the environment, `SESS_WORKER_ORIGIN` and `SESS_WORKER_API_KEY`, never in argv). It prints the
 * call's outcome by state or code, never a link or an answer.
 */
import type { Authority, HandleStoreFactory, StdioBinding } from '../../src/core/contract/ports.js';
import type { ToolName } from '../../src/core/contract/tool-args.js';
import { createSessEngine } from '../../src/core/engine/engine.js';
import { createSessClient } from '../../src/sess/index.js';
import { outcomeOf } from '../support/outcome.js';

/** One tool call of the `tool` job. */
export interface ToolJob {
  tool: ToolName;
  args: Record<string, unknown>;
}

/** Run `job` as the stdio profile `binding` on `factory`; the outcome as a one-entry tally. */
export async function runTool(
  job: ToolJob,
  binding: StdioBinding,
  factory: HandleStoreFactory,
): Promise<Record<string, number | string>> {
  const apiKey = process.env.SESS_WORKER_API_KEY ?? '';
  const sess = createSessClient({
    origin: process.env.SESS_WORKER_ORIGIN ?? '',
    credential: () => apiKey,
    allowInsecureLocalhost: true,
  });
  const authority: Authority = {
    resolve: async () => ({ binding, sess, store: factory.forBinding(binding) }),
  };
  const outcome = outcomeOf(await createSessEngine({ authority }).call(job.tool, job.args));
  if (outcome.ok) return { ok: 1, state: outcome.interaction.state };
  const { code, reason } = outcome.error;
  return { [reason === undefined ? code : `${code}:${reason}`]: 1 };
}
