/**
 * opencode (`opencode-ai`, its Linux binary from the platform package `opencode-linux-x64`) drives
 * the sess tools with no model: `opencode run "<prompt>"` in a temporary project whose
 * `opencode.json` names the Chat Completions stand-in as a custom `@ai-sdk/openai-compatible`
 * provider and the stdio server (behind the tap) as a local `mcp` entry, with `HOME` in a
 * temporary directory. The flows and the long call run side by side, in two lanes.
 *
 * Installed by `.ci/run` under `.tmp/opencode-1.18.33`; under `CI=true` a missing install fails.
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

const VERSION = '1.18.33';
/** `npm install` of this version on the 2-core machine, four hosts installing side by side. */
const INSTALL_SECONDS = 67;
const opencode = requireHost(
  'opencode',
  `.tmp/opencode-${VERSION}/node_modules/opencode-linux-x64/bin/opencode`,
  `npm install --prefix .tmp/opencode-${VERSION} opencode-ai@${VERSION}`,
);
const PROVIDER_KEY = 'stand-in-provider-key-not-secret';
/** How long opencode waits for the server's tool list (its `timeout`, in ms). */
const LIST_TIMEOUT_MS = 20_000;

const cleanup = useCleanupStack();

async function configure(lane: ChatHostLane): Promise<void> {
  const { server, standIn, place } = lane;
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    provider: {
      standin: {
        npm: '@ai-sdk/openai-compatible',
        name: 'stand-in',
        options: { baseURL: standIn.baseUrl, apiKey: PROVIDER_KEY },
        models: { 'stand-in': { name: 'stand-in', tool_call: true } },
      },
    },
    model: 'standin/stand-in',
    mcp: {
      sess: {
        type: 'local',
        command: [server.command, ...server.args],
        environment: server.env,
        enabled: true,
        timeout: LIST_TIMEOUT_MS,
      },
    },
  };
  await writeFile(join(place.project, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  await seedConfigDir(join(place.home, '.config', 'opencode'));
}

/**
 * At every start opencode installs its plugin SDK (`@opencode-ai/plugin`, with `effect` and
 * `@opentui/*`, about 50 MB) into its config directory from the npm registry, in the background,
 * unless the directory has `node_modules` and a `package-lock.json` whose root lists every
 * dependency of its `package.json` and the SDK (its `Npm.install`, "checkDirty"). No test flow
 * loads a plugin, so the test seeds the directory as installed: no registry traffic, no install
 * racing the run for the two cores.
 */
async function seedConfigDir(dir: string): Promise<void> {
  const dependencies = { '@opencode-ai/plugin': VERSION };
  await mkdir(join(dir, 'node_modules'), { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  await writeFile(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies } } }, null, 2)}\n`,
  );
}

function exec(lane: ChatHostLane, prompt: string): Promise<{ out: string; err: string }> {
  return runHostCommand(opencode!, ['run', prompt], {
    cwd: lane.place.project,
    env: {
      PATH: process.env.PATH,
      HOME: lane.place.home,
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_SHARE: '1',
      // No internal auth plugins (Copilot, Codex, …), external plugins, Claude Code prompts and
      // skills, LSP downloads or file watcher: none is part of a flow, each costs start-up time.
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_PURE: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: '1',
      NO_COLOR: '1',
    },
    label: 'opencode run',
    // A loaded 2-core machine (CI, other suites beside) took over 90 s for the long call's run.
    timeoutMs: 180_000,
    errTail: true,
  });
}

describe.skipIf(opencode === undefined)(`opencode ${VERSION}`, () => {
  it('runs every flow over stdio with no model, and no key reaches its files or output', async () => {
    const run = await runChatHost(cleanup, { name: 'opencode', configure, exec });
    await auditRunFiles(run, {
      config: (path) => path === 'opencode.json',
      // Its session database and log hold the conversation.
      transcript: (path) => path.startsWith('.local/share/opencode/'),
      outputIsTranscript: true,
    });
    const { lane } = run;
    const log = lane.standIn.log;
    const { bodies, offered, unserved } = runFacts(run);
    const result: HostResult = {
      host: 'opencode',
      version: VERSION,
      transport: 'stdio',
      ...reachOf(log, await readStdioTap(lane.server.tap)),
      callTimeout: run.callTimeout,
      instructions: instructionsWhere(log.requests.find((r) => r.toolNames.length > 0)?.body),
      toolDescriptions: toolDescriptionsIn(bodies),
      flows: run.flows,
      seconds: { install: INSTALL_SECONDS, run: run.seconds },
      notes: [
        `tools offered: ${offered.join(', ')}`,
        'the binary comes from the platform package opencode-linux-x64 (no install script needed); at every start it installs its plugin SDK (@opencode-ai/plugin, with effect and @opentui/*, about 50 MB) from the npm registry into ~/.config/opencode unless that directory’s package-lock.json lists it: the test seeds the directory as installed, and runs with its internal and external plugins, Claude Code prompts and skills, LSP downloads and file watcher off (OPENCODE_DISABLE_DEFAULT_PLUGINS, OPENCODE_PURE, …), so a run makes no request off the machine',
        'each `opencode run` takes 5–14 s (an idle or a loaded 2-core machine) from its start to its first model request',
        'the test keeps the server env with the API key in the project’s opencode.json, as a user would; that file is not scanned',
        ...(unserved.length > 0
          ? [`model API paths the stand-in does not serve: ${unserved.join(', ')}`]
          : []),
      ],
    };
    await writeHostResult('opencode-stdio', result);
    await writeHostResult('opencode-stdio.model-log', log.requests as never);
    expectFullRun(result);
    expect(result.toolName).not.toBe('not offered');
    run.audit.assertClean();
    run.keysOnly.assertClean();
  }, 420_000);
});
