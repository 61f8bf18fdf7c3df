/**
 * Gemini CLI (`@google/gemini-cli`, a Node bundle) drives the sess tools with no model: `gemini
 * --yolo -m <model> -p "<prompt>"` with `HOME` in a temporary directory whose
 * `~/.gemini/settings.json` selects Gemini API key auth and names the stdio server (behind the
 * tap) under `mcpServers`, and whose `~/.gemini/trustedFolders.json` trusts the project; the
 * Gemini API stand-in is its `GOOGLE_GEMINI_BASE_URL`. The flows and the long call run side by
 * side, in two lanes.
 *
 * Installed by `.ci/run` under `.tmp/gemini-cli-0.61.0`; under `CI=true` a missing install fails.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditRunFiles, type ChatHostLane, runChatHost, runFacts } from './chat-host-run.js';
import { geminiInstructionsWhere, startGeminiStandIn } from './gemini-stand-in.js';
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

const VERSION = '0.61.0';
/** `npm install` of this version alone on the 2-core machine, its packages in npm's cache. */
const INSTALL_SECONDS = 9;
const gemini = requireHost(
  'Gemini CLI',
  `.tmp/gemini-cli-${VERSION}/node_modules/@google/gemini-cli/bundle/gemini.js`,
  `npm install --prefix .tmp/gemini-cli-${VERSION} @google/gemini-cli@${VERSION}`,
);
const PROVIDER_KEY = 'stand-in-provider-key-not-secret';
/**
 * A model named on the command line: with its default (`auto`) it first asks a small model to
 * score the prompt's complexity (a JSON answer) to pick one.
 */
const MODEL = 'gemini-2.5-flash';

const cleanup = useCleanupStack();

/** The host's own refusal of a call's arguments, if a tool result that reached the model is one. */
function refusedInHost(results: readonly string[]): string | undefined {
  return results
    .map((r) => /^\{"error":"(params\/[^"]*)"\}$/.exec(r.trim())?.[1])
    .find((r) => r !== undefined);
}

async function configure(lane: ChatHostLane): Promise<void> {
  const { server, place } = lane;
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    model: { name: MODEL },
    mcpServers: { sess: { command: server.command, args: server.args, env: server.env, trust: true } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  };
  await mkdir(join(place.home, '.gemini'), { recursive: true });
  await writeFile(join(place.home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  await writeFile(
    join(place.home, '.gemini', 'trustedFolders.json'),
    `${JSON.stringify({ [place.project]: 'TRUST_FOLDER' }, null, 2)}\n`,
  );
}

function exec(lane: ChatHostLane, prompt: string): Promise<{ out: string; err: string }> {
  return runHostCommand(process.execPath, [gemini!, '--yolo', '-m', MODEL, '-p', prompt], {
    cwd: lane.place.project,
    env: {
      PATH: process.env.PATH,
      HOME: lane.place.home,
      GOOGLE_GEMINI_BASE_URL: lane.standIn.baseUrl,
      GEMINI_API_KEY: PROVIDER_KEY,
      // It would start a second Node with a larger heap and run in that one.
      GEMINI_CLI_NO_RELAUNCH: 'true',
      NO_COLOR: '1',
    },
    label: 'gemini',
    // A loaded 2-core machine (CI, other suites beside) took over 90 s for the long call's run.
    timeoutMs: 180_000,
    errTail: true,
  });
}

describe.skipIf(gemini === undefined)(`Gemini CLI ${VERSION}`, () => {
  it('runs every flow over stdio with no model, and no key reaches its files or output', async () => {
    const run = await runChatHost(cleanup, {
      name: 'gemini',
      startStandIn: () => startGeminiStandIn(),
      configure,
      exec,
    });
    await auditRunFiles(run, {
      config: (path) => path === '.gemini/settings.json' || path === '.gemini/trustedFolders.json',
      // Its chats and prompt history hold the conversation.
      transcript: (path) => path.startsWith('.gemini/tmp/') || path.startsWith('.gemini/history/'),
      outputIsTranscript: true,
    });
    const { bodies, offered, unserved } = runFacts(run);
    const { log } = run.lane.standIn;
    const [tapped, refusal] = [
      await readStdioTap(run.lane.server.tap),
      refusedInHost(log.requests.flatMap((r) => r.toolResults)),
    ];
    const result: HostResult = {
      host: 'Gemini CLI',
      version: VERSION,
      transport: 'stdio',
      ...reachOf(log, tapped),
      callTimeout: run.callTimeout,
      instructions: geminiInstructionsWhere(log.requests.find((r) => r.toolNames.length > 0)?.body),
      toolDescriptions: toolDescriptionsIn(bodies),
      flows: run.flows,
      seconds: { install: INSTALL_SECONDS, run: run.seconds },
      notes: [
        `Gemini CLI checks a call's arguments against the tool's input schema before it calls the server, as JSON Schema draft-07 unless the schema names draft 2020-12 in \`$schema\` (as Qwen Code, its fork, does): under \`sess-mcp-tools/6\` every listed schema does, so it validates as the server does (without it, the field cap's \`contains\` with \`minContains: 0\` read as "at least one \`field\` component" and a Surface with none was refused in the host)`,
        'a tool result reaches the model as a function response whose `output` is the text block, wrapped in `<untrusted_context>` tags; a refusal in the host reaches it as `{"error": …}`',
        `the model is named on the command line (\`-m ${MODEL}\`): with its default (\`auto\`) it first asks a small model to score the prompt (a JSON answer) to pick one`,
        'the test trusts the project in ~/.gemini/trustedFolders.json and runs it with `GEMINI_CLI_NO_RELAUNCH` (no second Node with a larger heap)',
        `tools offered: ${offered.join(', ')}`,
        'the test keeps the server env with the API key in ~/.gemini/settings.json, as a user would; that file is not scanned',
        ...(unserved.length > 0
          ? [`model API paths the stand-in does not serve: ${unserved.join(', ')}`]
          : []),
      ],
    };
    await writeHostResult('gemini-cli-stdio', result);
    await writeHostResult('gemini-cli-stdio.model-log', log.requests as never);
    // The request flow's follow-up (a Surface with no field) reaches the server: the schema states
    // its dialect, so the host's own check does not refuse it.
    expect(refusal, 'the host refused a call before the server saw it').toBeUndefined();
    expect(tapped.some((m) => m.method === 'tools/call' && m.params?.name === 'sess_publish')).toBe(true);
    expectFullRun(result);
    expect(result.toolName).toBe('mcp_sess_sess_request');
    run.audit.assertClean();
    run.keysOnly.assertClean();
  }, 420_000);
});
