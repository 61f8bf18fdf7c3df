import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit } from '../support/audit.js';
import {
  expectFullRun,
  type FlowOutcome,
  type HostResult,
  hostPlace,
  hostStdioServer,
  keysOnlyAudit,
  reachOf,
  readStdioTap,
  readTree,
  requestBodies,
  requireHost,
  runHostCommand,
  toolDescriptionsIn,
  useCleanupStack,
  writeHostResult,
} from './matrix.js';
import { startResponsesStandIn } from './responses-stand-in.js';
import { MARKERS, probeLongCall, runFlow } from './run-flow.js';
import { FLOWS, promptFor } from './script.js';

const VERSION = '0.171.0';
const codex = requireHost(
  'Codex CLI',
  `.tmp/codex-${VERSION}/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex`,
  `npm install --prefix .tmp/codex-${VERSION} @openai/codex@${VERSION}`,
);
const PROVIDER_KEY = 'stand-in-provider-key-not-secret';

const cleanup = useCleanupStack();

const toml = (value: string) => JSON.stringify(value);

/** Whether a Responses request carries `text` in the description of a `namespace` tool. */
function namespaceDescribes(body: string, text: string): boolean {
  const parsed = JSON.parse(body) as { tools?: Array<{ type?: string; description?: string }> };
  return (parsed.tools ?? []).some((t) => t.type === 'namespace' && (t.description ?? '').includes(text));
}

function codexExec(home: string, cwd: string, prompt: string): Promise<{ out: string; err: string }> {
  return runHostCommand(
    codex!,
    [
      'exec',
      '--skip-git-repo-check',
      '--json',
      '-s',
      'read-only',
      '-c',
      'approval_policy="never"',
      '--disable',
      'incremental_tools',
      prompt,
    ],
    {
      cwd,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        CODEX_HOME: join(home, '.codex'),
        STANDIN_API_KEY: PROVIDER_KEY,
      },
      label: 'codex exec',
      timeoutMs: 90_000,
      errTail: true,
    },
  );
}

describe.skipIf(codex === undefined)(`Codex CLI ${VERSION}`, () => {
  it('runs every flow over stdio with no model, and no key reaches its files or output', async () => {
    const sess: LocalSess = await startLocalSess();
    cleanup.push(() => sess.close());
    const standIn = await startResponsesStandIn();
    cleanup.push(() => standIn.close());
    const { home, project } = await hostPlace(cleanup, 'codex');
    const server = hostStdioServer(sess, home);
    await mkdir(join(home, '.codex'), { recursive: true });
    const config = [
      'model = "stand-in"',
      'model_provider = "standin"',
      '[model_providers.standin]',
      'name = "stand-in"',
      `base_url = ${toml(standIn.baseUrl)}`,
      'wire_api = "responses"',
      'env_key = "STANDIN_API_KEY"',
      '[mcp_servers.sess]',
      `command = ${toml(server.command)}`,
      `args = [${server.args.map(toml).join(', ')}]`,
      'default_tools_approval_mode = "approve"',
      // Start the turn only once the server is up (else the first model request may lack its tools).
      'required = true',
      '[mcp_servers.sess.env]',
      ...Object.entries(server.env).map(([name, value]) => `${name} = ${toml(value)}`),
      '',
    ].join('\n');
    await writeFile(join(home, '.codex', 'config.toml'), config);

    const audit = createSecretsAudit();
    audit.secret(sess.apiKey, 'sess api key');
    const outputs: string[] = [];
    const events: string[] = [];
    const retries: string[] = [];
    /**
     * One `codex exec`; when none of its model requests offered a sess tool (the MCP server was
     * still starting when the turn began), run it once more and say so.
     */
    const exec = async (prompt: string, label: string) => {
      for (let attempt = 1; ; attempt += 1) {
        const before = standIn.log.requests.length;
        const { out, err } = await codexExec(home, project, prompt);
        events.push(out);
        outputs.push(err);
        const offered = standIn.log.requests
          .slice(before)
          .some((r) => r.toolNames.some((n) => n.includes('sess_')));
        if (offered || attempt === 2) return;
        retries.push(label);
      }
    };
    const flows: FlowOutcome[] = [];
    for (const flow of FLOWS) {
      flows.push(await runFlow(sess, flow, standIn.log, audit, () => exec(promptFor(flow), flow)));
    }
    const callTimeout = await probeLongCall(standIn.log, () => exec(promptFor('long'), 'long call'));
    const keysOnly = keysOnlyAudit(sess, standIn.log, { bearer: false });
    // Where Codex keeps the conversation: its rollout files and thread history database.
    const transcript = (path: string) =>
      path.startsWith('.codex/sessions/') ||
      path.startsWith('.codex/thread_history_') ||
      path.startsWith('.codex/history');
    for (const file of await readTree(home)) {
      if (file.path === '.codex/config.toml') continue;
      (transcript(file.path) ? keysOnly : audit).text(file.text, `host file ${file.path}`);
    }
    audit.text(outputs.join('\n'), 'host stderr');
    // `codex exec --json` prints the conversation's events (tool results among them): a transcript.
    keysOnly.text(events.join('\n'), 'host event stream');

    const bodies = requestBodies(standIn.log);
    const result: HostResult = {
      host: 'Codex CLI',
      version: VERSION,
      transport: 'stdio',
      ...reachOf(standIn.log, await readStdioTap(server.tap)),
      callTimeout,
      instructions: standIn.log.requests.some((r) => namespaceDescribes(r.body, MARKERS.instructions))
        ? "as the description of the server's tool namespace"
        : bodies.includes(MARKERS.instructions)
          ? 'elsewhere in the request'
          : 'not sent to the model',
      toolDescriptions: toolDescriptionsIn(bodies),
      flows,
      notes: [
        `tools offered: ${[...new Set(standIn.log.requests.flatMap((r) => r.toolNames))].sort().join(', ')}`,
        'the host keeps the server env with the API key in ~/.codex/config.toml, written by the test as a user would; that file is not scanned',
        'links and answers appear in its transcript only: ~/.codex/sessions/, ~/.codex/thread_history_*.sqlite and the `codex exec --json` event stream',
        'MCP tools reach the model as one Responses `namespace` tool per server (`mcp__sess`) whose description is the server instructions; when tried with the default `incremental_tools` feature, the first model request carried no MCP tools; this run passes `--disable incremental_tools` and marks the server `required = true` (the turn starts once it is up)',
        ...(retries.length > 0
          ? [
              `run again once because no model request offered the sess tools (the MCP server was still starting): ${retries.join(', ')}`,
            ]
          : []),
        ...(standIn.unserved.length > 0
          ? [`model API paths the stand-in does not serve: ${[...new Set(standIn.unserved)].join(', ')}`]
          : []),
      ],
    };
    await writeHostResult('codex-stdio', result);
    await writeHostResult('codex-stdio.model-log', standIn.log.requests as never);
    expectFullRun(result);
    audit.assertClean();
    keysOnly.assertClean();
  }, 300_000);
});
