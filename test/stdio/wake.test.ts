/**
 * The stdio wake path end to end: a real `sess-mcp` child, the local Sess runtime, and the wake
 * command of a `waiting` result run as it is by `/bin/sh`, as an agent's background shell would.
 * The person answers after the agent's last wait; the server's watcher verifies and saves the
 * answer with no tool call, and `sess-mcp wait` exits with the one call to make. Every line the
 * command prints goes through the secrets audit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WAKE_NEXT } from '../../src/core/contract/result.js';
import { SERVER_INSTRUCTIONS, WAKE_RULE } from '../../src/core/contract/tool-definitions.js';
import { NO_WATCHER_LINE, WAIT_EXIT } from '../../src/stdio/wait-command.js';
import { posixQuote, wakeCommandOf } from '../../src/stdio/wake-command.js';
import { openProfileRecords } from '../../src/store/file/index.js';
import { useStdioStack } from '../support/stdio-stack.js';
import { approveSurface } from '../support/surfaces.js';
import { buildSessMcpBin, connectStdio, interactionOf, runBin } from './harness.js';

const stdio = useStdioStack();

/** A wake command run by `/bin/sh`, as a background shell runs it. */
interface Running {
  child: ChildProcess;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function run(command: string): Running {
  const child = spawn('/bin/sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, exited };
}

/** The wake command of a result, checked to be there. */
function wakeOf(result: { structuredContent?: Record<string, unknown> }): string {
  const wake = result.structuredContent?.wake as { command?: unknown } | undefined;
  expect(typeof wake?.command, JSON.stringify(result.structuredContent)).toBe('string');
  return wake!.command as string;
}

const lineOf = (handle: string, state: string, revision = 1) =>
  `sess-mcp: ${handle} is ${state}; call sess_response ${JSON.stringify({ handle, revision })}\n`;

/** Start a stack whose waits end quickly (the agent's last wait is long over when they answer). */
async function startShortWaits(env: Record<string, string> = {}) {
  return stdio.start({ env: { SESS_MCP_MAX_WAIT_MS: '300', ...env } });
}

/** `sess_request`, then one `sess_response` that ends `waiting`: the handle, the link, the command. */
async function askAndWait(stack: Awaited<ReturnType<typeof startShortWaits>>) {
  const created = await stack.server.callTool('sess_request', { interaction: approveSurface });
  const first = interactionOf(created);
  stdio.audit.url(first.humanUrl!, 'sess link');
  const requestWake = wakeOf(created);
  const waited = await stack.server.callTool('sess_response', { handle: first.handle, revision: 1 });
  expect(interactionOf(waited).state).toBe('waiting');
  const command = wakeOf(waited);
  expect(command).toBe(requestWake);
  return { handle: first.handle, humanUrl: first.humanUrl!, command, waited };
}

describe('the wake command (stdio)', () => {
  it('a late answer: the background wait exits with the call to make, and no tool call came in between', async () => {
    const stack = await startShortWaits();
    const { handle, humanUrl, command, waited } = await askAndWait(stack);
    expect(waited.structuredContent?.next).toBe(WAKE_NEXT);
    expect(waited.content[0]?.text?.startsWith(WAKE_NEXT)).toBe(true);

    const wait = run(command);
    // The agent's turn is over; the person answers well after its last wait.
    await new Promise((r) => setTimeout(r, 1_500));
    const message = 'approved after lunch, zebra crossing';
    stdio.audit.answer({ message });
    expect((await stack.sess.submitAnswer(humanUrl, { action: 'approve', values: { message } })).status).toBe(
      303,
    );
    const ended = await wait.exited;
    stdio.audit.text(ended.stdout, 'wait stdout');
    stdio.audit.text(ended.stderr, 'wait stderr');
    expect(ended).toEqual({ code: WAIT_EXIT.left, stdout: lineOf(handle, 'answered'), stderr: '' });

    // The call it printed returns the verified answer at once: the watcher saved it.
    const answered = interactionOf(
      await stack.server.callTool('sess_response', { handle, revision: 1, wait_ms: 0 }),
    );
    expect(answered).toMatchObject({ state: 'answered', response: { values: { message }, verified: true } });

    // The owner sees the event, a reference only, owed to the webhook sink (none is configured).
    const listed = await runBin(['records', 'events'], stack.env);
    stdio.audit.text(listed.stdout + listed.stderr, 'records events');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`evt_${handle}_1 +answered +${handle} +1 +\\S+ +owed +0`));
    const unknown = await runBin(['records', 'events', '--resend', 'evt_nothing_here_1'], stack.env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'sess-mcp: no such event in this profile.\n' });
    const resent = await runBin(['records', 'events', '--resend', `evt_${handle}_1`], stack.env);
    expect(resent.code).toBe(0);
  });

