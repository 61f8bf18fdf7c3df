/**
 * The wake cell of the host matrix (docs/wake.md): a real, interactive Claude Code in tmux, driven by
 * the scripted Messages stand-in, is woken by a late answer with no keystroke. The script asks with
 * `sess_request`, waits once with `sess_response` (the server's wait ceiling lowered to 300 ms, so
 * it ends `waiting` with `wake.command`), runs that command with `Bash` in the background and ends
 * its turn. The person answers 15 s later; the server's watcher saves the answer, the command
 * exits, and Claude Code calls its model again on its own, with the command's task notification.
 * The script reads the printed call from the command's output file, makes it, and completes.
 *
 * Claude Code runs with its permissions in force: its default permission mode (auto mode in this
 * version) and manual mode, side by side, each allowed only the sess tools by name and the wake
 * command's prefix, as the `.claude/settings.json` of docs/wake.md shows (the rule is read from
 * there). A dialog asking for approval fails the run at once.
 *
 * Installed by `.ci/run` under `.tmp/claude-code-2.1.332`, beside the matrix's pinned Claude Code,
 * with tmux from Debian; under `CI=true` a missing install fails.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, type ExpectStatic, it } from 'vitest';
import { WAKE_NEXT } from '../../src/core/contract/result.js';
import { WAKE_RULE } from '../../src/core/contract/tool-definitions.js';
import { posixQuote } from '../../src/stdio/wake-command.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit, type SecretsAudit } from '../support/audit.js';
import { repoRoot } from '../support/repo-files.js';
import { type AnthropicStandIn, readMessages, startAnthropicStandIn } from './anthropic-stand-in.js';
import {
  auditClaudeCodeFiles,
  builtBin,
  claudeMcpAddStdio,
  type FlowOutcome,
  type HostPlace,
  type HostResult,
  type HostStdioServer,
  hostPlace,
  hostStdioServer,
  keysOnlyAudit,
  pollUntil,
  reachOf,
  readStdioTap,
  requireHost,
  type TappedMessage,
  useCleanupStack,
  writeHostResult,
} from './matrix.js';
import { ANSWERS } from './person.js';
import { MARKERS } from './run-flow.js';
import { type HostToolCall, parseToolResult, promptFor, WAKE_REPLY } from './script.js';
import type { ModelRequest, StandInLog } from './stand-in-log.js';
import { requireTmux, startTmux, type TmuxSession } from './tmux.js';

const run = promisify(execFile);
const VERSION = '2.1.332';
const claude = requireHost(
  `Claude Code ${VERSION}`,
  `.tmp/claude-code-${VERSION}/node_modules/@anthropic-ai/claude-code-linux-x64/claude`,
  `npm install --prefix .tmp/claude-code-${VERSION} @anthropic-ai/claude-code@${VERSION}`,
);
const tmuxInstalled = requireTmux();
/** Not a key: the stand-in takes any. Claude Code asks once about a custom key; `.claude.json` answers. */
const MODEL_API_KEY = 'sk-ant-stand-in-not-a-key-wake';
/** The person's delay: well after the agent's last wait ended and its turn is over. */
const ANSWER_DELAY_MS = 15_000;
/** The allow rule of docs/wake.md, with its example paths. */
const DOC_RULE = wakeAllowRule('/usr/bin/node', '/…/dist/bin/sess-mcp.js');

/** The permission modes the cell runs in: Claude Code's default (no flag) and manual mode. */
type Mode = 'default' | 'manual';
const MODE_FLAGS: Record<Mode, string[]> = { default: [], manual: ['--permission-mode', 'manual'] };

/** What shows on the pane when Claude Code waits for someone to approve a tool call. */
function approvalOn(pane: string): string | undefined {
  return /Do you want to proceed\?|requires approval|can't check actions/.test(pane)
    ? 'Claude Code asked for approval'
    : undefined;
}

const cleanup = useCleanupStack();

/**
 * The allow rule of a wake command's program: its first three words (node, bin, `wait`), quoted
 * as the command quotes them, then `:*`.
 */
function wakeAllowRule(node: string, bin: string): string {
  return `Bash(${[node, bin, 'wait'].map(posixQuote).join(' ')}:*)`;
}

