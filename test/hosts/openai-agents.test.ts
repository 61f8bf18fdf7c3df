/**
 * The OpenAI Agents SDK as an app wires it: an `Agent` whose model is `OpenAIResponsesModel` over
 * `new OpenAI({ baseURL })` pointed at the Responses stand-in (the one that drives Codex), its MCP
 * server `MCPServerStdio` (the built bin) or `MCPServerStreamableHttp` (the matrix's HTTP
 * endpoint), run by a `Runner` with tracing off. The SDK never forwards a server's instructions,
 * so the app puts `serverInstructions()` in the agent's `instructions`, as docs/hosts.md tells it
 * to. Each transport runs twice: with the SDK's default tool output and with
 * `useStructuredContent: true`.
 *
 * The SDK needs Node 22 and is installed under `.tmp/recipes` (test/recipes/frameworks.ts), so
 * this file runs in the `recipes` project of `vitest.config.ts` and is type-checked by
 * `test/recipes/tsconfig.json`.
 */
import {
  Agent,
  type MCPServer,
  MCPServerStdio,
  MCPServerStreamableHttp,
  OpenAIResponsesModel,
  Runner,
} from '@openai/agents';
import { OpenAI } from 'openai';
import { describe, it } from 'vitest';
import { serverInstructions } from '../../src/index.js';
import type { LocalSess } from '../../src/testing/index.js';
import { NODE22_FRAMEWORKS, recipesRunnable } from '../recipes/frameworks.js';
import type { SecretsAudit } from '../support/audit.js';
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
import { startResponsesStandIn } from './responses-stand-in.js';
import { MARKERS } from './run-flow.js';
import { promptFor } from './script.js';
import type { StandInLog } from './stand-in-log.js';

const cleanup = useCleanupStack();

/** One row of the matrix: a transport, and whether the SDK forwards `structuredContent`. */
interface Row {
  transport: 'stdio' | 'HTTP';
  structured: boolean;
}

const ROWS: readonly Row[] = [
  { transport: 'stdio', structured: false },
  { transport: 'stdio', structured: true },
  { transport: 'HTTP', structured: false },
  { transport: 'HTTP', structured: true },
];

const slugOf = (row: Row) =>
  `openai-agents-${row.transport.toLowerCase()}${row.structured ? '-structured' : ''}`;

async function connectAgent(sess: LocalSess, row: Row, audit: SecretsAudit): Promise<ConnectedAgent> {
  const standIn = await startResponsesStandIn();
  cleanup.push(() => standIn.close());
  let server: MCPServer;
  let taps: AgentServerTaps;
  if (row.transport === 'stdio') {
    const { stdio, ...rest } = await agentStdioServer(sess, cleanup, 'openai-agents');
    taps = rest;
    server = new MCPServerStdio({
      name: 'sess',
      command: stdio.command,
      args: stdio.args,
      env: stdio.env,
      useStructuredContent: row.structured,
    });
  } else {
    const { url, headers, ...rest } = await agentHttpServer(sess, cleanup);
    taps = rest;
    server = new MCPServerStreamableHttp({
      name: 'sess',
      url,
      requestInit: { headers },
      useStructuredContent: row.structured,
    });
  }
  await server.connect();
  cleanup.push(() => server.close());
  const agent = new Agent({
    name: 'Host matrix agent',
    // The SDK never forwards the server's instructions: the app gives them to the agent.
    instructions: serverInstructions(),
    model: new OpenAIResponsesModel(
      new OpenAI({ baseURL: standIn.baseUrl, apiKey: 'stand-in-provider-key-not-secret' }),
      'stand-in',
    ),
    mcpServers: [server],
  });
  // Tracing off: a trace would carry the tool results, and with them the Sess links.
  const runner = new Runner({ tracingDisabled: true });
  return {
    async turn(flow) {
      const result = await runner.run(agent, promptFor(flow), { maxTurns: 20 });
      const output = String(result.finalOutput ?? '');
      audit.text(output, 'agent output');
      return output;
    },
    log: standIn.log,
    ...taps,
  };
}

/** Whether every request's Responses `instructions` are the agent's own, exactly. */
function instructionsAreTheApps(log: StandInLog): boolean {
  return log.requests.every(
    (r) => (JSON.parse(r.body) as { instructions?: unknown }).instructions === serverInstructions(),
  );
}

/** Run one row (`runRow`: the flows, and the long-call probe beside them) and write its result. */
async function matrixRun(row: Row) {
  const { host, flows, callTimeout, audit, keysOnly } = await runRow(cleanup, (sess, audit) =>
    connectAgent(sess, row, audit),
  );
  const bodies = requestBodies(host.log);
  const result: HostResult = {
    host: row.structured ? 'OpenAI Agents SDK, `useStructuredContent: true`' : 'OpenAI Agents SDK',
    version: `@openai/agents ${NODE22_FRAMEWORKS['@openai/agents']}, openai ${NODE22_FRAMEWORKS.openai} (Node ${process.versions.node})`,
    transport: row.transport,
    ...reachOf(host.log, await host.tapped()),
    callTimeout,
    instructions: !bodies.includes(MARKERS.instructions)
      ? 'not sent to the model'
      : instructionsAreTheApps(host.log)
        ? "never forwarded by the SDK: this app puts `serverInstructions()` in the agent's `instructions`, which reach the model as the Responses `instructions` (the SDK adds nothing to them)"
        : "in the Responses `instructions`, with more than the agent's own",
    toolDescriptions: toolDescriptionsIn(bodies),
    flows,
    notes: [
      `tools offered (the names the model sees): ${offeredTools(host.log).join(', ')}`,
      row.structured
        ? '`useStructuredContent: true` on the MCP server: the `function_call_output` is `JSON.stringify(structuredContent)`, a string (for an error result the SDK gives the text content instead, by its source)'
        : 'the default tool output: the one text content block, as an `input_text` item of the `function_call_output`',
      'the tools reach the model as Responses `function` tools under their own names, `strict: false`, with their descriptions and input schemas',
      "the long-call probe ran beside the flows on its own runtime, server and stand-in, with the SDK's default MCP request `timeout` (60 s, from `@modelcontextprotocol/client`)",
      'the SDK writes no files here (tracing is off: a trace would carry the tool results and the links)',
    ],
  };
  await writeRowResult(slugOf(row), result, host.log);
  return { result, audit, keysOnly };
}

describe.skipIf(!recipesRunnable())(`OpenAI Agents SDK ${NODE22_FRAMEWORKS['@openai/agents']}`, () => {
  // Each row has its own runtimes, servers and stand-ins: they wait side by side.
  it.concurrent.for<Row>(ROWS)(
    'runs every flow over $transport (useStructuredContent: $structured) with a scripted model, and no key or token reaches the model',
    { timeout: 180_000 },
    async (row, { expect }) => {
      const { result, audit, keysOnly } = await matrixRun(row);
      expectFullRun(result);
      expect(result.reachesModel).toBe(row.structured ? 'structuredContent' : 'text content');
      audit.assertClean();
      keysOnly.assertClean();
    },
  );
});