  it('the server instructions carry the wake rule', async () => {
    expect(SERVER_INSTRUCTIONS).toContain(WAKE_RULE);
  });

  it('no server watching: the wait exits at once with the line to call sess_response now', async () => {
    const stack = await startShortWaits();
    const { command } = await askAndWait(stack);
    await stack.server.kill();
    const ended = await run(command).exited;
    expect(ended).toEqual({
      code: WAIT_EXIT.noWatcher,
      stdout: `sess-mcp: ${NO_WATCHER_LINE}\n`,
      stderr: '',
    });
  });

  it('a second wait on the same handle exits at once; the first still ends on the answer', async () => {
    const stack = await startShortWaits();
    const { handle, humanUrl, command } = await askAndWait(stack);
    const first = run(command);
    const wakeFile = join(stack.stateDir, 'profiles', 'default', `wake.wait.${handle}`);
    for (let i = 0; i < 100 && !existsSync(wakeFile); i++) await new Promise((r) => setTimeout(r, 50));
    const second = await run(command).exited;
    expect(second).toEqual({
      code: WAIT_EXIT.alreadyWaiting,
      stdout: '',
      stderr: 'sess-mcp wait: another wait for this handle is running\n',
    });
    await stack.sess.submitAnswer(humanUrl, { action: 'approve', values: { message: 'fine by me' } });
    expect((await first.exited).stdout).toBe(lineOf(handle, 'answered'));
    expect(existsSync(wakeFile)).toBe(false);
  });

  it('an unknown handle and bad arguments: fixed words, nothing echoed', async () => {
    const stack = await startShortWaits();
    const { command, handle } = await askAndWait(stack);
    const other = command.replace(posixQuote(handle), posixQuote('h_unknownunknownunknown12'));
    expect(await run(other).exited).toEqual({
      code: WAIT_EXIT.unknownHandle,
      stdout: '',
      stderr: 'sess-mcp wait: no such handle in this profile\n',
    });
    const pasted = command.replace(posixQuote(handle), posixQuote('sk_live pasted/key=value'));
    const bad = await run(pasted).exited;
    expect(bad.code).toBe(WAIT_EXIT.usage);
    expect(`${bad.stdout}${bad.stderr}`).not.toContain('pasted');
  });

  it('--timeout ends a wait that is still waiting with the call to make (exit 3)', async () => {
    const stack = await startShortWaits();
    const { command, handle } = await askAndWait(stack);
    // Three seconds are a dozen polls: more than the ten listeners one signal takes before Node
    // warns on stderr, so a poll that leaves its listener behind shows here.
    const ended = await run(`${command} --timeout 3`).exited;
    expect(ended).toEqual({ code: WAIT_EXIT.timeout, stdout: lineOf(handle, 'still waiting'), stderr: '' });
  });