/** The `permissions.allow` list of docs/wake.md's Claude Code section. */
async function docsAllowList(): Promise<string[]> {
  const doc = await readFile(join(repoRoot, 'docs/wake.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Claude Code'));
  const fence = /```json\n([\s\S]*?)```/.exec(section);
  if (fence === null) throw new Error('docs/wake.md: no json block in the Claude Code section');
  return (JSON.parse(fence[1]!) as { permissions: { allow: string[] } }).permissions.allow;
}

function hostEnv(where: HostPlace, standIn: AnthropicStandIn): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: where.home,
    ANTHROPIC_BASE_URL: standIn.origin,
    ANTHROPIC_API_KEY: MODEL_API_KEY,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Background commands' output files go under the temporary home, removed with it.
    CLAUDE_CODE_TMPDIR: join(where.home, 'tmp'),
  };
}

/** One cell's parts: the runtime, the stand-in, the host's home and project, the server. */
interface Host {
  sess: LocalSess;
  standIn: AnthropicStandIn;
  where: HostPlace;
  env: NodeJS.ProcessEnv;
  server: HostStdioServer;
}

/**
 * A fresh runtime, stand-in, home and project, with what a person has done once before the UI
 * opens: onboarding, trusting the project folder, accepting the API key (Claude Code keys the
 * answer by the key's last 20 characters), adding the server, and the project's allow list.
 */
async function prepareHost(allow: readonly string[]): Promise<Host> {
  const sess = await startLocalSess();
  cleanup.push(() => sess.close());
  const standIn = await startAnthropicStandIn();
  cleanup.push(() => standIn.close());
  const where = await hostPlace(cleanup, 'claude-wake');
  const env = hostEnv(where, standIn);
  await run('git', ['init', '-q'], { cwd: where.project });
  await mkdir(env.CLAUDE_CODE_TMPDIR!);
  await writeFile(
    join(where.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      projects: { [where.project]: { hasTrustDialogAccepted: true } },
      customApiKeyResponses: { approved: [MODEL_API_KEY.slice(-20)], rejected: [] },
    }),
  );
  const server = hostStdioServer(sess, where.home, {
    env: { SESS_MCP_MAX_WAIT_MS: '300', SESS_MCP_WATCH: '1' },
    stderr: true,
  });
  await run(claude!, claudeMcpAddStdio(server), { cwd: where.project, env });
  await mkdir(join(where.project, '.claude'));
  await writeFile(
    join(where.project, '.claude', 'settings.json'),
    `${JSON.stringify({ permissions: { allow } }, null, 2)}\n`,
  );
  return { sess, standIn, where, env, server };
}

/** What the driven run measured. */
interface Drive {
  /** The permission mode the UI's footer named. */
  footer: string;
  promptAt: number;
  answeredAt: number;
  /** Where in the stand-in's log the turn ended with the command in the background. */
  endTurnIndex: number;
  keystrokesAfterPrompt: number;
  seconds: number;
}

/** The first logged request from `from` on whose script step answered with a text `pick` accepts. */
function textStepFrom(requests: readonly ModelRequest[], from: number, pick: (text: string) => boolean) {
  return requests.slice(from).find((r) => r.step?.kind === 'text' && pick(r.step.text));
}

/**
 * Start Claude Code in tmux, type the prompt once, let the turn end with the command in the
 * background, answer as the person 15 s later, and wait for the woken turn to end. A dialog
 * asking for approval fails it at once.
 */
