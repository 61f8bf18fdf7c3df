/**
 * The named durable steps of every mutation (`create.<step>`, `publish.<step>`, `complete.<step>`),
 * in the order the engine reaches them, and the (tool, step) cell a crash matrix is a table of:
 * the crash suites try each one.
 */
import type { DurableStep } from '../../src/core/engine/types.js';

/** The step names after the operation's prefix, in order. */
export const STEP_NAMES = [
  'before_intent_saved',
  'after_intent_saved',
  'after_request_sent',
  'after_response',
  'before_record_saved',
  'after_record_saved',
] as const satisfies readonly (DurableStep extends `${string}.${infer S}` ? S : never)[];

/** One step name. */
export type StepName = (typeof STEP_NAMES)[number];

/**
 * One cell of a crash matrix: the tool an agent calls and the durable step at which the server
 * dies. A matrix is a table of these, one row per cell.
 */
export interface CrashPoint<Tool extends string = string> {
  tool: Tool;
  step: DurableStep;
}