  it('a state directory with a space, a quote, $(…) and a backtick: the command runs as it is', async () => {
    const base = (await import('node:os')).tmpdir();
    const parent = join(base, `sess-mcp-wake-${process.pid}-${Date.now()}`);
    const stateDir = join(parent, "it's a $(touch pwned) `touch pwned2` dir");
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const stack = await startShortWaits({ SESS_MCP_STATE_DIR: stateDir });
    const { handle, humanUrl, command } = await askAndWait(stack);
    expect(command).toContain(posixQuote(stateDir));
    const wait = run(command);
    await stack.sess.submitAnswer(humanUrl, { action: 'approve', values: { message: 'fine by me' } });
    expect(await wait.exited).toEqual({ code: 0, stdout: lineOf(handle, 'answered'), stderr: '' });
    expect(await readdir(parent)).toEqual([expect.stringMatching(/^it's a/)]);
    expect(existsSync(join(process.cwd(), 'pwned'))).toBe(false);
  });

  it('a path with a line break gets no wake command; quoting keeps every word literal', () => {
    const target = { program: ['/usr/bin/node', '/opt/sess mcp/bin.js'] as const, profile: 'default' };
    expect(wakeCommandOf({ ...target, stateDir: '/tmp/a\nb' }, 'h_x')).toBeUndefined();
    expect(wakeCommandOf({ ...target, stateDir: "/tmp/it's" }, 'h_x')).toBe(
      `'/usr/bin/node' '/opt/sess mcp/bin.js' 'wait' '--state-dir' '/tmp/it'\\''s' '--profile' 'default' 'h_x'`,
    );
  });

  it('sess-mcp-tools/5 results carry no wake', async () => {
    const stack = await startShortWaits({ SESS_MCP_TOOLS: 'sess-mcp-tools/5' });
    const created = await stack.server.callTool('sess_request', { interaction: approveSurface });
    stdio.audit.url(interactionOf(created).humanUrl!, 'sess link');
    expect(created.structuredContent?.wake).toBeUndefined();
    const waited = await stack.server.callTool('sess_response', {
      handle: interactionOf(created).handle,
      revision: 1,
    });
    expect(waited.structuredContent?.wake).toBeUndefined();
    expect(waited.structuredContent?.next).not.toBe(WAKE_NEXT);
  });

  it('three servers on one profile: one watcher polls the Session', async () => {
    const stack = await stdio.start({});
    const created = await stack.server.callTool('sess_request', { interaction: approveSurface });
    const { handle, humanUrl } = interactionOf(created);
    stdio.audit.url(humanUrl!, 'sess link');
    const others = await Promise.all(
      [0, 1].map(() => connectStdio({ client: 'v1', env: stack.env, audit: stdio.audit })),
    );
    try {
      // A tool call on each reads the key, which starts each server's watcher.
      for (const server of [stack.server, ...others]) await server.callTool('sess_list', {});
      const record = await openProfileRecords({ stateDir: stack.stateDir }).read(handle!);
      const sessionId = (record!.record.state as { session: { sessionId: string } }).session.sessionId;
      await stack.sess.whenWaiting(sessionId);
      const before = stack.sess.stats.requests.wait ?? 0;
      let most = 0;
      for (let i = 0; i < 30; i++) {
        most = Math.max(most, stack.sess.pendingWaits(sessionId));
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(most).toBe(1);
      // One long-poll of up to 45 s covers the three seconds.
      expect((stack.sess.stats.requests.wait ?? 0) - before).toBeLessThanOrEqual(1);
    } finally {
      await Promise.all(others.map((o) => o.kill()));
    }
  });

  it('a watcher that stands still is taken over, and stands down when it runs again', async () => {
    const stack = await stdio.start({ env: { SESS_MCP_TEST_WAKE_STALE_MS: '1000' } });
    const created = await stack.server.callTool('sess_request', { interaction: approveSurface });
    const { handle, humanUrl } = interactionOf(created);
    stdio.audit.url(humanUrl!, 'sess link');
    const record = await openProfileRecords({ stateDir: stack.stateDir }).read(handle!);
    const sessionId = (record!.record.state as { session: { sessionId: string } }).session.sessionId;
    await stack.sess.whenWaiting(sessionId);
    const other = await connectStdio({ client: 'v1', env: stack.env, audit: stdio.audit });
    try {
      await other.callTool('sess_list', {});
      const watcherFile = join(stack.stateDir, 'profiles', 'default', 'wake.watcher');
      const holderPid = async () => Number((await readFile(watcherFile, 'utf8')).split(' ')[0]);
      // The watcher starts beside the first tool call and writes its heartbeat soon after.
      for (let i = 0; i < 100 && !existsSync(watcherFile); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await holderPid()).toBe(stack.server.pid);
      process.kill(stack.server.pid, 'SIGSTOP');
      try {
        // The heartbeat stops; the other server takes the role within the stale time and a beat.
        for (let i = 0; i < 60 && (await holderPid()) !== other.pid; i++)
          await new Promise((r) => setTimeout(r, 100));
        expect(await holderPid()).toBe(other.pid);
      } finally {
        process.kill(stack.server.pid, 'SIGCONT');
      }
      // Running again, the first sees another token in the file at its next beat and stands down.
      for (let i = 0; i < 40 && !stack.server.stderr().includes('"watcher_standby"'); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(stack.server.stderr()).toContain('"event":"watcher_standby"');
      expect(await holderPid()).toBe(other.pid);
      // The person answers: the new holder saves it, so a wait ends on it.
      const wait = run(wakeOf(await other.callTool('sess_response', { handle, revision: 1, wait_ms: 0 })));
      await stack.sess.submitAnswer(humanUrl!, { action: 'approve', values: { message: 'fine by me' } });
      expect((await wait.exited).stdout).toBe(lineOf(handle!, 'answered'));
    } finally {
      await other.kill();
    }
  });

  it('twelve waiting at once: the answer to the one asked last is saved within its turn', async () => {
    const stack = await stdio.start({ env: { SESS_MCP_MAX_WAIT_MS: '2000' } });
    const asked: { handle: string; humanUrl: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const created = interactionOf(
        await stack.server.callTool('sess_request', { interaction: approveSurface }),
      );
      stdio.audit.url(created.humanUrl!, 'sess link');
      asked.push({ handle: created.handle, humanUrl: created.humanUrl! });
    }
    const last = asked.at(-1)!;
    const waited = await stack.server.callTool('sess_response', {
      handle: last.handle,
      revision: 1,
      wait_ms: 0,
    });
    const wait = run(wakeOf(waited));
    await stack.sess.submitAnswer(last.humanUrl, { action: 'approve', values: { message: 'fine by me' } });
    // Twelve share four polls of 2000 × 4 / 12 ms: the last one asked has its turn too.
    expect((await wait.exited).stdout).toBe(lineOf(last.handle, 'answered'));
  });

  it('a server whose watcher is polling exits by itself when the host closes stdin', async () => {
    const stack = await stdio.start();
    const created = await stack.server.callTool('sess_request', { interaction: approveSurface });
    const { handle, humanUrl } = interactionOf(created);
    stdio.audit.url(humanUrl!, 'sess link');
    const record = await openProfileRecords({ stateDir: stack.stateDir }).read(handle!);
    const sessionId = (record!.record.state as { session: { sessionId: string } }).session.sessionId;
    await stack.server.kill();
    const until = async (check: () => boolean) => {
      while (!check()) await new Promise((r) => setTimeout(r, 20));
    };
    await until(() => stack.sess.pendingWaits(sessionId) === 0);
    // A server of the profile, started with nothing said to it: its watcher finds the waiting
    // record and long-polls its Session. Then the host closes stdin, and sends no signal at all.
    const child = spawn(process.execPath, [await buildSessMcpBin()], {
      env: stack.env,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    stdio.audit.watch(child.stderr!, 'server stderr');
    const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      await until(() => stack.sess.pendingWaits(sessionId) > 0);
      child.stdin!.end();
      expect(await exit).toEqual({ code: 0, signal: null });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('SESS_MCP_WATCH=0: no watcher, and no result offers a wake command', async () => {
    const stack = await startShortWaits({ SESS_MCP_WATCH: '0' });
    const created = await stack.server.callTool('sess_request', { interaction: approveSurface });
    stdio.audit.url(interactionOf(created).humanUrl!, 'sess link');
    const waited = await stack.server.callTool('sess_response', {
      handle: interactionOf(created).handle,
      revision: 1,
    });
    expect(waited.structuredContent?.wake).toBeUndefined();
    expect(existsSync(join(stack.stateDir, 'profiles', 'default', 'wake.watcher'))).toBe(false);
  });
});
