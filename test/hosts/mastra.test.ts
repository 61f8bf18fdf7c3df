/**
 * Mastra as an app wires it: an `Agent` of `@mastra/core` whose model is an OpenAI-compatible
 * provider (`model: { id, url, apiKey, api: 'chat' }`) pointed at the Chat Completions stand-in,
 * its tools `MCPClient.listTools()` of `@mastra/mcp` with our server under the key `sess`, so the
 * model sees `sess_<tool>` prefixed once more (`sess_sess_request`). Mastra forwards a server's
 * instructions into the agent's system prompt only with `forwardInstructions: true`, cut at
 * `instructionsMaxLength` (512 characters by default), so both rows opt in: the stdio row serves
 * the short form (`SESS_MCP_INSTRUCTIONS=short`, at most 512 characters), the HTTP row the full
 * form, which the default cut shortens.
 *
 * Mastra needs Node ≥ 22.13 and is installed under `.tmp/recipes` (test/recipes/frameworks.ts),
 * so this file runs in the `recipes` project of `vitest.config.ts` and is type-checked by
 * `test/recipes/tsconfig.json`.
 */
import { Agent } from '@mastra/core/agent';
import { MCPClient } from '@mastra/mcp';
import { describe, it } from 'vitest';
import { serverInstructions } from '../../src/index.js';
import type { LocalSess } from '../../src/testing/index.js';
import { NODE22_FRAMEWORKS, recipesRunnable } from '../recipes/frameworks.js';
import type { SecretsAudit } from '../support/audit.js';
import { startChatCompletionsStandIn, systemMessages } from './chat-completions-stand-in.js';
import {
  type AgentServerTaps,
  agentHttpServer,
  agentStdioServer,
  type ConnectedAgent,
  offeredTools,
  runRow,
  writeRowResult,
} from './framework-row.js';
import {
  expectFullRun,
  type HostResult,
  reachOf,
  requestBodies,
  toolDescriptionsIn,
  useCleanupStack,
} from './matrix.js';
import { promptFor } from './script.js';
import type { StandInLog } from './stand-in-log.js';

const cleanup = useCleanupStack();

/** One row: a transport, and the form of the instructions the server sends. */
interface Row {
  transport: 'stdio' | 'HTTP';
  form: 'short' | 'full';
}

const ROWS: readonly Row[] = [
  { transport: 'stdio', form: 'short' },
  { transport: 'HTTP', form: 'full' },
];

const slugOf = (row: Row) => `mastra-${row.transport.toLowerCase()}`;

/** The heading Mastra puts before a server's forwarded instructions. */
const GUIDANCE_HEADING = '## Guidance from MCP server "sess"';

async function connectAgent(sess: LocalSess, row: Row, audit: SecretsAudit): Promise<ConnectedAgent> {
  const standIn = await startChatCompletionsStandIn();
  cleanup.push(() => standIn.close());
  let taps: AgentServerTaps;
  let mcp: MCPClient;
  // Each client its own id: Mastra refuses a second client of the same configuration otherwise.
  const id = `sess-host-matrix-${Math.random().toString(36).slice(2)}`;
  if (row.transport === 'stdio') {
    const { stdio, ...rest } = await agentStdioServer(sess, cleanup, 'mastra', {
      SESS_MCP_INSTRUCTIONS: row.form,
    });
    taps = rest;
    mcp = new MCPClient({
      id,
      servers: {
        sess: { command: stdio.command, args: stdio.args, env: stdio.env, forwardInstructions: true },
      },
    });
  } else {
    const { url, headers, ...rest } = await agentHttpServer(sess, cleanup);
    taps = rest;
    mcp = new MCPClient({
      id,
      servers: { sess: { url: new URL(url), requestInit: { headers }, forwardInstructions: true } },
    });
  }
  cleanup.push(() => mcp.disconnect());
  const agent = new Agent({
    id: 'host-matrix-agent',
    name: 'Host matrix agent',
    instructions: 'You are the host matrix agent.',
    model: {
      id: 'stand-in/scripted',
      url: standIn.baseUrl,
      apiKey: 'stand-in-provider-key-not-secret',
      api: 'chat',
    },
    tools: await mcp.listTools(),
  });
  return {
    async turn(flow) {
      const result = await agent.generate(promptFor(flow), { maxSteps: 20 });
      const output = result.text ?? '';
      audit.text(output, 'agent output');
      return output;
    },
    log: standIn.log,
    ...taps,
  };
}

