/**
 * The scripted "model" of the wake recipes: given what a framework sent its model, the next step.
 * It asks with `sess_request` (the sample commit approval: actions `approve` and `stop`); when the
 * result says `waiting` and the framework offers `wait_for_person` (the OpenAI Agents recipe), it
 * calls that with the handle and revision read from the result, again when that tool says it is
 * still waiting; otherwise it ends with a text that repeats the last tool result's first line.
 * Every handle and revision is read from a tool result; nothing is hard-coded.
 */
import { parseToolResult, type ScriptInput, type ScriptStep } from '../hosts/script.js';
import { approveSurface } from '../support/surfaces.js';

/** The task each recipe is given. */
export const RECIPE_TASK = 'The commit is ready. Ask the person to approve it before it ships.';

interface Asked {
  handle: string;
  revision: number;
  state: string;
}

function interactionIn(text: string | undefined): Asked | undefined {
  const interaction = parseToolResult(text ?? '')?.interaction as Asked | undefined;
  return typeof interaction?.handle === 'string' ? interaction : undefined;
}

/** The next step of a recipe's run. */
export function recipeStep(input: ScriptInput): ScriptStep {
  const tool = (name: string, args: Record<string, unknown>): ScriptStep =>
    input.toolNames.includes(name)
      ? { kind: 'tool', tool: name, name, arguments: args }
      : { kind: 'text', text: `The host offered no ${name} tool.` };
  const results = input.toolResults;
  if (results.length === 0) return tool('sess_request', { interaction: approveSurface });
  const asked = interactionIn(results[0]);
  const last = results.at(-1)!;
  const stillWaiting = interactionIn(last)?.state === 'waiting' || last.startsWith('Still waiting');
  if (asked !== undefined && stillWaiting && input.toolNames.includes('wait_for_person')) {
    return tool('wait_for_person', { handle: asked.handle, revision: asked.revision });
  }
  return { kind: 'text', text: `Done: ${last.split('\n')[0]}` };
}
