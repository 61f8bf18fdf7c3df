/**
 * Claude Code (`@anthropic-ai/claude-code`, its Linux binary from the platform package) drives the
 * sess tools with no model: `claude -p` in a temporary git repository with `HOME` in a temporary
 * directory, `ANTHROPIC_BASE_URL` pointing at the Messages stand-in, the tools allowed by name.
 * Over stdio (`claude mcp add … -- node …/sess-mcp.js`, through a pass-through tap that logs what
 * the host sent) and over HTTP (`claude mcp add --transport http` with a bearer header).
 *
 * Installed by `.ci/run` under `.tmp/claude-code-2.1.332`; under `CI=true` a missing install fails.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';
import {
  ANSWERED_NEXT,
  COMPLETED_NEXT,
  REWAIT_LINE,
  SHOW_LINK_NEXT,
  WITHDRAWN_NEXT,
} from '../../src/core/contract/result.js';
import { TOOL_NAMES } from '../../src/core/contract/schemas.js';
import { SCHEDULE_RULE } from '../../src/core/contract/tool-definitions.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit } from '../support/audit.js';
import { type AnthropicStandIn, readMessages, startAnthropicStandIn } from './anthropic-stand-in.js';
import {
  auditClaudeCodeFiles,
  BEARER,
  claudeMcpAddStdio,
  expectFullRun,
  type FlowOutcome,
  type HostPlace,
  type HostResult,
  hostPlace,
  hostStdioServer,
  keysOnlyAudit,
  reachOf,
  readStdioTap,
  requestBodies,
  requireHost,
  runHostCommand,
  startHostHttpServer,
  type TappedMessage,
  useCleanupStack,
  writeHostResult,
} from './matrix.js';
import { MARKERS, probeLongCall, runFlow } from './run-flow.js';
import { FLOWS, promptFor } from './script.js';
import { nextSentences } from './stand-in-log.js';

const run = promisify(execFile);
const VERSION = '2.1.332';
const claude = requireHost(
  'Claude Code',
  `.tmp/claude-code-${VERSION}/node_modules/@anthropic-ai/claude-code-linux-x64/claude`,
  `npm install --prefix .tmp/claude-code-${VERSION} @anthropic-ai/claude-code@${VERSION}`,
);
const TOOLS = TOOL_NAMES.map((t) => `mcp__sess__${t}`).join(',');
const SCHEDULING_TOOLS = ['ScheduleWakeup', 'CronCreate', 'Monitor'];

const cleanup = useCleanupStack();

/** A fresh home and a git repository for the project. */
async function place(): Promise<HostPlace> {
  const where = await hostPlace(cleanup, 'claude');
  await run('git', ['init', '-q'], { cwd: where.project });
  return where;
}

function hostEnv(where: HostPlace, standIn: AnthropicStandIn): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: where.home,
    ANTHROPIC_BASE_URL: standIn.origin,
    ANTHROPIC_API_KEY: 'sk-ant-stand-in-not-a-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** Run `claude -p` for one flow; rejects on a non-zero exit. Returns stdout and stderr. */
function claudePrint(
  where: HostPlace,
  standIn: AnthropicStandIn,
  prompt: string,
): Promise<{ out: string; err: string }> {
  return runHostCommand(claude!, ['-p', prompt, '--allowedTools', TOOLS, '--output-format', 'json'], {
    cwd: where.project,
    env: hostEnv(where, standIn),
    label: 'claude -p',
    timeoutMs: 120_000,
  });
}

type Transport = 'stdio' | 'HTTP';

