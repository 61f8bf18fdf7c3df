/**
 * The Vercel AI SDK as an agent builder wires it: `createMCPClient` from `@ai-sdk/mcp` over
 * Streamable HTTP with a bearer header, its tools given to `generateText` with a step limit, and
 * the server's instructions as the system prompt (as the SDK's docs suggest). The model is the
 * SDK's own scripted test model (`MockLanguageModelV4` from `ai/test`) whose `doGenerate` reads
 * the prompt the SDK built and answers with the script's next tool call.
 */
import { createMCPClient } from '@ai-sdk/mcp';
import { generateText, isStepCount } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, it } from 'vitest';
import {
  BEARER,
  expectFullRun,
  type FlowOutcome,
  type HostResult,
  keysOnlyAudit,
  packageVersion,
  reachOf,
  requestBodies,
  startHttpHostRun,
  toolDescriptionsIn,
  useCleanupStack,
  writeHostResult,
} from './matrix.js';
import { MARKERS, probeLongCall, runFlow } from './run-flow.js';
import { FLOWS, nextStep, promptFor } from './script.js';

const cleanup = useCleanupStack();

type Part = { type: string; text?: string; output?: { type: string; value: unknown } };

/** The text of a tool-result output as the SDK gives it to the model. */
function outputText(output: { type: string; value: unknown } | undefined): string {
  if (output === undefined) return '';
  if (output.type === 'content' && Array.isArray(output.value)) {
    return (output.value as Part[])
      .map((p) => (p.type === 'text' ? (p.text ?? '') : `[${p.type}]`))
      .join('\n');
  }
  return typeof output.value === 'string' ? output.value : JSON.stringify(output.value);
}

describe('Vercel AI SDK (ai + @ai-sdk/mcp)', () => {
  it('runs every flow over HTTP with the SDK test model, and no key or token reaches its output', async () => {
    const { sess, server, audit, log } = await startHttpHostRun(cleanup);
    const outputs: string[] = [];

    const client = await createMCPClient({
      transport: { type: 'http', url: server.url, headers: { authorization: `Bearer ${BEARER}` } },
    });
    cleanup.push(() => client.close());
    const tools = await client.tools();
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        const texts: string[] = [];
        const toolResults: string[] = [];
        for (const message of options.prompt) {
          if (typeof message.content === 'string') texts.push(message.content);
          else
            for (const part of message.content as Part[]) {
              if (part.type === 'text') texts.push(part.text ?? '');
              if (part.type === 'tool-result') toolResults.push(outputText(part.output));
            }
        }
        const toolNames = (options.tools ?? []).map((t) => t.name);
        const step = nextStep({ promptText: texts.join('\n'), toolNames, toolResults });
        log.requests.push({
          api: 'doGenerate',
          body: JSON.stringify({ prompt: options.prompt, tools: options.tools }),
          toolNames,
          toolResults,
          step,
        });
        const usage = {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        };
        if (step.kind === 'tool') {
          return {
            content: [
              {
                type: 'tool-call',
                toolCallId: `call_${log.requests.length}`,
                toolName: step.name,
                input: JSON.stringify(step.arguments),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          };
        }
        return {
          content: [{ type: 'text', text: step.text }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        };
      },
    });

    const flows: FlowOutcome[] = [];
    for (const flow of FLOWS) {
      flows.push(
        await runFlow(sess, flow, log, audit, async () => {
          const result = await generateText({
            model,
            tools,
            ...(client.instructions === undefined ? {} : { system: client.instructions }),
            prompt: promptFor(flow),
            stopWhen: isStepCount(16),
          });
          outputs.push(result.text);
        }),
      );
    }
    const callTimeout = await probeLongCall(log, async () => {
      const result = await generateText({
        model,
        tools,
        prompt: promptFor('long'),
        stopWhen: isStepCount(4),
      });
      outputs.push(result.text);
    });
    audit.text(outputs.join('\n'), 'agent output');
    const keysOnly = keysOnlyAudit(sess, log);

    const bodies = requestBodies(log);
    const version = `ai ${await packageVersion('ai')}, @ai-sdk/mcp ${await packageVersion('@ai-sdk/mcp')}`;
    const result: HostResult = {
      host: 'Vercel AI SDK',
      version,
      transport: 'HTTP',
      ...reachOf(log, server.messages),
      callTimeout,
      instructions: bodies.includes(MARKERS.instructions)
        ? 'not used by the SDK itself; `client.instructions` holds them and this app puts them in `system`'
        : 'not sent to the model',
      toolDescriptions: toolDescriptionsIn(bodies),
      flows,
      notes: [],
    };
    await writeHostResult('ai-sdk-http', result);
    expectFullRun(result);
    audit.assertClean();
    keysOnly.assertClean();
  }, 180_000);
});