const isGuidance = (text: string) => text.startsWith(GUIDANCE_HEADING);

/** What of the server's instructions reached the model, in which system message. */
function instructionsReached(log: StandInLog, form: Row['form']): string {
  const sent = serverInstructions(undefined, form);
  const messages = log.requests.map((r) => systemMessages(r.body)).find((m) => m.some(isGuidance));
  const system = messages?.find(isGuidance);
  if (messages === undefined || system === undefined) return 'not sent to the model';
  const where =
    messages.indexOf(system) > 0
      ? "in a system message of its own after the agent's instructions"
      : 'in the first system message';
  const forwarded = system.slice(GUIDANCE_HEADING.length).trim();
  const name = form === 'short' ? 'short form' : 'full form';
  if (forwarded.startsWith(sent.trim())) {
    return `${where}, under \`${GUIDANCE_HEADING}\` (\`forwardInstructions: true\`): the ${name} whole (${sent.length} characters)`;
  }
  const kept = sent.startsWith(forwarded) ? forwarded.length : 0;
  return `${where}, under \`${GUIDANCE_HEADING}\` (\`forwardInstructions: true\`): the ${name} cut to its first ${kept} of ${sent.length} characters (\`instructionsMaxLength\`, 512 by default)`;
}

/** One Mastra row: `runRow` (the flows, and the long-call probe beside them), then its result. */
async function mastraRow(row: Row) {
  const run = await runRow(cleanup, (sess, audit) => connectAgent(sess, row, audit));
  const { host } = run;
  const result: HostResult = {
    host: 'Mastra',
    transport: row.transport,
    version: `@mastra/mcp ${NODE22_FRAMEWORKS['@mastra/mcp']}, @mastra/core ${NODE22_FRAMEWORKS['@mastra/core']} (Node ${process.versions.node})`,
    ...reachOf(host.log, await host.tapped()),
    instructions: instructionsReached(host.log, row.form),
    toolDescriptions: toolDescriptionsIn(requestBodies(host.log)),
    callTimeout: run.callTimeout,
    flows: run.flows,
    notes: [
      `tools offered (the names the model sees): ${offeredTools(host.log).join(', ')}`,
      row.form === 'short'
        ? 'the server sends the short instructions (`SESS_MCP_INSTRUCTIONS=short`), which fit in the 512 characters Mastra forwards by default'
        : 'the server sends the full instructions (the default), which the default `instructionsMaxLength` of 512 cuts: serve the short form, or raise the limit',
      'the model is `{ id, url, apiKey, api: "chat" }`, an OpenAI-compatible provider, pointed at the Chat Completions stand-in',
      "the long-call probe ran beside the flows on its own runtime, server and stand-in, with Mastra's default MCP `timeout` (60 s: `DEFAULT_REQUEST_TIMEOUT_MSEC` of `@modelcontextprotocol/client`, by its source)",
      '`agent.generate` asks the provider without `stream`; the tool results reach the model as `tool` messages holding the `structuredContent` JSON (Mastra turns the result of a tool with an `outputSchema` into that)',
    ],
  };
  await writeRowResult(slugOf(row), result, host.log);
  return { result, audit: run.audit, keysOnly: run.keysOnly };
}

describe.skipIf(!recipesRunnable())(`Mastra ${NODE22_FRAMEWORKS['@mastra/mcp']}`, () => {
  // Each row has its own runtimes, servers and stand-ins: they wait side by side.
  it.concurrent.for<Row>(ROWS)(
    'runs every flow over $transport ($form instructions, forwarded) with a scripted model, and no key or token reaches the model',
    { timeout: 180_000 },
    async (row, { expect }) => {
      const { result, audit, keysOnly } = await mastraRow(row);
      expectFullRun(result);
      expect(result.toolName).toBe('sess_sess_request');
      expect(result.instructions).toMatch(/^in a system message/);
      audit.assertClean();
      keysOnly.assertClean();
    },
  );
});
