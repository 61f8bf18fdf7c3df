/**
 * Qwen Code (`@qwen-code/qwen-code`, a Node bundle) drives the sess tools with no model: `qwen
 * --yolo "<prompt>"` with `HOME` in a temporary directory whose `~/.qwen/settings.json` names the
 * Chat Completions stand-in as its OpenAI-compatible provider and the stdio server (behind the
 * tap) under `mcpServers`. The flows and the long call run side by side, in two lanes.
 *
 * Installed by `.ci/run` under `.tmp/qwen-code-0.24.4`; under `CI=true` a missing install fails.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  auditRunFiles,
  type ChatHostLane,
  instructionsWhere,
  runChatHost,
  runFacts,
} from './chat-host-run.js';
import {
  expectFullRun,
  type HostResult,
  reachOf,
  readStdioTap,
  requireHost,
  runHostCommand,
  toolDescriptionsIn,
  useCleanupStack,
  writeHostResult,
} from './matrix.js';

const VERSION = '0.24.4';
/** `npm install` of this version on the 2-core machine, four hosts installing side by side. */
const INSTALL_SECONDS = 39;
const qwen = requireHost(
  'Qwen Code',
  `.tmp/qwen-code-${VERSION}/node_modules/@qwen-code/qwen-code/cli.js`,
  `npm install --prefix .tmp/qwen-code-${VERSION} @qwen-code/qwen-code@${VERSION}`,
);
const PROVIDER_KEY = 'stand-in-provider-key-not-secret';

const cleanup = useCleanupStack();

/** The host's own refusal of a call's arguments, if a tool result that reached the model is one. */
function refusedInHost(results: readonly string[]): string | undefined {
  return results.find((r) => r.startsWith('params/'))?.split('\n')[0];
}

async function configure(lane: ChatHostLane): Promise<void> {
  const { server, standIn, place } = lane;
  const settings = {
    security: { auth: { selectedType: 'openai', baseUrl: standIn.baseUrl, apiKey: PROVIDER_KEY } },
    model: { name: 'stand-in' },
    mcpServers: { sess: { command: server.command, args: server.args, env: server.env, trust: true } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    // No `systemd-inhibit` child per model stream and tool call (two a turn).
    general: { disableAutoUpdate: true, disableUpdateNag: true, preventSystemSleep: false },
  };
  await mkdir(join(place.home, '.qwen'), { recursive: true });
  await writeFile(join(place.home, '.qwen', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
}

function exec(lane: ChatHostLane, prompt: string): Promise<{ out: string; err: string }> {
  return runHostCommand(process.execPath, [qwen!, '--yolo', '--output-format', 'json', prompt], {
    cwd: lane.place.project,
    env: {
      PATH: process.env.PATH,
      HOME: lane.place.home,
      OPENAI_BASE_URL: lane.standIn.baseUrl,
      OPENAI_API_KEY: PROVIDER_KEY,
      OPENAI_MODEL: 'stand-in',
      NO_COLOR: '1',
      QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
      // It would start a second Node with a larger heap and run in that one: 2–4 s a run.
      QWEN_CODE_NO_RELAUNCH: 'true',
    },
    label: 'qwen',
    // A loaded 2-core machine (CI, other suites beside) took over 90 s for the long call's run.
    timeoutMs: 180_000,
    errTail: true,
  });
}

describe.skipIf(qwen === undefined)(`Qwen Code ${VERSION}`, () => {
  it('runs every flow over stdio with no model, and no key reaches its files or output', async () => {
    const run = await runChatHost(cleanup, { name: 'qwen', configure, exec });
    await auditRunFiles(run, {
      config: (path) => path === '.qwen/settings.json',
      transcript: (path) => path.startsWith('.qwen/projects/') || path.startsWith('.qwen/tmp/'),
      outputIsTranscript: true,
    });
    const { lane } = run;
    const log = lane.standIn.log;
    const { bodies, offered, unserved } = runFacts(run);
    const tapped = await readStdioTap(lane.server.tap);
    const refusal = refusedInHost(log.requests.flatMap((r) => r.toolResults));
    const result: HostResult = {
      host: 'Qwen Code',
      version: VERSION,
      transport: 'stdio',
      ...reachOf(log, tapped),
      callTimeout: run.callTimeout,
      instructions: instructionsWhere(log.requests[0]?.body),
      toolDescriptions: toolDescriptionsIn(bodies),
      flows: run.flows,
      seconds: { install: INSTALL_SECONDS, run: run.seconds },
      notes: [
        `Qwen Code checks a call's arguments against the tool's input schema before it calls the server, as JSON Schema draft-07 unless the schema names draft 2020-12 in \`$schema\`: under \`sess-mcp-tools/6\` every listed schema does, so it validates as the server does (without it, the field cap's \`contains\` with \`minContains: 0\` read as "at least one \`field\` component" and a Surface with none was refused in the host)`,
        'MCP tools are deferred: the model sees their names and short descriptions in a system reminder, reviews a schema with `tool_search` (`select:<name>`; one tool a search, since the seven sess schemas together, about 35 KB, go over its output budget and reach the model as a file path and an empty preview) and calls it through `tool_call`',
        'a tool result reaches the model as the `structuredContent` JSON on its first line, then the text block',
        `tools offered: ${offered.join(', ')}`,
        'the test runs it with `QWEN_CODE_NO_RELAUNCH` (no second Node with a larger heap) and `general.preventSystemSleep: false` (no `systemd-inhibit` child per model stream and tool call); each `qwen` run takes 4–7 s from its start to its first model request and exits right after its last',
        'after each turn it sends its model a memory-extraction request (no tools; the stand-in answers it with a short text)',
        'the test keeps the server env with the API key in ~/.qwen/settings.json, as a user would; that file is not scanned',
        ...(unserved.length > 0
          ? [`model API paths the stand-in does not serve: ${unserved.join(', ')}`]
          : []),
      ],
    };
    await writeHostResult('qwen-code-stdio', result);
    await writeHostResult('qwen-code-stdio.model-log', log.requests as never);
    // The request flow's follow-up (a Surface with no field) reaches the server: the schema states
    // its dialect, so the host's own check does not refuse it.
    expect(refusal, 'the host refused a call before the server saw it').toBeUndefined();
    expect(tapped.some((m) => m.method === 'tools/call' && m.params?.name === 'sess_publish')).toBe(true);
    expectFullRun(result);
    expect(result.toolName).toBe('mcp__sess__sess_request (deferred: named in the prompt)');
    run.audit.assertClean();
    run.keysOnly.assertClean();
  }, 420_000);
});