async function drive(host: Host, mode: Mode): Promise<Drive> {
  const { sess, standIn, where, env, server } = host;
  const tmux: TmuxSession = await startTmux({
    socket: join(where.home, 'tmux.sock'),
    command: [claude!, ...MODE_FLAGS[mode]],
    cwd: where.project,
    env,
  });
  cleanup.push(() => tmux.close());
  const refuse = approvalOn;
  const footer = await tmux.waitForPane(
    (pane) => (/^❯/m.test(pane) ? /(\w+) mode on/.exec(pane)?.[1] : undefined),
    { timeoutMs: 30_000, what: 'the input box', refuse },
  );
  await pollUntil(
    async () => ((await readStdioTap(server.tap)).some((m) => m.method === 'tools/list') ? true : undefined),
    30_000,
    'Claude Code to list the sess tools',
  );
  await tmux.typeLine(promptFor('wake'));
  const promptAt = Date.now();
  const requests = standIn.log.requests;
  const endTurn = await tmux.waitForPane(() => textStepFrom(requests, 0, (text) => text === WAKE_REPLY), {
    timeoutMs: 30_000,
    what: 'the turn to end with the command in the background',
    refuse,
  });
  const endTurnIndex = requests.indexOf(endTurn);

  // The person answers well after the agent's last wait; nobody touches the terminal.
  await new Promise((resolve) => setTimeout(resolve, ANSWER_DELAY_MS));
  const session = sess.sessions.list()[0]!;
  const posted = await sess.submitAnswer(session.view.human_url, {
    action: session.surfaces[0]!.actions[0]!.id,
    values: { message: ANSWERS.message },
  });
  if (posted.status !== 303) throw new Error(`person: answer refused (${posted.status})`);
  const answeredAt = Date.now();

  await tmux.waitForPane(() => textStepFrom(requests, endTurnIndex + 1, (text) => text !== WAKE_REPLY), {
    timeoutMs: 45_000,
    what: 'the woken turn to end',
    refuse,
  });
  return {
    footer,
    promptAt,
    answeredAt,
    endTurnIndex,
    keystrokesAfterPrompt: tmux.keystrokes.filter((k) => k.at > promptAt).length,
    seconds: Math.round((Date.now() - promptAt) / 100) / 10,
  };
}

/** Everything one run of the cell saw, for the assertions. */
interface WakeCell extends Drive {
  mode: Mode;
  sess: LocalSess;
  log: StandInLog;
  /** The first request of the main conversation after the turn ended. */
  woken: ModelRequest | undefined;
  /** The `Bash` call and the `Read` of its output, as the last request carried them. */
  shell: HostToolCall | undefined;
  read: HostToolCall | undefined;
  /** The command's output file, as it was when the flow ended. */
  output: string;
  tapped: TappedMessage[];
  flow: FlowOutcome;
  audit: SecretsAudit;
  keysOnly: SecretsAudit;
}

/**
 * The secrets audits of a cell: nothing of the key, the link or the answer in the wake command's
 * output, the server's stderr or the host's files; links and answers only in the host's transcript
 * and the model requests, which hold nothing of the key either.
 */
async function audits(host: Host, output: string): Promise<{ audit: SecretsAudit; keysOnly: SecretsAudit }> {
  const { sess, where } = host;
  const audit = createSecretsAudit();
  audit.secret(sess.apiKey, 'sess api key');
  audit.url(sess.sessions.list()[0]!.view.human_url, 'sess link');
  audit.answer(ANSWERS.message, 'answer value');
  audit.text(output, 'wake command output');
  audit.text(await readFile(host.server.stderr!, 'utf8'), 'server stderr');
  const keysOnly = keysOnlyAudit(sess, host.standIn.log, { bearer: false });
  await auditClaudeCodeFiles(where, audit, keysOnly);
  return { audit, keysOnly };
}

