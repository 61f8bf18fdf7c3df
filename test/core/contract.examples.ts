/**
 * The JSDoc examples of the tool contract, kept compiling (type-checked with the tests, never run).
 */
import { SessMcpError } from '../../src/core/errors.js';
import { toolInputJsonSchema } from '../../src/core/json-schema.js';
import { toolError, toolSuccess } from '../../src/core/result.js';
import { TOOL_DEFINITIONS } from '../../src/core/tool-definitions.js';
import { askToSurface, parseToolArguments } from '../../src/core/validate.js';

export function parseExample(): void {
  const args = parseToolArguments('sess_response', { handle: 'h_1', revision: 1 });
  const wait: number = args.wait_ms ?? 45_000;
  void wait;
}

export function resultExample(handle: string): void {
  const waiting = toolSuccess('sess_response', { handle, revision: 1, state: 'waiting' });
  const failed = toolError(new SessMcpError('HANDLE_NOT_FOUND', 'No interaction has this handle.'));
  void waiting;
  void failed;
}

export function schemaExample(): void {
  const schema = toolInputJsonSchema('sess_response'); // { type: 'object', properties: { handle, … } }
  const listed = TOOL_DEFINITIONS.sess_ask.inputSchema;
  void schema;
  void listed;
}

export function askExample(): void {
  const args = parseToolArguments('sess_ask', {
    question: 'What time works for a call tomorrow?',
    fields: [{ name: 'time', label: 'Best time', type: 'choice', options: ['Morning', 'Afternoon'] }],
  });
  const surface = askToSurface(args);
  void surface.actions[0]?.label; // "Send"
}
