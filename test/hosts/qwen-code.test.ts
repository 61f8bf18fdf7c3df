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
import { auditLaneFiles, type ChatHostLane, runChatHost } from './chat-host-run.js';
import {
  expectFullRun,
  type HostResult,
  reachOf,
  readStdioTap,
  requestBodies,
  requireHost,
  runHostCommand,
  toolDescriptionsIn,
  useCleanupStack,
  writeHostResult,
} from './matrix.js';
import { MARKERS } from './run-flow.js';

const VERSION = '0.24.4';
const qwen = requireHost(
  'Qwen Code',
  `.tmp/qwen-code-${VERSION}/node_modules/@qwen-code/qwen-code/cli.js`,
  `npm install --prefix .tmp/qwen-code-${VERSION} @qwen-code/qwen-code@${VERSION}`,
);
const PROVIDER_KEY = 'stand-in-provider-key-not-secret';

const cleanup = useCleanupStack();

async function configure(lane: ChatHostLane): Promise<void> {
  const { server, standIn, place } = lane;
  const settings = {
    security: { auth: { selectedType: 'openai', baseUrl: standIn.baseUrl, apiKey: PROVIDER_KEY } },
    model: { name: 'stand-in' },
    mcpServers: { sess: { command: server.command, args: server.args, env: server.env, trust: true } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
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
    },
    label: 'qwen',
    timeoutMs: 90_000,
    errTail: true,
  });
}

describe.skipIf(qwen === undefined)(`Qwen Code ${VERSION}`, () => {
  it('runs every flow over stdio with no model, and no key reaches its files or output', async () => {
    const run = await runChatHost(cleanup, { name: 'qwen', configure, exec });
    const { lane, probe } = run;
    for (const l of [lane, probe]) {
      await auditLaneFiles(l, run, {
        config: (path) => path === '.qwen/settings.json',
        transcript: (path) => path.startsWith('.qwen/projects/') || path.startsWith('.qwen/tmp/'),
        outputIsTranscript: true,
      });
    }
    const log = lane.standIn.log;
    const bodies = requestBodies(log);
    const offered = [...new Set(log.requests.flatMap((r) => r.toolNames))].sort();
    const result: HostResult = {
      host: 'Qwen Code',
      version: VERSION,
      transport: 'stdio',
      ...reachOf(log, await readStdioTap(lane.server.tap)),
      callTimeout: run.callTimeout,
      instructions: bodies.includes(MARKERS.instructions) ? 'in the system prompt' : 'not sent to the model',
      toolDescriptions: toolDescriptionsIn(bodies),
      flows: run.flows,
      notes: [
        `tools offered: ${offered.join(', ')}`,
        'the host keeps the server env with the API key in ~/.qwen/settings.json, written by the test as a user would; that file is not scanned',
        `run seconds: ${run.seconds} (the flows and the long call side by side)`,
        ...([...lane.standIn.unserved, ...probe.standIn.unserved].length > 0
          ? [
              `model API paths the stand-in does not serve: ${[...new Set([...lane.standIn.unserved, ...probe.standIn.unserved])].join(', ')}`,
            ]
          : []),
      ],
    };
    await writeHostResult('qwen-code-stdio', result);
    await writeHostResult('qwen-code-stdio.model-log', log.requests as never);
    expectFullRun(result);
    expect(result.toolName).not.toBe('not offered');
    run.audit.assertClean();
    run.keysOnly.assertClean();
  }, 240_000);
});