/** Run the cell in one permission mode and read what it saw. */
async function wakeCell(mode: Mode, allow: readonly string[]): Promise<WakeCell> {
  const host = await prepareHost(allow);
  const driven = await drive(host, mode);
  const { sess, standIn } = host;
  const requests = standIn.log.requests;
  const last = [...requests].reverse().find((r) => r.step !== undefined)!;
  const { hostCalls } = readMessages(JSON.parse(last.body) as never);
  const shell = hostCalls.find((c) => c.name === 'Bash');
  const outputFile = shell?.finished?.outputFile;
  const output = outputFile === undefined ? '' : await readFile(outputFile, 'utf8');
  const woken = requests.slice(driven.endTurnIndex + 1).find((r) => r.step !== undefined);
  const state = sess.sessions.list()[0]!.view;
  const wokeAlone =
    woken !== undefined &&
    (woken.at ?? 0) >= driven.answeredAt &&
    driven.keystrokesAfterPrompt === 0 &&
    shell?.finished !== undefined;
  const problems = [
    ...(state.status === 'completed' ? [] : [`Session ${state.status} at revision ${state.revision}`]),
    ...(wokeAlone ? [] : ['no model request came on its own after the answer']),
  ];
  const after = Math.round(((woken?.at ?? 0) - driven.answeredAt) / 100) / 10;
  const said = `${mode} permission mode (${driven.footer} mode)`;
  return {
    ...driven,
    mode,
    sess,
    log: standIn.log,
    woken,
    shell,
    read: hostCalls.find((c) => c.name === 'Read'),
    output,
    tapped: await readStdioTap(host.server.tap),
    flow: {
      flow: 'wake',
      pass: problems.length === 0,
      note:
        problems.length > 0
          ? `${said}: ${problems.join('; ')}`
          : `${said}: Session completed at revision ${state.revision}; woken ${after} s after the answer with no keystroke`,
      calls: standIn.log.calls().map((c) => c.tool),
      seconds: driven.seconds,
    },
    ...(await audits(host, output)),
  };
}

/** The matrix row of the cells (the first cell's log says what reached the model). */
function matrixResult(cells: readonly WakeCell[]): HostResult {
  const first = cells[0]!;
  const requests = first.log.requests;
  const modes = cells.map((c) => `${c.mode} (the UI says "${c.footer} mode on")`).join(', ');
  return {
    host: 'Claude Code, interactive',
    version: VERSION,
    transport: 'stdio',
    ...reachOf(first.log, first.tapped),
    callTimeout: 'not measured (the `-p` rows measure it)',
    instructions: requests.some((r) => r.body.includes(MARKERS.instructions))
      ? 'in the system prompt'
      : 'not sent to the model',
    toolDescriptions: requests.some((r) => r.toolNames.some((n) => n.startsWith('mcp__sess__')))
      ? 'in the tools list'
      : requests.some((r) => r.body.includes(MARKERS.description))
        ? 'deferred: names only until ToolSearch loads them into the tools list'
        : 'deferred: only the tool names reach the model (behind ToolSearch)',
    flows: cells.map((c) => c.flow),
    notes: [
      `run in tmux, the prompt typed once; permission modes: ${modes}; allowed: the sess tools by name and \`${DOC_RULE}\` with the server's node and bin paths (docs/wake.md)`,
      'the model ran `wake.command` with `Bash` and `run_in_background: true` and ended its turn; when the command exited, Claude Code called the model again with no keystroke, the new turn opening with a task notification that names the command and its output file; the model read the printed call from that file (`Read`, no approval asked) and made it',
    ],
    wakes: cells.every((c) => c.flow.pass) ? 'yes' : 'no',
  };
}

/** The `tools/call` names the host sent its server, in order. */
function toolCalls(tapped: readonly TappedMessage[]): string[] {
  return tapped.filter((m) => m.method === 'tools/call').map((m) => m.params?.name ?? '');
}

/** The handle of the cell's interaction, read from its `sess_request` result as the model got it. */
function handleOf(cell: WakeCell): string {
  const first = cell.log.requests.find((r) => r.toolResults.length >= 1)!.toolResults[0]!;
  return (parseToolResult(first) as { interaction: { handle: string } }).interaction.handle;
}