async function matrixRun(transport: Transport) {
  const sess: LocalSess = await startLocalSess();
  cleanup.push(() => sess.close());
  const standIn = await startAnthropicStandIn();
  cleanup.push(() => standIn.close());
  const where = await place();
  const audit = createSecretsAudit();
  audit.secret(sess.apiKey, 'sess api key');
  audit.secret(BEARER, 'mcp bearer token');
  let tapped: () => Promise<TappedMessage[]>;
  const env = { cwd: where.project, env: hostEnv(where, standIn) };
  if (transport === 'stdio') {
    const server = hostStdioServer(sess, where.home);
    await run(claude!, claudeMcpAddStdio(server), env);
    tapped = () => readStdioTap(server.tap);
  } else {
    const server = await startHostHttpServer(sess);
    cleanup.push(() => server.close());
    await run(
      claude!,
      [
        'mcp',
        'add',
        '--transport',
        'http',
        '--scope',
        'local',
        'sess',
        server.url,
        '--header',
        `Authorization: Bearer ${BEARER}`,
      ],
      env,
    );
    tapped = async () => server.messages;
  }
  const listed = await run(claude!, ['mcp', 'list'], env);
  const outputs: string[] = [listed.stdout, listed.stderr];

  const flows: FlowOutcome[] = [];
  for (const flow of FLOWS) {
    flows.push(
      await runFlow(sess, flow, standIn.log, audit, async () => {
        const { out, err } = await claudePrint(where, standIn, promptFor(flow));
        outputs.push(out, err);
      }),
    );
  }

  const callTimeout = await probeLongCall(standIn.log, async () => {
    const { out, err } = await claudePrint(where, standIn, promptFor('long'));
    outputs.push(out, err);
  });

  // Secrets: nothing of the key or token in any output, file or model request; links and answers
  // only in the host's own transcript (and, from there, in what it sends its model).
  const keysOnly = keysOnlyAudit(sess, standIn.log);
  await auditClaudeCodeFiles(where, audit, keysOnly);
  audit.text(outputs.join('\n'), 'host output');

  const requests = standIn.log.requests;
  const bodies = requestBodies(standIn.log);
  const offered = new Set(requests.flatMap((r) => r.toolNames));
  const scheduling = SCHEDULING_TOOLS.filter((t) => offered.has(t));
  // Deferred tools are only named, one a line, in the request text (ToolSearch loads them).
  const deferredScheduling = SCHEDULING_TOOLS.filter((t) => !offered.has(t) && bodies.includes(`\\n${t}\\n`));
  // The scheduling guidance of the server instructions and the host's own scheduling tool, in one
  // request to the model (the instructions travel in a system message, not in `system`).
  const scheduleGuided = requests.filter(
    (r) =>
      r.toolNames.some((n) => SCHEDULING_TOOLS.includes(n)) &&
      readMessages(JSON.parse(r.body) as never).promptText.includes(SCHEDULE_RULE),
  );
  const nexts = nextSentences(standIn.log);
  const messages = await tapped();
  const result: HostResult = {
    host: 'Claude Code',
    version: VERSION,
    transport,
    ...reachOf(standIn.log, messages),
    callTimeout,
    instructions: bodies.includes(MARKERS.instructions) ? 'in the system prompt' : 'not sent to the model',
    toolDescriptions: requests[0]?.toolNames.some((n) => n.startsWith('mcp__sess__'))
      ? 'in the tools list'
      : [...offered].some((n) => n.startsWith('mcp__sess__')) && bodies.includes(MARKERS.description)
        ? 'deferred: names only until ToolSearch loads them into the tools list'
        : 'deferred: only the tool names reach the model (behind ToolSearch); the script called the tools without loading them and the host ran the calls, so no description reached the model',
    flows,
    notes: [
      `scheduling tools (of ${SCHEDULING_TOOLS.join(', ')}): offered in the tools list: ${scheduling.join(', ') || 'none'}; named as deferred tools (loadable through ToolSearch): ${deferredScheduling.join(', ') || 'none'}`,
      `the scheduling guidance of the server instructions reached the model ${scheduleGuided.length > 0 ? 'in the same requests that offered ScheduleWakeup' : 'in no request that offered a scheduling tool'}`,
      `the \`next\` sentence of the structured results reached the model: ${nexts.length} distinct sentences in the tool results it forwarded`,
      `tools offered: ${[...offered].sort().join(', ')}`,
      'the host keeps the bearer header (HTTP) or the server env with the API key (stdio) in ~/.claude.json, where `claude mcp add` stores it, and in its backups of that file (~/.claude/backups/); those files are not scanned',
    ],
  };
  await writeHostResult(`claude-code-${transport.toLowerCase()}`, result);
  await writeHostResult(`claude-code-${transport.toLowerCase()}.model-log`, requests as never);
  return { result, audit, keysOnly, listed: listed.stdout, scheduleGuided, nexts };
}

describe.skipIf(claude === undefined)(`Claude Code ${VERSION}`, () => {
  // Each transport's run has its own runtime, stand-in, home and project: they wait side by side.
  it.concurrent.for<Transport>(['stdio', 'HTTP'])(
    'runs every flow over %s with no model, and no key or token reaches its files or output',
    { timeout: 300_000 },
    async (transport, { expect }) => {
      const { result, audit, keysOnly, listed, scheduleGuided, nexts } = await matrixRun(transport);
      expect(listed).toMatch(/sess: .*Connected/);
      expectFullRun(result);
      // Claude Code hands the model structuredContent alone, so the text's leading lines never
      // reach it; `next` carries the same guidance: the link line, the re-wait line, complete next,
      // and that a withdrawn question needs nothing more.
      expect(result.reachesModel).toBe('structuredContent');
      // The matrix's stdio server runs without a watcher (SESS_MCP_WATCH=0), so its waiting results
      // carry no `wake.command` and keep the re-wait line; the wake cell is claude-code-wake.test.ts.
      for (const sentence of [SHOW_LINK_NEXT, REWAIT_LINE, ANSWERED_NEXT, COMPLETED_NEXT, WITHDRAWN_NEXT]) {
        expect(nexts).toContain(sentence);
      }
      // The scheduling guidance and the host's scheduling tool, in one request to the model.
      expect(scheduleGuided.length).toBeGreaterThan(0);
      expect(scheduleGuided[0]!.toolNames).toContain('ScheduleWakeup');
      audit.assertClean();
      keysOnly.assertClean();
    },
  );
});