/** What one cell must show: woken by the late answer alone, through the documented path. */
function expectWoken(cell: WakeCell, rule: string, expect: ExpectStatic): void {
  const label = `${cell.mode} permission mode`;
  expect({ label, ...cell.flow }).toMatchObject({ pass: true });
  // The script's whole path ran: nothing was called twice or skipped.
  expect(cell.flow.calls, label).toEqual([
    'sess_request',
    'sess_response',
    'Bash',
    'Read',
    'sess_response',
    'sess_complete',
  ]);
  const requests = cell.log.requests;
  // The wake sentence and the command reached the model inside the forwarded tool result.
  const waited = requests.find((r) => r.toolResults.length >= 2)!.toolResults[1]!;
  const waitedResult = parseToolResult(waited) as { next?: string; wake?: { command?: string } };
  const command = waitedResult.wake?.command;
  expect(waitedResult.next, label).toBe(WAKE_NEXT);
  expect(typeof command, label).toBe('string');
  expect(waited, label).toContain(JSON.stringify(WAKE_NEXT).slice(1, -1));
  expect(waited, label).toContain(JSON.stringify(command).slice(1, -1));
  // The rule is the command's prefix, word for word.
  expect(command!.startsWith(`${rule.slice('Bash('.length, -':*)'.length)} `), label).toBe(true);
  // The server's instructions carry the wake rule, and they were in the prompt of the turn that
  // ran the command. (The first request can go out while the server is still connecting, before
  // its instructions are in the system prompt, so that one is not the one to read.)
  const ranCommand = requests.find((r) => r.toolResults.length >= 2)!;
  expect(readMessages(JSON.parse(ranCommand.body) as never).promptText, label).toContain(WAKE_RULE);
  // It ran the command as it is, in the background.
  expect(cell.shell?.input, label).toMatchObject({ command, run_in_background: true });
  // No keystroke after the prompt; the new turn came after the answer, opened by the command's
  // task notification (the conversation's last message), and the prompt is in it once.
  expect(cell.keystrokesAfterPrompt, label).toBe(0);
  expect(cell.woken?.at, label).toBeGreaterThanOrEqual(cell.answeredAt);
  const wokenBody = JSON.parse(cell.woken!.body) as { messages: Array<{ role: string; content: unknown }> };
  const lastMessage = wokenBody.messages[wokenBody.messages.length - 1]!;
  const lastText = JSON.stringify(lastMessage.content);
  expect(lastMessage.role, label).toBe('user');
  expect(lastText, label).toContain('<task-notification>');
  expect(lastText, label).toContain(`<tool-use-id>${cell.shell!.id}</tool-use-id>`);
  expect(lastText, label).toContain('<status>completed</status>');
  expect(cell.woken!.body.split(promptFor('wake')).length - 1, label).toBe(1);
  // The command printed the one call to make (then Claude Code added its own exit line to the
  // output file); the model read it there and made it.
  const handle = handleOf(cell);
  const line = `sess-mcp: ${handle} is answered; call sess_response ${JSON.stringify({ handle, revision: 1 })}\n`;
  expect(cell.output.replace(/\n?\[exited with code 0\]\n?$/, ''), label).toBe(line);
  expect(cell.read?.input, label).toEqual({ file_path: cell.shell!.finished!.outputFile });
  expect(cell.read?.result, label).toContain(line.trim());
  // The server's watcher saved the answer: the host made no tool call while it waited.
  expect(toolCalls(cell.tapped), label).toEqual([
    'sess_request',
    'sess_response',
    'sess_response',
    'sess_complete',
  ]);
  cell.audit.assertClean();
  cell.keysOnly.assertClean();
}

describe.skipIf(claude === undefined || !tmuxInstalled)(`Claude Code ${VERSION}, interactive in tmux`, () => {
  it('wakes on a late answer with no keystroke, in its default permission mode and in manual mode, allowed only the wake command prefix', {
    timeout: 120_000,
  }, async ({ expect }) => {
    const docs = await docsAllowList();
    // The docs' rule is the rule of the wake command's first three words, quoted as there; the
    // run uses it with the server's own node and bin, and allows nothing else but sess tools.
    expect(docs).toContain(DOC_RULE);
    const rule = wakeAllowRule(process.execPath, realpathSync(builtBin()));
    const allow = docs.map((entry) => (entry === DOC_RULE ? rule : entry));
    expect(allow.filter((entry) => !entry.startsWith('mcp__sess__'))).toEqual([rule]);

    // The two modes' cells wait side by side, each with its own runtime, stand-in and home; both
    // end before the clean-up runs, even when one fails.
    const settled = await Promise.allSettled(
      (['default', 'manual'] as const).map((mode) => wakeCell(mode, allow)),
    );
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const cells = settled.map((s) => (s as PromiseFulfilledResult<WakeCell>).value);
    await writeHostResult('claude-code-wake', matrixResult(cells));
    await writeHostResult('claude-code-wake.model-log', cells[0]!.log.requests as never);
    for (const cell of cells) expectWoken(cell, rule, expect);
  });
});
